"""Mastra's spans, as ``@mastra/otel-exporter`` writes them (``@mastra/core`` 1.x).

Mastra maps its own span types (``mastra.span.type``) onto the GenAI operation names:
``agent_run`` is ``invoke_agent``, the model call ``chat``, ``tool_call`` ``execute_tool``
(with ``gen_ai.tool.call.arguments`` / ``.result``); its other spans keep their own names
(``agent_step``, ``model_generation``, ``model_chunk``). What does not fit a GenAI
attribute goes into ``mastra.<type>.input`` / ``.output``: the agent span holds the user's
request in ``mastra.agent_run.input`` (a text, or the messages it was given) and the answer
in ``mastra.agent_run.output`` (``{"text", …}``), not in ``gen_ai.input/output.messages``.
With a memory thread the agent span carries ``gen_ai.conversation.id``; every span carries
the caller's ids as ``mastra.metadata.threadId`` / ``resourceId``.

The GenAI parts are read by the GenAI reader; this one adds Mastra's attributes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from livescore.traces._readers import _parse as p
from livescore.traces._readers import genai
from livescore.traces._readers._reading import Reader, Sourced, SpanReading
from livescore.traces._readers.vercel_ai import last_user_turn
from livescore.traces._span import SpanRecord

__all__ = ("READER",)

SPAN_TYPE = "mastra.span.type"
AGENT_INPUT = "mastra.agent_run.input"
AGENT_OUTPUT = "mastra.agent_run.output"
CONTENT_SETTING = (
    "an Observability config with an OtelExporter, and no hideInput / hideOutput in the "
    "call's tracingOptions"
)


def speaks(span: SpanRecord) -> bool:
    """Any ``mastra.*`` attribute."""
    attributes = span.attributes
    return SPAN_TYPE in attributes or any(k.startswith("mastra.") for k in attributes)


def _agent_input(value: Any) -> Sourced[Any] | None:
    """``mastra.agent_run.input``: the text the agent was asked, or the last user turn of the
    messages it was given."""
    parsed = p.parse_json(value)
    if isinstance(parsed, str):
        return Sourced(parsed, AGENT_INPUT) if parsed.strip() else None
    if isinstance(parsed, Mapping) and isinstance(parsed.get("messages"), list):
        parsed = parsed["messages"]
    messages = last_user_turn(p.genai_messages(parsed) or [])
    return Sourced(messages, AGENT_INPUT) if messages else None


def _agent_output(value: Any) -> Sourced[str] | None:
    """``mastra.agent_run.output``: ``{"text", "files", …}``, or a structured ``object``."""
    parsed = p.parse_json(value)
    if isinstance(parsed, str):
        return Sourced(parsed, AGENT_OUTPUT) if parsed else None
    if isinstance(parsed, Mapping):
        text = parsed.get("text")
        if isinstance(text, str) and text:
            return Sourced(text, f"{AGENT_OUTPUT} .text")
        if parsed.get("object") is not None:
            return Sourced(p.as_text(parsed["object"]), f"{AGENT_OUTPUT} .object")
    return None


def read(span: SpanRecord) -> SpanReading:
    attributes = span.attributes
    reading = genai.read(span)
    reading.convention = "mastra"
    reading.content_setting = CONTENT_SETTING
    if reading.kind == "agent":
        if reading.input is None and AGENT_INPUT in attributes:
            reading.input = _agent_input(attributes[AGENT_INPUT])
        if reading.output is None and AGENT_OUTPUT in attributes:
            reading.output = _agent_output(attributes[AGENT_OUTPUT])
    if reading.conversation_id is None:
        found = p.first_str(attributes, "mastra.metadata.threadId")
        reading.conversation_id = Sourced(found[1], found[0]) if found else None
    return reading


READER = Reader("mastra", speaks, read, reads=("mastra.", *genai.READER.reads))
