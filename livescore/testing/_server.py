"""An in-process OpenAI-compatible HTTP server on 127.0.0.1, for testing judges and scorers.

It speaks just enough of ``POST /v1/chat/completions`` for the real ``openai`` client to talk
to it, and answers from a script: structured replies, free text, delays, HTTP errors with
headers (429 with ``retry-after``), hangs past the client's timeout, dropped connections and
broken response bodies. It runs a stdlib ``ThreadingHTTPServer`` in a background thread, so
it serves many concurrent requests and works from sync and async tests alike.
"""

from __future__ import annotations

import contextlib
import json
import math
import socket
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

from livescore.judges import OpenAIJudge

__all__ = ("OpenAITestServer", "Reply", "ReplyLike")

ReplyKind = Literal[
    "json",
    "text",
    "refusal",
    "tool_calls",
    "error",
    "delay",
    "hang",
    "drop",
    "broken_body",
    "raw_body",
    "large_body",
]

_CHUNK = b"x" * 65536


@dataclass(frozen=True, slots=True)
class Reply:
    """One scripted answer of :class:`OpenAITestServer`. Build it with the class methods.

    A plain ``dict`` or ``str`` in a script is shorthand for :meth:`json` or :meth:`text`.
    A request with ``"stream": true`` gets the same reply as server-sent events.

    Attributes:
        kind: What the server does: answer (``json``, ``text``, ``refusal``, ``tool_calls``),
            fail (``error``, ``hang``, ``drop``, ``broken_body``, ``raw_body``,
            ``large_body``) or wait (``delay``).
        content: The assistant text (or the raw body for ``broken_body``).
        status, body, headers: The HTTP error (``error``); ``status`` and ``headers`` also
            for ``raw_body``.
        data: The exact response bytes (``raw_body``).
        size: The body's size in bytes, ``None`` for endless (``large_body``).
        chunked: Send the body with chunked transfer encoding, without a length
            (``large_body``).
        seconds, then: How long to wait, and the reply after it (``delay``, ``hang``).
        finish_reason: The choice's ``finish_reason``.
        usage: ``(prompt_tokens, completion_tokens)``, or with a third figure, the cached
            prompt tokens (``usage.prompt_tokens_details.cached_tokens``); estimated when
            ``None``.
        calls: ``(id, name, JSON arguments)`` per tool call.
        logprobs: ``(token, logprob)`` alternatives of the first token, most probable
            first, sent as ``choices[0].logprobs`` when the request asks for logprobs
            (``None``: the reply carries none, as a server without logprobs answers).

    Example:
        >>> Reply.json({"claims": []}).kind
        'json'
        >>> Reply.rate_limited(retry_after=0.01).status
        429
    """

    kind: ReplyKind
    content: str = ""
    status: int = 200
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    then: Reply | None = None
    finish_reason: str = "stop"
    usage: tuple[int, int] | tuple[int, int, int] | None = None
    calls: tuple[tuple[str, str, str], ...] = ()
    data: bytes = b""
    size: int | None = None
    chunked: bool = False
    logprobs: tuple[tuple[str, float], ...] | None = None

    @classmethod
    def token_probabilities(
        cls, probabilities: Mapping[str, float], *, usage: tuple[int, int] | None = None
    ) -> Reply:
        """Answer with one token, the most probable of ``probabilities`` (token →
        probability), and, when the request asks for ``logprobs``, these as the first
        token's ``top_logprobs`` (at most the ``top_logprobs`` asked for).

        The reply to a one-word classification (:meth:`OpenAIJudge.classify
        <livescore.judges.OpenAIJudge.classify>`); :meth:`text` answers with no logprobs.

        Example:
            >>> Reply.token_probabilities({"supported": 0.7, "unsupported": 0.3}).content
            'supported'
        """
        if not probabilities or any(not 0 < p <= 1 for p in probabilities.values()):
            raise ValueError("token probabilities must be in (0, 1], at least one of them")
        ranked = sorted(probabilities.items(), key=lambda item: -item[1])
        return cls(
            "text",
            content=ranked[0][0],
            finish_reason="length",
            usage=usage,
            logprobs=tuple((token, math.log(p)) for token, p in ranked),
        )

    @classmethod
    def json(
        cls, data: Any, *, usage: tuple[int, int] | tuple[int, int, int] | None = None
    ) -> Reply:
        """Answer with ``data`` serialised as JSON in the assistant message's content.

        ``usage`` is ``(prompt_tokens, completion_tokens[, cached_prompt_tokens])``; by
        default both are estimated from the text (about four characters a token).
        """
        return cls("json", content=json.dumps(data), usage=usage)

    @classmethod
    def text(
        cls,
        text: str,
        *,
        finish_reason: str = "stop",
        usage: tuple[int, int] | tuple[int, int, int] | None = None,
    ) -> Reply:
        """Answer with ``text`` as the assistant message's content, verbatim.

        Use it for free-text answers and for content that is not valid JSON
        (``Reply.text('{"claims": [')``); ``finish_reason="length"`` imitates a reply cut
        at ``max_tokens``.
        """
        return cls("text", content=text, finish_reason=finish_reason, usage=usage)

    @classmethod
    def empty(cls) -> Reply:
        """Answer 200 with an empty assistant message."""
        return cls("text", content="")

    @classmethod
    def refusal(cls, text: str = "I can't help with that.") -> Reply:
        """Answer 200 with no content and ``message.refusal`` set, as OpenAI does."""
        return cls("refusal", content=text)

    @classmethod
    def tool_calls(
        cls, *calls: tuple[str, Mapping[str, Any]], ids: Sequence[str] | None = None
    ) -> Reply:
        """Answer with tool calls, each ``(tool name, arguments)``; ids are ``call_0``, ….

        For testing agents that run on an OpenAI-compatible chat model (or the Responses
        API). Give ``ids`` when a run makes several tool-calling turns: the OpenAI Agents
        SDK refuses a call id that a run already used.
        """
        call_ids = list(ids) if ids is not None else [f"call_{i}" for i in range(len(calls))]
        if len(call_ids) != len(calls):
            raise ValueError(f"{len(calls)} tool calls need {len(calls)} ids, not {len(call_ids)}")
        return cls(
            "tool_calls",
            finish_reason="tool_calls",
            calls=tuple(
                (call_id, name, json.dumps(dict(args)))
                for call_id, (name, args) in zip(call_ids, calls, strict=True)
            ),
        )

    @classmethod
    def error(
        cls, status: int, body: Any = None, *, headers: Mapping[str, str] | None = None
    ) -> Reply:
        """Answer with HTTP ``status``; ``body`` (a dict, a string or ``None``) becomes an
        OpenAI-style ``{"error": {...}}`` body when it is not a dict already."""
        return cls("error", status=status, body=body, headers=dict(headers or {}))

    @classmethod
    def rate_limited(cls, *, retry_after: float | None = None) -> Reply:
        """Answer 429, with ``retry-after-ms`` and ``retry-after`` headers when given."""
        headers: dict[str, str] = {}
        if retry_after is not None:
            headers["retry-after-ms"] = str(int(retry_after * 1000))
            headers["retry-after"] = str(retry_after)
        return cls.error(429, "Rate limit reached (scripted)", headers=headers)

    @classmethod
    def server_error(cls, status: int = 500) -> Reply:
        """Answer with a 5xx status."""
        return cls.error(status, "The server had an error (scripted)")

    @classmethod
    def delay(cls, seconds: float, then: ReplyLike) -> Reply:
        """Wait ``seconds``, then answer with ``then``."""
        return cls("delay", seconds=seconds, then=_as_reply(then))

    @classmethod
    def hang(cls, seconds: float = 3600.0) -> Reply:
        """Never answer (until ``seconds`` pass or the server closes), then drop the
        connection: the client's timeout fires first."""
        return cls("hang", seconds=seconds)

    @classmethod
    def drop(cls) -> Reply:
        """Close the connection without sending any response."""
        return cls("drop")

    @classmethod
    def broken_body(cls, text: str = '{"id": "chatcmpl-broken", "choices": [') -> Reply:
        """Answer 200 with a response body that is not valid JSON (a truncating proxy)."""
        return cls("broken_body", content=text)

    @classmethod
    def raw_body(
        cls,
        data: bytes,
        *,
        status: int = 200,
        content_type: str = "application/json",
        headers: Mapping[str, str] | None = None,
    ) -> Reply:
        """Answer with exactly ``data`` as the body: a proxy's HTML error page
        (``content_type="text/html"``), a compressed body (``headers={"content-encoding":
        "gzip"}``), anything a real server might send that is not a chat completion."""
        merged = {"content-type": content_type, **dict(headers or {})}
        return cls("raw_body", status=status, data=data, headers=merged)

    @classmethod
    def large_body(cls, size: int | None = None, *, chunked: bool = True) -> Reply:
        """Answer 200 with a body of ``size`` bytes, or an endless one (``size=None``).

        The bytes are streamed, 64 KiB at a time, so the server itself stays small; with
        ``chunked=False`` the ``content-length`` is declared up front. For testing that a
        client caps what it reads.
        """
        if size is None and not chunked:
            raise ValueError("an endless body needs chunked=True (it has no length)")
        return cls("large_body", size=size, chunked=chunked)


ReplyLike = Reply | Mapping[str, Any] | str
"""A :class:`Reply`, or a mapping (JSON content) or a string (text content) for short."""


def _as_reply(value: ReplyLike) -> Reply:
    if isinstance(value, Reply):
        return value
    if isinstance(value, str):
        return Reply.text(value)
    if isinstance(value, Mapping):
        return Reply.json(dict(value))
    raise TypeError(f"a scripted reply must be a Reply, a dict or a str, not {type(value)!r}")


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


class OpenAITestServer:
    """An OpenAI-compatible chat-completions server on 127.0.0.1, answering from a script.

    Replies come first from the queue (``replies=`` and :meth:`enqueue`), then from
    ``responder`` (a function of the request body), and when both are exhausted the server
    answers HTTP 500 with a body that says the script ran out, so a test fails loudly.

    Args:
        replies: Replies to serve in order.
        responder: Called with each request's JSON body when the queue is empty; returns
            a reply.
        latency: Seconds to wait before every answer (for benchmarks).
        reject_json_schema: Answer ``response_format={"type": "json_schema"}`` requests with
            ``reject_status`` (as llama-cpp-python's server does), without using the script.
        reject_status: The status for rejected ``json_schema`` requests.
        prompt_caching: Report prompt caching as OpenAI does: a request whose system
            message the server has seen before reports that message's tokens as cached
            (``usage.prompt_tokens_details.cached_tokens``), for testing cached-input
            prices. Estimated usage only (a reply's own ``usage`` is reported as given).
        port: The port to serve on (0: a free one); for a server in a process of its own
            whose port its parent chose (a stand-in for a local judge's server).

    Usage is estimated from the text unless a reply gives its own: prompt tokens from the
    request's messages, completion tokens from the answer (about four characters a
    token), so it varies with each request as a real server's does.

    Attributes:
        requests: The JSON body of every request received, in order (rejected ones too).
        headers: The headers of every request received, in the same order.
        max_concurrent: The most requests that were in flight at the same time.
        open_connections: The client connections open now.

    Example:
        >>> with OpenAITestServer([{"claims": []}]) as server:
        ...     server.base_url.startswith("http://127.0.0.1:")
        True
    """

    def __init__(
        self,
        replies: Iterable[ReplyLike] = (),
        *,
        responder: Callable[[dict[str, Any]], ReplyLike] | None = None,
        latency: float = 0.0,
        reject_json_schema: bool = False,
        reject_status: int = 400,
        prompt_caching: bool = False,
        port: int = 0,
    ) -> None:
        self._queue: deque[Reply] = deque(_as_reply(r) for r in replies)
        self.port = port
        self.prompt_caching = prompt_caching
        self._seen_prefixes: set[str] = set()
        self.responder = responder
        self.latency = latency
        self.reject_json_schema = reject_json_schema
        self.reject_status = reject_status
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.max_concurrent = 0
        self._in_flight = 0
        self._lock = threading.Lock()
        self._connections_changed = threading.Condition(self._lock)
        self._closing = threading.Event()
        self._connections: set[socket.socket] = set()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> OpenAITestServer:
        """Bind ``port`` (a free one when 0) on 127.0.0.1 and serve in a background thread."""
        if self._httpd is not None:
            return self
        self._closing.clear()
        self._httpd = _HTTPServer(("127.0.0.1", self.port), _Handler, self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="livescore-openai-test-server",
            daemon=True,
        )
        self._thread.start()
        # A new server may reuse an old one's port: what the old one accepted is no guide.
        OpenAIJudge.forget_server(self.base_url)
        return self

    def close(self) -> None:
        """Stop serving, end hanging replies and close every open connection."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._closing.set()
        httpd.shutdown()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            # Idle keep-alive connections block their handler thread in a read: wake it.
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> OpenAITestServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> OpenAITestServer:
        return self.start()

    async def __aexit__(self, *exc: object) -> None:
        from livescore._threads import run_in_thread

        # shutdown() waits for the serving loop to notice: keep the event loop free meanwhile.
        await run_in_thread(self.close)

    # -- scripting -------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """The URL to give an OpenAI client, ending in ``/v1``."""
        if self._httpd is None:
            raise RuntimeError("OpenAITestServer is not running: use it in a `with` block")
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def enqueue(self, *replies: ReplyLike) -> None:
        """Add replies to the end of the script."""
        converted = [_as_reply(r) for r in replies]
        with self._lock:
            self._queue.extend(converted)

    @property
    def open_connections(self) -> int:
        """How many client connections are open now (idle keep-alive ones included)."""
        with self._lock:
            return len(self._connections)

    def wait_for_no_connections(self, timeout: float = 5.0) -> bool:
        """Wait until every client connection is closed; False if some are still open
        after ``timeout`` seconds. For checking that a client releases its connections."""
        with self._connections_changed:
            return self._connections_changed.wait_for(
                lambda: not self._connections, timeout=timeout
            )

    @property
    def pending(self) -> int:
        """How many scripted replies are still queued."""
        with self._lock:
            return len(self._queue)

    def judge(self, model: str = "test-model", **kwargs: Any) -> OpenAIJudge:
        """An :class:`~livescore.judges.OpenAIJudge` pointed at this server.

        Keyword arguments go to ``OpenAIJudge``. Test-friendly defaults: ``api_key="test-key"``,
        ``timeout=5.0`` and ``backoff_base=0.01`` (retries do not slow a test down; a scripted
        ``retry-after`` is still honoured), and ``circuit_failures=None``: a script of
        stalls or dropped connections is tried reply by reply, however many come in a row
        (and however slow the machine), instead of opening the judge's circuit. Pass
        ``circuit_failures=`` to test the circuit itself.
        """
        kwargs.setdefault("api_key", "test-key")
        kwargs.setdefault("timeout", 5.0)
        kwargs.setdefault("backoff_base", 0.01)
        kwargs.setdefault("circuit_failures", None)
        return OpenAIJudge(model, base_url=self.base_url, **kwargs)

    # -- serving (runs on handler threads) --------------------------------------------------

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        if self.reject_json_schema:
            response_format = body.get("response_format")
            if isinstance(response_format, dict) and response_format.get("type") == "json_schema":
                return Reply.error(
                    self.reject_status,
                    "response_format type 'json_schema' is not supported by this server; "
                    "use {'type': 'json_object', 'schema': ...}",
                )
        with self._lock:
            scripted = self._queue.popleft() if self._queue else None
        if scripted is not None:
            return scripted
        if self.responder is not None:
            return _as_reply(self.responder(body))
        return Reply.error(
            500,
            f"OpenAITestServer: the script ran out of replies at request {len(self.requests)} "
            "(enqueue more replies or set a responder)",
        )

    def _sleep(self, seconds: float) -> bool:
        """Sleep unless the server closes first; True when it closed."""
        return self._closing.wait(seconds) if seconds > 0 else self._closing.is_set()

    def _cached_tokens(self, request: dict[str, Any]) -> int:
        """The prompt tokens a caching server would serve from its cache for ``request``."""
        if not self.prompt_caching:
            return 0
        messages = request.get("messages") or []
        first = messages[0] if messages and isinstance(messages[0], dict) else {}
        if first.get("role") != "system":
            return 0
        prefix = json.dumps(first)
        with self._lock:
            seen = prefix in self._seen_prefixes
            self._seen_prefixes.add(prefix)
        return _estimate_tokens(prefix) if seen else 0

    def _enter(self) -> None:
        with self._lock:
            self._in_flight += 1
            self.max_concurrent = max(self.max_concurrent, self._in_flight)

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 256  # benchmarks open many connections at once; 5 would drop SYNs

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        owner: OpenAITestServer,
    ) -> None:
        self.owner = owner
        super().__init__(address, handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients that time out or give up close their sockets mid-reply: that is the point
        # of several scripted faults, not a server error worth a traceback.
        import sys

        exc = sys.exc_info()[1]
        if isinstance(exc, OSError):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer
    server_version = "livescore-OpenAITestServer/1"

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in two writes; with Nagle on, the client's delayed ACK
        # would hold the body back ~40 ms on every reply.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        owner = self.server.owner
        with owner._lock:
            owner._connections.add(self.connection)

    def finish(self) -> None:
        owner = self.server.owner
        with owner._lock:
            owner._connections.discard(self.connection)
            owner._connections_changed.notify_all()
        with contextlib.suppress(OSError):
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    def do_GET(self) -> None:
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            self._send_json(200, {"object": "list", "data": [{"id": "test-model"}]})
        else:
            self._send_json(404, _error_body(f"no route for GET {self.path}", "not_found"))

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        from livescore.testing import _responses  # the Responses API lives on its own

        if self.path.split("?")[0].rstrip("/") in _responses.ROUTES:
            _responses.serve_responses(self, raw)
            return
        if self.path.split("?")[0].rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._send_json(404, _error_body(f"no route for POST {self.path}", "not_found"))
            return
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            self._send_json(400, _error_body("request body is not valid JSON", "invalid_request"))
            return
        if not isinstance(body, dict) or "messages" not in body or "model" not in body:
            self._send_json(
                400,
                _error_body("a chat completion needs 'model' and 'messages'", "invalid_request"),
            )
            return
        self._serve(body, _Handler._answer_chat)

    def _serve(
        self, body: dict[str, Any], answer: Callable[[_Handler, Reply, dict[str, Any]], None]
    ) -> None:
        """Record the request ``body``, then answer it with the script's next reply: the
        faults the same on every route, a successful answer through the route's ``answer``."""
        owner = self.server.owner
        with owner._lock:
            owner.requests.append(body)
            owner.headers.append({k.lower(): v for k, v in self.headers.items()})
        owner._enter()
        try:
            if owner._sleep(owner.latency):
                self._drop()
                return
            self._answer(owner._next_reply(body), body, answer)
        finally:
            owner._leave()

    def _answer(
        self,
        reply: Reply,
        request: dict[str, Any],
        answer: Callable[[_Handler, Reply, dict[str, Any]], None],
    ) -> None:
        owner = self.server.owner
        if reply.kind == "delay":
            if owner._sleep(reply.seconds):
                self._drop()
                return
            assert reply.then is not None
            self._answer(reply.then, request, answer)
        elif reply.kind == "hang":
            owner._sleep(reply.seconds)
            self._drop()
        elif reply.kind == "drop":
            self._drop()
        elif reply.kind == "error":
            body = reply.body
            if not isinstance(body, dict):
                body = _error_body(
                    str(body) if body is not None else f"HTTP {reply.status} (scripted)",
                    _ERROR_TYPES.get(reply.status, "server_error"),
                )
            self._send_json(reply.status, body, reply.headers)
        elif reply.kind == "broken_body":
            self._send_bytes(200, reply.content.encode(), "application/json")
        else:
            answer(self, reply, request)

    def _answer_chat(self, reply: Reply, request: dict[str, Any]) -> None:
        owner = self.server.owner
        if reply.kind == "raw_body":
            headers = dict(reply.headers)
            content_type = headers.pop("content-type", "application/json")
            self._send_bytes(reply.status, reply.data, content_type, headers)
        elif reply.kind == "large_body":
            self._send_large(reply.size, chunked=reply.chunked)
        elif request.get("stream"):
            cached = owner._cached_tokens(request)
            self._send_bytes(200, _stream(request, reply, cached), "text/event-stream")
        else:
            self._send_json(200, _completion(request, reply, owner._cached_tokens(request)))

    def _drop(self) -> None:
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def _send_large(self, size: int | None, *, chunked: bool) -> None:
        owner = self.server.owner
        self.close_connection = True  # the client is expected to give up half way
        try:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            if chunked:
                self.send_header("transfer-encoding", "chunked")
            else:
                self.send_header("content-length", str(size))
            self.end_headers()
            sent = 0
            while (size is None or sent < size) and not owner._closing.is_set():
                chunk = _CHUNK if size is None else _CHUNK[: min(len(_CHUNK), size - sent)]
                if chunked:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                else:
                    self.wfile.write(chunk)
                sent += len(chunk)
            if chunked:
                self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:
            pass  # the client stopped reading and closed: what a capped client does

    def _send_json(self, status: int, body: Any, headers: Mapping[str, str] | None = None) -> None:
        self._send_bytes(status, json.dumps(body).encode(), "application/json", headers)

    def _send_bytes(
        self,
        status: int,
        data: bytes,
        content_type: str,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        try:
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            self.close_connection = True  # the client gave up (timeout): nothing to tell it


_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    403: "permission_error",
    404: "not_found_error",
    422: "invalid_request_error",
    429: "rate_limit_error",
}


def _error_body(message: str, error_type: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": error_type, "param": None, "code": None}}


def _usage(request: dict[str, Any], reply: Reply, cached: int = 0) -> dict[str, Any]:
    if reply.usage is not None:
        prompt_tokens, completion_tokens = reply.usage[0], reply.usage[1]
        cached = reply.usage[2] if len(reply.usage) > 2 else 0
    else:
        prompt_tokens = _estimate_tokens(json.dumps(request.get("messages", [])))
        produced = reply.content + "".join(name + args for _, name, args in reply.calls)
        completion_tokens = _estimate_tokens(produced) if produced else 0
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if cached:
        usage["prompt_tokens_details"] = {"cached_tokens": min(cached, prompt_tokens)}
    return usage


def _message(reply: Reply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content, "refusal": None}
    if reply.kind == "refusal":
        message.update(content=None, refusal=reply.content)
    if reply.calls:
        message["content"] = None
        message["tool_calls"] = [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}
            for call_id, name, args in reply.calls
        ]
    return message


def _envelope(request: dict[str, Any], obj: str) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": obj,
        "created": int(time.time()),
        "model": str(request.get("model", "test-model")),
        "system_fingerprint": "livescore-test",
    }


def _logprobs(request: dict[str, Any], reply: Reply) -> dict[str, Any] | None:
    """The first token's logprobs, as OpenAI sends them, when asked for and scripted."""
    if not request.get("logprobs") or not reply.logprobs:
        return None
    top = request.get("top_logprobs")
    count = top if isinstance(top, int) and not isinstance(top, bool) and top >= 0 else 0
    token, logprob = reply.logprobs[0]
    return {
        "content": [
            {
                "token": token,
                "logprob": logprob,
                "bytes": list(token.encode()),
                "top_logprobs": [
                    {"token": t, "logprob": lp, "bytes": list(t.encode())}
                    for t, lp in reply.logprobs[:count]
                ],
            }
        ],
        "refusal": None,
    }


def _completion(request: dict[str, Any], reply: Reply, cached: int = 0) -> dict[str, Any]:
    return {
        **_envelope(request, "chat.completion"),
        "choices": [
            {
                "index": 0,
                "message": _message(reply),
                "logprobs": _logprobs(request, reply),
                "finish_reason": reply.finish_reason,
            }
        ],
        "usage": _usage(request, reply, cached),
    }


def _stream(request: dict[str, Any], reply: Reply, cached: int = 0) -> bytes:
    """The reply as server-sent events: role, content (or tool calls), finish, usage."""
    base = _envelope(request, "chat.completion.chunk")
    message = _message(reply)
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    if message.get("tool_calls"):
        deltas.append(
            {"tool_calls": [{"index": i, **call} for i, call in enumerate(message["tool_calls"])]}
        )
    elif message.get("refusal"):
        deltas.append({"refusal": message["refusal"]})
    elif reply.content:
        # Two pieces, so a client that joins chunks is exercised.
        half = len(reply.content) // 2
        deltas += [{"content": reply.content[:half]}, {"content": reply.content[half:]}]
    chunks = [
        {**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas
    ]
    chunks.append(
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": reply.finish_reason}]}
    )
    if (request.get("stream_options") or {}).get("include_usage"):
        chunks.append({**base, "choices": [], "usage": _usage(request, reply, cached)})
    events = [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks]
    events.append("data: [DONE]\n\n")
    return "".join(events).encode()
