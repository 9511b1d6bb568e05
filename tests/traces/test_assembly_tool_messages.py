"""Tool results known only from the tool-role message the next model call was sent, when the
instrumentation leaves the rest out: the assistant's tool-call turn (OpenLIT) or the result on
a tool span that exists (Google ADK with content in log records)."""

from __future__ import annotations

import json
from typing import Any

from livescore.traces import SpanRecord, assemble_runs

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


def span(span_id: str, parent: str | None, name: str, start: int, **attributes: Any) -> SpanRecord:
    return SpanRecord(TRACE, span_id, parent, name, start, start + 1, attributes)


def chat(span_id: str, start: int, messages: list[Any], output: list[Any]) -> SpanRecord:
    return span(
        span_id,
        "a" * 16,
        "chat m",
        start,
        **{
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": json.dumps(messages),
            "gen_ai.output.messages": json.dumps(output),
        },
    )


USER = {"role": "user", "parts": [{"type": "text", "content": "Weather in Lyon?"}]}
CALL = {
    "role": "assistant",
    "parts": [
        {"type": "tool_call", "id": "c1", "name": "get_weather", "arguments": {"city": "Lyon"}}
    ],
}
RESULT = {
    "role": "tool",
    "parts": [{"type": "tool_call_response", "id": "c1", "response": "sunny"}],
}
ANSWER = {"role": "assistant", "parts": [{"type": "text", "content": "Sunny."}]}


def test_a_tool_message_takes_its_name_from_an_earlier_turns_request() -> None:
    root = span("a" * 16, None, "app", 0)
    first = chat("b" * 16, 1, [USER], [CALL])
    second = chat("c" * 16, 3, [USER, RESULT], [ANSWER])  # no assistant tool-call turn
    [assembled] = assemble_runs([root, first, second])
    [tool] = [s.tool_call for s in assembled.run.steps if s.tool_call is not None]
    assert (tool.name, tool.args, tool.result) == ("get_weather", {"city": "Lyon"}, "sunny")
    assert assembled.sources["tool get_weather"].attribute == "a tool-role message in its input"


def test_a_tool_span_without_a_result_is_filled_from_the_tool_message() -> None:
    root = span("a" * 16, None, "app", 0)
    first = chat("b" * 16, 1, [USER], [CALL])
    tool_span = span(
        "d" * 16,
        "a" * 16,
        "execute_tool get_weather",
        2,
        **{
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "get_weather",
            "gen_ai.tool.call.id": "c1",
            "gen_ai.tool.call.arguments": '{"city": "Lyon"}',  # arguments, but no result
        },
    )
    second = chat("c" * 16, 3, [USER, CALL, RESULT], [ANSWER])
    [assembled] = assemble_runs([root, first, tool_span, second])
    tools = [s for s in assembled.run.steps if s.tool_call is not None]
    assert [(s.span_id, s.tool_call.args, s.tool_call.result) for s in tools] == [
        ("d" * 16, {"city": "Lyon"}, "sunny")  # one step: the span's, with the message's result
    ]
    assert assembled.sources["tool get_weather"].span_name == "chat m"
