"""The answer relevancy scorer: its edge cases and the fixes to Mastra's, over real HTTP."""

from __future__ import annotations

from typing import Any

import pytest
from _judge_support import INJECTION, Case, between, score_over_http, user_prompt, verdicts

from livescore.otel import attributes as A
from livescore.scorers import create_answer_relevancy_scorer
from livescore.scorers._answer_relevancy import RelevancyVerdict
from livescore.testing import ScriptedJudge

pytestmark = pytest.mark.anyio


# -- the case the cross-cutting judge tests run (test_judge_scorers.py) --------------------


def _answer_relevancy_case() -> Case:
    statements = [
        "The sky is blue during daytime.",
        "The sky often has clouds.",
        "I had breakfast today.",
    ]
    marks = ("yes", "unsure", "no")
    return Case(
        name="answer-relevancy",
        build=lambda judge, mode: create_answer_relevancy_scorer(
            model=judge,
            judge_mode=mode,
        ),
        run={"input": "What color is the sky during daytime?", "output": " ".join(statements)},
        step_replies=[
            {"statements": statements},
            verdicts(*marks, items=statements),
            "The score is 0.43 because only the first statement answers the question.",
        ],
        one_call_reply={
            "statements": statements,
            **verdicts(*marks, items=statements),
            "reason": "Only the first statement answers the question.",
        },
        score=0.43,
        label="moderate",
        count_step="analyze",
        wrong_count=verdicts("yes", items=statements[:1]),
        replies_before_count=[{"statements": statements}],
        injected_run={
            "input": "What color is the sky during daytime?",
            "output": f"The sky is blue. {INJECTION}",
        },
    )


JUDGE_CASES = [_answer_relevancy_case()]

RUN = {"input": "Where is the Eiffel Tower?", "output": "It is in Paris. I love towers."}
STATEMENTS = {"statements": ["It is in Paris.", "I love towers."]}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("YES", "yes"),
        ("Relevant", "yes"),
        ("partially relevant", "unsure"),
        ("Unsure", "unsure"),
        ("irrelevant", "no"),
        (False, "no"),
    ],
)
def test_verdict_spellings_are_normalised(raw: Any, expected: str) -> None:
    verdict = RelevancyVerdict.model_validate({"statement": "s", "verdict": raw, "reason": "r"})

    assert verdict.verdict == expected


@pytest.mark.parametrize(("weight", "score"), [(0.3, 0.65), (0.0, 0.5), (1.0, 1.0)])
async def test_an_unsure_statement_counts_the_uncertainty_weight(
    weight: float, score: float
) -> None:
    result, requests = await score_over_http(
        lambda judge: create_answer_relevancy_scorer(model=judge, uncertainty_weight=weight),
        [STATEMENTS, verdicts("yes", "Unsure"), "why"],
        RUN,
    )

    assert result.score == score
    assert result.flags["statements_total"] == 2
    assert result.flags["statements_relevant"] == 1
    assert result.flags["statements_unsure"] == 1
    assert result.attributes[A.LIVESCORE_STATEMENTS_RELEVANT] == 1
    assert between(user_prompt(requests[1]), "question") == "Where is the Eiffel Tower?"


async def test_no_statements_is_not_scorable_after_one_call() -> None:
    # Mastra scores such an answer 0, which reads as "irrelevant" on a dashboard.
    result, requests = await score_over_http(
        lambda judge: create_answer_relevancy_scorer(model=judge), [{"statements": []}], RUN
    )

    assert result.status == "skipped"
    assert result.score is None
    assert result.reason is not None
    assert "no statements" in result.reason
    assert len(requests) == 1
    assert result.usage.calls == 1


@pytest.mark.parametrize("mode", ["three_step", "one_call"])
@pytest.mark.parametrize(
    ("run", "why"),
    [
        ({"input": "Where?", "output": ""}, "the output is empty"),
        ({"input": "   ", "output": "Paris."}, "the input is empty"),
        ({"input": {"topic": "towers"}, "output": "Paris."}, "no user text found"),
    ],
)
async def test_runs_without_a_question_or_an_answer_cost_nothing(
    mode: Any, run: dict[str, Any], why: str
) -> None:
    result, requests = await score_over_http(
        lambda judge: create_answer_relevancy_scorer(model=judge, judge_mode=mode), [], run
    )

    assert result.status == "skipped"
    assert result.reason is not None
    assert result.reason.startswith(why)
    assert requests == []


async def test_one_call_with_no_statements_is_not_scorable() -> None:
    result, _ = await score_over_http(
        lambda judge: create_answer_relevancy_scorer(model=judge, judge_mode="one_call"),
        [{"statements": [], "verdicts": [], "reason": "Nothing to judge."}],
        RUN,
    )

    assert result.status == "skipped"


@pytest.mark.parametrize("weight", [-0.1, 1.5, float("nan"), True, "0.3"])
def test_a_bad_uncertainty_weight_is_refused(weight: Any) -> None:
    with pytest.raises(ValueError, match="uncertainty_weight"):
        create_answer_relevancy_scorer(model=ScriptedJudge(), uncertainty_weight=weight)
