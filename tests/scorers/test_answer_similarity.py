"""The answer similarity scorer: its edge cases and the fixes to Mastra's, over real HTTP."""

from __future__ import annotations

from typing import Any

import pytest
from _judge_support import INJECTION, Case, between, score_over_http, user_prompt

from livescore.otel import attributes as A
from livescore.scorers import create_answer_similarity_scorer
from livescore.scorers._answer_similarity import UnitMatch, similarity_from_matches

pytestmark = pytest.mark.anyio


# -- the case the cross-cutting judge tests run (test_judge_scorers.py) --------------------


def _answer_similarity_case() -> Case:
    gt_units = ["Paris is the capital of France.", "Paris is the largest city of France."]
    out_units = ["The capital of France is Paris."]
    matches = {
        "matches": [
            {
                "ground_truth_unit": gt_units[0],
                "output_unit": out_units[0],
                "match_type": "semantic",
                "explanation": "Same fact, reworded.",
            },
            {
                "ground_truth_unit": gt_units[1],
                "output_unit": None,
                "match_type": "missing",
                "explanation": "The answer does not say it.",
            },
        ],
        "extra_in_output": [],
        "contradictions": [],
    }
    run = {
        "input": "What is the capital of France?",
        "output": "The capital of France is Paris.",
        "ground_truth": "Paris is the capital of France and its largest city.",
    }
    return Case(
        name="answer-similarity",
        build=lambda judge, mode: create_answer_similarity_scorer(
            model=judge,
            judge_mode=mode,
        ),
        run=run,
        step_replies=[
            {"output_units": out_units, "ground_truth_units": gt_units},
            matches,
            "The score is 0.27 because the answer misses that Paris is the largest city.",
        ],
        one_call_reply={
            "output_units": out_units,
            "ground_truth_units": gt_units,
            **matches,
            "reason": "It misses the largest-city fact.",
        },
        score=0.27,  # (0.8 - 0.15) / 2.4
        label="low",
        count_step="analyze",
        wrong_count={**matches, "matches": matches["matches"][:1]},
        replies_before_count=[{"output_units": out_units, "ground_truth_units": gt_units}],
        injected_run={**run, "output": f"The capital of France is Paris. {INJECTION}"},
    )


JUDGE_CASES = [_answer_similarity_case()]

UNITS = {"output_units": ["Paris is the capital."], "ground_truth_units": ["Paris is the capital."]}


def matches(*types: str, contradictions: int = 0, extra: int = 0) -> dict[str, Any]:
    return {
        "matches": [
            {
                "ground_truth_unit": f"unit {i}",
                "output_unit": None if t == "missing" else f"answer {i}",
                "match_type": t,
                "explanation": "e",
            }
            for i, t in enumerate(types)
        ],
        "extra_in_output": [f"extra {i}" for i in range(extra)],
        "contradictions": [
            {
                "output_unit": "Lyon is the capital.",
                "ground_truth_unit": "unit 0",
                "explanation": "e",
            }
        ]
        * contradictions,
    }


@pytest.mark.parametrize("mode", ["three_step", "one_call"])
@pytest.mark.parametrize("ground_truth", [None, "", "   "])
async def test_without_a_ground_truth_it_is_not_scorable(mode: Any, ground_truth: Any) -> None:
    run = {"input": "Capital?", "output": "Paris.", "ground_truth": ground_truth}
    result, requests = await score_over_http(
        lambda judge: create_answer_similarity_scorer(model=judge, judge_mode=mode), [], run
    )

    assert result.status == "skipped"
    assert result.reason is not None
    assert result.reason.startswith("no ground truth")
    assert requests == []


@pytest.mark.parametrize("mode", ["three_step", "one_call"])
async def test_an_empty_answer_scores_zero_without_a_call(mode: Any) -> None:
    run = {"input": "Capital?", "output": "", "ground_truth": "Paris is the capital."}
    result, requests = await score_over_http(
        lambda judge: create_answer_similarity_scorer(model=judge, judge_mode=mode), [], run
    )

    assert requests == []
    assert result.score == 0.0
    assert result.label == "poor"
    assert result.reason is not None
    assert "empty" in result.reason


async def test_a_ground_truth_without_units_is_not_scorable() -> None:
    run = {"input": "Capital?", "output": "Paris.", "ground_truth": "…"}
    result, requests = await score_over_http(
        lambda judge: create_answer_similarity_scorer(model=judge),
        [{"output_units": ["Paris."], "ground_truth_units": []}],
        run,
    )

    assert result.status == "skipped"
    assert len(requests) == 1


async def test_a_contradiction_scores_zero() -> None:
    run = {"input": "Capital?", "output": "Lyon.", "ground_truth": "Paris is the capital."}
    result, _ = await score_over_http(
        lambda judge: create_answer_similarity_scorer(model=judge),
        [UNITS, matches("missing", contradictions=1), "The score is 0 because Lyon is wrong."],
        run,
    )

    assert result.score == 0.0
    assert result.flags["contradictions"] == 1
    assert result.attributes[A.LIVESCORE_GROUND_TRUTH_CONTRADICTIONS] == 1
    assert result.attributes[A.LIVESCORE_GROUND_TRUTH_MATCHED] == 0


async def test_a_structured_ground_truth_is_compared_as_json() -> None:
    run = {"input": "Where?", "output": "Lyon, France.", "ground_truth": {"city": "Lyon"}}
    result, requests = await score_over_http(
        lambda judge: create_answer_similarity_scorer(model=judge),
        [UNITS, matches("exact"), "why"],
        run,
    )

    assert result.score == 1.0
    assert between(user_prompt(requests[0]), "ground_truth") == '{"city": "Lyon"}'


@pytest.mark.parametrize(
    ("types", "extra", "expected"),
    [
        (["exact"], 0, 1.0),
        (["semantic"], 0, 0.67),
        (["partial"], 0, 0.33),
        (["missing"], 0, 0.0),
        (["exact", "missing"], 0, 0.44),
        (["exact"], 2, 0.9),
        (["exact"], 9, 0.8),  # the extra-information penalty stops at 0.2
    ],
)
def test_mastras_weights(types: list[str], extra: int, expected: float) -> None:
    assert round(similarity_from_matches(types, extras=extra), 2) == expected


def test_match_type_spellings_are_normalised() -> None:
    match = UnitMatch.model_validate(
        {
            "ground_truth_unit": "g",
            "output_unit": None,
            "match_type": "Paraphrase",
            "explanation": "",
        }
    )

    assert match.match_type == "semantic"
