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
from livescore.traces._readers._reading import Message, Quality, Sourced
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


_INDEXED_CALL = re.compile(r"^tool_calls\.(\d+)\.(.+)$")


def prompt_messages(attributes: Mapping[str, Any], prefix: str) -> list[Message] | None:
    """OpenLLMetry's flattened ``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*`` messages.

    Each message: ``role``, ``content`` (a text, or the JSON of a list of content parts),
    the calls an assistant asked for (``tool_calls.M.id`` / ``.name`` / ``.arguments``, or
    the older ``function_call.name`` / ``.arguments``) and, on a tool message,
    ``tool_call_id``.

    Example:
        >>> attributes = {
        ...     "gen_ai.prompt.0.role": "assistant",
        ...     "gen_ai.prompt.0.tool_calls.0.id": "c1",
        ...     "gen_ai.prompt.0.tool_calls.0.name": "get_weather",
        ...     "gen_ai.prompt.0.tool_calls.0.arguments": '{"city": "Lyon"}',
        ...     "gen_ai.prompt.1.role": "tool",
        ...     "gen_ai.prompt.1.content": "sunny",
        ...     "gen_ai.prompt.1.tool_call_id": "c1"}
        >>> prompt_messages(attributes, "gen_ai.prompt.")  # doctest: +NORMALIZE_WHITESPACE
        [{'role': 'assistant', 'content': None,
          'tool_calls': [{'id': 'c1', 'name': 'get_weather', 'arguments': {'city': 'Lyon'}}]},
         {'role': 'tool', 'content': 'sunny', 'tool_call_id': 'c1'}]
    """
    grouped = indexed(attributes, prefix)
    if not grouped:
        return None
    messages: list[Message] = []
    for _, fields in sorted(grouped.items()):
        content = _indexed_content(fields.get("content"))
        calls: dict[int, dict[str, Any]] = {}
        for key, value in fields.items():
            match = _INDEXED_CALL.match(key)
            if match:
                calls.setdefault(int(match.group(1)), {})[match.group(2)] = value
        requested = [
            call_dict(
                call.get("name", call.get("function.name")),
                call.get("id"),
                call.get("arguments", call.get("function.arguments")),
            )
            for _, call in sorted(calls.items())
        ]
        if not requested and fields.get("function_call.name"):
            requested = [
                call_dict(fields["function_call.name"], None, fields.get("function_call.arguments"))
            ]
        if content is None and not requested and not fields.get("role"):
            continue
        message: Message = {"role": normal_role(fields.get("role")), "content": content}
        if requested:
            message["tool_calls"] = requested
        if fields.get("tool_call_id"):
            message["tool_call_id"] = str(fields["tool_call_id"])
        messages.append(message)
    return messages or None


def _indexed_content(value: Any) -> str | None:
    """An indexed message's content: its text; a JSON list of content parts, their text."""
    if not isinstance(value, str):
        return None
    if value[:1] == "[":
        parsed = parse_json(value)
        if (
            isinstance(parsed, list)
            and parsed
            and all(isinstance(part, Mapping) and "type" in part for part in parsed)
        ):
            return text_or_none(parsed)
    return value


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


# -- values recorded as JSON by decorators (OpenLLMetry's @workflow / @agent / @tool,
# Langfuse's @observe): a call's arguments, its return value -----------------------------------

Found = tuple[Any, str, Quality]
"""``(value, where inside the recorded JSON, quality)``: what a recorded value says, where
(`` .args[0]``, `` .kwargs.question``; empty for the whole value) and how far it can be
trusted."""

# Argument or key names under which a recorded input holds the user's request.
_QUESTION_KEYS = (
    "question",
    "query",
    "input",
    "prompt",
    "message",
    "task",
    "user_input",
    "text",
)
# Keys under which a recorded output holds the answer.
_ANSWER_KEYS = ("content", "output", "answer", "text", "result", "response", "final_output")


def sourced(attribute: str, found: Found | None) -> Sourced[Any] | None:
    """A :func:`recorded_input` / :func:`recorded_output` finding read from ``attribute``."""
    if found is None:
        return None
    value, where, quality = found
    return Sourced(value, attribute + where, quality)


def is_call_record(value: Any) -> bool:
    """Whether a value is a recorded call, ``{"args": [...], "kwargs": {...}}``."""
    return (
        isinstance(value, Mapping)
        and bool(value)
        and set(value) <= {"args", "kwargs"}
        and isinstance(value.get("args", []), list)
        and isinstance(value.get("kwargs", {}), Mapping)
    )


def call_arguments(value: Any) -> Any:
    """A tool's arguments from its recorded call: the keyword arguments when it was called
    with no positional ones (so they compare with the arguments the model asked for), else
    the record as it is.

    Example:
        >>> call_arguments({"args": [], "kwargs": {"city": "Lyon"}})
        {'city': 'Lyon'}
    """
    if is_call_record(value) and not value.get("args"):
        return dict(value.get("kwargs") or {})
    return value


def recorded_input(raw: Any, *, encoded: bool = True) -> Found | None:
    """What a recorded input says the user asked: a text or a list of messages.

    A recorded call gives its first positional text (or list of messages), else a keyword
    argument named like a question, else its only text argument; a JSON object its
    question-like key (LangChain's ``{"inputs": {...}}`` is looked into); a value cut short
    by the instrumentation (JSON that no longer parses, where ``encoded``: every value is
    written as JSON, as OpenLLMetry does; Langfuse writes a text as it is) what can be read
    of it, marked ``truncated``; anything else its JSON text, marked ``built``.

    Example:
        >>> recorded_input('{"args": ["What is the weather in Lyon?"], "kwargs": {}}')
        ('What is the weather in Lyon?', ' .args[0]', 'whole')
    """
    value, cut = _recorded(raw, encoded)
    if cut:
        return _salvaged(raw), "", "truncated"
    if value is None:
        return None
    if isinstance(value, str):
        return value, "", "repr" if looks_like_repr(value) else "whole"
    if is_call_record(value):
        args = value.get("args") or []
        kwargs = value.get("kwargs") or {}
        for index, arg in enumerate(args):
            found = _question(arg)
            if found is not None:
                return found, f" .args[{index}]", "whole"
        for key in _QUESTION_KEYS:
            found = _question(kwargs.get(key))
            if found is not None:
                return found, f" .kwargs.{key}", "whole"
        texts = [(k, v) for k, v in kwargs.items() if isinstance(v, str) and v.strip()]
        if len(texts) == 1:
            return texts[0][1], f" .kwargs.{texts[0][0]}", "whole"
        return as_text(value), "", "built"
    if isinstance(value, Mapping):
        inner = value.get("inputs")
        if isinstance(inner, Mapping):
            value = inner
        for key in (*_QUESTION_KEYS, "messages"):
            found = _question(value.get(key))
            if found is not None:
                return found, f" .{key}", "whole"
        return as_text(value), "", "built"
    found = _question(value)
    if found is not None:
        return found, "", "whole"
    return as_text(value), "", "built"


def recorded_output(raw: Any, *, encoded: bool = True) -> Found | None:
    """What a recorded output says the answer was: a text.

    A text is the answer (a Python repr marked ``repr``); a chat message gives its content;
    a JSON object its answer-like key (LangChain's ``{"outputs": ...}`` is looked into), or
    the last assistant message of its ``messages``; a value cut short what can be read of
    it, marked ``truncated`` (see :func:`recorded_input`); anything else its JSON text,
    marked ``built``.

    Example:
        >>> recorded_output('"It is sunny in Lyon."')
        ('It is sunny in Lyon.', '', 'whole')
    """
    value, cut = _recorded(raw, encoded)
    if cut:
        return _salvaged(raw), "", "truncated"
    if value is None:
        return None
    if isinstance(value, Mapping) and "outputs" in value:
        value = value["outputs"]
    if isinstance(value, str):
        return value, "", "repr" if looks_like_repr(value) else "whole"
    if isinstance(value, Mapping):
        for key in _ANSWER_KEYS:
            found = value.get(key)
            if isinstance(found, str):
                return found, f" .{key}", "whole"
            if key == "content" and isinstance(found, list):
                text = text_or_none(found)
                if text is not None:
                    return text, " .content", "whole"
        messages = value.get("messages")
        if isinstance(messages, list):
            text = answer_text(genai_messages(messages))
            if text:
                return text, " .messages", "whole"
    if isinstance(value, list):
        text = answer_text(genai_messages(value))
        if text:
            return text, "", "whole"
    return as_text(value), "", "built"


def _recorded(raw: Any, encoded: bool) -> tuple[Any, bool]:
    """A recorded value parsed, and whether it is JSON cut short (it no longer parses)."""
    if isinstance(raw, str):
        if not raw.strip():
            return None, False
        parsed = parse_json(raw)
        if encoded and parsed is raw and raw[:1] in ("[", "{", '"'):
            return None, True
        return parsed, False
    return raw, False


_FIRST_TEXT = re.compile(r'"((?:[^"\\]|\\.)*)')


def _salvaged(raw: str) -> str:
    """The readable start of a JSON value cut short: its first text, unescaped."""
    start = raw.find('"args": ["') + len('"args": [') if raw.startswith('{"args": ["') else 0
    match = _FIRST_TEXT.match(raw, start)
    if match is None:
        return raw
    text = match.group(1)
    for end in range(len(text), max(len(text) - 6, -1), -1):  # a cut escape sequence
        try:
            return str(json.loads(f'"{text[:end]}"'))
        except ValueError:
            continue
    return text


def _question(value: Any) -> Any:
    """A text, or a list of chat messages that holds some, else ``None``."""
    if isinstance(value, str):
        return value if value.strip() else None
    if isinstance(value, list) and value and all(isinstance(m, Mapping) for m in value):
        messages = genai_messages(value)
        if messages and has_content(messages) and all("role" in m for m in value):
            return messages
    return None
