"""The code tool-call accuracy scorer: the expected tool, the expected order, partial credit."""

from __future__ import annotations

from typing import Any

import pytest
from _tool_runs import tool_run

from livescore import Run
from livescore.scorers import create_tool_call_accuracy_scorer
from livescore.scorers._tool_call_accuracy import TOOL_CALL_ACCURACY_LABELS


def score(run: Run, **options: Any) -> Any:
    return create_tool_call_accuracy_scorer(**options).run_sync(run)


def test_expected_tool_called() -> None:
    result = score(tool_run("search", "get_weather"), expected_tool="get_weather")
    assert result.score == 1.0
    assert result.label == "correct"
    assert result.preprocess_step_result["actual_tools"] == ["search", "get_weather"]
    assert result.reason == "Called get_weather as expected. Calls: search, get_weather."


def test_expected_tool_not_called() -> None:
    result = score(tool_run("search"), expected_tool="get_weather")
    assert result.score == 0.0
    assert result.label == "incorrect"
    assert result.reason == "Expected get_weather; the agent did not. Calls: search."


def test_no_tool_call_scores_zero() -> None:
    result = score(tool_run(), expected_tool="get_weather")
    assert result.score == 0.0
    assert result.reason == "No tool was called; expected get_weather."


def test_failed_call_counts_and_shows_in_the_reason() -> None:
    result = score(tool_run(("get_weather", "HTTP 503")), expected_tool="get_weather")
    assert result.score == 1.0
    assert result.reason == (
        "Called get_weather as expected. Calls: get_weather (failed: HTTP 503)."
    )
    assert result.analyze_step_result["failed_calls"] == [
        {"name": "get_weather", "ok": False, "error": "HTTP 503"}
    ]


def test_strict_single_tool() -> None:
    assert score(tool_run("get_weather"), expected_tool="get_weather", strict=True).score == 1
    extra = score(tool_run("get_weather", "search"), expected_tool="get_weather", strict=True)
    assert extra.score == 0.0
    assert extra.reason == (
        "Expected exactly one call, to get_weather; the agent did not. Calls: get_weather, search."
    )
    partial = score(
        tool_run("get_weather", "search"),
        expected_tool="get_weather",
        strict=True,
        partial_credit=True,
    )
    assert partial.score == pytest.approx(2 * 1 / 3)
    assert partial.label == "partial"


def test_relaxed_order() -> None:
    order = ["search", "summarize"]
    assert score(tool_run("search", "x", "summarize"), expected_tool_order=order).score == 1
    assert score(tool_run("summarize", "search"), expected_tool_order=order).score == 0
    assert score(tool_run("search"), expected_tool_order=order).score == 0


def test_repeated_tools_in_the_order() -> None:
    # Mastra looks each expected tool up by its first index, so it fails this valid path.
    order = ["search", "read", "search"]
    assert score(tool_run("search", "read", "search"), expected_tool_order=order).score == 1
    assert score(tool_run("search", "read"), expected_tool_order=order).score == 0


def test_strict_order() -> None:
    order = ["search", "summarize"]
    assert score(tool_run("search", "summarize"), expected_tool_order=order, strict=True).score
    result = score(tool_run("search", "x", "summarize"), expected_tool_order=order, strict=True)
    assert result.score == 0.0
    assert "exactly the calls search → summarize" in (result.reason or "")


def test_partial_credit_for_order() -> None:
    order = ["search", "read", "summarize"]
    relaxed = score(tool_run("search", "summarize"), expected_tool_order=order, partial_credit=True)
    assert relaxed.score == pytest.approx(2 / 3)
    assert relaxed.label == "partial"
    assert "2 of the 3 expected calls in order" in (relaxed.reason or "")
    strict = score(
        tool_run("search", "read", "summarize", "extra"),
        expected_tool_order=order,
        strict=True,
        partial_credit=True,
    )
    assert strict.score == pytest.approx(2 * 3 / 7)


def test_requested_calls_that_never_ran_count_as_failed_calls() -> None:
    from livescore import Step, ToolCall

    run = Run(
        input="Weather?",
        output="",
        steps=[Step(kind="model", tool_calls_requested=[ToolCall("get_weather", "c9")])],
    )
    result = score(run, expected_tool="get_weather")
    assert result.score == 1.0
    assert "get_weather (failed: requested by the model but never ran)" in (result.reason or "")


def test_labels() -> None:
    assert TOOL_CALL_ACCURACY_LABELS == ("incorrect", "partial", "correct")


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({}, ValueError, "give expected_tool"),
        ({"expected_tool": ""}, ValueError, "empty"),
        ({"expected_tool": "  "}, ValueError, "empty"),
        ({"expected_tool": 3}, TypeError, "must be a tool name"),
        ({"expected_tool_order": []}, ValueError, "empty"),
        ({"expected_tool_order": "search"}, TypeError, "list of tool names"),
        ({"expected_tool_order": ["a", ""]}, ValueError, "empty"),
        ({"expected_tool": "x", "expected_tool_order": ["a", "b"]}, ValueError, "not in"),
    ],
)
def test_bad_input_fails_at_construction(
    options: dict[str, Any], error: type, message: str
) -> None:
    with pytest.raises(error, match=message):
        create_tool_call_accuracy_scorer(**options)


def test_expected_tool_and_order_together() -> None:
    scorer = create_tool_call_accuracy_scorer(
        expected_tool="read", expected_tool_order=["search", "read"]
    )
    assert scorer.run_sync(tool_run("read")).score == 0.0  # the order decides
    assert scorer.run_sync(tool_run("search", "read")).score == 1.0
