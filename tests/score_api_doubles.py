"""Loopback HTTP test doubles for the dashboards' score APIs.

Each one is a real HTTP server on 127.0.0.1 that records every request; they are test
doubles, not Phoenix or Langfuse. A real Phoenix is exercised end to end in
``tests/demo/test_demo_phoenix.py``; Langfuse's server (Postgres, ClickHouse, Redis and its
own services) cannot run here, so the Langfuse sink is checked against
:class:`LangfuseTestReceiver` through the real ``langfuse`` SDK client.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Recorded:
    """One request as the double received it."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


@dataclass
class Reply:
    """One answer. ``chunks``, when given, is the body: sent chunk by chunk (chunked
    encoding, no length) for as long as it yields and the client reads; ``echo=True``
    makes the body the request's own headers (a server that quotes them back)."""

    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    chunks: Callable[[], Iterator[bytes]] | None = None
    echo: bool = False


class RecordingServer:
    """A loopback HTTP server whose ``answer(request)`` decides each reply."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.bytes_sent = 0  # body bytes of streamed replies that reached the socket
        self.lock = threading.Lock()
        self.received = threading.Condition(self.lock)
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self._handle()

            def do_GET(self) -> None:
                self._handle()

            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body: Any = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode(errors="replace")
                parts = urlsplit(self.path)
                request = Recorded(
                    self.command,
                    parts.path,
                    parse_qs(parts.query),
                    {k.lower(): v for k, v in self.headers.items()},
                    body,
                )
                with owner.lock:
                    owner.requests.append(request)
                    owner.received.notify_all()
                reply = owner.answer(request)
                if reply.echo:
                    reply = Reply(reply.status, {"echo": dict(self.headers.items())})
                if reply.chunks is not None:
                    self._stream(reply)
                    return
                payload = (
                    reply.body.encode()
                    if isinstance(reply.body, str)
                    else json.dumps(reply.body).encode()
                )
                self.send_response(reply.status)
                content_type = "text/plain" if isinstance(reply.body, str) else "application/json"
                self.send_header("content-type", content_type)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _stream(self, reply: Reply) -> None:
                assert reply.chunks is not None
                self.send_response(reply.status)
                self.send_header("content-type", "text/plain")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                try:
                    for chunk in reply.chunks():
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                        self.wfile.flush()
                        with owner.lock:
                            owner.bytes_sent += len(chunk)
                    self.wfile.write(b"0\r\n\r\n")
                except OSError:  # the client hung up: what a capped reader does
                    pass
                self.close_connection = True

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def answer(self, request: Recorded) -> Reply:
        return Reply(404, "not found")

    def wait_for(self, count: int, timeout: float = 10.0) -> bool:
        """Wait until ``count`` requests arrived."""
        with self.lock:
            return self.received.wait_for(lambda: len(self.requests) >= count, timeout)

    def __enter__(self) -> RecordingServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


class PhoenixAnnotationsTestDouble(RecordingServer):
    """A test double of Phoenix's ``POST /v1/span_annotations?sync=true``.

    Like Phoenix 20: 400 when an annotation is named ``note`` (a reserved name) and 404
    with "Spans with IDs … do not exist." when any span of the batch is unknown (nothing of
    the batch is stored either way), else an upsert on (name, span id, identifier).
    ``spans`` are the known span ids; ``scripted`` replies, when given, answer the next
    requests first; ``on_post(request)`` runs before each answer.
    """

    def __init__(self, spans: set[str] | None = None) -> None:
        super().__init__()
        self.spans: set[str] = set(spans or ())
        self.annotations: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.scripted: list[Reply] = []
        self.on_post: Callable[[Recorded], None] | None = None

    def answer(self, request: Recorded) -> Reply:
        if request.method != "POST" or request.path != "/v1/span_annotations":
            return Reply(404, '{"detail":"Not Found"}')
        if self.on_post is not None:
            self.on_post(request)
        with self.lock:
            if self.scripted:
                return self.scripted.pop(0)
            data = request.body["data"]
            if any(a["name"] == "note" for a in data):
                return Reply(400, "The name 'note' is reserved for trace and span notes.")
            missing = sorted({a["span_id"] for a in data} - self.spans)
            if missing:
                return Reply(404, f"Spans with IDs {', '.join(missing)} do not exist.")
            for item in data:
                key = (item["name"], item["span_id"], item.get("identifier", ""))
                self.annotations[key] = item
        return Reply(200, {"data": [{"id": f"SpanAnnotation:{i}"} for i in range(len(data))]})

    def posted_batches(self) -> list[list[dict[str, Any]]]:
        with self.lock:
            return [r.body["data"] for r in self.requests if r.path == "/v1/span_annotations"]


class LangfuseTestReceiver(RecordingServer):
    """A test double of Langfuse's ``POST /api/public/scores`` (a batch of scores).

    Answers 202 ``{"message": "Accepted"}`` unless ``scripted`` replies are queued.
    Langfuse's OTLP endpoint (``POST /api/public/otel/v1/traces``) is answered 200 with an
    empty body (an empty ``ExportTraceServiceResponse``) and its requests are recorded, not
    decoded. Any other path is recorded and answered 404.
    """

    OTLP_PATH = "/api/public/otel/v1/traces"

    def __init__(self) -> None:
        super().__init__()
        self.scripted: list[Reply] = []

    def answer(self, request: Recorded) -> Reply:
        if request.method == "POST" and request.path == self.OTLP_PATH:
            return Reply(200, "")
        if request.method != "POST" or request.path != "/api/public/scores":
            return Reply(404, {"message": "not found"})
        with self.lock:
            if self.scripted:
                return self.scripted.pop(0)
        return Reply(202, {"message": "Accepted"})

    def scores(self) -> list[dict[str, Any]]:
        with self.lock:
            return [
                score
                for r in self.requests
                if r.path == "/api/public/scores" and isinstance(r.body, list)
                for score in r.body
            ]

    @staticmethod
    def basic_auth(request: Recorded) -> tuple[str, str]:
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        assert scheme == "Basic"
        user, _, password = base64.b64decode(token).decode().partition(":")
        return user, password
