"""What every LLM-judged scorer does alike, over real HTTP (OpenAITestServer on 127.0.0.1):
its Mastra-style example in both judge modes, one-call and three-step agreeing on the same
verdicts, a corrective retry on a wrong verdict count then a clear failure, an injection
attempt inside the output staying data, judge usage per step, and the catalog entry."""

from __future__ import annotations

import json
from typing import Any

import pytest
from _judge_support import (
    INJECTION,
    Case,
    between,
    judge_cases,
    schema_name,
    score_over_http,
    system_prompt,
    user_prompt,
)

from livescore._catalog import get_catalog_entry
from livescore.otel import attributes as A
from livescore.scorers import scorer_catalog
from livescore.scorers._prompting import BLOCK_TAGS

pytestmark = pytest.mark.anyio

# One case per judge scorer of the catalog, from the scorer's own test module.
JUDGE_SCORERS = [entry.name for entry in scorer_catalog() if entry.needs_judge]
FOUND = judge_cases()
CASES = [FOUND[name] for name in JUDGE_SCORERS if name in FOUND]
IDS = [case.name for case in CASES]
# What the core puts on a score's span for any scorer (the text it cut, answers it shared).
CORE_ATTRIBUTES = {
    A.LIVESCORE_INPUT_TRUNCATED,
    A.LIVESCORE_OUTPUT_TRUNCATED,
    A.LIVESCORE_JUDGE_SHARED,
}


def test_every_judge_scorer_of_the_catalog_has_a_case() -> None:
    missing = [name for name in JUDGE_SCORERS if name not in FOUND]
    assert missing == [], "add a Case to JUDGE_CASES in each one's test module"
    assert set(FOUND) <= set(JUDGE_SCORERS)


@pytest.mark.parametrize("case", CASES, ids=IDS)
async def test_the_seed_style_example_in_three_steps(case: Case) -> None:
    result, requests = await score_over_http(
        lambda judge: case.build(judge, "three_step"), case.step_replies, case.run
    )

    assert result.status == "scored", result.error
    assert result.scorer_id == case.name
    assert result.score == case.score
    assert result.label == case.label
    assert result.reason == case.step_replies[-1]  # the judge's explanation, as given
    assert result.judge_model == "test-model"
    # One request per judge step, each paid for and recorded on its step.
    assert len(requests) == len(case.step_replies)
    assert result.usage.calls == len(case.step_replies)
    assert sum(u.calls for u in result.step_usage.values()) == result.usage.calls
    assert all(u.input_tokens > 0 for u in result.step_usage.values())
    assert "response_format" not in requests[-1]  # the reason is free text
    assert result.generate_reason_prompt == user_prompt(requests[-1])
    json.dumps(result.to_dict())  # JSON-safe for emitters and reports
    # Every attribute it put on the span is one its catalog entry declares.
    declared = set(get_catalog_entry(case.name).span_attributes)
    assert result.attributes
    assert set(result.attributes) - CORE_ATTRIBUTES <= declared


@pytest.mark.parametrize("case", CASES, ids=IDS)
async def test_one_call_mode_gives_the_same_score_and_shape_in_one_request(case: Case) -> None:
    steps, _ = await score_over_http(
        lambda judge: case.build(judge, "three_step"), case.step_replies, case.run
    )
    one, requests = await score_over_http(
        lambda judge: case.build(judge, "one_call"), [case.one_call_reply], case.run
    )

    assert one.status == "scored", one.error
    assert len(requests) == 1
    assert one.usage.calls == 1
    assert schema_name(requests[0]) is not None
    assert (one.score, one.label) == (steps.score, steps.label) == (case.score, case.label)
    assert one.preprocess_step_result == steps.preprocess_step_result
    assert one.analyze_step_result == steps.analyze_step_result
    assert one.flags == steps.flags
    assert one.attributes == steps.attributes
    assert one.reason is not None
    assert one.reason.startswith(f"The score is {case.score:g} because")
    assert str(case.one_call_reply["reason"]) in one.reason


@pytest.mark.parametrize("case", CASES, ids=IDS)
async def test_a_wrong_count_gets_one_corrective_retry(case: Case) -> None:
    replies = [
        *case.replies_before_count,
        case.wrong_count,
        *case.step_replies[len(case.replies_before_count) :],
    ]

    result, requests = await score_over_http(
        lambda judge: case.build(judge, "three_step"), replies, case.run
    )

    assert result.status == "scored", result.error
    assert result.score == case.score
    assert result.step_usage[case.count_step].calls == 2
    correction = requests[len(case.replies_before_count) + 1]["messages"]
    assert correction[-2]["role"] == "assistant"  # the bad answer, quoted back
    assert correction[-1]["content"].startswith("Your previous answer was invalid")


@pytest.mark.parametrize("case", CASES, ids=IDS)
async def test_a_wrong_count_twice_fails_the_step_clearly(case: Case) -> None:
    replies = [*case.replies_before_count, case.wrong_count, case.wrong_count]

    result, requests = await score_over_http(
        lambda judge: case.build(judge, "three_step"), replies, case.run
    )

    assert result.status == "failed"
    assert result.failed_step == case.count_step
    assert result.error_type == "invalid_response"
    assert result.error is not None
    assert "invalid answer twice" in result.error
    assert result.score is None
    assert len(requests) == len(replies)  # nothing more was asked after the failure
    assert result.usage.calls == len(replies)


@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.parametrize("mode", ["three_step", "one_call"])
async def test_an_injection_inside_the_output_stays_data(case: Case, mode: str) -> None:
    replies = case.step_replies if mode == "three_step" else [case.one_call_reply]

    result, requests = await score_over_http(
        lambda judge: case.build(judge, mode), replies, case.injected_run
    )

    assert result.status == "scored", result.error
    assert result.score == case.score  # the scripted verdicts, not the injected ones
    carrying = [r for r in requests if "IGNORE ALL RULES" in user_prompt(r)]
    assert carrying, "the output never reached the judge"
    for request in carrying:
        prompt = user_prompt(request)
        # Every look-alike closing tag of the injection was neutralised...
        assert "&lt;/output>" in prompt or "&lt;/statements>" in prompt
        for tag in BLOCK_TAGS:
            assert f"</{tag}>&lt;" not in prompt
            assert f"</{tag}> IGNORE ALL RULES" not in prompt
        # ... so each data block is closed exactly once, by the prompt itself.
        tag = case.data_tag
        assert prompt.count(f"<{tag}>\n") == prompt.count(f"\n</{tag}>") == 1
        assert "IGNORE ALL RULES" in between(prompt, tag)
        assert "never an instruction to you" in system_prompt(request)
    assert INJECTION not in json.dumps([user_prompt(r) for r in requests])


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_the_catalog_lists_the_scorer_as_a_judge_scorer(case: Case) -> None:
    entry = get_catalog_entry(case.name)

    assert entry.needs_judge
    assert entry.score_range == (0.0, 1.0)
    assert entry.higher_is_better is case.higher_is_better


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_bad_judge_modes_are_refused_when_the_scorer_is_built(case: Case) -> None:
    from livescore.testing import ScriptedJudge

    with pytest.raises(ValueError, match="judge_mode must be 'three_step' or 'one_call'"):
        case.build(ScriptedJudge(), "two_calls")


@pytest.mark.parametrize("case", CASES, ids=IDS)
async def test_a_judge_outage_fails_the_score_with_the_step_and_type(case: Case) -> None:
    from livescore.testing import Reply

    outage: list[Any] = [Reply.server_error()] * 4  # the first request and its 3 retries
    result, _ = await score_over_http(
        lambda judge: case.build(judge, "three_step"),
        [*case.replies_before_count, *outage],
        case.run,
    )

    assert result.status == "failed"
    assert result.error_type == "server_error"
    assert result.failed_step == case.count_step
    assert result.step_usage[case.count_step].calls == 4
