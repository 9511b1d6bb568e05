"""Reading the OpenAI Agents SDK's span data into livescore's run record.

The SDK records what the agent did on its spans: a generation span per Chat Completions
call (input messages, output message), a response span per Responses API call (the
``Response`` and its input items), a function span per tool call (JSON arguments, the raw
return value), a handoff span per handoff. These functions turn each into plain,
JSON-safe values (role/content dicts with text content) that livescore's readers and
scorers understand, whichever model API the agent used.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from agents.tracing import GenerationSpanData, ResponseSpanData, SpanError

from livescore.runs import ToolCall

__all__ = (
    "answer_text",
    "error_text",
    "generation_turn",
    "requested_calls",
    "response_turn",
    "text_of",
    "tool_arguments",
    "user_messages",
)

_INSTRUCTION_ROLES = frozenset({"system", "developer"})


def text_of(content: Any) -> str:
    """The text of a message's content: a string, or a list of parts (``text``,
    ``input_text``, ``output_text``; refusals count as text too).

    Example:
        >>> text_of([{"type": "input_text", "text": "Hi"}, {"type": "input_image"}])
        'Hi'
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, Mapping):
                text = part.get("text", part.get("refusal"))
                if isinstance(text, str) and text:
                    parts.append(text)
        return "\n".join(parts)
    return str(content)


def user_messages(model_input: Any) -> list[dict[str, Any]]:
    """The conversation a run started from: the first model call's input without the
    agent's instructions, as role/content dicts with text content.

    Chat Completions inputs are messages (the system prompt first); Responses inputs are a
    string or input items (instructions travel separately). Items without a role (function
    calls and their outputs from an earlier run) are left out: they are steps, not what
    the user said.

    Example:
        >>> user_messages([{"role": "system", "content": "Be brief."},
        ...                {"role": "user", "content": [{"type": "text", "text": "Hi"}]}])
        [{'role': 'user', 'content': 'Hi'}]
    """
    if model_input is None:
        return []
    if isinstance(model_input, str):
        return [{"role": "user", "content": model_input}]
    messages: list[dict[str, Any]] = []
    for item in model_input if isinstance(model_input, Sequence) else ():
        if not isinstance(item, Mapping):
            continue
        role = item.get("role")
        if not isinstance(role, str) or role in _INSTRUCTION_ROLES:
            continue
        messages.append({"role": role, "content": text_of(item.get("content"))})
    return messages


def tool_arguments(raw: Any) -> Any:
    """A function span's arguments: the JSON text parsed when it parses, else as given.

    Example:
        >>> tool_arguments('{"city": "Paris"}')
        {'city': 'Paris'}
    """
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


def requested_calls(message: Mapping[str, Any] | None) -> list[ToolCall]:
    """The tool calls an assistant message asks for (Chat Completions ``tool_calls``).

    Example:
        >>> calls = requested_calls({"tool_calls": [{"id": "c1", "function":
        ...     {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]})
        >>> (calls[0].call_id, calls[0].name, calls[0].args)
        ('c1', 'get_weather', {'city': 'Paris'})
    """
    if not message:
        return []
    calls = []
    for call in message.get("tool_calls") or ():
        if not isinstance(call, Mapping):
            continue
        function = call.get("function")
        function = function if isinstance(function, Mapping) else {}
        calls.append(
            ToolCall(
                name=str(function.get("name", "")),
                call_id=call.get("id"),
                args=tool_arguments(function.get("arguments")),
            )
        )
    return calls


def generation_turn(data: GenerationSpanData) -> dict[str, Any] | None:
    """The assistant message of a Chat Completions turn (``None`` when not recorded).

    A non-streamed turn records the chat message itself; a streamed one records the
    Responses-style object the SDK assembles from the chunks, read like a response turn.

    Example:
        >>> turn = generation_turn(GenerationSpanData(output=[{"role": "assistant",
        ...     "content": "Hi"}]))
        >>> turn["content"]
        'Hi'
    """
    output = data.output
    if not output:
        return None
    message = output[0]
    if not isinstance(message, Mapping):
        return None
    items = message.get("output")
    if isinstance(items, Sequence) and not isinstance(items, str):
        return _assistant_message(items)
    return dict(message)


def response_turn(data: ResponseSpanData) -> dict[str, Any] | None:
    """A Responses API turn as a Chat Completions-style assistant message.

    ``content`` is the response's text, ``tool_calls`` its ``function_call`` items (with
    their ``call_id``), so one reader serves both model APIs. ``None`` when not recorded.
    """
    response = data.response
    if response is None:
        return None
    return _assistant_message(response.output)


def _field(item: Any, name: str) -> Any:
    # Output items are pydantic models on a live response, dicts once dumped.
    return item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)


def _assistant_message(items: Sequence[Any]) -> dict[str, Any]:
    texts: list[str] = []
    refusals: list[str] = []
    calls: list[dict[str, Any]] = []
    for item in items:
        kind = _field(item, "type")
        if kind == "message":
            for part in _field(item, "content") or ():
                part_type = _field(part, "type")
                if part_type == "output_text":
                    texts.append(str(_field(part, "text") or ""))
                elif part_type == "refusal":
                    refusals.append(str(_field(part, "refusal") or ""))
        elif kind == "function_call":
            calls.append(
                {
                    "id": _field(item, "call_id"),
                    "type": "function",
                    "function": {
                        "name": _field(item, "name"),
                        "arguments": _field(item, "arguments"),
                    },
                }
            )
    message: dict[str, Any] = {
        "role": "assistant",
        "content": "".join(texts) if texts else None,
        "refusal": "".join(refusals) if refusals else None,
    }
    if calls:
        message["tool_calls"] = calls
    return message


def answer_text(message: Mapping[str, Any] | None) -> str | None:
    """The text of an assistant turn that answers the user: content and no tool calls.

    ``None`` for a turn that asks for tools, refuses, or says nothing: a run that ends on
    such a turn did not end with an answer.

    Example:
        >>> answer_text({"role": "assistant", "content": "It is sunny."})
        'It is sunny.'
        >>> answer_text({"role": "assistant", "content": None, "tool_calls": [{}]}) is None
        True
    """
    if not message or message.get("tool_calls"):
        return None
    text = text_of(message.get("content"))
    return text if text.strip() else None


def error_text(error: SpanError | Mapping[str, Any] | None) -> str | None:
    """A span error as one line: its message and, when the SDK recorded one, the cause.

    Example:
        >>> error_text({"message": "Error in agent run", "data": {"error": "Boom"}})
        'Error in agent run: Boom'
    """
    if not error:
        return None
    message = str(error.get("message") or "error")
    data = error.get("data")
    detail = data.get("error") if isinstance(data, Mapping) else None
    return f"{message}: {detail}" if detail else message
