"""OpenLLMetry (Traceloop): the ``traceloop.*`` attributes of its SDK's decorators and of
its framework instrumentations.

- ``traceloop.span.kind`` says what a span is: ``workflow`` and ``agent`` spans are agent
  runs (the outermost one is the run), ``tool`` spans are tool calls (they also carry
  ``gen_ai.tool.name``), ``task`` spans are plain steps.
- ``traceloop.entity.name`` names the decorated function; ``traceloop.entity.input`` is
  the JSON of its call (``{"args": [...], "kwargs": {...}}``; LangChain's chains write
  ``{"inputs": {...}, ...}``) and ``traceloop.entity.output`` the JSON of its return value,
  both cut at ``OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT`` where it is set (into JSON that no
  longer parses: read as ``truncated``).
- ``traceloop.association.properties.<key>`` (``Traceloop.set_association_properties``)
  on every span beneath: ``session_id`` (or ``conversation_id``, ``thread_id``,
  ``chat_id``) is the conversation, after ``gen_ai.conversation.id``.
- The model spans of OpenLLMetry's instrumentations (``openai.chat``…) carry no span kind
  but GenAI attributes (``gen_ai.input.messages`` in 0.62, the indexed
  ``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*`` in earlier releases) beside the
  association properties: they are read as GenAI, their conversation from those properties.

Content (inputs, outputs, messages) is captured unless ``TRACELOOP_TRACE_CONTENT=false``.
"""

from __future__ import annotations

from livescore.traces._readers import _parse as p
from livescore.traces._readers import genai
from livescore.traces._readers._reading import Reader, Sourced, SpanKind, SpanReading
from livescore.traces._span import SpanRecord

__all__ = ("READER",)

NAME = "traceloop"
KIND = "traceloop.span.kind"
ENTITY_NAME = "traceloop.entity.name"
INPUT = "traceloop.entity.input"
OUTPUT = "traceloop.entity.output"
ASSOCIATION = "traceloop.association.properties."

_KINDS: dict[str, SpanKind] = {"workflow": "agent", "agent": "agent", "tool": "tool"}
# Association properties that name a conversation (the user chooses the keys; these are
# the ones OpenLLMetry's docs and the frameworks use).
_CONVERSATION_KEYS = ("session_id", "conversation_id", "thread_id", "chat_id")
CONTENT_SETTING = "TRACELOOP_TRACE_CONTENT=true (the default; false removes all content)"


def speaks(span: SpanRecord) -> bool:
    """A ``traceloop.*`` attribute: a decorated function's span, or any span made inside
    one's context (its association properties, its workflow name)."""
    attributes = span.attributes
    return KIND in attributes or any(k.startswith("traceloop.") for k in attributes)


def read(span: SpanRecord) -> SpanReading:
    attributes = span.attributes
    kind_value = attributes.get(KIND)
    if not isinstance(kind_value, str):
        # A model span of OpenLLMetry's instrumentations (or another span made in a
        # decorated function's context): its GenAI attributes say what it is.
        reading = genai.read(span) if genai.speaks(span) else SpanReading(NAME)
        reading.convention = NAME
        reading.content_setting = CONTENT_SETTING
        reading.conversation_id = _conversation(span)
        return reading
    reading = SpanReading(NAME, _KINDS.get(kind_value.lower()), content_setting=CONTENT_SETTING)
    name = p.first_str(attributes, ENTITY_NAME)
    if reading.kind == "tool" and INPUT not in attributes and OUTPUT not in attributes:
        # A framework instrumentation's tool span may say its call the GenAI way instead.
        reading.tool_call = genai.tool_call(span)
    elif reading.kind == "tool":
        tool_name = p.first_str(attributes, "gen_ai.tool.name", ENTITY_NAME)
        args = p.call_arguments(p.parse_json(attributes.get(INPUT)))
        result = p.parse_json(attributes.get(OUTPUT))
        call = genai.make_tool_call(
            span,
            tool_name[1] if tool_name else None,
            attributes.get("gen_ai.tool.call.id"),
            args,
            result,
        )
        reading.tool_call = Sourced(call, OUTPUT)
    else:
        reading.input = p.sourced(INPUT, p.recorded_input(attributes.get(INPUT)))
        reading.output = p.sourced(OUTPUT, p.recorded_output(attributes.get(OUTPUT)))
        # A framework instrumentation's span may carry the GenAI messages instead.
        reading.input = reading.input or genai.messages(span, output=False)
        reading.output = reading.output or genai.messages(span, output=True)
        if reading.kind == "agent":
            agent = p.first_str(attributes, "gen_ai.agent.name") or name
            reading.agent_name = agent[1] if agent else None
    reading.conversation_id = _conversation(span)
    return reading


def _conversation(span: SpanRecord) -> Sourced[str] | None:
    keys = ("gen_ai.conversation.id", *(ASSOCIATION + k for k in _CONVERSATION_KEYS))
    found = p.first_str(span.attributes, *keys, "session.id")
    return Sourced(found[1], found[0]) if found else None


READER = Reader(NAME, speaks, read, reads=("traceloop.", *genai.READER.reads))
