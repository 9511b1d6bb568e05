"""The Mastra reader on what other Mastra calls and pairings write than the Node.js test's
(tests/collect/test_instrumentation_mastra.py runs @mastra/core itself): an agent given
messages, a structured answer, the thread only in the metadata, and the older pairing whose
``chat`` span is the whole generation with GenAI messages."""

from __future__ import annotations

import json
from typing import Any

from livescore.traces import SpanRecord, assemble_runs
from livescore.traces._readers import read_span

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


def span(
    span_id: int, parent: int | None, start: int, name: str, attributes: dict[str, Any]
) -> SpanRecord:
    return SpanRecord(
        TRACE,
        f"{span_id:016x}",
        None if parent is None else f"{parent:016x}",
        name,
        start,
        start + 1,
        attributes,
    )


def test_an_agent_given_messages_with_a_structured_answer_and_the_thread_in_metadata() -> None:
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": [{"type": "text", "text": "A city?"}]},
    ]
    root = span(
        1,
        None,
        0,
        "invoke_agent cities",
        {
            "gen_ai.operation.name": "invoke_agent",
            "mastra.span.type": "agent_run",
            "gen_ai.agent.name": "cities",
            "mastra.agent_run.input": json.dumps(messages),
            "mastra.agent_run.output": json.dumps({"object": {"city": "Lyon"}, "files": []}),
            "mastra.metadata.threadId": "thread-4",
        },
    )
    [assembled] = assemble_runs([root])
    run = assembled.run
    assert run.input == [{"role": "user", "content": "A city?"}]  # the turn it answers
    assert run.output == '{"city": "Lyon"}'
    assert run.conversation_id == "thread-4"
    assert assembled.sources["conversation_id"].attribute == "mastra.metadata.threadId"
    assert assembled.sources["output"].convention == "mastra"


def test_the_older_pairing_whose_chat_span_is_the_generation() -> None:
    """Before the model-inference span, ``model_generation`` is exported as ``chat`` with
    ``gen_ai.input/output.messages``: the GenAI part of the reader reads it."""
    root = span(
        1,
        None,
        0,
        "invoke_agent weather",
        {
            "gen_ai.operation.name": "invoke_agent",
            "mastra.span.type": "agent_run",
            "mastra.agent_run.input": "Weather in Lyon?",
            "gen_ai.conversation.id": "thread-1",
        },
    )
    chat = span(
        2,
        1,
        1,
        "chat gpt-x",
        {
            "gen_ai.operation.name": "chat",
            "mastra.span.type": "model_generation",
            "gen_ai.request.model": "gpt-x",
            "gen_ai.input.messages": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": "Weather in Lyon?"}]}]
            ),
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": "Sunny."}]}]
            ),
        },
    )
    [assembled] = assemble_runs([root, chat])
    run = assembled.run
    assert run.input == "Weather in Lyon?"
    assert run.output == "Sunny."  # no mastra.agent_run.output: the model's last answer
    assert run.conversation_id == "thread-1"
    reading = read_span(chat)
    assert (reading.convention, reading.kind, reading.model) == ("mastra", "model", "gpt-x")


def test_mastra_s_own_span_types_are_plain_spans() -> None:
    step = span(
        1,
        None,
        0,
        "agent_step weather",
        {
            "gen_ai.operation.name": "agent_step",
            "mastra.span.type": "model_step",
            "mastra.model_step.input": "[]",
        },
    )
    reading = read_span(step)
    assert (reading.convention, reading.kind) == ("mastra", None)
