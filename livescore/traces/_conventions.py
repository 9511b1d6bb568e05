"""What a span says in the two conventions agents are traced with, read into plain values.

- The OpenTelemetry GenAI semantic conventions: ``gen_ai.operation.name`` (``invoke_agent``,
  ``chat``, ``execute_tool``…), ``gen_ai.input.messages`` / ``gen_ai.output.messages`` (JSON
  messages made of parts), ``gen_ai.tool.*``, ``gen_ai.conversation.id``; their earlier
  forms too: span events (``gen_ai.user.message``, ``gen_ai.choice``) and indexed
  ``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*`` attributes.
- OpenInference: ``openinference.span.kind`` (``AGENT``, ``LLM``, ``TOOL``, ``RETRIEVER``,
  ``CHAIN``), ``input.value`` / ``output.value``, flattened ``llm.input_messages.N.*`` /
  ``llm.output_messages.N.*``, ``tool.name``, ``retrieval.documents.N.document.content``,
  ``session.id``.

Every reader here takes an attribute mapping and never raises on odd values: a value of
the wrong type reads as absent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from livescore.runs import ToolCall
from livescore.traces._span import SpanRecord

__all__ = (
    "SpanKind",
    "agent_name",
    "convention_of",
    "conversation_id",
    "has_run_io",
    "input_messages",
    "is_agent_span",
    "model_name",
    "output_messages",
    "requested_calls",
    "retrieved_documents",
    "span_kind",
    "tool_call_of",
)

SpanKind = Literal["agent", "model", "tool", "retriever"]

# -- attribute names ---------------------------------------------------------------------------
OPERATION = "gen_ai.operation.name"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
OI_KIND = "openinference.span.kind"
OI_INPUT = "input.value"
OI_OUTPUT = "output.value"

_GENAI_KINDS: dict[str, SpanKind] = {
    "invoke_agent": "agent",
    "chat": "model",
    "text_completion": "model",
    "generate_content": "model",
    "execute_tool": "tool",
    "retrieval": "retriever",
}
_OI_KINDS: dict[str, SpanKind] = {
    "AGENT": "agent",
    "LLM": "model",
    "TOOL": "tool",
    "RETRIEVER": "retriever",
}
# Tools through which an agent hands over its answer (smolagents' final_answer, the output
# tool pydantic-ai calls final_result): their "result" is the answer, not evidence.
ANSWER_TOOLS = frozenset({"final_answer", "final_result"})
# Keys under which OpenInference instrumentations put the user's request in a JSON input.
_INPUT_KEYS = ("task", "input", "query", "question", "prompt", "message", "user_input", "messages")


def span_kind(span: SpanRecord) -> SpanKind | None:
    """What a span is: an agent run, a model call, a tool call, a retrieval; else ``None``.

    Example:
        >>> s = SpanRecord("1" * 32, "2" * 16, None, "x", 0, 0, {"openinference.span.kind": "LLM"})
        >>> span_kind(s)
        'model'
    """
    attributes = span.attributes
    op = attributes.get(OPERATION)
    if isinstance(op, str) and op in _GENAI_KINDS:
        return _GENAI_KINDS[op]
    kind = attributes.get(OI_KIND)
    if isinstance(kind, str):
        return _OI_KINDS.get(kind.upper())
    return None


def is_agent_span(span: SpanRecord) -> bool:
    """An ``invoke_agent`` span or an OpenInference ``AGENT`` span."""
    return span_kind(span) == "agent"


def convention_of(span: SpanRecord) -> str:
    """``"genai"``, ``"openinference"`` or ``"unknown"``: which convention the span speaks."""
    attributes = span.attributes
    if OPERATION in attributes or any(k.startswith("gen_ai.") for k in attributes):
        return "genai"
    if OI_KIND in attributes or OI_INPUT in attributes:
        return "openinference"
    return "unknown"


def has_run_io(span: SpanRecord) -> bool:
    """Whether a span carries both a run's input and its output (a root that may be a run)."""
    attributes = span.attributes
    if INPUT_MESSAGES in attributes and OUTPUT_MESSAGES in attributes:
        return True
    if OI_INPUT in attributes and OI_OUTPUT in attributes:
        return True
    events = {e.name for e in span.events}
    return "gen_ai.user.message" in events and "gen_ai.choice" in events


def agent_name(span: SpanRecord) -> str | None:
    """The agent's name (``gen_ai.agent.name``, OpenInference ``agent.name``)."""
    for key in ("gen_ai.agent.name", "agent.name"):
        value = span.attributes.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def conversation_id(span: SpanRecord) -> str | None:
    """``gen_ai.conversation.id`` or OpenInference ``session.id``."""
    for key in ("gen_ai.conversation.id", "session.id"):
        value = span.attributes.get(key)
        if isinstance(value, str | int) and str(value):
            return str(value)
    return None


def model_name(span: SpanRecord) -> str | None:
    """The model a model span called."""
    for key in ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name"):
        value = span.attributes.get(key)
        if isinstance(value, str) and value:
            return value
    return None


# -- messages ------------------------------------------------------------------------------------

Message = dict[str, Any]
"""A chat message as a :class:`~livescore.Run` holds it: ``{"role", "content"}`` (plus
``tool_calls`` / ``tool_call_id`` where they apply)."""


def _json(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in ("[", "{", '"'):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _part_text(part: Any) -> str | None:
    if isinstance(part, str):
        return part
    if not isinstance(part, Mapping):
        return None
    kind = part.get("type")
    if kind in (None, "text", "reasoning") or "content" in part or "text" in part:
        value = part.get("content", part.get("text"))
        return value if isinstance(value, str) else None
    return None


def _genai_message(raw: Any) -> Message | None:
    """A GenAI message (``{"role", "parts": [...]}``, or the older ``{"role", "content"}``)."""
    if not isinstance(raw, Mapping):
        return None
    role = str(raw.get("role") or "user")
    parts = raw.get("parts")
    if not isinstance(parts, list):
        content = raw.get("content")
        if isinstance(content, list):
            parts = content
        else:
            message: Message = {
                "role": role,
                "content": content if isinstance(content, str) else None,
            }
            openai_calls = _openai_calls(raw.get("tool_calls"))
            if openai_calls:
                message["tool_calls"] = openai_calls
            if raw.get("tool_call_id"):
                message["tool_call_id"] = str(raw["tool_call_id"])
            return message
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    responses: list[tuple[str | None, Any]] = []
    for part in parts:
        if isinstance(part, Mapping) and part.get("type") == "tool_call":
            calls.append(_call(part.get("name"), part.get("id"), part.get("arguments")))
        elif isinstance(part, Mapping) and isinstance(part.get("toolUse"), Mapping):
            # Bedrock-style content blocks (Strands): {"toolUse": {toolUseId, name, input}}
            use = part["toolUse"]
            calls.append(_call(use.get("name"), use.get("toolUseId"), use.get("input")))
        elif isinstance(part, Mapping) and isinstance(part.get("toolResult"), Mapping):
            result = part["toolResult"]
            call_id = _str_or_none(result.get("toolUseId"))
            responses.append((call_id, _text_or_none(result.get("content"))))
        elif isinstance(part, Mapping) and part.get("type") == "tool_call_response":
            responses.append(
                (_str_or_none(part.get("id")), part.get("response", part.get("result")))
            )
        else:
            text = _part_text(part)
            if text is not None:
                texts.append(text)
    if responses and not texts and not calls:
        call_id, response = responses[0]
        return {
            "role": "tool",
            "content": None if response is None else _as_text(response),
            "tool_call_id": call_id,
        }
    message = {"role": role, "content": "\n".join(texts) if texts else None}
    if calls:
        message["tool_calls"] = calls
    return message


def _call(name: Any, call_id: Any, arguments: Any) -> dict[str, Any]:
    """A requested tool call inside a message: ``{"id", "name", "arguments"}`` (JSON-safe)."""
    return {"id": _str_or_none(call_id), "name": str(name or ""), "arguments": _json(arguments)}


def requested_calls(messages: Sequence[Message] | None) -> list[ToolCall]:
    """The tool calls that messages ask for, as :class:`~livescore.ToolCall` records."""
    return [
        ToolCall(name=c["name"], call_id=c["id"], args=c["arguments"])
        for m in messages or ()
        for c in m.get("tool_calls") or ()
    ]


def _openai_calls(raw: Any) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []
    if not isinstance(raw, list):
        return calls
    for item in raw:
        if not isinstance(item, Mapping):
            continue
        function = item.get("function") if isinstance(item.get("function"), Mapping) else item
        assert isinstance(function, Mapping)
        calls.append(_call(function.get("name"), item.get("id"), function.get("arguments")))
    return calls


def _str_or_none(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _genai_messages(value: Any) -> list[Message] | None:
    value = _json(value)
    if isinstance(value, Mapping):
        value = [value]
    if not isinstance(value, list):
        return None
    messages = [m for m in (_genai_message(raw) for raw in value) if m is not None]
    return messages or None


_INDEXED = re.compile(r"^(\d+)\.(.+)$")


def _indexed(attributes: Mapping[str, Any], prefix: str) -> dict[int, dict[str, Any]]:
    """``prefix.N.rest = v`` attributes, grouped by ``N``: ``{N: {rest: v}}``."""
    found: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if not key.startswith(prefix):
            continue
        match = _INDEXED.match(key[len(prefix) :])
        if match:
            found.setdefault(int(match.group(1)), {})[match.group(2)] = value
    return found


def _oi_messages(attributes: Mapping[str, Any], prefix: str) -> list[Message] | None:
    """OpenInference's flattened ``llm.input_messages.N.message.*`` attributes."""
    grouped = _indexed(attributes, prefix)
    if not grouped:
        return None
    messages: list[Message] = []
    for _, fields in sorted(grouped.items()):
        role = fields.get("message.role")
        content = fields.get("message.content")
        if not isinstance(content, str):
            texts = [
                v
                for k, v in sorted(fields.items())
                if k.startswith("message.contents.")
                and k.endswith(".message_content.text")
                and isinstance(v, str)
            ]
            content = "\n".join(texts) if texts else None
        message: Message = {"role": _oi_role(role), "content": content}
        calls: dict[int, dict[str, Any]] = {}
        for key, value in fields.items():
            match = re.match(r"^message\.tool_calls\.(\d+)\.tool_call\.(.+)$", key)
            if match:
                calls.setdefault(int(match.group(1)), {})[match.group(2)] = value
        if calls:
            message["tool_calls"] = [
                _call(call.get("function.name"), call.get("id"), call.get("function.arguments"))
                for _, call in sorted(calls.items())
            ]
        if fields.get("message.tool_call_id"):
            message["tool_call_id"] = str(fields["message.tool_call_id"])
        messages.append(message)
    return messages


def _oi_role(role: Any) -> str:
    text = str(role or "user").lower()
    # smolagents writes a run's earlier tool traffic as "tool-call" / "tool-response".
    return {
        "tool-response": "tool",
        "tool-call": "assistant",
        "human": "user",
        "ai": "assistant",
    }.get(text, text)


def _openllmetry_messages(attributes: Mapping[str, Any], prefix: str) -> list[Message] | None:
    grouped = _indexed(attributes, prefix)
    if not grouped:
        return None
    return [
        {"role": _oi_role(fields.get("role")), "content": fields.get("content")}
        for _, fields in sorted(grouped.items())
        if isinstance(fields.get("content"), str) or fields.get("role")
    ] or None


def _event_messages(span: SpanRecord, output: bool) -> list[Message] | None:
    """The earlier GenAI form: one span event per message."""
    messages: list[Message] = []
    for event in span.events:
        name = event.name
        if output:
            if name != "gen_ai.choice":
                continue
            raw = _json(event.attributes.get("message"))
            if isinstance(raw, Mapping):
                message = _genai_message({"role": "assistant", **raw})
            elif isinstance(raw, list):  # content blocks: text, tool calls
                message = _genai_message({"role": "assistant", "content": raw})
            else:
                content = event.attributes.get("content", raw)
                message = {"role": "assistant", "content": _text_or_none(_json(content))}
        else:
            if not name.startswith("gen_ai.") or not name.endswith(".message"):
                continue
            role = name[len("gen_ai.") : -len(".message")]
            content = _json(event.attributes.get("content"))
            if isinstance(content, list):
                message = _genai_message({"role": role, "content": content})
            else:
                message = {"role": role, "content": _text_or_none(content)}
        if message is not None:
            messages.append(message)
    return messages or None


def _text_or_none(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        texts = [t for t in (_part_text(p) for p in value) if t is not None]
        return "\n".join(texts) if texts else None
    if isinstance(value, Mapping):
        return _part_text(value)
    return str(value)


def _detail_event(span: SpanRecord, key: str) -> Any:
    """``key`` on a ``gen_ai.client.inference.operation.details`` event (the conventions'
    event form of the message attributes), the first one that has it."""
    for event in span.events:
        if key in event.attributes:
            return event.attributes[key]
    return None


def _messages(span: SpanRecord, *, output: bool) -> list[Message] | None:
    key = OUTPUT_MESSAGES if output else INPUT_MESSAGES
    attributes = span.attributes
    value = attributes[key] if key in attributes else _detail_event(span, key)
    if value is not None:
        return _genai_messages(value)
    side = "output" if output else "input"
    return (
        _oi_messages(attributes, f"llm.{side}_messages.")
        or _openllmetry_messages(attributes, "gen_ai.completion." if output else "gen_ai.prompt.")
        or _event_messages(span, output=output)
    )


def input_messages(span: SpanRecord) -> list[Message] | None:
    """The messages a span received, in whichever convention it speaks; ``None`` if none.

    Example:
        >>> s = SpanRecord("1" * 32, "2" * 16, None, "chat", 0, 0, {"gen_ai.input.messages":
        ...     '[{"role": "user", "parts": [{"type": "text", "content": "Hi"}]}]'})
        >>> input_messages(s)
        [{'role': 'user', 'content': 'Hi'}]
    """
    return _messages(span, output=False)


def output_messages(span: SpanRecord) -> list[Message] | None:
    """The messages a span produced (a model's answer), in either convention."""
    return _messages(span, output=True)


def input_value(span: SpanRecord) -> str | None:
    """OpenInference ``input.value`` as the user's text (a JSON object is searched for it)."""
    value = span.attributes.get(OI_INPUT)
    if not isinstance(value, str):
        return None
    parsed = _json(value)
    if isinstance(parsed, str):
        return parsed
    if isinstance(parsed, Mapping):
        for key in _INPUT_KEYS:
            found = parsed.get(key)
            if isinstance(found, str):
                return found
            if key == "messages" and isinstance(found, list):
                messages = _genai_messages(found)
                users = [m for m in messages or () if m.get("role") in ("user", "human")]
                if users and isinstance(users[-1].get("content"), str):
                    return str(users[-1]["content"])
        return None
    return value if not isinstance(parsed, list) else None


def output_value(span: SpanRecord) -> str | None:
    """OpenInference ``output.value`` as the answer's text."""
    value = span.attributes.get(OI_OUTPUT)
    if not isinstance(value, str):
        return None
    parsed = _json(value)
    if isinstance(parsed, str):
        return parsed
    if isinstance(parsed, Mapping):
        for key in ("content", "output", "answer", "text", "result"):
            found = parsed.get(key)
            if isinstance(found, str):
                return found
        messages = parsed.get("messages")
        if isinstance(messages, list):
            found_messages = _genai_messages(messages) or []
            for message in reversed(found_messages):
                if message.get("role") in ("assistant", "ai") and message.get("content"):
                    return str(message["content"])
        return None
    return value


def tool_call_of(span: SpanRecord) -> ToolCall:
    """The call a tool span made: name, id, arguments, result, error."""
    attributes = span.attributes
    name = attributes.get("gen_ai.tool.name", attributes.get("tool.name"))
    call_id = attributes.get("gen_ai.tool.call.id", attributes.get("tool_call.id"))
    if "gen_ai.tool.call.arguments" in attributes:
        args = _json(attributes["gen_ai.tool.call.arguments"])
    elif "tool_call.function.arguments" in attributes:
        args = _json(attributes["tool_call.function.arguments"])
    else:
        args = _json(attributes.get(OI_INPUT))
        # smolagents wraps a tool's keyword arguments: {"args": [], "kwargs": {...}}
        if isinstance(args, Mapping) and isinstance(args.get("kwargs"), Mapping):
            args = dict(args["kwargs"]) if not args.get("args") else args
    if "gen_ai.tool.call.result" in attributes:
        result = _json(attributes["gen_ai.tool.call.result"])
    else:
        result = attributes.get(OI_OUTPUT)
    if args is None or result is None:
        # The earlier GenAI form (Strands): the call's arguments in a gen_ai.tool.message
        # event, its result in a gen_ai.choice event.
        for event in span.events:
            if event.name == "gen_ai.tool.message" and args is None:
                args = _json(event.attributes.get("content"))
            elif event.name == "gen_ai.choice" and result is None:
                result = _text_or_none(_json(event.attributes.get("message")))
            if call_id is None and event.attributes.get("id"):
                call_id = event.attributes.get("id")
    if (
        isinstance(result, list)
        and result
        and all(isinstance(p, Mapping) and isinstance(p.get("text"), str) for p in result)
    ):
        result = "\n".join(p["text"] for p in result)  # content blocks of text
    error = error_of(span)
    return ToolCall(
        name=str(name) if name else span.name,
        call_id=_str_or_none(call_id),
        args=args,
        result=None if error is not None else result,
        error=error,
    )


def error_of(span: SpanRecord) -> str | None:
    """Why the span failed (its status message, else its exception event), or ``None``."""
    if span.error is None:
        return None
    if span.error:
        return span.error
    for event in span.events:
        if event.name == "exception":
            message = event.attributes.get("exception.message")
            kind = event.attributes.get("exception.type")
            if message or kind:
                return f"{kind}: {message}" if kind and message else str(message or kind)
    error_type = span.attributes.get("error.type")
    return str(error_type) if error_type else "the span ended in an error"


def retrieved_documents(span: SpanRecord) -> list[str]:
    """The documents a retriever span returned (``retrieval.documents.N.document.content``)."""
    grouped = _indexed(span.attributes, "retrieval.documents.")
    return [
        fields["document.content"]
        for _, fields in sorted(grouped.items())
        if isinstance(fields.get("document.content"), str)
    ]


def final_result(span: SpanRecord) -> str | None:
    """pydantic-ai's ``final_result`` attribute on its agent span, as text."""
    value = span.attributes.get("final_result")
    if value is None:
        return None
    return value if isinstance(value, str) else _as_text(value)


def all_messages(span: SpanRecord) -> list[Message] | None:
    """pydantic-ai's ``pydantic_ai.all_messages``: the whole run's messages."""
    value = span.attributes.get("pydantic_ai.all_messages")
    return _genai_messages(value) if value is not None else None


def answer_text(messages: Sequence[Message] | None) -> str | None:
    """The text of the last assistant message, or ``None``."""
    for message in reversed(messages or ()):
        if message.get("role") in ("assistant", "model", "ai"):
            content = message.get("content")
            return content if isinstance(content, str) else None
    return None
