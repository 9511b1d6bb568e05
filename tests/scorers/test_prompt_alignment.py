"""The prompt alignment scorer: user, system and both modes, each from its own prompt; where
the system prompt comes from; runs it cannot score; over real HTTP."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from _judge_support import INJECTION, Case, between, score_over_http, user_prompt

from livescore import Run, Step
from livescore.otel import attributes as A
from livescore.scorers import create_prompt_alignment_scorer
from livescore.scorers._prompt_alignment import find_system_prompt
from livescore.testing import ScriptedJudge

pytestmark = pytest.mark.anyio


# -- the case the cross-cutting judge tests run (test_judge_scorers.py) --------------------


FACTORIAL_ANALYSIS: dict[str, Any] = {
    "intent_alignment": {
        "score": 1.0,
        "primary_intent": "A Python factorial function",
        "is_addressed": True,
        "reasoning": "It is one.",
    },
    "requirements_fulfillment": {
        "requirements": [
            {"requirement": "Write a Python function", "is_fulfilled": True, "reasoning": "a"},
            {"requirement": "Calculate factorial", "is_fulfilled": True, "reasoning": "b"},
            {"requirement": "Handle negative numbers", "is_fulfilled": True, "reasoning": "c"},
        ]
    },
    "completeness": {
        "score": 0.9,
        "missing_elements": ["No docstring"],
        "reasoning": "Complete but undocumented.",
    },
    "response_appropriateness": {
        "score": 1.0,
        "format_alignment": True,
        "tone_alignment": True,
        "reasoning": "Code, as asked.",
    },
    "overall_assessment": "Aligned.",
}

FACTORIAL_CODE = (
    "def factorial(n):\n    if n < 0:\n        raise ValueError('negative')\n"
    "    return 1 if n == 0 else n * factorial(n - 1)"
)


def _prompt_alignment_case() -> Case:
    wrong = {
        **FACTORIAL_ANALYSIS,
        "completeness": {"score": 3, "missing_elements": [], "reasoning": "out of range"},
    }
    run = {
        "input": "Write a Python function to calculate factorial with error handling for "
        "negative numbers.",
        "output": FACTORIAL_CODE,
    }
    return Case(
        name="prompt-alignment",
        build=lambda judge, mode: create_prompt_alignment_scorer(
            model=judge,
            judge_mode=mode,
        ),
        run=run,
        step_replies=[FACTORIAL_ANALYSIS, "The score is 0.98 because only a docstring is missing."],
        one_call_reply={**FACTORIAL_ANALYSIS, "reason": "Only a docstring is missing."},
        score=0.98,  # 0.4 + 0.3 + 0.2 × 0.9 + 0.1
        label="high",
        count_step="analyze",
        wrong_count=wrong,  # a dimension score outside 0..1: the schema rejects it
        replies_before_count=[],
        injected_run={**run, "output": f"{FACTORIAL_CODE}\n# {INJECTION}"},
    )


JUDGE_CASES = [_prompt_alignment_case()]

SYSTEM = "You are a terse assistant. Never use more than one sentence. Never write code."
QUESTION = "Write a Python function to calculate factorial."


def analysis(
    intent: float, fulfilled: list[bool], completeness: float, fit: float
) -> dict[str, Any]:
    data = copy.deepcopy(FACTORIAL_ANALYSIS)
    data["intent_alignment"]["score"] = intent
    data["requirements_fulfillment"]["requirements"] = [
        {"requirement": f"requirement {i}", "is_fulfilled": ok, "reasoning": "r"}
        for i, ok in enumerate(fulfilled)
    ]
    data["completeness"]["score"] = completeness
    data["response_appropriateness"]["score"] = fit
    return data


def chat_run() -> Run:
    return Run(
        input=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTION}],
        output=FACTORIAL_CODE,
    )


async def test_both_mode_scores_the_system_prompt_from_its_own_analysis() -> None:
    user = analysis(1.0, [True], 1.0, 1.0)  # follows the user: 1.0
    system = analysis(0.0, [False, False], 0.0, 0.0)  # breaks every system rule: 0.0
    result, requests = await score_over_http(
        lambda judge: create_prompt_alignment_scorer(model=judge, evaluation_mode="both"),
        [{"user": user, "system": system}, "The score is 0.7 because it writes code anyway."],
        chat_run(),
    )

    # Mastra's "both" copies the user score into the system one and would give 1.0.
    assert result.score == 0.7
    assert result.analyze_step_result["scores"] == {"user": 1.0, "system": 0.0}
    assert set(result.analyze_step_result) == {"user", "system", "scores"}
    prompt = user_prompt(requests[0])
    assert between(prompt, "system_prompt") == SYSTEM
    assert between(prompt, "user_prompt") == QUESTION
    assert result.flags["requirements_total"] == 3
    assert result.flags["requirements_fulfilled"] == 1
    assert result.attributes[A.LIVESCORE_ALIGNMENT_MODE] == "both"


async def test_system_mode_uses_the_system_weights() -> None:
    result, requests = await score_over_http(
        lambda judge: create_prompt_alignment_scorer(model=judge, evaluation_mode="system"),
        [analysis(1.0, [False], 0.0, 1.0), "why"],
        chat_run(),
    )

    assert result.score == 0.5  # 0.35 + 0 + 0 + 0.15
    assert "<user_prompt>\n" not in user_prompt(requests[0])
    assert set(result.analyze_step_result) == {"system", "scores"}


async def test_requirements_are_scored_from_the_list_not_the_judges_number() -> None:
    result, _ = await score_over_http(
        lambda judge: create_prompt_alignment_scorer(model=judge),
        [analysis(1.0, [True, False, False, True], 1.0, 1.0), "why"],
        {"input": QUESTION, "output": FACTORIAL_CODE},
    )

    assert result.score == 0.85  # 0.4 + 0.3 × 2/4 + 0.2 + 0.1


async def test_a_static_system_prompt_overrides_the_run() -> None:
    result, requests = await score_over_http(
        lambda judge: create_prompt_alignment_scorer(
            model=judge, evaluation_mode="system", system_prompt="Answer in French."
        ),
        [analysis(1.0, [True], 1.0, 1.0), "why"],
        chat_run(),
    )

    assert result.score == 1.0
    assert between(user_prompt(requests[0]), "system_prompt") == "Answer in French."


@pytest.mark.parametrize("judge_mode", ["three_step", "one_call"])
@pytest.mark.parametrize(
    ("mode", "run", "why"),
    [
        (
            "system",
            {"input": QUESTION, "output": "x"},
            "no system prompt (evaluation_mode='system')",
        ),
        ("both", {"input": QUESTION, "output": "x"}, "no system prompt (evaluation_mode='both')"),
        ("user", {"input": " ", "output": "x"}, "the user's prompt is empty"),
        ("user", {"input": {"topic": "x"}, "output": "x"}, "no user text found"),
    ],
)
async def test_runs_without_the_prompt_are_not_scorable(
    judge_mode: Any, mode: Any, run: dict[str, Any], why: str
) -> None:
    result, requests = await score_over_http(
        lambda judge: create_prompt_alignment_scorer(
            model=judge, evaluation_mode=mode, judge_mode=judge_mode
        ),
        [],
        run,
    )

    assert result.status == "skipped"
    assert result.reason is not None
    assert result.reason.startswith(why)
    assert requests == []


@pytest.mark.parametrize("judge_mode", ["three_step", "one_call"])
async def test_an_empty_answer_scores_zero_without_a_call(judge_mode: Any) -> None:
    result, requests = await score_over_http(
        lambda judge: create_prompt_alignment_scorer(model=judge, judge_mode=judge_mode),
        [],
        {"input": QUESTION, "output": ""},
    )

    assert requests == []
    assert result.score == 0.0
    assert result.reason is not None
    assert "empty" in result.reason


async def test_one_call_both_mode() -> None:
    user = analysis(1.0, [True], 1.0, 1.0)
    system = analysis(0.5, [True], 0.5, 0.5)
    result, requests = await score_over_http(
        lambda judge: create_prompt_alignment_scorer(
            model=judge, evaluation_mode="both", judge_mode="one_call"
        ),
        [{"user": user, "system": system, "reason": "It ignores the terse rule."}],
        chat_run(),
    )

    assert len(requests) == 1
    assert result.score == 0.9  # 0.7 × 1 + 0.3 × (0.35·0.5 + 0.35 + 0.15·0.5 + 0.15·0.5)
    assert result.analyze_step_result["scores"] == {"user": 1.0, "system": 0.675}
    assert result.reason is not None
    assert result.reason.endswith("It ignores the terse rule.")


def test_the_system_prompt_is_found_where_integrations_record_it() -> None:
    langchain_like = Run(
        input=[{"role": "user", "content": "hi"}],
        steps=[
            Step(
                kind="model",
                input=[
                    [{"type": "system", "content": "Be kind."}, {"type": "human", "content": "hi"}]
                ],
            )
        ],
    )
    assert find_system_prompt(langchain_like) == "Be kind."
    assert find_system_prompt(Run(metadata={"system_prompt": "From metadata."})) == "From metadata."
    developer = Run(input={"messages": [{"role": "developer", "content": "Dev rules."}]})
    assert find_system_prompt(developer) == "Dev rules."


@pytest.mark.parametrize("options", [{"evaluation_mode": "assistant"}, {"system_prompt": "  "}])
def test_bad_options_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=r"evaluation_mode|system_prompt"):
        create_prompt_alignment_scorer(model=ScriptedJudge(), **options)
