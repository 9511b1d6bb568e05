"""The faithfulness scorer: its edge cases and the fixes to Mastra's, over real HTTP."""

from __future__ import annotations

from typing import Any

import pytest
from _judge_support import (
    INJECTION,
    Case,
    between,
    schema_name,
    score_over_http,
    user_prompt,
    verdicts,
)

from livescore import Run, Step, ToolCall
from livescore.judges import JudgeConfigError
from livescore.otel import attributes as A
from livescore.scorers import create_faithfulness_scorer
from livescore.scorers._claims import EXTRACT_SYSTEM
from livescore.scorers._faithfulness import FaithfulnessVerdict, FaithfulnessVerdicts
from livescore.scorers._hallucination_prompts import EXTRACT_SYSTEM as HALLUCINATION_EXTRACT
from livescore.scorers._judged import FAITHFULNESS_LABELS
from livescore.testing import ScriptedJudge

pytestmark = pytest.mark.anyio


# -- the case the cross-cutting judge tests run (test_judge_scorers.py) --------------------


def _faithfulness_case() -> Case:
    context = [
        "The Tesla Model S was launched in 2012. The car has a maximum range of 375 miles "
        "and comes with advanced autopilot features."
    ]
    claims = [
        "The Tesla Model S was launched in 2012.",
        "The Tesla Model S has a range of 405 miles.",
        "The Tesla Model S might get software updates.",
    ]
    marks = ("yes", "no", "unsure")
    output = (
        "The Tesla Model S was launched in 2012 and has a range of 405 miles. It might get "
        "software updates."
    )
    return Case(
        name="faithfulness",
        build=lambda judge, mode: create_faithfulness_scorer(
            model=judge,
            context=context,
            judge_mode=mode,
        ),
        run={"input": "Tell me about the Model S.", "output": output},
        step_replies=[
            {"claims": claims},
            verdicts(*marks, items=claims),
            "The score is 0.33 because the range contradicts the context.",
        ],
        one_call_reply={
            "claims": claims,
            **verdicts(*marks, items=claims),
            "reason": "The range contradicts the context; updates are not mentioned.",
        },
        score=0.33,
        label="low",
        count_step="analyze",
        wrong_count=verdicts("yes", "no", items=claims[:2]),
        replies_before_count=[{"claims": claims}],
        injected_run={"input": "Tell me about the Model S.", "output": f"{output} {INJECTION}"},
    )


JUDGE_CASES = [_faithfulness_case()]

CONTEXT = ["The Eiffel Tower is in Paris. It is 330 metres tall."]
RUN = {"input": "Tell me about the tower.", "output": "It is in Paris. It is 500 m tall."}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("yes", "yes"),
        ("Yes", "yes"),
        ("YES", "yes"),
        (" yes. ", "yes"),
        (True, "yes"),
        ("Supported", "yes"),
        ("No", "no"),
        (False, "no"),
        ("contradicted", "no"),
        ("Unsure", "unsure"),
        ("not mentioned", "unsure"),
        ("NOT_IN_CONTEXT", "unsure"),
    ],
)
def test_verdicts_are_read_case_insensitively(raw: Any, expected: str) -> None:
    verdict = FaithfulnessVerdict.model_validate({"statement": "s", "verdict": raw, "reason": "r"})

    assert verdict.verdict == expected


def test_the_answer_schemas_keep_mastras_property_names() -> None:
    schema = FaithfulnessVerdicts.model_json_schema()
    item = schema["$defs"]["FaithfulnessVerdict"]

    assert list(schema["properties"]) == ["verdicts"]
    assert list(item["properties"]) == ["statement", "verdict", "reason"]
    assert item["properties"]["verdict"]["enum"] == ["yes", "no", "unsure"]


async def test_capitalised_yes_counts_as_supported() -> None:
    # Mastra compares with "yes" exactly: "Yes" would count as unsupported there.
    claims = {"claims": ["It is in Paris.", "It is 500 m tall."]}
    result, _ = await score_over_http(
        lambda judge: create_faithfulness_scorer(model=judge, context=CONTEXT),
        [claims, verdicts("Yes", "NO"), "The score is 0.5 because the height is wrong."],
        RUN,
    )

    assert result.score == 0.5
    assert [v["verdict"] for v in result.analyze_step_result["verdicts"]] == ["yes", "no"]
    assert result.flags["claims_supported"] == 1
    assert result.flags["claims_contradicted"] == 1
    assert result.attributes[A.LIVESCORE_CLAIMS_TOTAL] == 2
    assert result.attributes[A.LIVESCORE_CLAIMS_SUPPORTED] == 1


async def test_the_default_context_is_the_runs_tool_results() -> None:
    run = Run(
        input="Weather in Paris?",
        output="It is 18°C and sunny in Paris.",
        steps=[
            Step(kind="tool", tool_call=ToolCall("weather", "c1", {"city": "Paris"}, "18C sunny")),
            Step(kind="tool", tool_call=ToolCall("news", "c2", {}, error="timeout")),
        ],
    )
    claims = {"claims": ["It is 18°C in Paris.", "It is sunny in Paris."]}

    result, requests = await score_over_http(
        lambda judge: create_faithfulness_scorer(model=judge),
        [claims, verdicts("yes", "yes"), "The score is 1 because the tool says so."],
        run,
    )

    assert result.score == 1.0
    assert result.label == "faithful"
    context = between(user_prompt(requests[1]), "context")
    assert '{"tool": "weather", "arguments": {"city": "Paris"}, "result": "18C sunny"}' in context
    assert "timeout" not in context  # a failed call is not evidence


@pytest.mark.parametrize("mode", ["three_step", "one_call"])
async def test_no_context_is_not_scorable_and_costs_nothing(mode: Any) -> None:
    result, requests = await score_over_http(
        lambda judge: create_faithfulness_scorer(model=judge, judge_mode=mode), [], RUN
    )

    assert result.status == "skipped"
    assert result.reason is not None
    assert result.reason.startswith("no context to judge claims against")
    assert requests == []


@pytest.mark.parametrize("mode", ["three_step", "one_call"])
async def test_an_empty_output_is_fully_faithful_without_a_call(mode: Any) -> None:
    result, requests = await score_over_http(
        lambda judge: create_faithfulness_scorer(model=judge, context=CONTEXT, judge_mode=mode),
        [],
        {"input": "Hi", "output": "  "},
    )

    assert requests == []
    assert result.score == 1.0
    assert result.label == "faithful"
    assert result.preprocess_step_result == {"claims": []}
    assert result.analyze_step_result == {"verdicts": []}
    assert result.reason is not None
    assert "empty" in result.reason


async def test_no_claims_scores_the_scale_after_one_call() -> None:
    result, requests = await score_over_http(
        lambda judge: create_faithfulness_scorer(model=judge, context=CONTEXT, scale=10),
        [{"claims": []}],
        {"input": "Hi", "output": "Hello! How can I help?"},
    )

    assert len(requests) == 1
    assert result.score == 10.0
    assert result.label == "faithful"
    assert result.flags["claims_total"] == 0
    assert result.reason is not None
    assert "no factual claims" in result.reason


def test_labels_mirror_the_hallucination_bands() -> None:
    from livescore.scorers._hallucination import HALLUCINATION_LABELS, hallucination_label
    from livescore.scorers._judged import quality_label

    mirror = dict(zip(HALLUCINATION_LABELS, reversed(FAITHFULNESS_LABELS), strict=True))
    for h in (0.0, 0.1, 0.2, 0.5, 0.75, 0.9, 1.0):
        assert quality_label(1 - h, labels=FAITHFULNESS_LABELS) == mirror[hallucination_label(h)]


def test_claims_extraction_is_the_hallucination_scorers_request() -> None:
    # The same system prompt, prompt and schema: what lets a run's memo share the call.
    from livescore.scorers._claims import ExtractedClaims, extract_prompt
    from livescore.scorers._hallucination import ExtractedClaims as HallucinationClaims

    assert EXTRACT_SYSTEM is HALLUCINATION_EXTRACT
    assert HallucinationClaims is ExtractedClaims
    assert "<output>\nA.\n</output>" in extract_prompt("A.")


async def test_the_extraction_request_is_byte_for_byte_the_hallucination_one() -> None:
    from livescore.scorers import create_hallucination_scorer

    replies: list[Any] = [{"claims": ["It is in Paris."]}, verdicts("yes"), "why"]
    faithfulness, f_requests = await score_over_http(
        lambda judge: create_faithfulness_scorer(model=judge, context=CONTEXT), replies, RUN
    )
    hallucination, h_requests = await score_over_http(
        lambda judge: create_hallucination_scorer(model=judge, context=CONTEXT),
        [{"claims": ["It is in Paris."]}, verdicts("no"), "why"],
        RUN,
    )

    assert faithfulness.ok
    assert hallucination.ok
    assert f_requests[0]["messages"] == h_requests[0]["messages"]
    assert schema_name(f_requests[0]) == schema_name(h_requests[0]) == "ExtractedClaims"
    assert f_requests[1]["messages"] != h_requests[1]["messages"]  # verdicts differ


def test_bad_options_are_refused_when_built() -> None:
    with pytest.raises(ValueError, match="scale"):
        create_faithfulness_scorer(model=ScriptedJudge(), context=CONTEXT, scale=0)
    with pytest.raises(ValueError, match="max_context_chars"):
        create_faithfulness_scorer(model=ScriptedJudge(), max_context_chars=10)
    with pytest.raises(TypeError, match="get_context"):
        create_faithfulness_scorer(model=ScriptedJudge(), get_context="nope")  # type: ignore[arg-type]
    with pytest.raises(JudgeConfigError, match="needs a judge"):
        create_faithfulness_scorer(model="")


async def test_a_large_context_is_cut_and_flagged() -> None:
    long_context = ["A" * 300, "B" * 300]
    result, requests = await score_over_http(
        lambda judge: create_faithfulness_scorer(
            model=judge, context=long_context, max_context_chars=400
        ),
        [{"claims": ["x"]}, verdicts("unsure"), "why"],
        RUN,
    )

    assert result.flags["context_truncated"] is True
    assert result.flags["context_chars"] == 600
    assert result.attributes[A.LIVESCORE_CONTEXT_TRUNCATED] is True
    assert "B" * 300 not in user_prompt(requests[1])
    assert result.score == 0.0
    assert result.label == "unfaithful"
