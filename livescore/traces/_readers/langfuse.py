"""The Langfuse SDK (v3 and later, built on OpenTelemetry): its observations' spans.

- ``langfuse.observation.type`` says what a span is: ``agent`` (a run), ``generation``
  and ``embedding`` (model calls), ``tool``, ``retriever``; ``span``, ``chain``,
  ``evaluator``, ``guardrail`` and ``event`` are plain steps. ``@observe(as_type=...)``
  names the observation after the function.
- ``langfuse.observation.input`` / ``.output``: JSON, except a text, written as it is. A
  decorated function's input is its call, ``{"args": [...], "kwargs": {...}}``, its output
  the return value; the OpenAI integration's generation (``langfuse.openai``) writes the
  request (``{"messages": [...], "tools": [...]}``) and the response message.
- ``session.id`` (``propagate_attributes(session_id=...)``, on every span beneath),
  ``langfuse.observation.model.name``.

Content is captured unless ``LANGFUSE_OBSERVE_DECORATOR_IO_CAPTURE_ENABLED=false`` or
``@observe(capture_input=False, capture_output=False)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from livescore.traces._readers import _parse as p
from livescore.traces._readers import genai
from livescore.traces._readers._reading import Message, Reader, Sourced, SpanKind, SpanReading
from livescore.traces._span import SpanRecord

__all__ = ("READER",)

NAME = "langfuse"
TYPE = "langfuse.observation.type"
INPUT = "langfuse.observation.input"
OUTPUT = "langfuse.observation.output"

_KINDS: dict[str, SpanKind] = {
    "agent": "agent",
    "generation": "model",
    "embedding": "model",
    "tool": "tool",
    "retriever": "retriever",
}
CONTENT_SETTING = (
    "LANGFUSE_OBSERVE_DECORATOR_IO_CAPTURE_ENABLED unset (or true), and @observe without "
    "capture_input=False / capture_output=False"
)


def speaks(span: SpanRecord) -> bool:
    """An observation of the Langfuse SDK (not a span it only exports, nor one that only
    carries its propagated trace attributes)."""
    attributes = span.attributes
    return TYPE in attributes or INPUT in attributes or OUTPUT in attributes


def read(span: SpanRecord) -> SpanReading:
    attributes = span.attributes
    observation = attributes.get(TYPE)
    kind = _KINDS.get(observation.lower()) if isinstance(observation, str) else None
    reading = SpanReading(NAME, kind, content_setting=CONTENT_SETTING)
    if kind == "tool":
        args = p.call_arguments(p.parse_json(attributes.get(INPUT)))
        result = p.parse_json(attributes.get(OUTPUT))
        call = genai.make_tool_call(span, span.name, None, args, result)
        reading.tool_call = Sourced(call, OUTPUT)
    elif kind == "model":
        reading.input = _request(attributes.get(INPUT))
        reading.output = _response(attributes.get(OUTPUT))
    elif kind == "retriever":
        reading.input = p.sourced(INPUT, p.recorded_input(attributes.get(INPUT), encoded=False))
        reading.documents = _documents(p.parse_json(attributes.get(OUTPUT)))
    else:
        reading.input = p.sourced(INPUT, p.recorded_input(attributes.get(INPUT), encoded=False))
        reading.output = p.sourced(OUTPUT, p.recorded_output(attributes.get(OUTPUT), encoded=False))
        if kind == "agent":
            reading.agent_name = span.name
    found = p.first_str(attributes, "session.id", "gen_ai.conversation.id")
    reading.conversation_id = Sourced(found[1], found[0]) if found else None
    model = p.first_str(attributes, "langfuse.observation.model.name")
    reading.model = model[1] if model else None
    return reading


def _request(raw: Any) -> Sourced[list[Message]] | None:
    """A generation's input as messages: the OpenAI request's ``messages``, a list of
    messages, a decorated function's call holding them, or a prompt text."""
    value = p.parse_json(raw)
    where = ""
    if p.is_call_record(value):
        found = p.recorded_input(value)
        if found is None or found[2] != "whole":
            return None
        value, where = found[0], found[1]
    elif isinstance(value, Mapping) and isinstance(value.get("messages"), list):
        value, where = value["messages"], " .messages"
    elif isinstance(value, Mapping) and isinstance(value.get("prompt"), str):
        value, where = value["prompt"], " .prompt"
    if isinstance(value, str):
        return Sourced([{"role": "user", "content": value}], INPUT + where) if value else None
    messages = p.genai_messages(value) if isinstance(value, list) else None
    return Sourced(messages, INPUT + where) if messages and p.has_content(messages) else None


def _response(raw: Any) -> Sourced[list[Message]] | None:
    """A generation's output as messages: a response message (with the tool calls it asks
    for), a list of them, an OpenAI choice, or a text."""
    value = p.parse_json(raw)
    if isinstance(value, Mapping) and isinstance(value.get("message"), Mapping):
        value = value["message"]  # a choice
    if isinstance(value, str):
        message: Message = {"role": "assistant", "content": value}
        return Sourced([message], OUTPUT) if value else None
    if isinstance(value, Mapping) and "role" not in value:
        found = p.recorded_output(value)
        if found is None or found[2] != "whole":
            return None
        return Sourced([{"role": "assistant", "content": found[0]}], OUTPUT + found[1])
    messages = p.genai_messages(value)
    return Sourced(messages, OUTPUT) if messages and p.has_content(messages) else None


def _documents(value: Any) -> list[str]:
    """A retriever's output as document texts: texts, or objects with a text-like key."""
    if not isinstance(value, list):
        return []
    documents: list[str] = []
    for item in value:
        if isinstance(item, str):
            documents.append(item)
        elif isinstance(item, Mapping):
            for key in ("page_content", "content", "text", "document"):
                if isinstance(item.get(key), str):
                    documents.append(item[key])
                    break
    return documents


READER = Reader(
    NAME,
    speaks,
    read,
    reads=("langfuse.observation.", "session.", "gen_ai.conversation."),
)
