"""The Vercel AI SDK's own telemetry (``ai`` 4 to 6, ``experimental_telemetry``).

``ai.operationId`` says what a span is: the outer call (``ai.generateText``,
``ai.streamText``, ``ai.generateObject``, ``ai.streamObject``) is the run; each model call
under it (``ai.generateText.doGenerate``, ``ai.streamText.doStream``…) a model turn;
``ai.toolCall`` a tool call. The outer span holds ``ai.prompt`` (JSON: ``system``,
``prompt`` or ``messages``) and ``ai.response.text`` (or ``ai.response.object``); a model
span ``ai.prompt.messages`` (the whole request, in the SDK's own message shape) and
``ai.response.text`` / ``ai.response.toolCalls``; a tool span ``ai.toolCall.name`` /
``.id`` / ``.args`` / ``.result`` (``.input`` / ``.output`` in later releases).
``ai.telemetry.functionId`` names the function, ``ai.telemetry.metadata.*`` holds the
caller's metadata (the conversation as ``sessionId``, by the common convention).

Of the GenAI conventions the SDK writes only the model and usage attributes
(``gen_ai.request.model``, ``gen_ai.usage.*``): no operation name, no messages. So its
spans must be read here, before the GenAI reader, which would see no run in them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from livescore.traces._readers import _parse as p
from livescore.traces._readers._reading import Message, Reader, Sourced, SpanKind, SpanReading
from livescore.traces._readers.genai import make_tool_call
from livescore.traces._span import SpanRecord

__all__ = ("READER", "ai_messages", "last_user_turn")

OPERATION = "ai.operationId"
# The calls a program makes: each is a run (a generateText call with tools is an agent).
_OUTER = frozenset({"ai.generateText", "ai.streamText", "ai.generateObject", "ai.streamObject"})
_MODEL_SUFFIXES = (".doGenerate", ".doStream")
# Metadata keys that name the conversation, most specific first.
CONVERSATION_KEYS = tuple(
    f"ai.telemetry.metadata.{key}" for key in ("conversationId", "sessionId", "threadId")
)
CONTENT_SETTING = (
    "experimental_telemetry: { isEnabled: true } on the call, with recordInputs and "
    "recordOutputs left true"
)


def speaks(span: SpanRecord) -> bool:
    return OPERATION in span.attributes


def kind(span: SpanRecord) -> SpanKind | None:
    operation = span.attributes.get(OPERATION)
    if not isinstance(operation, str):
        return None
    if operation in _OUTER:
        return "agent"
    if operation.endswith(_MODEL_SUFFIXES):
        return "model"
    if operation == "ai.toolCall":
        return "tool"
    return None


def ai_messages(value: Any) -> list[Message] | None:
    """Messages in the AI SDK's shape (``{"role", "content"}``, content a text or a list of
    ``text`` / ``tool-call`` / ``tool-result`` parts) as run messages: a tool message per
    tool result, the calls an assistant asked for as ``tool_calls``.

    Example:
        >>> ai_messages('[{"role": "assistant", "content": [{"type": "tool-call", '
        ...     '"toolCallId": "c1", "toolName": "get_weather", "input": {"city": "Lyon"}}]}, '
        ...     '{"role": "tool", "content": [{"type": "tool-result", "toolCallId": "c1", '
        ...     '"toolName": "get_weather", "output": {"type": "text", "value": "sunny"}}]}]')
        ... # doctest: +NORMALIZE_WHITESPACE
        [{'role': 'assistant', 'content': None,
          'tool_calls': [{'id': 'c1', 'name': 'get_weather', 'arguments': {'city': 'Lyon'}}]},
         {'role': 'tool', 'content': 'sunny', 'tool_call_id': 'c1', 'name': 'get_weather'}]
    """
    value = p.parse_json(value)
    if not isinstance(value, list):
        return None
    messages: list[Message] = []
    for raw in value:
        if isinstance(raw, Mapping):
            messages.extend(_message(raw))
    return messages or None


def _message(raw: Mapping[str, Any]) -> list[Message]:
    role = p.normal_role(raw.get("role"))
    content = raw.get("content")
    if isinstance(content, str):
        return [{"role": role, "content": content}]
    if not isinstance(content, list):
        return [{"role": role, "content": None}]
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    results: list[Message] = []
    for part in content:
        if not isinstance(part, Mapping):
            continue
        kind_ = part.get("type")
        if kind_ == "tool-call":
            arguments = part.get("input", part.get("args"))  # args: ai 4
            calls.append(p.call_dict(part.get("toolName"), part.get("toolCallId"), arguments))
        elif kind_ == "tool-result":
            results.append(
                {
                    "role": "tool",
                    "content": _result_text(part.get("output", part.get("result"))),
                    "tool_call_id": p.str_or_none(part.get("toolCallId")),
                    "name": str(part.get("toolName") or ""),
                }
            )
        elif kind_ == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
    if results and not texts and not calls:
        return results
    message: Message = {"role": role, "content": "\n".join(texts) if texts else None}
    if calls:
        message["tool_calls"] = calls
    return [message, *results]


def _result_text(output: Any) -> str | None:
    """A tool result part's output: ``{"type": "text"|"json"|…, "value"}`` (ai 5 and
    later) or the raw result (ai 4)."""
    if isinstance(output, Mapping) and "type" in output and "value" in output:
        output = output["value"]
    return None if output is None else p.as_text(output)


def _response(attributes: Mapping[str, Any]) -> Sourced[list[Message]] | None:
    """A model span's answer: its text and the tool calls it asked for, as one message."""
    text = attributes.get("ai.response.text")
    raw_calls = p.parse_json(attributes.get("ai.response.toolCalls"))
    calls = [
        p.call_dict(c.get("toolName"), c.get("toolCallId"), c.get("input", c.get("args")))
        for c in (raw_calls if isinstance(raw_calls, list) else ())
        if isinstance(c, Mapping)
    ]
    if not isinstance(text, str) and not calls:
        return None
    message: Message = {"role": "assistant", "content": text if isinstance(text, str) else None}
    if calls:
        message["tool_calls"] = calls
    source = "ai.response.text" if isinstance(text, str) else "ai.response.toolCalls"
    return Sourced([message], source)


def _prompt(attributes: Mapping[str, Any]) -> Sourced[Any] | None:
    """An outer call's ``ai.prompt``: the ``prompt`` text, or the user's last turn of its
    ``messages`` (a chat app passes the whole conversation so far: the run answers its end)."""
    prompt = p.parse_json(attributes.get("ai.prompt"))
    if not isinstance(prompt, Mapping):
        return None
    text = prompt.get("prompt")
    if isinstance(text, str) and text:
        return Sourced(text, "ai.prompt .prompt")
    key = "prompt" if isinstance(text, list) else "messages"
    found = last_user_turn(ai_messages(prompt.get(key)) or [])
    return Sourced(found, f"ai.prompt .{key}") if found else None


def last_user_turn(messages: list[Message]) -> list[Message] | None:
    """The user messages after the last answer (else the last user message): what a run
    given a whole conversation answers."""
    answered = [i for i, m in enumerate(messages) if m.get("role") in ("assistant", "tool")]
    after = messages[answered[-1] + 1 :] if answered else messages
    turn = [m for m in after if m.get("role") == "user"]
    if not turn:
        turn = [m for m in messages if m.get("role") == "user"][-1:]
    return turn or None


def _answer(attributes: Mapping[str, Any]) -> Sourced[str] | None:
    text = attributes.get("ai.response.text")
    if isinstance(text, str):
        return Sourced(text, "ai.response.text")
    found = attributes.get("ai.response.object")  # generateObject: the object, as JSON
    if isinstance(found, str):
        return Sourced(found, "ai.response.object")
    return None


def read(span: SpanRecord) -> SpanReading:
    attributes = span.attributes
    reading = SpanReading("vercel_ai", kind(span), content_setting=CONTENT_SETTING)
    if reading.kind == "agent":
        reading.input = _prompt(attributes)
        reading.output = _answer(attributes)
    elif reading.kind == "model":
        found = ai_messages(attributes.get("ai.prompt.messages"))
        reading.input = Sourced(found, "ai.prompt.messages") if found else None
        reading.output = _response(attributes)
    elif reading.kind == "tool":
        args_key = "ai.toolCall.args" if "ai.toolCall.args" in attributes else "ai.toolCall.input"
        result_key = (
            "ai.toolCall.result" if "ai.toolCall.result" in attributes else "ai.toolCall.output"
        )
        call = make_tool_call(
            span,
            attributes.get("ai.toolCall.name"),
            attributes.get("ai.toolCall.id"),
            p.parse_json(attributes.get(args_key)),
            p.parse_json(attributes.get(result_key)),
        )
        reading.tool_call = Sourced(call, result_key)
    found_id = p.first_str(attributes, *CONVERSATION_KEYS)
    reading.conversation_id = Sourced(found_id[1], found_id[0]) if found_id else None
    name = p.first_str(attributes, "ai.telemetry.functionId")
    reading.agent_name = name[1] if name else None
    model = p.first_str(
        attributes,
        "gen_ai.response.model",
        "ai.response.model",
        "gen_ai.request.model",
        "ai.model.id",
    )
    reading.model = model[1] if model else None
    return reading


READER = Reader(
    "vercel_ai", speaks, read, reads=("ai.", "gen_ai.", "operation.name", "resource.name")
)
