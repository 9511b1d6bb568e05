"""The Vercel AI SDK reader on the spans other releases and calls write than the Node.js
test's (tests/collect/test_instrumentation_ai_sdk.py runs ``ai`` 6 itself): streamText,
a messages prompt, ai 4's ``args`` / ``result`` names, later ``input`` / ``output`` names,
generateObject."""

from __future__ import annotations

import json
from typing import Any

from livescore.traces import SpanRecord, assemble_runs
from livescore.traces._readers import convention_of, read_span

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


def span(span_id: int, parent: int | None, start: int, attributes: dict[str, Any]) -> SpanRecord:
    return SpanRecord(
        TRACE,
        f"{span_id:016x}",
        None if parent is None else f"{parent:016x}",
        str(attributes["ai.operationId"]),
        start,
        start + 1,
        attributes,
    )


def test_a_stream_text_run_with_a_messages_prompt_and_input_output_tool_names() -> None:
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": [{"type": "text", "text": "Hello."}]},
        {"role": "user", "content": [{"type": "text", "text": "Weather in Lyon?"}]},
    ]
    asked = [{"toolCallId": "c1", "toolName": "get_weather", "input": '{"city":"Lyon"}'}]
    spans = [
        span(
            1,
            None,
            0,
            {
                "ai.operationId": "ai.streamText",
                "ai.prompt": json.dumps({"system": "Be brief.", "messages": messages}),
                "ai.response.text": "Sunny.",
                "ai.telemetry.metadata.conversationId": "conv-9",
                "ai.telemetry.functionId": "chat",
                "gen_ai.request.model": "gpt-x",  # the SDK's only GenAI attributes: model, usage
                "gen_ai.usage.input_tokens": 3,
            },
        ),
        span(
            2,
            1,
            1,
            {
                "ai.operationId": "ai.streamText.doStream",
                "ai.prompt.messages": json.dumps(messages),
                "ai.response.text": "",
                "ai.response.toolCalls": json.dumps(asked),
                "gen_ai.request.model": "gpt-x",
            },
        ),
        span(
            3,
            1,
            2,
            {
                "ai.operationId": "ai.toolCall",
                "ai.toolCall.name": "get_weather",
                "ai.toolCall.id": "c1",
                "ai.toolCall.input": '{"city":"Lyon"}',
                "ai.toolCall.output": '"sunny"',
            },
        ),
        span(
            4,
            1,
            3,
            {
                "ai.operationId": "ai.streamText.doStream",
                "ai.prompt.messages": "[]",
                "ai.response.text": "Sunny.",
            },
        ),
    ]
    reader = convention_of(spans[0])
    assert reader is not None
    assert reader.name == "vercel_ai"  # before genai, which speaks gen_ai.request.model too
    [assembled] = assemble_runs(spans)
    run = assembled.run
    # The conversation so far is the prompt: the run answers its last user turn.
    assert run.input == [{"role": "user", "content": "Weather in Lyon?"}]
    assert run.output == "Sunny."
    assert run.conversation_id == "conv-9"
    assert run.name == "chat"
    [tool] = [s.tool_call for s in run.steps if s.tool_call is not None]
    assert (tool.name, tool.call_id, tool.args, tool.result) == (
        "get_weather",
        "c1",
        {"city": "Lyon"},
        "sunny",
    )
    assert str(assembled.sources["tool get_weather"]).endswith("ai.toolCall.output [vercel_ai]")
    first_model = next(s for s in run.steps if s.kind == "model")
    assert first_model.name == "gpt-x"
    assert [c.args for c in first_model.tool_calls_requested] == [{"city": "Lyon"}]


def test_ai_4_names_and_a_tool_result_known_only_from_the_next_model_call() -> None:
    """ai 4 writes ``args`` / ``result``; with no ``ai.toolCall`` span (a tool without
    ``execute``, run by the app), the result is read from the tool message sent back."""
    request = [
        {"role": "user", "content": [{"type": "text", "text": "Weather in Lyon?"}]},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool-call",
                    "toolCallId": "c1",
                    "toolName": "get_weather",
                    "args": {"city": "Lyon"},
                },
            ],
        },
        {
            "role": "tool",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": "c1",
                    "toolName": "get_weather",
                    "result": {"sky": "sunny"},
                },
            ],
        },
    ]
    spans = [
        span(
            1,
            None,
            0,
            {
                "ai.operationId": "ai.generateText",
                "ai.prompt": json.dumps({"prompt": "Weather in Lyon?"}),
                "ai.response.text": "Sunny.",
            },
        ),
        span(
            2,
            1,
            1,
            {
                "ai.operationId": "ai.generateText.doGenerate",
                "ai.prompt.messages": json.dumps(request),
                "ai.response.text": "Sunny.",
            },
        ),
    ]
    [assembled] = assemble_runs(spans)
    run = assembled.run
    assert run.input == "Weather in Lyon?"
    [tool] = [s.tool_call for s in run.steps if s.tool_call is not None]
    assert (tool.name, tool.call_id, tool.result) == ("get_weather", "c1", '{"sky": "sunny"}')
    model_input = read_span(spans[1]).input
    assert model_input is not None
    assert model_input.value[1]["tool_calls"] == [
        {"id": "c1", "name": "get_weather", "arguments": {"city": "Lyon"}}
    ]


def test_a_generate_object_run_answers_with_its_object() -> None:
    root = span(
        1,
        None,
        0,
        {
            "ai.operationId": "ai.generateObject",
            "ai.prompt": json.dumps({"prompt": "A city, as JSON."}),
            "ai.response.object": '{"city":"Lyon"}',
        },
    )
    [assembled] = assemble_runs([root])
    assert assembled.run.output == '{"city":"Lyon"}'
    assert assembled.sources["output"].attribute == "ai.response.object"


def test_other_operations_are_plain_spans() -> None:
    embed = span(1, None, 0, {"ai.operationId": "ai.embed", "ai.value": "Lyon"})
    reading = read_span(embed)
    assert (reading.convention, reading.kind) == ("vercel_ai", None)
