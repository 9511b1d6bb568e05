"""The criteria scorer: a criterion in plain words, its checks derived once and reused, a
fixed rubric, partial credit, over real HTTP."""

from __future__ import annotations

from typing import Any

import pytest
from _judge_support import INJECTION, Case, between, score_over_http, user_prompt, verdicts

from livescore.otel import attributes as A
from livescore.scorers import create_criteria_scorer
from livescore.scorers._criteria import parse_rubric
from livescore.testing import OpenAITestServer, ScriptedJudge

pytestmark = pytest.mark.anyio


# -- the case the cross-cutting judge tests run (test_judge_scorers.py) --------------------


REFUND_CHECKS = [
    "The reply is polite.",
    "The reply names the refund amount.",
    "The reply offers a next step.",
]


def _criteria_case() -> Case:
    run = {
        "input": "Where is my refund?",
        "output": "Hello! Your refund of 42 EUR was sent on Monday.",
    }
    marks = ("yes", "yes", "unsure")
    return Case(
        name="criteria",
        build=lambda judge, mode: create_criteria_scorer(
            model=judge,
            criteria="The reply is polite, names the refund amount and offers a next step.",
            judge_mode=mode,
        ),
        run=run,
        step_replies=[
            {"checks": REFUND_CHECKS},
            verdicts(*marks, items=REFUND_CHECKS),
            "The score is 0.83 because the next step is only implied.",
        ],
        one_call_reply={
            "checks": REFUND_CHECKS,
            **verdicts(*marks, items=REFUND_CHECKS),
            "reason": "The next step is only implied.",
        },
        score=0.83,  # (2 + 0.5) / 3
        label="high",
        count_step="analyze",
        wrong_count=verdicts("yes", items=REFUND_CHECKS[:1]),
        replies_before_count=[{"checks": REFUND_CHECKS}],
        injected_run={**run, "output": f"Hello! Your refund of 42 EUR was sent. {INJECTION}"},
    )


JUDGE_CASES = [_criteria_case()]

CRITERIA = "The reply is polite, names the refund amount and offers a next step."
RUN = {"input": "Where is my refund?", "output": "Hello! Your refund of 42 EUR was sent."}


async def test_the_checks_are_derived_once_and_reused_for_later_scores() -> None:
    async with OpenAITestServer(
        [
            {"checks": REFUND_CHECKS},
            verdicts("yes", "yes", "no", items=REFUND_CHECKS),
            "why",
            verdicts("yes", "yes", "yes", items=REFUND_CHECKS),
            "why",
        ]
    ) as server:
        scorer = create_criteria_scorer(model=server.judge(), criteria=CRITERIA)
        first = await scorer.score(RUN)
        second = await scorer.score(RUN)

    assert first.usage.calls == 3
    assert second.usage.calls == 2  # no new checklist: it depends on the criterion only
    assert second.preprocess_prompt is None
    assert (
        first.preprocess_step_result == second.preprocess_step_result == {"checks": REFUND_CHECKS}
    )
    assert (first.score, second.score) == (0.67, 1.0)
    assert CRITERIA in user_prompt(server.requests[0])
    assert "<output>" not in user_prompt(server.requests[0])  # the checklist sees no run data
    checks = between(user_prompt(server.requests[1]), "checks")
    assert '<check index="2">The reply names the refund amount.</check>' in checks


async def test_a_rubric_is_used_as_given_without_a_derivation_call() -> None:
    result, requests = await score_over_http(
        lambda judge: create_criteria_scorer(
            model=judge, criteria=CRITERIA, rubric="- Greets the user\n- Names the amount\n"
        ),
        [verdicts("yes", "Partially"), "why"],
        RUN,
    )

    assert len(requests) == 2
    assert result.preprocess_step_result == {"checks": ["Greets the user", "Names the amount"]}
    assert result.score == 0.75  # (1 + 0.5) / 2
    assert result.flags["checks_partial"] == 1
    assert result.attributes[A.LIVESCORE_CHECKS_TOTAL] == 2
    assert result.attributes[A.LIVESCORE_CHECKS_MET] == 1


async def test_a_judge_that_finds_no_checks_keeps_the_criterion_as_the_check() -> None:
    result, requests = await score_over_http(
        lambda judge: create_criteria_scorer(model=judge, criteria="Be kind."),
        [{"checks": []}, verdicts("yes"), "why"],
        RUN,
    )

    assert result.preprocess_step_result == {"checks": ["Be kind."]}
    assert "Be kind." in between(user_prompt(requests[1]), "checks")


@pytest.mark.parametrize("mode", ["three_step", "one_call"])
async def test_a_rubric_in_one_call_mode(mode: Any) -> None:
    replies: list[Any] = (
        [verdicts("no"), "why"]
        if mode == "three_step"
        else [{**verdicts("no"), "reason": "No greeting."}]
    )
    result, requests = await score_over_http(
        lambda judge: create_criteria_scorer(
            model=judge, criteria=CRITERIA, rubric=["Greets the user"], judge_mode=mode
        ),
        replies,
        RUN,
    )

    assert result.score == 0.0
    assert len(requests) == len(replies)


async def test_an_answer_that_is_not_text_is_not_scorable_and_costs_nothing() -> None:
    result, requests = await score_over_http(
        lambda judge: create_criteria_scorer(model=judge, criteria=CRITERIA),
        [],
        {"input": "Refund?", "output": {"status": "sent"}},
    )

    assert result.status == "skipped"
    assert requests == []


def test_parse_rubric() -> None:
    assert parse_rubric(["  a ", "", "b"]) == ["a", "b"]
    assert parse_rubric("1) first\n* second\n• third") == ["first", "second", "third"]
    with pytest.raises(ValueError, match="no check"):
        parse_rubric("\n - \n")
    with pytest.raises(TypeError):
        parse_rubric([1, 2])  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"criteria": ""}, ValueError),
        ({"criteria": 3}, TypeError),
        ({"criteria": "x", "partial_weight": 2}, ValueError),
        ({"criteria": "x", "rubric": []}, ValueError),
    ],
)
def test_bad_options_are_refused(options: dict[str, Any], error: type[Exception]) -> None:
    with pytest.raises(error):
        create_criteria_scorer(model=ScriptedJudge(), **options)
