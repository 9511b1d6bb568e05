"""read_tool_calls: executed calls, failed calls, and requested calls that never ran."""

from __future__ import annotations

from livescore import Run, Step, ToolCall
from livescore._tool_calls import RecordedCall, describe_calls, read_tool_calls


def test_executed_calls_in_order_with_failures() -> None:
    run = Run(
        steps=[
            Step(kind="model", tool_calls_requested=[ToolCall("search", "c1")]),
            Step(kind="tool", tool_call=ToolCall("search", "c1", {"q": "x"}, error="timeout")),
            Step(kind="tool", tool_call=ToolCall("read", "c2", result="ok")),
            Step(kind="retriever", documents=["doc"]),
        ]
    )
    calls = read_tool_calls(run)
    assert calls == [
        RecordedCall("search", {"q": "x"}, "timeout"),
        RecordedCall("read", None, None),
    ]
    assert [c.ok for c in calls] == [False, True]


def test_a_step_error_marks_the_call_failed() -> None:
    run = Run(steps=[Step(kind="tool", tool_call=ToolCall("search"), error="boom")])
    assert read_tool_calls(run)[0].error == "boom"


def test_requested_calls_that_never_ran_count_as_failed() -> None:
    run = Run(
        steps=[
            Step(kind="model", tool_calls_requested=[ToolCall("a", "c1"), ToolCall("b", "c2")]),
            Step(kind="tool", tool_call=ToolCall("a", "c1", result="ok")),
        ]
    )
    calls = read_tool_calls(run)
    assert [(c.name, c.ok, c.ran) for c in calls] == [("b", False, False), ("a", True, True)]
    assert calls[0].error == "requested by the model but never ran"


def test_requested_calls_are_ignored_when_tool_steps_have_no_ids() -> None:
    run = Run(
        steps=[
            Step(kind="model", tool_calls_requested=[ToolCall("a", "c1")]),
            Step(kind="tool", tool_call=ToolCall("a")),
        ]
    )
    assert [c.name for c in read_tool_calls(run)] == ["a"]


def test_describe_calls() -> None:
    calls = [RecordedCall("a"), RecordedCall("b", error="x " * 100)]
    text = describe_calls(calls)
    assert text.startswith("a, b (failed: x x")
    assert text.endswith("…)")
    assert describe_calls([RecordedCall("a")] * 15, limit=12).endswith("and 3 more")
