"""OpenInference: the convention of Arize's instrumentations (and Phoenix).

``openinference.span.kind`` (``AGENT``, ``LLM``, ``TOOL``, ``RETRIEVER``, ``CHAIN``…) says
what a span is; ``input.value`` / ``output.value`` hold its input and output (text, or JSON
whose keys vary by framework); model spans flatten their messages into
``llm.input_messages.N.message.*`` / ``llm.output_messages.N.message.*``; ``tool.name``,
``retrieval.documents.N.document.content``, ``session.id``, ``agent.name``.

CrewAI's instrumentor makes the crew's ``kickoff`` a ``CHAIN`` span holding what the crew
was asked (``crew_tasks``, the task descriptions, whose ``{placeholders}`` the kickoff's
``crew_inputs`` fill) and its final answer (``output.value``: the ``CrewOutput``'s
``raw``); each task is an ``AGENT`` span whose ``input.value`` is the agent's configuration
(role, goal, tools), not the question. So a kickoff span is read as the run's (agent) span:
the one span holding both the question and the crew's answer, with the tasks, model calls
and tools beneath it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from livescore.runs import ToolCall
from livescore.traces._readers import _parse as p
from livescore.traces._readers._reading import Message, Reader, Sourced, SpanKind, SpanReading
from livescore.traces._readers.genai import make_tool_call
from livescore.traces._span import SpanRecord

__all__ = ("READER", "input_text", "output_text")

KIND = "openinference.span.kind"
INPUT = "input.value"
OUTPUT = "output.value"

_KINDS: dict[str, SpanKind] = {
    "AGENT": "agent",
    "LLM": "model",
    "TOOL": "tool",
    "RETRIEVER": "retriever",
}
# Keys under which OpenInference instrumentations put the user's request in a JSON input.
_INPUT_KEYS = ("task", "input", "query", "question", "prompt", "message", "user_input", "messages")
CONTENT_SETTING = "OPENINFERENCE_HIDE_INPUTS and OPENINFERENCE_HIDE_OUTPUTS unset (or false)"
# CrewAI's kickoff span (openinference-instrumentation-crewai): the tasks and their inputs.
CREW_TASKS = "crew_tasks"
CREW_INPUTS = "crew_inputs"
# CrewAI's placeholder syntax (crewai.utilities.string_utils.interpolate_only): {name}, so
# JSON braces in a description stay as they are.
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_\-]*)\}")


def speaks(span: SpanRecord) -> bool:
    return KIND in span.attributes


def kind(span: SpanRecord) -> SpanKind | None:
    if CREW_TASKS in span.attributes:
        return "agent"  # a CrewAI kickoff (a CHAIN span): the crew's run
    value = span.attributes.get(KIND)
    return _KINDS.get(value.upper()) if isinstance(value, str) else None


def input_text(span: SpanRecord) -> Sourced[str] | None:
    """``input.value`` as the user's text (a JSON object is searched for it)."""
    value = span.attributes.get(INPUT)
    if not isinstance(value, str):
        return None
    parsed = p.parse_json(value)
    if isinstance(parsed, str):
        return Sourced(parsed, INPUT, _quality(parsed))
    if isinstance(parsed, Mapping):
        for key in _INPUT_KEYS:
            found = parsed.get(key)
            if isinstance(found, str):
                return Sourced(found, f"{INPUT} .{key}")
            if key == "messages" and isinstance(found, list):
                messages = p.genai_messages(found)
                users = [m for m in messages or () if m.get("role") in ("user", "human")]
                if users and isinstance(users[-1].get("content"), str):
                    return Sourced(str(users[-1]["content"]), f"{INPUT} .messages")
        return None
    return Sourced(value, INPUT) if not isinstance(parsed, list) else None


def crew_input(span: SpanRecord) -> Sourced[str] | None:
    """What a CrewAI crew was asked: its tasks' descriptions, placeholders filled from the
    kickoff's inputs as CrewAI fills them (one paragraph per task)."""
    tasks = p.parse_json(span.attributes.get(CREW_TASKS))
    inputs = p.parse_json(span.attributes.get(CREW_INPUTS))
    values = inputs if isinstance(inputs, Mapping) else {}

    def fill(found: re.Match[str]) -> str:
        name = found.group(1)
        return str(values[name]) if name in values else found.group(0)

    descriptions = [
        _PLACEHOLDER.sub(fill, task["description"]).strip()
        for task in (tasks if isinstance(tasks, list) else ())
        if isinstance(task, Mapping) and isinstance(task.get("description"), str)
    ]
    text = "\n\n".join(d for d in descriptions if d)
    return Sourced(text, f"{CREW_TASKS} .description") if text else None


def output_text(span: SpanRecord) -> Sourced[str] | None:
    """``output.value`` as the answer's text."""
    value = span.attributes.get(OUTPUT)
    if not isinstance(value, str):
        return None
    parsed = p.parse_json(value)
    if isinstance(parsed, str):
        return Sourced(parsed, OUTPUT, _quality(parsed))
    if isinstance(parsed, Mapping):
        # ``raw``: CrewAI's CrewOutput / TaskOutput (the answer as the model wrote it).
        for key in ("content", "output", "answer", "text", "result", "raw"):
            found = parsed.get(key)
            if isinstance(found, str):
                return Sourced(found, f"{OUTPUT} .{key}")
        messages = parsed.get("messages")
        if isinstance(messages, list):
            for message in reversed(p.genai_messages(messages) or []):
                if message.get("role") in ("assistant", "ai") and message.get("content"):
                    return Sourced(str(message["content"]), f"{OUTPUT} .messages")
        return None
    return Sourced(value, OUTPUT, _quality(value))


def _quality(text: str) -> Any:
    if not p.looks_like_repr(text):
        return "whole"
    # LlamaIndex's instrumentor cuts a repr at 200 characters and ends it with "...":
    # cut short, whatever text it holds is partial.
    return "truncated" if text.endswith("...") else "repr"


def _messages(span: SpanRecord, side: str) -> Sourced[list[Message]] | None:
    prefix = f"llm.{side}_messages."
    found = p.indexed_messages(span.attributes, prefix)
    # A message list with roles and no content (an instrumentation that records the role of
    # a message it could not render) says nothing: input.value may still hold the text.
    if not found or not p.has_content(found):
        return None
    return Sourced(found, prefix + "N.message.content")


def tool_call(span: SpanRecord) -> Sourced[ToolCall]:
    attributes = span.attributes
    name = attributes.get("tool.name")
    call_id = attributes.get("tool_call.id")
    if "tool_call.function.arguments" in attributes:
        args = p.parse_json(attributes["tool_call.function.arguments"])
    else:
        args = p.parse_json(attributes.get(INPUT))
        # smolagents wraps a tool's keyword arguments: {"args": [], "kwargs": {...}}
        if isinstance(args, Mapping) and isinstance(args.get("kwargs"), Mapping):
            args = dict(args["kwargs"]) if not args.get("args") else args
    result = attributes.get(OUTPUT)
    message = p.parse_json(result)
    if (
        isinstance(message, Mapping)
        and message.get("type") == "tool"
        and isinstance(message.get("data"), Mapping)
    ):
        # LangChain's tool span: the ToolMessage serialised, its content the result.
        result = message["data"].get("content")
        call_id = call_id or message["data"].get("tool_call_id")
    elif isinstance(message, Mapping) and "raw_output" in message and "tool_name" in message:
        # LlamaIndex's tool span: the ToolOutput serialised, raw_output what the tool returned.
        raw = message["raw_output"]
        result = raw if raw is not None else message.get("blocks")
    return Sourced(make_tool_call(span, name, call_id, args, result), OUTPUT)


def read(span: SpanRecord) -> SpanReading:
    attributes = span.attributes
    reading = SpanReading("openinference", kind(span), content_setting=CONTENT_SETTING)
    if reading.kind == "tool":
        reading.tool_call = tool_call(span)
    elif reading.kind == "retriever":
        reading.input = input_text(span)
        grouped = p.indexed(attributes, "retrieval.documents.")
        reading.documents = [
            fields["document.content"]
            for _, fields in sorted(grouped.items())
            if isinstance(fields.get("document.content"), str)
        ]
    else:
        crew = crew_input(span) if CREW_TASKS in attributes else None
        reading.input = crew or _messages(span, "input") or input_text(span)
        reading.output = _messages(span, "output") or output_text(span)
    found = p.first_str(attributes, "session.id")
    reading.conversation_id = Sourced(found[1], found[0]) if found else None
    name = p.first_str(attributes, "agent.name")
    reading.agent_name = name[1] if name else None
    model = p.first_str(attributes, "llm.model_name")
    reading.model = model[1] if model else None
    return reading


READER = Reader(
    "openinference",
    speaks,
    read,
    reads=(
        "input.",
        "output.",
        "llm.",
        "retrieval.",
        "tool.",
        "tool_call.",
        "session.",
        "agent.",
        CREW_TASKS,
        CREW_INPUTS,
    ),
)
