"""The Responses API side of :class:`~livescore.testing.OpenAITestServer`.

``POST /v1/responses`` answers from the same script as chat completions: a text or JSON
reply becomes an output message, :meth:`Reply.tool_calls` becomes ``function_call`` items,
``Reply.refusal`` a refusal part, and the faults (errors, delays, hangs, dropped
connections, broken bodies) behave exactly as on the chat route. A request with
``"stream": true`` gets the server-sent events the ``openai`` client and the OpenAI Agents
SDK read (``response.created`` … ``response.completed``). Enough of the API for agents that
run on the Responses model to be tested offline, not a full implementation of it.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import TYPE_CHECKING, Any

from livescore.testing._server import Reply, _error_body

if TYPE_CHECKING:
    from livescore.testing._server import _Handler

__all__ = ("ROUTES", "response_events", "response_object", "serve_responses")

ROUTES = ("/v1/responses", "/responses")
"""The paths (without a query string or trailing slash) this module answers."""


def serve_responses(handler: _Handler, raw: bytes) -> None:
    """Answer one ``POST /v1/responses`` request on ``handler`` (a server handler thread)."""
    try:
        body = json.loads(raw or b"null")
    except ValueError:
        handler._send_json(400, _error_body("request body is not valid JSON", "invalid_request"))
        return
    if not isinstance(body, dict) or "model" not in body:
        handler._send_json(
            400, _error_body("a response request needs 'model' (and 'input')", "invalid_request")
        )
        return
    handler._serve(body, _answer)


def _answer(handler: _Handler, reply: Reply, request: dict[str, Any]) -> None:
    # A successful answer: the faults are answered as on the chat route (_Handler._serve).
    if request.get("stream"):
        events = response_events(request, reply)
        data = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
        handler._send_bytes(200, data.encode(), "text/event-stream")
    else:
        handler._send_json(200, response_object(request, reply))


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _usage(request: dict[str, Any], reply: Reply) -> dict[str, Any]:
    if reply.usage is not None:
        input_tokens, output_tokens = reply.usage[0], reply.usage[1]
    else:
        prompt = json.dumps([request.get("instructions"), request.get("input")])
        input_tokens = _estimate_tokens(prompt)
        produced = reply.content + "".join(name + args for _, name, args in reply.calls)
        output_tokens = _estimate_tokens(produced) if produced else 0
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": input_tokens + output_tokens,
    }


def _output_items(reply: Reply) -> list[dict[str, Any]]:
    if reply.calls:
        return [
            {
                "type": "function_call",
                "id": f"fc_{uuid.uuid4().hex[:24]}",
                "call_id": call_id,
                "name": name,
                "arguments": arguments,
                "status": "completed",
            }
            for call_id, name, arguments in reply.calls
        ]
    if reply.kind == "refusal":
        part: dict[str, Any] = {"type": "refusal", "refusal": reply.content}
    else:
        part = {"type": "output_text", "text": reply.content, "annotations": [], "logprobs": []}
    return [
        {
            "type": "message",
            "id": f"msg_{uuid.uuid4().hex[:24]}",
            "role": "assistant",
            "status": "completed",
            "content": [part],
        }
    ]


def response_object(
    request: dict[str, Any],
    reply: Reply,
    *,
    response_id: str | None = None,
    output: list[dict[str, Any]] | None = None,
    status: str | None = None,
) -> dict[str, Any]:
    """The ``Response`` JSON object that answers ``request`` with ``reply``.

    A reply cut at the token limit (``finish_reason="length"``) is an ``incomplete``
    response with ``incomplete_details.reason = "max_output_tokens"``, as OpenAI sends it.

    Example:
        >>> body = response_object({"model": "m", "input": "Hi"}, Reply.text("Hello"))
        >>> body["status"], body["output"][0]["content"][0]["text"]
        ('completed', 'Hello')
    """
    incomplete = reply.finish_reason == "length"
    return {
        "id": response_id or f"resp_{uuid.uuid4().hex[:24]}",
        "object": "response",
        "created_at": int(time.time()),
        "status": status or ("incomplete" if incomplete else "completed"),
        "model": str(request.get("model", "test-model")),
        "output": _output_items(reply) if output is None else output,
        "usage": _usage(request, reply),
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
        "instructions": request.get("instructions"),
        "metadata": request.get("metadata") or {},
        "parallel_tool_calls": bool(request.get("parallel_tool_calls", True)),
        "previous_response_id": request.get("previous_response_id"),
        "temperature": request.get("temperature"),
        "top_p": request.get("top_p"),
        "tool_choice": request.get("tool_choice") or "auto",
        "tools": request.get("tools") or [],
        "text": request.get("text") or {"format": {"type": "text"}},
        "truncation": request.get("truncation") or "disabled",
    }


def response_events(request: dict[str, Any], reply: Reply) -> list[dict[str, Any]]:
    """The server-sent events of a streamed answer, in order, each with its ``type``.

    ``response.created`` and ``response.in_progress``; per output item ``output_item.added``,
    its text in two deltas (or its arguments, or a refusal) and ``output_item.done``; then
    ``response.completed`` (``response.incomplete`` for a reply cut at the token limit)
    carrying the whole response.

    Example:
        >>> events = response_events({"model": "m", "stream": True}, Reply.text("Hello"))
        >>> [e["type"] for e in events][-3:]
        ['response.content_part.done', 'response.output_item.done', 'response.completed']
    """
    response_id = f"resp_{uuid.uuid4().hex[:24]}"
    final = response_object(request, reply, response_id=response_id)
    pending = response_object(request, reply, response_id=response_id, output=[])
    pending.update(status="in_progress", usage=None)
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": pending},
        {"type": "response.in_progress", "response": pending},
    ]
    for index, item in enumerate(final["output"]):
        events += _item_events(index, item)
    terminal = "response.incomplete" if final["status"] == "incomplete" else "response.completed"
    events.append({"type": terminal, "response": final})
    for number, event in enumerate(events):
        event["sequence_number"] = number
    return events


def _item_events(index: int, item: dict[str, Any]) -> list[dict[str, Any]]:
    item_id = item["id"]
    where = {"item_id": item_id, "output_index": index}
    if item["type"] == "function_call":
        started = {**item, "arguments": "", "status": "in_progress"}
        arguments = item["arguments"]
        return [
            {"type": "response.output_item.added", "output_index": index, "item": started},
            {"type": "response.function_call_arguments.delta", **where, "delta": arguments},
            {"type": "response.function_call_arguments.done", **where, "arguments": arguments},
            {"type": "response.output_item.done", "output_index": index, "item": item},
        ]
    part = item["content"][0]
    started = {**item, "content": [], "status": "in_progress"}
    events: list[dict[str, Any]] = [
        {"type": "response.output_item.added", "output_index": index, "item": started},
    ]
    at = {**where, "content_index": 0}
    if part["type"] == "refusal":
        empty: dict[str, Any] = {"type": "refusal", "refusal": ""}
        events += [
            {"type": "response.content_part.added", **at, "part": empty},
            {"type": "response.refusal.delta", **at, "delta": part["refusal"]},
            {"type": "response.refusal.done", **at, "refusal": part["refusal"]},
        ]
    else:
        text = part["text"]
        half = len(text) // 2  # two pieces, so a client that joins deltas is exercised
        empty = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
        events.append({"type": "response.content_part.added", **at, "part": empty})
        events += [
            {"type": "response.output_text.delta", **at, "delta": piece, "logprobs": []}
            for piece in (text[:half], text[half:])
            if piece
        ]
        events.append({"type": "response.output_text.done", **at, "text": text, "logprobs": []})
    events += [
        {"type": "response.content_part.done", **at, "part": part},
        {"type": "response.output_item.done", "output_index": index, "item": item},
    ]
    return events
