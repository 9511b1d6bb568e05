"""Test doubles for the demo: an OTLP/HTTP receiver on 127.0.0.1 and a scripted judge."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


@dataclass(frozen=True)
class ReceivedSpan:
    """A span as an OTLP collector received it."""

    name: str
    trace_id: str
    span_id: str
    parent_span_id: str
    attributes: dict[str, Any]
    service_name: str | None


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


class OTLPTestReceiver:
    """A minimal OTLP/HTTP (protobuf) trace receiver: keeps every span it is sent."""

    def __init__(self) -> None:
        self.spans: list[ReceivedSpan] = []
        self.requests = 0
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.path != "/v1/traces":
                    self.send_response(404)
                    self.end_headers()
                    return
                receiver._collect(body)
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, format: str, *args: Any) -> None:
                return None

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The base URL (the demo adds ``/v1/traces``)."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def _collect(self, body: bytes) -> None:
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        found = []
        for resource_spans in request.resource_spans:
            resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    found.append(
                        ReceivedSpan(
                            name=span.name,
                            trace_id=span.trace_id.hex(),
                            span_id=span.span_id.hex(),
                            parent_span_id=span.parent_span_id.hex(),
                            attributes={a.key: _value(a.value) for a in span.attributes},
                            service_name=resource.get("service.name"),
                        )
                    )
        with self._lock:
            self.requests += 1
            self.spans.extend(found)

    def __enter__(self) -> OTLPTestReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def demo_judge_responder(body: dict[str, Any]) -> Any:
    """Answers the hallucination scorer's prompts: the drone claim is the unsupported one."""
    prompt = str(body["messages"][-1]["content"])
    if "<claims>" in prompt:
        claims = re.findall(r'<claim index="\d+">(.*?)</claim>', prompt, re.S)
        return {
            "verdicts": [
                {
                    "statement": claim,
                    "verdict": "yes" if "drone" in claim.lower() else "no",
                    "reason": "no document mentions drones"
                    if "drone" in claim.lower()
                    else "the tool result states it",
                }
                for claim in claims
            ]
        }
    if "List the factual claims" in prompt:
        found = re.search(r"<output>\n(.*?)\n</output>", prompt, re.S)
        text = found.group(1) if found else ""
        return {"claims": [s for s in re.split(r"(?<=\.)\s+", text) if s.strip()]}
    start = re.search(r'Start with "(The score is [^"]+ because)"', prompt)
    opening = start.group(1) if start else "The score is unknown because"
    if 'hallucinated="yes"' in prompt:
        return f"{opening} the drone delivery claim is not in any tool result."
    return f"{opening} every claim is backed by the tool results."
