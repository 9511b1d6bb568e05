"""Checks of the tool calls: both forms, failed calls in the reasons, bad input."""

from __future__ import annotations

from typing import Any

import pytest
from _check_runs import tool_run

from livescore import checks

WEATHER = tool_run("search", ("get_weather", "HTTP 503"), "get_weather")


def test_called_tool() -> None:
    result = checks.called_tool(WEATHER, "get_weather")
    assert result
    assert result.reason == "the agent called get_weather 2 times (1 failed: HTTP 503)"
    assert result.details == {"count": 2, "failed": 1, "times": 1}
    assert checks.called_tool(WEATHER, "get_weather", times=2)
    short = checks.called_tool(WEATHER, "get_weather", times=3)
    assert not short
    assert short.reason.endswith(", fewer than 3")
    never = checks.called_tool(WEATHER, "send_email")
    assert repr(never) == (
        "<called-tool FAILED: the agent never called send_email; tool calls: search, "
        "get_weather (failed: HTTP 503), get_weather>"
    )


def test_did_not_call() -> None:
    assert checks.did_not_call(WEATHER, "delete_account")
    result = checks.did_not_call(WEATHER, "search")
    assert not result
    assert result.reason == "the agent called search once"


def test_tool_order() -> None:
    assert checks.tool_order(WEATHER, ["search", "get_weather"])
    assert checks.tool_order(WEATHER, ["search", "get_weather", "get_weather"])
    assert not checks.tool_order(WEATHER, ["get_weather", "search"])
    assert not checks.tool_order(WEATHER, ["search", "get_weather"], strict=True)
    strict = checks.tool_order(WEATHER, ["search", "get_weather", "get_weather"], strict=True)
    assert strict
    assert strict.details["actual"] == ["search", "get_weather", "get_weather"]


def test_max_tool_calls() -> None:
    assert checks.max_tool_calls(WEATHER, 3)
    over = checks.max_tool_calls(WEATHER, 2)
    assert not over
    assert over.reason == "the agent made 3 tool calls, over the limit of 2"
    assert checks.max_tool_calls(tool_run(), 0)
    assert not checks.max_tool_calls(tool_run("a"), 0)


def test_no_tool_errors() -> None:
    result = checks.no_tool_errors(WEATHER)
    assert not result
    assert result.reason == "1 of 3 tool calls failed: get_weather (failed: HTTP 503)"
    assert "tool calls: search, get_weather (failed: HTTP 503), get_weather" in repr(result)
    assert checks.no_tool_errors(tool_run("a", "b")).reason == "all 2 tool calls succeeded"
    assert checks.no_tool_errors(tool_run()).reason == "no tool was called"


def test_used_no_tools() -> None:
    assert checks.used_no_tools(tool_run())
    assert checks.used_no_tools({"input": "Hi", "output": "Hello!"})
    result = checks.used_no_tools(WEATHER)
    assert not result
    assert result.reason == "the agent made 3 tool calls"


def test_tool_checks_need_a_run_not_a_string() -> None:
    with pytest.raises(TypeError, match="reads a run's tool calls"):
        checks.used_no_tools("Hello!")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("scorer", "expected"),
    [
        (checks.called_tool_scorer("get_weather"), 1.0),
        (checks.called_tool_scorer("get_weather", times=3), 0.0),
        (checks.did_not_call_scorer("search"), 0.0),
        (checks.tool_order_scorer(["search", "get_weather"]), 1.0),
        (checks.max_tool_calls_scorer(2), 0.0),
        (checks.no_tool_errors_scorer(), 0.0),
        (checks.used_no_tools_scorer(), 0.0),
    ],
)
def test_scorer_form(scorer: Any, expected: float) -> None:
    result = scorer.run_sync(WEATHER)
    assert result.score == expected
    assert result.label == ("pass" if expected else "fail")
    assert result.reason.startswith("Passed: " if expected else "Failed: ")


def test_scorer_ids() -> None:
    ids = [
        checks.called_tool_scorer("a").id,
        checks.did_not_call_scorer("a").id,
        checks.tool_order_scorer(["a"]).id,
        checks.max_tool_calls_scorer(1).id,
        checks.no_tool_errors_scorer().id,
        checks.used_no_tools_scorer().id,
    ]
    assert ids == [
        "called-tool",
        "did-not-call",
        "tool-order",
        "max-tool-calls",
        "no-tool-errors",
        "used-no-tools",
    ]


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda: checks.called_tool_scorer(""), ValueError, "empty"),
        (lambda: checks.called_tool_scorer("a", times=0), ValueError, "1 or more"),
        (lambda: checks.called_tool_scorer("a", times=1.5), TypeError, "whole number"),
        (lambda: checks.did_not_call_scorer(" "), ValueError, "empty"),
        (lambda: checks.did_not_call_scorer(None), TypeError, "string"),  # type: ignore[arg-type]
        (lambda: checks.tool_order_scorer([]), ValueError, "empty"),
        (lambda: checks.tool_order_scorer("ab"), TypeError, "one string"),
        (lambda: checks.tool_order_scorer(["a", ""]), ValueError, "empty"),
        (lambda: checks.max_tool_calls_scorer(-1), ValueError, "0 or more"),
        (lambda: checks.max_tool_calls_scorer(True), TypeError, "whole number"),
    ],
)
def test_bad_arguments_fail_when_built(make: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        make()
