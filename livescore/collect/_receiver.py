"""An OTLP/HTTP trace receiver: ``POST /v1/traces`` and ``POST /v1/logs`` in protobuf or
JSON, into a pipeline.

The server is aiohttp's (already a dependency of the judge's transport): one asyncio loop
in a thread of its own serves every connection, so a flood of connections costs no thread
each. What a hostile or broken client can hold is bounded:

- connections: at most ``max_connections`` at once (more are closed as they are accepted,
  well below the process's file descriptor limit); one idle for ``idle_timeout`` (no
  request, or a request's headers still trickling in) is closed;
- bodies: read as they arrive, under a deadline that a minimum rate extends (a client
  sending a byte a second is cut off with 408, holding nothing but what it sent); the
  bytes of all bodies being read or waiting to be decoded are capped (429 past it);
- decompression: gzip and deflate are inflated by the receiver, not by aiohttp, on the
  decoding pool (never on the loop), and stop at ``max_body_bytes`` (413); the compressed
  body is capped at the same size;
- decoding: a slot of the small decoding pool is taken only around inflating and decoding
  a body already read, so slow clients never hold one.

Answers follow the OTLP/HTTP specification: 200 with an ``ExportTraceServiceResponse``
(``partial_success`` counts spans with invalid ids), 400 for a body that is not a trace
export request, 401 without the bearer token, 404/405 off ``POST /v1/traces``, 413 past
the body cap, 415 for another content type, and 429 with ``Retry-After`` when the
pipeline cannot take more; errors carry a ``google.rpc.Status`` body in the request's
encoding.

``/v1/logs`` answers the same way, through the same path: instrumentations that capture
message content in events (``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=
EVENT_ONLY``) send it as log records, each naming its span. Those records go to the
pipeline beside the spans and are joined to their span when the trace is assembled;
records that name no span or no event (an application's plain log lines) are accepted,
counted (``log_records_dropped``) and dropped.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hmac
import json
import logging
import resource
import threading
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from livescore.collect._pipeline import SpanPipeline
from livescore.traces import (
    DecodedLogs,
    DecodedSpans,
    LogEvent,
    OTLPDecodeError,
    SpanRecord,
    decode_otlp_json,
    decode_otlp_logs_json,
    decode_otlp_logs_protobuf,
    decode_otlp_protobuf,
)

__all__ = ("OTLPReceiver", "ReceiverStats")

_log = logging.getLogger("livescore.collect")

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
TRACES_PATH = "/v1/traces"
LOGS_PATH = "/v1/logs"
# google.rpc.Code values the OTLP specification uses in error bodies.
_INVALID_ARGUMENT = 3
_UNAUTHENTICATED = 16
_RESOURCE_EXHAUSTED = 8
_UNIMPLEMENTED = 12
_DEADLINE_EXCEEDED = 4
# The descriptors kept free for everything else the process opens (the judge's
# connections, the exporter's, files) when the connection cap is fitted under the limit.
_SPARE_FDS = 128


@dataclass(slots=True)
class ReceiverStats:
    """What the receiver answered and passed on.

    Attributes:
        requests: Requests answered, by HTTP status.
        spans_accepted: Spans handed to the pipeline.
        spans_rejected: Spans refused for an invalid trace or span id (partial success).
        spans_refused: Spans of requests answered 429.
        bytes_received: Body bytes read (after decompression).
        forwarded: Requests passed on to ``forward``.
        forward_failed: Those the forward endpoint did not accept (or could not be reached).
        forward_dropped: Requests not passed on because too many were still in flight.
        log_records_accepted: Log records handed to the pipeline (each names its span and
            an event).
        log_records_dropped: Log records accepted but dropped: they name no trace and span
            (they belong to no run) or no event (plain log lines, which no reader reads).
        log_records_refused: Log records of requests answered 429.
        connections_refused: Connections closed as they were accepted: ``max_connections``
            were open.
        bodies_too_slow: Requests whose body did not arrive in time (answered 408).
    """

    requests: dict[int, int] = field(default_factory=dict)
    spans_accepted: int = 0
    spans_rejected: int = 0
    spans_refused: int = 0
    bytes_received: int = 0
    forwarded: int = 0
    forward_failed: int = 0
    forward_dropped: int = 0
    log_records_accepted: int = 0
    log_records_dropped: int = 0
    log_records_refused: int = 0
    connections_refused: int = 0
    bodies_too_slow: int = 0

    def copy(self) -> ReceiverStats:
        """A snapshot."""
        return ReceiverStats(
            dict(self.requests),
            self.spans_accepted,
            self.spans_rejected,
            self.spans_refused,
            self.bytes_received,
            self.forwarded,
            self.forward_failed,
            self.forward_dropped,
            self.log_records_accepted,
            self.log_records_dropped,
            self.log_records_refused,
            self.connections_refused,
            self.bodies_too_slow,
        )


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _status_body(encoding: str, code: int, message: str) -> bytes:
    """A ``google.rpc.Status`` (code and message) in protobuf or JSON."""
    if encoding == JSON:
        return json.dumps({"code": code, "message": message}).encode()
    text = message.encode()
    return b"\x08" + _varint(code) + b"\x12" + _varint(len(text)) + text


def _success_body(encoding: str, rejected: int) -> bytes:
    """An ``ExportTraceServiceResponse``, with ``partial_success`` when spans were rejected
    (with none, also the empty ``ExportLogsServiceResponse``)."""
    message = "spans with an invalid trace or span id were dropped"
    if encoding == JSON:
        if not rejected:
            return b"{}"
        partial = {"rejectedSpans": str(rejected), "errorMessage": message}
        return json.dumps({"partialSuccess": partial}).encode()
    if not rejected:
        return b""
    text = message.encode()
    inner = b"\x08" + _varint(rejected) + b"\x12" + _varint(len(text)) + text
    return b"\x0a" + _varint(len(inner)) + inner


def _fit_to_descriptors(cap: int) -> int:
    """``cap``, lowered to what the process's descriptor limit leaves: past that limit
    accepting fails for everyone, well-behaved clients too."""
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (OSError, ValueError):  # pragma: no cover - every POSIX system has it
        return cap
    if soft == resource.RLIM_INFINITY:
        return cap
    return max(1, min(cap, soft - _SPARE_FDS))


class _Capped(asyncio.Protocol):
    """One connection: aiohttp's request handler, unless ``cap`` connections are open
    already, when it is closed as it is accepted (counted)."""

    __slots__ = ("_handler", "_lock", "_stats", "_transport")

    def __init__(self, handlers: Any, cap: int, stats: ReceiverStats, lock: threading.Lock):
        self._handler: Any = None
        self._transport: asyncio.BaseTransport | None = None
        self._stats = stats
        self._lock = lock
        if len(handlers.connections) < cap:
            self._handler = handlers()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if self._handler is None:
            with self._lock:
                self._stats.connections_refused += 1
            transport.close()  # nothing written, nothing to flush: closed at once
            return
        self._handler.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self._handler is not None:
            self._handler.data_received(data)

    def eof_received(self) -> bool | None:
        return None if self._handler is None else self._handler.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._handler is not None:
            self._handler.connection_lost(exc)

    def pause_writing(self) -> None:
        if self._handler is not None:
            self._handler.pause_writing()

    def resume_writing(self) -> None:
        if self._handler is not None:
            self._handler.resume_writing()


class _TooLarge(Exception):
    """A body past the cap (as read, or once inflated)."""


class _TooSlow(Exception):
    """A body that did not keep up the minimum rate."""


class _Busy(Exception):
    """The bytes held by bodies being read are at their cap."""


def _inflate(body: bytes, coding: str, cap: int) -> bytes:
    """``body`` inflated (gzip or deflate), stopping at ``cap`` bytes (on the decoding pool,
    never on the loop: a bomb costs a pool thread ``cap`` bytes at most).

    Raises:
        _TooLarge: It inflates past ``cap``.
        OTLPDecodeError: It is not gzip or deflate data.
    """
    # gzip; deflate as HTTP means it (zlib-wrapped), or raw as some clients send it.
    attempts = (16 + zlib.MAX_WBITS,) if coding == "gzip" else (zlib.MAX_WBITS, -zlib.MAX_WBITS)
    for position, wbits in enumerate(attempts):
        out = bytearray()
        data = body
        try:
            while data:
                inflater = zlib.decompressobj(wbits)
                out += inflater.decompress(data, cap + 1 - len(out))
                if len(out) > cap or inflater.unconsumed_tail:
                    raise _TooLarge
                if not inflater.eof:
                    raise OTLPDecodeError(f"the {coding} body is cut short")
                data = inflater.unused_data  # a next gzip member, as gzip allows
            return bytes(out)
        except zlib.error as exc:
            if position == len(attempts) - 1:
                raise OTLPDecodeError(f"the body is not {coding} data ({exc})") from None
    raise AssertionError("unreachable")  # pragma: no cover


class _Decoded:
    """One request's decoded items, whichever signal: what goes to the pipeline, what was
    rejected (invalid ids: partial success) and what was accepted but dropped."""

    __slots__ = ("dropped", "items", "rejected")

    def __init__(
        self, items: Sequence[SpanRecord | LogEvent], rejected: int = 0, dropped: int = 0
    ) -> None:
        self.items = items
        self.rejected = rejected
        self.dropped = dropped


def _traces(decode: Callable[[bytes], DecodedSpans]) -> Callable[[bytes], _Decoded]:
    def run(body: bytes) -> _Decoded:
        decoded = decode(body)
        return _Decoded(decoded.spans, decoded.rejected)

    return run


def _logs(decode: Callable[[bytes], DecodedLogs]) -> Callable[[bytes], _Decoded]:
    def run(body: bytes) -> _Decoded:
        decoded = decode(body)
        return _Decoded(decoded.events, dropped=decoded.dropped)

    return run


# The decoder of each path, by encoding.
_DECODERS: dict[str, dict[str, Callable[[bytes], _Decoded]]] = {
    TRACES_PATH: {JSON: _traces(decode_otlp_json), PROTOBUF: _traces(decode_otlp_protobuf)},
    LOGS_PATH: {
        JSON: _logs(decode_otlp_logs_json),
        PROTOBUF: _logs(decode_otlp_logs_protobuf),
    },
}


class OTLPReceiver:
    """Serve ``POST /v1/traces`` and ``POST /v1/logs`` and hand every decoded span, and
    every log record of a span, to a :class:`SpanPipeline`.

    Args:
        pipeline: Where the spans go.
        host: The address to bind (``127.0.0.1`` unless you mean to be reached from
            elsewhere).
        port: The port (0 picks a free one; see :attr:`port`).
        max_body_bytes: The largest request body accepted, after decompression (413 past
            it).
        token: When set, requests must carry ``Authorization: Bearer <token>`` (401).
        forward: Pass every accepted request body on, unchanged, to this OTLP/HTTP traces
            URL (best effort: failures are counted, never retried).
        forward_logs: Where accepted ``/v1/logs`` bodies go; by default ``/v1/logs``
            beside ``forward`` when it ends in ``/v1/traces`` (else they are not passed
            on).
        max_decoding: Bodies inflated and decoded at once (a slot is taken only once a body
            has been read); more wait for a slot, within ``max_reading_bytes``.
        max_forwarding: Forwarded requests in flight at once; past it they are counted as
            ``forward_dropped``.
        max_forward_bytes: Bytes of forwarded bodies in flight at once (a slow forward
            endpoint holds no more); past it requests are not forwarded, counted as
            ``forward_dropped``.
        retry_after: The seconds a 429 tells the client to wait.
        max_connections: Connections open at once; more are closed as they are accepted
            (fitted under the process's file descriptor limit).
        idle_timeout: Seconds a connection may stay open without a request (or while its
            request's headers trickle in) before it is closed.
        body_timeout: Seconds a request's body may take beyond what ``min_body_rate``
            allows: a body must have arrived ``body_timeout + received / min_body_rate``
            seconds after its request began, else it is answered 408 and its connection
            closed.
        min_body_rate: Bytes a second a body must keep up, after ``body_timeout``.
        max_reading_bytes: Bytes of all bodies being read or waiting for a decoding slot;
            past it requests are answered 429 (default: four bodies of ``max_body_bytes``).

    Example:
        >>> from livescore.collect import SpanPipeline
        >>> OTLPReceiver.__name__
        'OTLPReceiver'
    """

    def __init__(
        self,
        pipeline: SpanPipeline,
        *,
        host: str = "127.0.0.1",
        port: int = 4318,
        max_body_bytes: int = 16 * 1024 * 1024,
        token: str | None = None,
        forward: str | None = None,
        forward_logs: str | None = None,
        max_decoding: int = 4,
        max_forwarding: int = 64,
        max_forward_bytes: int = 64 * 1024 * 1024,
        retry_after: int = 2,
        max_connections: int = 512,
        idle_timeout: float = 15.0,
        body_timeout: float = 10.0,
        min_body_rate: int = 64 * 1024,
        max_reading_bytes: int | None = None,
    ) -> None:
        if max_body_bytes < 1:
            raise ValueError(f"max_body_bytes must be at least 1, not {max_body_bytes}")
        for name, value in (
            ("max_connections", max_connections),
            ("max_decoding", max_decoding),
            ("min_body_rate", min_body_rate),
            ("max_forward_bytes", max_forward_bytes),
        ):
            if value < 1:
                raise ValueError(f"{name} must be at least 1, not {value}")
        for name, seconds in (("idle_timeout", idle_timeout), ("body_timeout", body_timeout)):
            if not seconds > 0:
                raise ValueError(f"{name} must be a positive number of seconds, not {seconds}")
        self.pipeline = pipeline
        self.host = host
        self.port = port
        self.max_body_bytes = max_body_bytes
        self.forward = forward
        if forward_logs is None and forward and forward.endswith(TRACES_PATH):
            forward_logs = forward.removesuffix(TRACES_PATH) + LOGS_PATH
        self.forward_logs = forward_logs
        self.retry_after = retry_after
        self._token = token.encode() if token else None
        self._max_decoding = max_decoding
        self._max_forwarding = max_forwarding
        self._max_forward_bytes = max_forward_bytes
        self.max_connections = _fit_to_descriptors(max_connections)
        self.idle_timeout = idle_timeout
        self.body_timeout = body_timeout
        self.min_body_rate = min_body_rate
        self._max_reading = max_reading_bytes or 4 * max_body_bytes
        self._reading = 0  # bytes of bodies read or waiting to be decoded (the loop's own)
        self._slots: asyncio.Semaphore | None = None  # made on the loop
        self._forwarding = 0
        self._forward_bytes = 0
        self._server: asyncio.Server | None = None
        self._said: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._stats = ReceiverStats()
        self._lock = threading.Lock()
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=max(1, min(max_decoding, 4)), thread_name_prefix="livescore-decode"
        )
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: Any = None
        self._session: Any = None
        self._ready = threading.Event()
        self._start_error: BaseException | None = None

    # -- lifecycle ----------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The base URL the receiver serves (an exporter's endpoint: it adds ``/v1/traces``
        and ``/v1/logs``)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def start(self) -> OTLPReceiver:
        """Bind and serve in a background thread.

        Raises:
            OSError: The address cannot be bound (in use, not this machine's…).
        """
        self._thread = threading.Thread(target=self._serve, name="livescore-receiver", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._start_error is not None:
            raise self._start_error
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop accepting, let the requests in progress finish (within ``timeout``), close."""
        loop = self._loop
        if loop is None or self._thread is None:
            return
        future = asyncio.run_coroutine_threadsafe(self._close(timeout), loop)
        try:
            future.result(timeout + 1.0)
        except Exception:
            _log.exception("livescore: the receiver did not stop cleanly")
        loop.call_soon_threadsafe(loop.stop)
        self._thread.join(timeout + 1.0)
        self._pool.shutdown(wait=False, cancel_futures=True)

    def stats(self) -> ReceiverStats:
        """A snapshot of the counts."""
        with self._lock:
            return self._stats.copy()

    def __enter__(self) -> OTLPReceiver:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._open())
        except BaseException as exc:
            self._start_error = exc
            self._ready.set()
            loop.close()
            return
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.close()

    async def _open(self) -> None:
        from aiohttp import web

        loop = asyncio.get_running_loop()
        loop.set_exception_handler(self._loop_error)
        self._slots = asyncio.Semaphore(self._max_decoding)
        app = web.Application(client_max_size=self.max_body_bytes)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(
            app,
            handle_signals=False,
            access_log=None,
            shutdown_timeout=5.0,
            # An idle connection, or one whose headers trickle in, is closed after this
            # (aiohttp's default is an hour).
            keepalive_timeout=self.idle_timeout,
            # Bodies are inflated here, off the loop and capped, not by the HTTP parser.
            auto_decompress=False,
        )
        await self._runner.setup()
        handlers = self._runner.server
        assert handlers is not None
        stats, lock, cap = self._stats, self._lock, self.max_connections

        def connection() -> asyncio.Protocol:
            return _Capped(handlers, cap, stats, lock)

        # Our own listening socket around aiohttp's protocol factory: the connection cap
        # needs to see each connection as it is accepted.
        self._server = await loop.create_server(
            connection, self.host, self.port, reuse_address=True, backlog=128
        )
        sockets = self._server.sockets or ()
        if sockets:
            self.port = int(sockets[0].getsockname()[1])

    def _loop_error(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """One line per kind of trouble the loop meets (out of descriptors on accept, a
        connection reset mid-write), never a traceback in the log."""
        exc = context.get("exception")
        kind = type(exc).__name__ if exc is not None else str(context.get("message"))
        if kind in self._said:
            _log.debug("livescore: receiver: %s", context.get("message"))
            return
        self._said.add(kind)
        _log.warning(
            "livescore: the receiver met %s: %s (logged once)",
            kind,
            exc if exc is not None else context.get("message"),
        )

    async def _close(self, timeout: float) -> None:
        if self._server is not None:
            self._server.close()  # stop accepting; the connections open are aiohttp's
        if self._runner is not None:
            try:
                await asyncio.wait_for(self._runner.cleanup(), timeout)
            except (asyncio.TimeoutError, Exception):
                _log.warning("livescore: the receiver's requests did not finish in time")
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=timeout)
        if self._session is not None:
            await self._session.close()

    # -- requests -----------------------------------------------------------------------------

    def _count(self, status: int) -> None:
        with self._lock:
            self._stats.requests[status] = self._stats.requests.get(status, 0) + 1

    def _reply(self, status: int, encoding: str, body: bytes, **headers: str) -> Any:
        from aiohttp import web

        self._count(status)
        return web.Response(status=status, body=body, content_type=encoding, headers=headers)

    def _error(self, status: int, encoding: str, code: int, message: str, **headers: str) -> Any:
        return self._reply(status, encoding, _status_body(encoding, code, message), **headers)

    async def _handle(self, request: Any) -> Any:
        content_type = request.content_type or ""
        encoding = JSON if content_type == JSON else PROTOBUF
        decoders = _DECODERS.get(request.path)
        if decoders is None:
            return self._error(404, encoding, _UNIMPLEMENTED, f"no such path: {request.path}")
        logs = request.path == LOGS_PATH
        coding = (request.headers.get("Content-Encoding") or "identity").strip().lower()
        refusal = self._refusal(request, encoding, content_type, coding, logs)
        if refusal is not None:
            return refusal
        if not self.pipeline.has_room() or self._reading >= self._max_reading:
            return self._busy(encoding, 0, logs)
        # What this request adds to self._reading (only the loop's thread touches either).
        held = [0]
        try:
            try:
                body = await self._read_body(request, held)
            except _TooLarge:
                return self._error(
                    413,
                    encoding,
                    _INVALID_ARGUMENT,
                    f"the body is larger than {self.max_body_bytes} bytes",
                )
            except _Busy:
                return self._busy(encoding, 0, logs, close=True)
            except _TooSlow:
                with self._lock:
                    self._stats.bodies_too_slow += 1
                return self._error(
                    408,
                    encoding,
                    _DEADLINE_EXCEEDED,
                    f"the body arrived slower than {self.min_body_rate} bytes a second",
                    Connection="close",
                )
            assert self._slots is not None
            async with self._slots:  # a slot only for a body already read
                loop = asyncio.get_running_loop()
                try:
                    body, decoded = await loop.run_in_executor(
                        self._pool, self._decode, decoders[encoding], body, coding
                    )
                except _TooLarge:
                    return self._error(
                        413,
                        encoding,
                        _INVALID_ARGUMENT,
                        f"the body is larger than {self.max_body_bytes} bytes once inflated",
                    )
                except OTLPDecodeError as exc:
                    return self._error(400, encoding, _INVALID_ARGUMENT, str(exc))
        finally:
            self._reading -= held[0]
        with self._lock:
            self._stats.bytes_received += len(body)
        items = decoded.items
        if items and not self.pipeline.offer(items):
            return self._busy(encoding, len(items), logs)
        with self._lock:
            if logs:
                self._stats.log_records_accepted += len(items)
                self._stats.log_records_dropped += decoded.dropped
            else:
                self._stats.spans_accepted += len(items)
                self._stats.spans_rejected += decoded.rejected
        forward = self.forward_logs if logs else self.forward
        if forward:
            self._forward(forward, body, content_type)
        return self._reply(200, encoding, _success_body(encoding, decoded.rejected))

    def _refusal(
        self, request: Any, encoding: str, content_type: str, coding: str, logs: bool
    ) -> Any:
        """The answer to a request refused before its body is read, else ``None``."""
        if request.method != "POST":
            what = "logs" if logs else "traces"
            return self._error(405, encoding, _UNIMPLEMENTED, f"POST {what} here", Allow="POST")
        if self._token is not None:
            given = request.headers.get("Authorization", "")
            scheme, _, value = given.partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(
                value.strip().encode(), self._token
            ):
                return self._error(
                    401,
                    encoding,
                    _UNAUTHENTICATED,
                    "a bearer token is required",
                    **{"WWW-Authenticate": "Bearer"},
                )
        if content_type not in (JSON, PROTOBUF):
            return self._error(
                415,
                encoding,
                _INVALID_ARGUMENT,
                f"content type {content_type or '(none)'!r}: send {PROTOBUF} or {JSON}",
            )
        if coding not in ("identity", "gzip", "deflate"):
            return self._error(
                415,
                encoding,
                _INVALID_ARGUMENT,
                f"content encoding {coding!r}: send gzip, deflate or none",
            )
        return None

    def _decode(
        self, decode: Callable[[bytes], _Decoded], body: bytes, coding: str
    ) -> tuple[bytes, _Decoded]:
        """On the pool: inflate (capped), then decode. Any failure of a decoder is a bad
        request, never a 500: the request is answered, and counted, either way."""
        if coding != "identity":
            body = _inflate(body, coding, self.max_body_bytes)
        try:
            return body, decode(body)
        except OTLPDecodeError:
            raise
        except Exception as exc:
            _log.debug("livescore: a body failed to decode", exc_info=True)
            raise OTLPDecodeError(f"not an OTLP export request ({type(exc).__name__})") from None

    async def _read_body(self, request: Any, held: list[int]) -> bytes:
        """The request's body as it arrives: at most ``max_body_bytes``; each next chunk due
        ``body_timeout + received / min_body_rate`` seconds after the request began.

        Raises:
            _TooLarge: Past ``max_body_bytes`` (or a ``Content-Length`` that says so).
            _TooSlow: Its chunks did not keep up.
            _Busy: ``max_reading_bytes`` are held by bodies already.
        """
        length = request.content_length
        if length is not None and length > self.max_body_bytes:
            raise _TooLarge
        started = time.monotonic()
        chunks: list[bytes] = []
        received = 0
        content = request.content
        while True:
            due = started + self.body_timeout + received / self.min_body_rate
            try:
                chunk = await asyncio.wait_for(
                    content.readany(), max(due - time.monotonic(), 0.001)
                )
            except asyncio.TimeoutError:
                raise _TooSlow from None
            if not chunk:
                break
            received += len(chunk)
            if received > self.max_body_bytes:
                raise _TooLarge
            self._hold(held, len(chunk))
            chunks.append(chunk)
        return b"".join(chunks)

    def _hold(self, held: list[int], count: int) -> None:
        """Count ``count`` more bytes as held by a body being read (``held``: its request's
        share, given back when it is answered); :class:`_Busy` past the cap."""
        if self._reading + count > self._max_reading:
            raise _Busy
        self._reading += count
        held[0] += count

    def _busy(self, encoding: str, count: int, logs: bool, *, close: bool = False) -> Any:
        with self._lock:
            if logs:
                self._stats.log_records_refused += count
            else:
                self._stats.spans_refused += count
        return self._error(
            429,
            encoding,
            _RESOURCE_EXHAUSTED,
            "the receiver is busy: retry later",
            **{"Retry-After": str(self.retry_after)},
            **({"Connection": "close"} if close else {}),
        )

    def _forward(self, url: str, body: bytes, content_type: str) -> None:
        # Bounded by bytes as well as by count: a slow endpoint holds at most
        # max_forward_bytes of bodies, however large each is.
        if (
            self._forwarding >= self._max_forwarding
            or self._forward_bytes + len(body) > self._max_forward_bytes
        ):
            with self._lock:
                self._stats.forward_dropped += 1
            return
        self._forwarding += 1
        self._forward_bytes += len(body)
        task = asyncio.get_running_loop().create_task(self._send_on(url, body, content_type))
        self._tasks.add(task)  # held until done (the loop keeps only weak references)
        task.add_done_callback(self._tasks.discard)

    async def _send_on(self, url: str, body: bytes, content_type: str) -> None:
        import aiohttp

        ok = False
        try:
            if self._session is None:
                self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10))
            async with self._session.post(
                url, data=body, headers={"Content-Type": content_type}
            ) as response:
                await response.read()
                ok = 200 <= response.status < 300
        except Exception as exc:
            _log.debug("livescore: forwarding failed: %s", exc)
        finally:
            self._forwarding -= 1
            self._forward_bytes -= len(body)
            with self._lock:
                if ok:
                    self._stats.forwarded += 1
                else:
                    self._stats.forward_failed += 1
