"""Parsing shared by the convention readers: JSON values, chat messages in the shapes
instrumentations write them (GenAI parts, OpenAI chat messages, Bedrock content blocks,
flattened ``prefix.N.field`` attributes, span events), tool calls and errors.

Nothing here raises on odd values: a value of the wrong type reads as absent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from livescore.runs import ToolCall
from livescore.traces._readers._reading import Message
from livescore.traces._span import SpanRecord


def parse_json(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in ("[", "{", '"'):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def part_text(part: Any) -> str | None:
    if isinstance(part, str):
        return part
    if not isinstance(part, Mapping):
        return None
    kind = part.get("type")
    if kind in (None, "text", "reasoning") or "content" in part or "text" in part:
        value = part.get("content", part.get("text"))
        return value if isinstance(value, str) else None
    return None


def genai_message(raw: Any) -> Message | None:
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
            requested = openai_calls(raw.get("tool_calls"))
            if requested:
                message["tool_calls"] = requested
            if raw.get("tool_call_id"):
                message["tool_call_id"] = str(raw["tool_call_id"])
            return message
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    responses: list[tuple[str | None, Any]] = []
    for part in parts:
        if isinstance(part, Mapping) and part.get("type") == "tool_call":
            calls.append(call_dict(part.get("name"), part.get("id"), part.get("arguments")))
        elif isinstance(part, Mapping) and isinstance(part.get("toolUse"), Mapping):
            # Bedrock-style content blocks (Strands): {"toolUse": {toolUseId, name, input}}
            use = part["toolUse"]
            calls.append(call_dict(use.get("name"), use.get("toolUseId"), use.get("input")))
        elif isinstance(part, Mapping) and isinstance(part.get("toolResult"), Mapping):
            result = part["toolResult"]
            call_id = str_or_none(result.get("toolUseId"))
            responses.append((call_id, text_or_none(result.get("content"))))
        elif isinstance(part, Mapping) and part.get("type") == "tool_call_response":
            responses.append(
                (str_or_none(part.get("id")), part.get("response", part.get("result")))
            )
        else:
            text = part_text(part)
            if text is not None:
                texts.append(text)
    if responses and not texts and not calls:
        call_id, response = responses[0]
        return {
            "role": "tool",
            "content": None if response is None else as_text(response),
            "tool_call_id": call_id,
        }
    message = {"role": role, "content": "\n".join(texts) if texts else None}
    if calls:
        message["tool_calls"] = calls
    return message


def call_dict(name: Any, call_id: Any, arguments: Any) -> dict[str, Any]:
    """A requested tool call inside a message: ``{"id", "name", "arguments"}`` (JSON-safe)."""
    return {"id": str_or_none(call_id), "name": str(name or ""), "arguments": parse_json(arguments)}


def requested_calls(messages: Sequence[Message] | None) -> list[ToolCall]:
    """The tool calls that messages ask for, as :class:`~livescore.ToolCall` records."""
    return [
        ToolCall(name=c["name"], call_id=c["id"], args=c["arguments"])
        for m in messages or ()
        for c in m.get("tool_calls") or ()
    ]


def openai_calls(raw: Any) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []
    if not isinstance(raw, list):
        return calls
    for item in raw:
        if not isinstance(item, Mapping):
            continue
        function = item.get("function") if isinstance(item.get("function"), Mapping) else item
        assert isinstance(function, Mapping)
        calls.append(call_dict(function.get("name"), item.get("id"), function.get("arguments")))
    return calls


def str_or_none(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def genai_messages(value: Any) -> list[Message] | None:
    value = parse_json(value)
    if isinstance(value, Mapping):
        value = [value]
    if not isinstance(value, list):
        return None
    messages = [m for m in (genai_message(raw) for raw in value) if m is not None]
    return messages or None


_INDEXED = re.compile(r"^(\d+)\.(.+)$")


def indexed(attributes: Mapping[str, Any], prefix: str) -> dict[int, dict[str, Any]]:
    """``prefix.N.rest = v`` attributes, grouped by ``N``: ``{N: {rest: v}}``."""
    found: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if not key.startswith(prefix):
            continue
        match = _INDEXED.match(key[len(prefix) :])
        if match:
            found.setdefault(int(match.group(1)), {})[match.group(2)] = value
    return found


def indexed_messages(attributes: Mapping[str, Any], prefix: str) -> list[Message] | None:
    """OpenInference's flattened ``llm.input_messages.N.message.*`` attributes."""
    grouped = indexed(attributes, prefix)
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
        message: Message = {"role": normal_role(role), "content": content}
        calls: dict[int, dict[str, Any]] = {}
        for key, value in fields.items():
            match = re.match(r"^message\.tool_calls\.(\d+)\.tool_call\.(.+)$", key)
            if match:
                calls.setdefault(int(match.group(1)), {})[match.group(2)] = value
        if calls:
            message["tool_calls"] = [
                call_dict(call.get("function.name"), call.get("id"), call.get("function.arguments"))
                for _, call in sorted(calls.items())
            ]
        if fields.get("message.tool_call_id"):
            message["tool_call_id"] = str(fields["message.tool_call_id"])
        messages.append(message)
    return messages


def normal_role(role: Any) -> str:
    text = str(role or "user").lower()
    # smolagents writes a run's earlier tool traffic as "tool-call" / "tool-response".
    return {
        "tool-response": "tool",
        "tool-call": "assistant",
        "human": "user",
        "ai": "assistant",
    }.get(text, text)


def prompt_messages(attributes: Mapping[str, Any], prefix: str) -> list[Message] | None:
    grouped = indexed(attributes, prefix)
    if not grouped:
        return None
    return [
        {"role": normal_role(fields.get("role")), "content": fields.get("content")}
        for _, fields in sorted(grouped.items())
        if isinstance(fields.get("content"), str) or fields.get("role")
    ] or None


def event_messages(span: SpanRecord, output: bool) -> list[Message] | None:
    """The earlier GenAI form: one span event per message."""
    messages: list[Message] = []
    for event in span.events:
        name = event.name
        if output:
            if name != "gen_ai.choice":
                continue
            raw = parse_json(event.attributes.get("message"))
            if isinstance(raw, Mapping):
                message = genai_message({"role": "assistant", **raw})
            elif isinstance(raw, list):  # content blocks: text, tool calls
                message = genai_message({"role": "assistant", "content": raw})
            else:
                content = event.attributes.get("content", raw)
                message = {"role": "assistant", "content": text_or_none(parse_json(content))}
        else:
            if not name.startswith("gen_ai.") or not name.endswith(".message"):
                continue
            role = name[len("gen_ai.") : -len(".message")]
            content = parse_json(event.attributes.get("content"))
            if isinstance(content, list):
                message = genai_message({"role": role, "content": content})
            else:
                message = {"role": role, "content": text_or_none(content)}
        if message is not None:
            messages.append(message)
    return messages or None


def text_or_none(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        texts = [t for t in (part_text(p) for p in value) if t is not None]
        return "\n".join(texts) if texts else None
    if isinstance(value, Mapping):
        return part_text(value)
    return str(value)


def detail_event(span: SpanRecord, key: str) -> Any:
    """``key`` on a ``gen_ai.client.inference.operation.details`` event (the conventions'
    event form of the message attributes), the first one that has it."""
    for event in span.events:
        if key in event.attributes:
            return event.attributes[key]
    return None


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


def answer_text(messages: Sequence[Message] | None) -> str | None:
    """The text of the last assistant message, or ``None``."""
    for message in reversed(messages or ()):
        if message.get("role") in ("assistant", "model", "ai"):
            content = message.get("content")
            return content if isinstance(content, str) else None
    return None


def has_content(messages: Sequence[Message] | None) -> bool:
    """Whether some message holds text or tool calls (not just roles: content not captured)."""
    return any(
        (isinstance(m.get("content"), str) and m["content"].strip()) or m.get("tool_calls")
        for m in messages or ()
    )


def user_turn(messages: Sequence[Message]) -> list[Message] | None:
    """The messages up to the first assistant turn: what the user asked (system included)."""
    turn: list[Message] = []
    for message in messages:
        if message.get("role") in ("assistant", "model", "ai", "tool"):
            break
        turn.append({"role": message.get("role"), "content": message.get("content")})
    return turn or None


_REPR = re.compile(r"^[A-Z][A-Za-z0-9_]*\((?:[a-z_][a-z0-9_]*=|\)|'|\")")


def looks_like_repr(text: str) -> bool:
    """Whether a text is a Python object's repr (``StopEvent(result=…)``), not an answer.

    Example:
        >>> looks_like_repr("StopEvent(result=AgentOutput(response=ChatMessage(role=..."), \\
        ...     looks_like_repr("Paris (France) is the capital.")
        (True, False)
    """
    return _REPR.match(text) is not None


def first_str(attributes: Mapping[str, Any], *keys: str) -> tuple[str, str] | None:
    """The first of ``keys`` holding a non-empty string or number: ``(key, value)``."""
    for key in keys:
        value = attributes.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
            return key, str(value)
    return None
