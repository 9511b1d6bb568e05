"""The context relevance and context precision scorers: per-piece verdicts, the order the
agent received the pieces, the default context, and runs without context, over real HTTP."""

from __future__ import annotations

from typing import Any

import pytest
from _judge_support import INJECTION, Case, between, score_over_http, user_prompt

from livescore import Run, Step, ToolCall
from livescore.otel import attributes as A
from livescore.scorers import create_context_precision_scorer, create_context_relevance_scorer
from livescore.scorers._context_precision import mean_average_precision

pytestmark = pytest.mark.anyio


# -- the case the cross-cutting judge tests run (test_judge_scorers.py) --------------------


EXERCISE_CONTEXT = [
    "Exercise strengthens the heart and improves blood circulation.",
    "A balanced diet is important for overall health.",
    "Regular physical activity reduces stress and anxiety levels.",
]


def _context_relevance_case() -> Case:
    analysis = {
        "evaluations": [
            {"context_index": 0, "relevance_level": "high", "was_used": True, "reasoning": "a"},
            {"context_index": 1, "relevance_level": "none", "was_used": False, "reasoning": "b"},
            {"context_index": 2, "relevance_level": "high", "was_used": True, "reasoning": "c"},
        ],
        "missing_context": [],
    }
    run = {
        "input": "What are the benefits of exercise?",
        "output": "Regular exercise improves cardiovascular health and mental wellbeing.",
    }
    return Case(
        name="context-relevance",
        build=lambda judge, mode: create_context_relevance_scorer(
            model=judge,
            context=EXERCISE_CONTEXT,
            judge_mode=mode,
        ),
        run=run,
        step_replies=[analysis, "The score is 0.67 because the diet piece is unrelated."],
        one_call_reply={**analysis, "reason": "The diet piece is unrelated."},
        score=0.67,
        label="high",
        count_step="analyze",
        wrong_count={**analysis, "evaluations": analysis["evaluations"][:2]},
        replies_before_count=[],
        injected_run={**run, "output": f"Exercise helps the heart. {INJECTION}"},
    )


def _context_precision_case() -> Case:
    marks = [("yes", 0), ("no", 1), ("yes", 2)]
    answer = {
        "verdicts": [
            {"context_index": index, "verdict": mark, "reason": f"r{index}"}
            for mark, index in marks
        ]
    }
    run = {
        "input": "What are the benefits of exercise?",
        "output": "Regular exercise improves cardiovascular health and mental wellbeing.",
    }
    return Case(
        name="context-precision",
        build=lambda judge, mode: create_context_precision_scorer(
            model=judge,
            context=EXERCISE_CONTEXT,
            judge_mode=mode,
        ),
        run=run,
        step_replies=[answer, "The score is 0.83 because the useful pieces come first and third."],
        one_call_reply={**answer, "reason": "The diet piece sits between the useful ones."},
        score=0.83,  # (1/1 + 2/3) / 2
        label="high",
        count_step="analyze",
        wrong_count={"verdicts": answer["verdicts"][:2]},
        replies_before_count=[],
        injected_run={**run, "output": f"Exercise helps the heart. {INJECTION}"},
        data_tag="reference",
    )


JUDGE_CASES = [_context_relevance_case(), _context_precision_case()]

QUESTION = "When does the Lyon depot open?"


def agent_run() -> Run:
    """A run whose agent got a tool result, then a retrieved document, then another result."""
    return Run(
        input=QUESTION,
        output="It opens at 8 am.",
        steps=[
            Step(kind="tool", tool_call=ToolCall("parking", "c1", {}, "Parking is free.")),
            Step(kind="retriever", documents=["The Lyon depot opens at 8 am."]),
            Step(kind="tool", tool_call=ToolCall("holidays", "c2", {}, "Closed on May 1.")),
        ],
    )


def precision(*marks: tuple[str, int]) -> dict[str, Any]:
    return {
        "verdicts": [
            {"context_index": index, "verdict": mark, "reason": "r"} for mark, index in marks
        ]
    }


def evaluation(index: int, level: str, used: bool) -> dict[str, Any]:
    return {"context_index": index, "relevance_level": level, "was_used": used, "reasoning": "r"}


# -- context precision ----------------------------------------------------------------------------


async def test_precision_follows_the_order_the_agent_received_the_pieces() -> None:
    # The judge numbers the pieces wrongly (useful one as 0): Mastra sorts by that number
    # and would score 1.0; the order the agent got them decides here.
    answer = precision(("no", 1), ("yes", 0), ("no", 2))
    result, requests = await score_over_http(
        lambda judge: create_context_precision_scorer(model=judge),
        [answer, "The score is 0.5 because the useful document came second."],
        agent_run(),
    )

    assert result.score == 0.5
    assert [v["context_index"] for v in result.analyze_step_result["verdicts"]] == [0, 1, 2]
    assert [v["verdict"] for v in result.analyze_step_result["verdicts"]] == ["no", "yes", "no"]
    assert result.preprocess_step_result == {
        "pieces": [
            '{"tool": "parking", "result": "Parking is free."}',
            "The Lyon depot opens at 8 am.",
            '{"tool": "holidays", "result": "Closed on May 1."}',
        ]
    }
    context = between(user_prompt(requests[0]), "context")
    assert context.index('index="0"') < context.index("Parking") < context.index('index="1"')
    assert result.attributes[A.LIVESCORE_CONTEXT_PIECES] == 3
    assert result.attributes[A.LIVESCORE_CONTEXT_RELEVANT] == 1


async def test_precision_judges_against_the_ground_truth_when_the_run_has_one() -> None:
    run = agent_run()
    run.ground_truth = "8 am, Monday to Saturday."
    result, requests = await score_over_http(
        lambda judge: create_context_precision_scorer(model=judge),
        [precision(("no", 0), ("yes", 1), ("yes", 2)), "why"],
        run,
    )

    assert between(user_prompt(requests[0]), "reference") == "8 am, Monday to Saturday."
    assert result.score == 0.58  # (1/2 + 2/3) / 2


@pytest.mark.parametrize("mode", ["three_step", "one_call"])
async def test_precision_without_context_is_not_scorable(mode: Any) -> None:
    result, requests = await score_over_http(
        lambda judge: create_context_precision_scorer(model=judge, judge_mode=mode),
        [],
        {"input": QUESTION, "output": "8 am."},
    )

    assert result.status == "skipped"
    assert result.reason is not None
    assert result.reason.startswith("no context to judge context precision against")
    assert requests == []


async def test_precision_without_a_reference_is_not_scorable() -> None:
    result, requests = await score_over_http(
        lambda judge: create_context_precision_scorer(model=judge, context=["A fact."]),
        [],
        {"input": QUESTION, "output": ""},
    )

    assert result.status == "skipped"
    assert result.reason is not None
    assert "no reference answer" in result.reason
    assert requests == []


async def test_no_useful_piece_scores_zero() -> None:
    result, _ = await score_over_http(
        lambda judge: create_context_precision_scorer(model=judge),
        [precision(("no", 0), ("no", 1), ("no", 2)), "why"],
        agent_run(),
    )

    assert result.score == 0.0
    assert result.label == "poor"


@pytest.mark.parametrize(
    ("relevant", "expected"),
    [
        ([True], 1.0),
        ([True, True, False], 1.0),
        ([False, False, True], 1 / 3),
        ([True, False, False, True], (1 + 2 / 4) / 2),
        ([], 0.0),
    ],
)
def test_mean_average_precision(relevant: list[bool], expected: float) -> None:
    assert mean_average_precision(relevant) == pytest.approx(expected)


async def test_pieces_past_the_context_limit_are_not_judged() -> None:
    result, requests = await score_over_http(
        lambda judge: create_context_precision_scorer(
            model=judge, context=["A" * 150, "B" * 150, "C" * 150], max_context_chars=250
        ),
        [precision(("yes", 0), ("no", 1)), "why"],
        {"input": QUESTION, "output": "8 am."},
    )

    assert result.status == "scored", result.error
    assert len(result.preprocess_step_result["pieces"]) == 2
    assert result.flags["context_pieces_judged"] == 2
    assert result.flags["context_truncated"] is True
    assert "C" * 10 not in user_prompt(requests[0])


# -- context relevance ----------------------------------------------------------------------------


async def test_relevance_keeps_per_piece_verdicts_in_the_step_result() -> None:
    answer = {
        "evaluations": [
            evaluation(5, "none", False),  # the judge's own numbering is overruled
            evaluation(0, "High", True),
            evaluation(1, "low", False),
        ],
        "missing_context": [],
    }
    result, requests = await score_over_http(
        lambda judge: create_context_relevance_scorer(model=judge),
        [answer, "The score is 0.43 because only the depot document is relevant."],
        agent_run(),
    )

    evaluations = result.analyze_step_result["evaluations"]
    assert [e["context_index"] for e in evaluations] == [0, 1, 2]
    assert [e["relevance_level"] for e in evaluations] == ["none", "high", "low"]
    assert [e["was_used"] for e in evaluations] == [False, True, False]
    assert result.analyze_step_result["missing_context"] == []
    assert result.score == 0.43  # (0 + 1 + 0.3) / 3
    assert result.flags["context_levels"] == {"high": 1, "medium": 0, "low": 1, "none": 1}
    assert result.flags["context_used"] == 1
    assert result.attributes[A.LIVESCORE_CONTEXT_RELEVANT] == 1
    # The pieces are the run's tool results and documents, in the order received.
    assert "Parking is free." in between(user_prompt(requests[0]), "context")
    assert between(user_prompt(requests[0]), "question") == QUESTION


async def test_relevance_penalises_unused_relevant_pieces_and_missing_information() -> None:
    answer = {
        "evaluations": [
            evaluation(0, "high", False),
            evaluation(1, "high", True),
            evaluation(2, "medium", True),
        ],
        "missing_context": ["the Sunday hours", "the address"],
    }
    result, _ = await score_over_http(
        lambda judge: create_context_relevance_scorer(model=judge),
        [answer, "why"],
        agent_run(),
    )

    # (1 + 1 + 0.7) / 3 = 0.9, - 0.1 for the unused high piece, - 2 × 0.15 missing
    assert result.score == 0.5
    assert result.flags["missing_context"] == 2


@pytest.mark.parametrize("mode", ["three_step", "one_call"])
@pytest.mark.parametrize(
    ("run", "why"),
    [
        ({"input": QUESTION, "output": "8 am."}, "no context to judge relevance against"),
        (
            {"input": " ", "output": "8 am.", "metadata": {"context": ["A fact."]}},
            "the input is empty",
        ),
    ],
)
async def test_relevance_without_context_or_question_is_not_scorable(
    mode: Any, run: dict[str, Any], why: str
) -> None:
    result, requests = await score_over_http(
        lambda judge: create_context_relevance_scorer(model=judge, judge_mode=mode), [], run
    )

    assert result.status == "skipped"
    assert result.reason is not None
    assert result.reason.startswith(why)
    assert requests == []


def test_relevance_refuses_bad_penalties() -> None:
    from livescore.testing import ScriptedJudge

    with pytest.raises(ValueError, match="missing_penalty"):
        create_context_relevance_scorer(model=ScriptedJudge(), missing_penalty=2)
