"""Logfire's own spans: ``logfire.instrument_openai_agents()`` (the OpenAI Agents SDK).

Logfire names no operation and no span kind: each span is named by its message template
(``logfire.msg_template``), which says what it is, and carries the SDK's span data as plain
attributes:

- ``OpenAI Agents trace: {name}``: the SDK's trace, the root; ``group_id`` is the
  conversation (``RunConfig(group_id=…)`` or ``trace(…, group_id=…)``).
- ``Task: …`` (``sdk_span_type = task``): one ``Runner.run``, every agent it handed off to
  beneath it: the run. ``Agent run: {name!r}``: one agent's turn(s), no input or output.
- ``Chat completion with {gen_ai.request.model!r}``: a Chat Completions call, ``input`` /
  ``output`` as OpenAI chat messages. ``Responses API with …``: a Responses call; its
  messages are in ``events`` (a JSON list of GenAI message events, the response's output
  last) beside ``gen_ai.operation.name = chat``, which the GenAI reader cannot read.
- ``Function: {name}``: a tool call, ``input`` its JSON arguments, ``output`` its result.

pydantic-ai's spans through Logfire carry ``logfire.msg_template`` too, but speak the GenAI
conventions (``gen_ai.operation.name`` and its messages): they stay with the GenAI reader.
"""

from __future__ import annotations

from collections.abc import Mapping

from livescore.traces._readers import _parse as p
from livescore.traces._readers import genai
from livescore.traces._readers._reading import Message, Reader, Sourced, SpanKind, SpanReading
from livescore.traces._span import SpanRecord

__all__ = ("READER",)

TEMPLATE = "logfire.msg_template"
EVENTS = "events"  # Logfire's form of GenAI message events: one JSON list attribute
# Logfire replaces any value that looks sensitive ("[Scrubbed due to 'session']"): the
# setting that keeps a run's text whole.
CONTENT_SETTING = "logfire.configure(scrubbing=False) where Logfire scrubbed the text"


def speaks(span: SpanRecord) -> bool:
    """A Logfire span that does not speak the GenAI conventions readably: no operation
    name, or an operation name with its messages only in Logfire's ``events`` list."""
    attributes = span.attributes
    if TEMPLATE not in attributes:
        return False
    if genai.OPERATION not in attributes:
        return True
    return EVENTS in attributes and genai.INPUT_MESSAGES not in attributes


def kind(span: SpanRecord) -> SpanKind | None:
    attributes = span.attributes
    template = attributes.get(TEMPLATE)
    if not isinstance(template, str):
        return None
    if attributes.get("sdk_span_type") == "task" or template.startswith("Agent run"):
        return "agent"
    if template.startswith(("Chat completion", "Responses API")):
        return "model"
    if template.startswith("Function:"):
        return "tool"
    return genai.kind(span)


def _chat(span: SpanRecord, key: str) -> Sourced[list[Message]] | None:
    found = p.genai_messages(span.attributes.get(key))
    return Sourced(found, key) if found and p.has_content(found) else None


def _event_messages(span: SpanRecord) -> tuple[list[Message], list[Message]]:
    """A Responses call's ``events``, split into the request's messages and the response's
    (the trailing assistant messages, when the span holds a response)."""
    raw = p.parse_json(span.attributes.get(EVENTS))
    messages: list[Message] = []
    for event in raw if isinstance(raw, list) else ():
        if not isinstance(event, Mapping):
            continue
        name = str(event.get("event.name", ""))  # gen_ai.<role>.message
        fields = {k: v for k, v in event.items() if k != "event.name"}
        fields["role"] = event.get("role") or (name.split(".")[1] if "." in name else "user")
        if fields["role"] == "tool" and "tool_call_id" not in fields and event.get("id"):
            fields["tool_call_id"] = event["id"]
        message = p.genai_message(fields)
        if message is not None:
            messages.append(message)
    if "response" not in span.attributes:
        return messages, []
    split = len(messages)
    while split > 0 and messages[split - 1].get("role") == "assistant":
        split -= 1
    answer = messages[split:]
    if not answer:
        return messages, []
    # One response, one message: its text parts and its tool calls, as the chat form has them.
    texts = [m["content"] for m in answer if isinstance(m.get("content"), str)]
    merged: Message = {"role": "assistant", "content": "\n".join(texts) if texts else None}
    calls = [call for m in answer for call in m.get("tool_calls") or ()]
    if calls:
        merged["tool_calls"] = calls
    return messages[:split], [merged]


def _tool(span: SpanRecord) -> SpanReading:
    attributes = span.attributes
    reading = SpanReading("logfire", "tool", content_setting=CONTENT_SETTING)
    result = attributes.get("output")
    call = genai.make_tool_call(
        span,
        attributes.get("name"),
        None,  # the SDK's function span has no call id: the assembler matches it by name
        p.parse_json(attributes.get("input")),
        p.parse_json(result) if isinstance(result, str) and result[:1] in "[{" else result,
    )
    reading.tool_call = Sourced(call, "output")
    return reading


def read(span: SpanRecord) -> SpanReading:
    attributes = span.attributes
    span_kind = kind(span)
    if span_kind == "tool":
        return _tool(span)
    reading = SpanReading("logfire", span_kind, content_setting=CONTENT_SETTING)
    if span_kind == "model":
        if EVENTS in attributes:
            asked, answered = _event_messages(span)
            reading.input = Sourced(asked, EVENTS) if p.has_content(asked) else None
            reading.output = Sourced(answered, EVENTS) if p.has_content(answered) else None
        else:
            reading.input = _chat(span, "input")
            reading.output = _chat(span, "output")
        model = p.first_str(attributes, "gen_ai.response.model", "gen_ai.request.model")
        reading.model = model[1] if model else None
    template = attributes.get(TEMPLATE)
    if isinstance(template, str) and template.startswith("Agent run"):
        name = p.first_str(attributes, "name")
        reading.agent_name = name[1] if name else None
    found = p.first_str(attributes, "group_id", "gen_ai.conversation.id", "session.id")
    reading.conversation_id = Sourced(found[1], found[0]) if found else None
    return reading


READER = Reader(
    "logfire",
    speaks,
    read,
    reads=("input", "output", EVENTS, "response", "raw_input", "group_id", "name", "gen_ai."),
)
