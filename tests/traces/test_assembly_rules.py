"""The assembler's rules across conventions: which value wins, runs without agent spans,
tool results carried only in messages, and skip reasons that say where livescore looked."""

from __future__ import annotations

import json

import pytest

from livescore.runs import NO_INPUT_METADATA_KEY, NOT_SCORABLE_METADATA_KEY, get_run_context
from livescore.scorers import create_keyword_coverage_scorer
from livescore.traces import SpanRecord, assemble_runs, runs_from_spans
from livescore.traces._readers import READERS, read_span

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


def span(
    span_id: str, parent: str | None, start: int, name: str = "s", **attributes: object
) -> SpanRecord:
    return SpanRecord(
        TRACE,
        span_id.rjust(16, "0"),
        parent and parent.rjust(16, "0"),
        name,
        start,
        start + 1,
        attributes,
    )


def genai(role: str, *parts: dict[str, object]) -> str:
    return json.dumps([{"role": role, "parts": list(parts)}])


def test_an_app_span_over_raw_model_calls_is_a_run_with_the_tool_result_from_the_messages() -> None:
    question = "What is the weather in Lyon?"
    call = {
        "type": "tool_call",
        "id": "call_w1",
        "name": "get_weather",
        "arguments": {"city": "Lyon"},
    }
    response = {"type": "tool_call_response", "id": "call_w1", "response": "sunny, 24 °C [w-17]"}
    second_input = json.dumps(
        [
            {"role": "user", "parts": [{"type": "text", "content": question}]},
            {"role": "assistant", "parts": [call]},
            {"role": "tool", "parts": [response]},
        ]
    )
    spans = [
        span("1", None, 0, "handle_request", **{"http.route": "/ask"}),
        span(
            "2",
            "1",
            1,
            "chat gpt-4o",
            **{
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": genai("user", {"type": "text", "content": question}),
                "gen_ai.output.messages": genai("assistant", call),
            },
        ),
        span(
            "3",
            "1",
            2,
            "chat gpt-4o",
            **{
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": second_input,
                "gen_ai.output.messages": genai(
                    "assistant", {"type": "text", "content": "It is sunny in Lyon."}
                ),
            },
        ),
    ]
    [assembled] = assemble_runs(spans)
    run = assembled.run
    assert run.span_id == "1".rjust(16, "0")  # the app's span: scores nest under it
    assert run.input == question
    assert run.output == "It is sunny in Lyon."
    assert get_run_context(run) == [
        '{"tool": "get_weather", "arguments": {"city": "Lyon"}, "result": "sunny, 24 °C [w-17]"}'
    ]
    assert [s.kind for s in run.steps] == ["model", "tool", "model"]
    assert assembled.sources["input"].attribute == "gen_ai.input.messages"
    assert assembled.sources["tool get_weather"].attribute == "a tool-role message in its input"


def test_a_tool_span_is_not_counted_twice_beside_the_message_that_reports_it() -> None:
    call = {"type": "tool_call", "id": "c1", "name": "t", "arguments": {}}
    answer = {"type": "tool_call_response", "id": "c1", "response": "42"}
    spans = [
        span("1", None, 0, **{"gen_ai.operation.name": "invoke_agent"}),
        span(
            "2",
            "1",
            1,
            **{
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": genai("user", {"type": "text", "content": "q"}),
                "gen_ai.output.messages": genai("assistant", call),
            },
        ),
        span(
            "3",
            "1",
            2,
            **{
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "t",
                "gen_ai.tool.call.id": "c1",
                "gen_ai.tool.call.result": "42",
            },
        ),
        span(
            "4",
            "1",
            3,
            **{
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": json.dumps([{"role": "tool", "parts": [answer]}]),
                "gen_ai.output.messages": genai("assistant", {"type": "text", "content": "42."}),
            },
        ),
    ]
    [run] = runs_from_spans(spans)
    assert [s.kind for s in run.steps] == ["model", "tool", "model"]


def test_a_python_repr_loses_to_the_last_model_answer() -> None:
    repr_text = "StopEvent(result=AgentOutput(response=ChatMessage(role=<MessageRole.ASSISTANT: 'a"
    spans = [
        span(
            "1",
            None,
            0,
            "Workflow.run",
            **{
                "openinference.span.kind": "CHAIN",
                "input.value": "What is the capital of France?",
                "output.value": repr_text,
            },
        ),
        span(
            "2",
            "1",
            1,
            "OpenAI.achat",
            **{
                "openinference.span.kind": "LLM",
                "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.content": "What is the capital of France?",
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.content": "Paris is the capital of France.",
            },
        ),
    ]
    [assembled] = assemble_runs(spans)
    assert assembled.run.output == "Paris is the capital of France."
    assert assembled.sources["output"].span_name == "OpenAI.achat"
    assert assembled.run.input == "What is the capital of France?"
    assert assembled.sources["input"].span_name == "Workflow.run"  # the root, read first


def test_a_repr_is_kept_and_marked_when_nothing_else_holds_the_answer() -> None:
    spans = [
        span(
            "1",
            None,
            0,
            **{
                "openinference.span.kind": "AGENT",
                "input.value": "q",
                "output.value": "StopEvent(result='x')",
            },
        ),
    ]
    [assembled] = assemble_runs(spans)
    assert assembled.run.output == "StopEvent(result='x')"
    assert assembled.sources["output"].quality == "repr"


def test_role_only_messages_do_not_hide_the_input_value() -> None:
    # LangGraph through OpenInference: the role is recorded, the content is not.
    spans = [
        span(
            "1",
            None,
            0,
            "LangGraph",
            **{
                "openinference.span.kind": "CHAIN",
                "input.value": json.dumps({"messages": [{"role": "user", "content": "Hi there"}]}),
                "llm.input_messages.0.message.role": "user",
                "output.value": json.dumps(
                    {"messages": [{"role": "assistant", "content": "Hello"}]}
                ),
            },
        ),
    ]
    [assembled] = assemble_runs(spans)
    assert assembled.run.input == "Hi there"
    assert assembled.run.output == "Hello"


def test_no_input_alone_skips_only_the_scorers_that_need_it() -> None:
    spans = [
        span(
            "1",
            None,
            0,
            **{
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.output.messages": genai("assistant", {"type": "text", "content": "Done."}),
            },
        ),
    ]
    [run] = runs_from_spans(spans)
    assert NOT_SCORABLE_METADATA_KEY not in run.metadata
    reason = run.metadata[NO_INPUT_METADATA_KEY]
    assert "no input" in reason
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT" in reason  # the setting


def test_content_in_an_attribute_no_reader_reads_is_named() -> None:
    spans = [
        span(
            "1",
            None,
            0,
            "invoke_agent",
            **{"gen_ai.operation.name": "invoke_agent", "myframework.agent.output": "It is sunny."},
        ),
    ]
    [run] = runs_from_spans(spans)
    reason = run.metadata[NOT_SCORABLE_METADATA_KEY]
    assert "'myframework.agent.output'" in reason
    assert "'invoke_agent'" in reason
    assert "captured no message content" not in reason


def test_every_reader_survives_values_of_the_wrong_type(caplog: pytest.LogCaptureFixture) -> None:
    odd: list[object] = [None, 3, 2.5, True, "", "{", "[1, 2]", '{"a": 1}', ["x", 1], b"x"]
    keys = [
        "gen_ai.operation.name",
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.tool.call.result",
        "openinference.span.kind",
        "input.value",
        "output.value",
        "llm.input_messages.0.message.content",
        "llm.output_messages.0.message.role",
        "gen_ai.prompt.0.content",
        "session.id",
        "gen_ai.conversation.id",
    ]
    names = {reader.name for reader in READERS}
    for value in odd:
        for key in keys:
            kinds = ("invoke_agent", "chat", "execute_tool", "AGENT", "LLM", "TOOL")
            for kind in kinds:
                attributes = {
                    key: value,
                    "gen_ai.operation.name": kind,
                    "openinference.span.kind": kind,
                }
                reading = read_span(span("1", None, 0, **attributes))
                assert reading.convention in names
    assert len(names) == len(READERS)  # one name per reader
    assert not [r for r in caplog.records if "reader failed" in r.getMessage()]


def test_a_score_of_a_run_whose_text_was_cut_says_so() -> None:
    cut = "StopEvent(result=AgentOutput(response=ChatMessage(role='assistant', content='Par..."
    spans = [
        span(
            "1",
            None,
            0,
            **{"openinference.span.kind": "AGENT", "input.value": "Capital?", "output.value": cut},
        ),
    ]
    [assembled] = assemble_runs(spans)
    assert assembled.sources["output"].quality == "truncated"
    assert assembled.run.metadata["output_truncated"] is True
    result = create_keyword_coverage_scorer().run_sync(assembled.run)
    assert result.flags.get("output_truncated") is True
    assert result.attributes["livescore.output_truncated"] is True
