"""The OpenTelemetry GenAI semantic conventions, in every form instrumentations write them.

- ``gen_ai.operation.name`` (``invoke_agent``, ``chat``, ``execute_tool``…) says what a
  span is; ``gen_ai.input.messages`` / ``gen_ai.output.messages`` hold JSON messages made of
  parts, or the same keys on a ``gen_ai.client.inference.operation.details`` event.
- Earlier forms: one span event per message (``gen_ai.user.message``, ``gen_ai.choice``),
  and OpenLLMetry's indexed ``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*`` attributes
  (its model spans say ``llm.request.type`` instead of an operation name).
- ``gen_ai.tool.*`` on tool spans, ``gen_ai.conversation.id``, ``gen_ai.agent.name``;
  pydantic-ai's ``pydantic_ai.all_messages`` and ``final_result`` on its agent span.

Written by the OpenTelemetry contrib instrumentations (``opentelemetry-instrumentation-
openai-v2``…), OpenLIT, pydantic-ai, Google ADK, Strands, the OpenAI Agents SDK's own
processor, and the model spans of OpenLLMetry.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from livescore.runs import ToolCall
from livescore.traces._readers import _parse as p
from livescore.traces._readers._reading import Message, Reader, Sourced, SpanKind, SpanReading
from livescore.traces._span import SpanRecord

__all__ = ("ANSWER_TOOLS", "READER", "make_tool_call", "messages", "tool_call")

# Tools through which an agent hands over its answer (smolagents' final_answer, the output
# tool pydantic-ai calls final_result): their "result" is the answer, not evidence.
ANSWER_TOOLS = frozenset({"final_answer", "final_result"})

OPERATION = "gen_ai.operation.name"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"

_KINDS: dict[str, SpanKind] = {
    "invoke_agent": "agent",
    "create_agent": "agent",
    "chat": "model",
    "text_completion": "model",
    "generate_content": "model",
    "execute_tool": "tool",
    "retrieval": "retriever",
}
# The one variable every GenAI instrumentation reads, but its values differ: the
# OpenTelemetry contrib instrumentations built on opentelemetry-util-genai (openai-v2 2.4b0
# with util-genai 1.1b0) take SPAN_ONLY / EVENT_ONLY / SPAN_AND_EVENT and treat "true" as
# NO_CONTENT (with a warning); Google ADK and the contrib packages' legacy path take "true".
# Checked against opentelemetry-instrumentation-openai-v2 2.4b0 (it reads =true as no
# content) and google-adk 2.13.0 (it reads =true as EVENT_ONLY).
CONTENT_SETTING = (
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY for the OpenTelemetry "
    "contrib instrumentations (opentelemetry-instrumentation-openai-v2…) and Google ADK "
    "(EVENT_ONLY, and ADK's =true, put the messages in log records: export them to "
    "/v1/logs too, or in process add the span processor's log_record_processor), =true for "
    "older instrumentations"
)


def speaks(span: SpanRecord) -> bool:
    """Any ``gen_ai.*`` attribute or event."""
    attributes = span.attributes
    if OPERATION in attributes:
        return True
    return any(k.startswith("gen_ai.") for k in attributes) or any(
        e.name.startswith("gen_ai.") for e in span.events
    )


def kind(span: SpanRecord) -> SpanKind | None:
    attributes = span.attributes
    op = attributes.get(OPERATION)
    if isinstance(op, str) and op in _KINDS:
        return _KINDS[op]
    request_type = attributes.get("llm.request.type")  # OpenLLMetry's model spans
    if request_type in ("chat", "completion"):
        return "model"
    return None


def messages(span: SpanRecord, *, output: bool) -> Sourced[list[Message]] | None:
    """A span's input or output messages, in whichever GenAI form it carries them."""
    key = OUTPUT_MESSAGES if output else INPUT_MESSAGES
    attributes = span.attributes
    if key in attributes:
        found = p.genai_messages(attributes[key])
        return Sourced(found, key) if found else None
    detail = p.detail_event(span, key)
    if detail is not None:
        found = p.genai_messages(detail)
        return Sourced(found, f"event {key}") if found else None
    prefix = "gen_ai.completion." if output else "gen_ai.prompt."
    found = p.prompt_messages(attributes, prefix)
    if found:
        return Sourced(found, prefix + "N.content")
    found = p.event_messages(span, output=output)
    if found:
        return Sourced(found, "event gen_ai.choice" if output else "event gen_ai.*.message")
    return None


def tool_call(span: SpanRecord) -> Sourced[ToolCall]:
    """The call a GenAI tool span made (``gen_ai.tool.*``, or Strands' events)."""
    attributes = span.attributes
    name = attributes.get("gen_ai.tool.name")
    call_id = attributes.get("gen_ai.tool.call.id")
    args = p.parse_json(attributes.get("gen_ai.tool.call.arguments"))
    result = p.parse_json(attributes.get("gen_ai.tool.call.result"))
    source = "gen_ai.tool.call.result"
    if args is None or result is None:
        # The earlier form (Strands): the call's arguments in a gen_ai.tool.message event,
        # its result in a gen_ai.choice event.
        for event in span.events:
            if event.name == "gen_ai.tool.message" and args is None:
                args = p.parse_json(event.attributes.get("content"))
            elif event.name == "gen_ai.choice" and result is None:
                result = p.text_or_none(p.parse_json(event.attributes.get("message")))
                source = "event gen_ai.choice"
            if call_id is None and event.attributes.get("id"):
                call_id = event.attributes.get("id")
    return Sourced(make_tool_call(span, name, call_id, args, result), source)


def make_tool_call(span: SpanRecord, name: Any, call_id: Any, args: Any, result: Any) -> ToolCall:
    """A :class:`~livescore.ToolCall` from what a reader found (content blocks of text joined;
    a failed span's result left out)."""
    if (
        isinstance(result, list)
        and result
        and all(isinstance(part, Mapping) and isinstance(part.get("text"), str) for part in result)
    ):
        result = "\n".join(part["text"] for part in result)
    error = p.error_of(span)
    return ToolCall(
        name=str(name) if name else span.name,
        call_id=p.str_or_none(call_id),
        args=args,
        result=None if error is not None else result,
        error=error,
    )


def read(span: SpanRecord) -> SpanReading:
    attributes = span.attributes
    reading = SpanReading("genai", kind(span), content_setting=CONTENT_SETTING)
    if reading.kind == "tool":
        reading.tool_call = tool_call(span)
        return _common(span, reading)
    reading.input = messages(span, output=False)
    reading.output = messages(span, output=True)
    if reading.kind == "agent":
        if reading.input is None and "pydantic_ai.all_messages" in attributes:
            every = p.genai_messages(attributes["pydantic_ai.all_messages"])
            turn = p.user_turn(every) if every else None
            reading.input = Sourced(turn, "pydantic_ai.all_messages") if turn else None
        if reading.output is None and attributes.get("final_result") is not None:
            value = attributes["final_result"]
            text = value if isinstance(value, str) else p.as_text(value)
            reading.output = Sourced(text, "final_result")
    return _common(span, reading)


def _common(span: SpanRecord, reading: SpanReading) -> SpanReading:
    attributes = span.attributes
    # session.id: OpenTelemetry's general session attribute, which some instrumentations
    # set instead.
    found = p.first_str(attributes, "gen_ai.conversation.id", "session.id")
    reading.conversation_id = Sourced(found[1], found[0]) if found else None
    name = p.first_str(attributes, "gen_ai.agent.name")
    reading.agent_name = name[1] if name else None
    model = p.first_str(attributes, "gen_ai.response.model", "gen_ai.request.model")
    reading.model = model[1] if model else None
    return reading


READER = Reader(
    "genai",
    speaks,
    read,
    # openai.*: the contrib OpenAI instrumentation's request/response details (service tier,
    # system fingerprint), never content.
    reads=("gen_ai.", "pydantic_ai.", "final_result", "session.", "openai."),
)
