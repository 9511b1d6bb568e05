"""An OTLP/HTTP (protobuf) trace, logs and metrics receiver on 127.0.0.1: the light stand-in
for a collector, Jaeger, Tempo or Phoenix in tests (Debian packages none of them), and for a
backend that reads ``gen_ai.evaluation.result`` events from a logs pipeline."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
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
    links: tuple[tuple[str, str], ...] = ()  # (trace id, span id) of each linked span


@dataclass(frozen=True)
class ReceivedLogRecord:
    """A log record (an event when it has an ``event_name``) as a collector received it."""

    event_name: str
    trace_id: str  # "" when the record has no trace context
    span_id: str
    severity_number: int
    body: Any
    attributes: dict[str, Any]
    scope: str
    service_name: str | None

    def line(self) -> str:
        """One line, as a log viewer shows the record (what the tests print)."""
        attrs = " ".join(f"{k}={v!r}" for k, v in sorted(self.attributes.items()))
        return (
            f"{self.event_name} trace={self.trace_id or '-'} span={self.span_id or '-'} "
            f"severity={self.severity_number} body={self.body!r} {attrs}"
        )


@dataclass(frozen=True)
class ReceivedPoint:
    """One data point of a cumulative sum (counter) as last exported by one process."""

    name: str
    attributes: tuple[tuple[str, Any], ...]
    value: float
    instance: str | None  # the resource's service.instance.id: one per process


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


class _QuietServer(ThreadingHTTPServer):
    """Says nothing when an exporter's process dies mid-connection (a test kills workers)."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class OTLPTestReceiver:
    """A minimal OTLP/HTTP (protobuf) receiver: keeps every span (``/v1/traces``) and log
    record (``/v1/logs``) it is sent, and the latest value of every counter data point per
    process (``/v1/metrics``).

    To play a collector in trouble: while ``refuse`` is set it answers every export with
    ``503 Service Unavailable`` and keeps nothing (``refused`` counts them); while ``gate``
    is cleared it holds each answer until the gate is set again (it keeps the data first).
    ``traces_only`` plays a backend that takes no logs, as Jaeger: ``/v1/logs`` is a 404.
    """

    def __init__(self, *, traces_only: bool = False) -> None:
        self.traces_only = traces_only
        self.spans: list[ReceivedSpan] = []
        self.logs: list[ReceivedLogRecord] = []
        self.counters: dict[tuple[str, tuple[tuple[str, Any], ...], str | None], float] = {}
        self.requests = 0
        self.refuse = threading.Event()
        self.refused = 0
        self.gate = threading.Event()
        self.gate.set()
        self.held = 0
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            # Keep-alive, as a collector does: exporters reuse their connection.
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if receiver.refuse.is_set() and self.path in ("/v1/metrics", "/v1/traces"):
                    with receiver._lock:
                        receiver.refused += 1
                    self.send_response(503)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if self.path == "/v1/metrics":
                    receiver._collect_metrics(body)
                    reply = ExportMetricsServiceResponse().SerializeToString()
                elif self.path == "/v1/traces":
                    receiver._collect(body)
                    reply = ExportTraceServiceResponse().SerializeToString()
                elif self.path == "/v1/logs" and not receiver.traces_only:
                    receiver._collect_logs(body)
                    reply = ExportLogsServiceResponse().SerializeToString()
                else:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if not receiver.gate.is_set():
                    with receiver._lock:
                        receiver.held += 1
                    receiver.gate.wait(60)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, format: str, *args: Any) -> None:
                return None

        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The base URL (the demo adds ``/v1/traces`` and ``/v1/logs``)."""
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
                            links=tuple(
                                (link.trace_id.hex(), link.span_id.hex()) for link in span.links
                            ),
                        )
                    )
        with self._lock:
            self.requests += 1
            self.spans.extend(found)

    def _collect_logs(self, body: bytes) -> None:
        request = ExportLogsServiceRequest()
        request.ParseFromString(body)
        found = []
        for resource_logs in request.resource_logs:
            resource = {a.key: _value(a.value) for a in resource_logs.resource.attributes}
            for scope_logs in resource_logs.scope_logs:
                for record in scope_logs.log_records:
                    found.append(
                        ReceivedLogRecord(
                            event_name=record.event_name,
                            trace_id=record.trace_id.hex(),
                            span_id=record.span_id.hex(),
                            severity_number=int(record.severity_number),
                            body=_value(record.body) if record.HasField("body") else None,
                            attributes={a.key: _value(a.value) for a in record.attributes},
                            scope=scope_logs.scope.name,
                            service_name=resource.get("service.name"),
                        )
                    )
        with self._lock:
            self.requests += 1
            self.logs.extend(found)

    def events(self, name: str = "gen_ai.evaluation.result") -> list[ReceivedLogRecord]:
        """The log records received so far that are events named ``name``."""
        with self._lock:
            return [r for r in self.logs if r.event_name == name]

    def _collect_metrics(self, body: bytes) -> None:
        request = ExportMetricsServiceRequest()
        request.ParseFromString(body)
        latest = {}
        for resource_metrics in request.resource_metrics:
            resource = {a.key: _value(a.value) for a in resource_metrics.resource.attributes}
            instance = resource.get("service.instance.id")
            for scope_metrics in resource_metrics.scope_metrics:
                for metric in scope_metrics.metrics:
                    if metric.WhichOneof("data") != "sum":
                        continue
                    for point in metric.sum.data_points:
                        attrs = tuple(sorted((a.key, _value(a.value)) for a in point.attributes))
                        value = point.as_int if point.HasField("as_int") else point.as_double
                        latest[(metric.name, attrs, instance)] = float(value)
        with self._lock:
            self.counters.update(latest)  # cumulative: the latest export of each is the total

    def counter_total(self, name: str, attributes: dict[str, Any] | None = None) -> float:
        """The sum over every process of a counter's points that carry ``attributes``."""
        attributes = attributes or {}
        with self._lock:
            items = list(self.counters.items())
        total = 0.0
        for (metric, attrs, _instance), value in items:
            found = dict(attrs)
            if metric == name and all(found.get(k) == v for k, v in attributes.items()):
                total += value
        return total

    def __enter__(self) -> OTLPTestReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
