"""The worker's OpenTelemetry SDK, configured from the standard ``OTEL_*`` variables.

Read here (anything else the SDK and the OTLP exporters read themselves):

- ``OTEL_SDK_DISABLED=true``: no SDK (scores are still counted on the worker's own stats);
- ``OTEL_TRACES_EXPORTER`` / ``OTEL_METRICS_EXPORTER`` / ``OTEL_LOGS_EXPORTER``: ``otlp``
  (default), ``console`` or ``none`` (the logs carry the ``gen_ai.evaluation.result``
  events);
- ``OTEL_EXPORTER_OTLP_PROTOCOL`` (and the ``_TRACES_`` / ``_METRICS_`` / ``_LOGS_`` forms):
  ``http/protobuf`` (default; ``grpc`` needs ``opentelemetry-exporter-otlp-proto-grpc``);
- ``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``: the resource (default service name
  ``livescore-worker``, and a ``service.instance.id`` per process, so a backend keeps the
  counters of several workers apart).

Read by the SDK and the exporters: ``OTEL_EXPORTER_OTLP_ENDPOINT`` (and the per-signal
``..._TRACES_ENDPOINT`` / ``..._METRICS_ENDPOINT`` / ``..._LOGS_ENDPOINT``),
``OTEL_EXPORTER_OTLP_HEADERS``, ``OTEL_EXPORTER_OTLP_TIMEOUT``,
``OTEL_EXPORTER_OTLP_COMPRESSION``, ``OTEL_TRACES_SAMPLER`` (and ``_ARG``),
``OTEL_METRIC_EXPORT_INTERVAL``, ``OTEL_BLRP_*``. Spans are not batched by a
``BatchSpanProcessor`` (``OTEL_BSP_*`` do not apply): the worker exports them when it commits
its scores (:func:`held_span_processor`); its events are batched, and each commit
force-flushes them too.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from livescore._errors import LivescoreError

__all__ = ("SpanHold", "TelemetrySetup", "configure_from_env", "held_span_processor")


class SpanHold(Protocol):
    """What the worker's commit needs of its span processor (see :func:`held_span_processor`)."""

    export_timeout: float
    """The longest one :meth:`export` may take, its exporter's retries included (seconds)."""

    def take(self) -> list[Any]:
        """The spans held now (they are no longer held)."""
        ...

    def capture(self, into: list[Any]) -> contextlib.AbstractContextManager[None]:
        """For the length of the block, spans that end on this thread go to ``into``
        instead of being held (the worker keeps each score's span with its pair)."""
        ...

    def export(self, spans: list[Any]) -> bool:
        """Export ``spans``; ``False`` when the exporter failed."""
        ...


def _export_timeout() -> float:
    """``OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`` / ``OTEL_EXPORTER_OTLP_TIMEOUT`` (seconds; the
    OTLP exporters' default is 10): how long one export may take, retries included."""
    for name in ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"):
        text = os.environ.get(name, "").strip()
        if text:
            try:
                value = float(text)
            except ValueError:
                continue
            if value > 0:
                return value
    return 10.0


@functools.cache
def _held_class() -> type[Any]:
    # The SDK is imported here, not at module level: the core never imports it on import.
    from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

    class HeldSpanProcessor(SpanProcessor):
        """See :func:`held_span_processor`."""

        def __init__(self, exporter: SpanExporter, max_held: int = 100_000) -> None:
            self.exporter = exporter
            self.max_held = max_held
            self.export_timeout = _export_timeout()
            self._lock = threading.Lock()
            self._spans: list[ReadableSpan] = []
            self._local = threading.local()
            self.export_failures = 0

        @contextlib.contextmanager
        def capture(self, into: list[ReadableSpan]) -> Iterator[None]:
            """Spans ending on this thread in the block go to ``into``."""
            self._local.into = into
            try:
                yield
            finally:
                self._local.into = None

        def on_end(self, span: ReadableSpan) -> None:
            into = getattr(self._local, "into", None)
            if into is not None:
                into.append(span)
                return
            overflow: list[ReadableSpan] = []
            with self._lock:
                self._spans.append(span)
                if len(self._spans) > self.max_held:
                    overflow, self._spans = self._spans, []
            if overflow:
                self.export(overflow)

        def take(self) -> list[ReadableSpan]:
            """The spans held now (they are no longer held)."""
            with self._lock:
                spans, self._spans = self._spans, []
            return spans

        def export(self, spans: list[ReadableSpan]) -> bool:
            """Export ``spans``; ``False`` when the exporter failed (its own retries included)."""
            if not spans:
                return True
            try:
                ok = bool(self.exporter.export(spans) == SpanExportResult.SUCCESS)
            except Exception:
                ok = False
            if not ok:
                self.export_failures += 1
            return ok

        def force_flush(self, timeout_millis: int = 30_000) -> bool:
            return self.export(self.take())

        def shutdown(self) -> None:
            self.force_flush()
            self.exporter.shutdown()

    return HeldSpanProcessor


def held_span_processor(exporter: Any, max_held: int = 100_000) -> Any:
    """A span processor that holds ended spans until the worker's commit exports them.

    In place of a ``BatchSpanProcessor``: the worker keeps each score's span with its pair
    (``capture``) and exports exactly the spans of the pairs it is about to mark done,
    in one batch per commit (at most every 100 ms), once it checked in Redis that their
    claims are still its own. So a crash never leaves a pair marked done whose span did not
    leave, a worker whose claim lapsed (frozen, cut off) never exports a score another
    worker made again, and at most the pairs of one commit are exported but not yet marked.
    Other spans (a scorer's own) are held and go out with the next commit. ``force_flush``
    and ``shutdown`` export whatever is held; past ``max_held`` spans the oldest are
    exported at once.
    """
    return _held_class()(exporter, max_held)


@dataclass(slots=True)
class TelemetrySetup:
    """The providers the worker made (``None`` for one it left to the application)."""

    tracer_provider: Any = None
    meter_provider: Any = None
    held: SpanHold | None = None
    logger_provider: Any = None

    def shutdown(self) -> None:
        for provider in (self.tracer_provider, self.logger_provider, self.meter_provider):
            if provider is not None:
                provider.shutdown()


def _exporter_name(signal: str) -> str:
    return os.environ.get(f"OTEL_{signal}_EXPORTER", "otlp").strip().lower() or "otlp"


def _protocol(signal: str) -> str:
    value = os.environ.get(f"OTEL_EXPORTER_OTLP_{signal}_PROTOCOL") or os.environ.get(
        "OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"
    )
    return value.strip().lower()


# signal -> (the console exporter's module and names, newest first; the OTLP exporter's
# module suffix and class; the OTLP/HTTP path).
_EXPORTERS: dict[str, tuple[str, tuple[str, ...], str, str, str]] = {
    "TRACES": (
        "opentelemetry.sdk.trace.export",
        ("ConsoleSpanExporter",),
        "trace_exporter",
        "OTLPSpanExporter",
        "/v1/traces",
    ),
    "METRICS": (
        "opentelemetry.sdk.metrics.export",
        ("ConsoleMetricExporter",),
        "metric_exporter",
        "OTLPMetricExporter",
        "/v1/metrics",
    ),
    "LOGS": (
        "opentelemetry.sdk._logs.export",
        ("ConsoleLogRecordExporter", "ConsoleLogExporter"),
        "_log_exporter",
        "OTLPLogExporter",
        "/v1/logs",
    ),
}


def _exporter(signal: str, endpoint: str | None = None) -> Any:
    """The exporter ``OTEL_{signal}_EXPORTER`` names (``None`` for ``none``); ``endpoint``
    (a base URL) replaces the ``OTEL_EXPORTER_OTLP_*ENDPOINT`` variables."""
    import importlib

    name = _exporter_name(signal)
    if name == "none":
        return None
    console_module, console_names, otlp_module, otlp_class, path = _EXPORTERS[signal]
    if name == "console":
        module = importlib.import_module(console_module)
        # The SDK renamed some console exporters; take the newest name it has.
        found = next(n for n in console_names if hasattr(module, n))
        return getattr(module, found)()
    if name != "otlp":
        raise LivescoreError(f"OTEL_{signal}_EXPORTER={name!r}: use otlp, console or none")
    if _protocol(signal) == "grpc":
        try:
            module = importlib.import_module(
                f"opentelemetry.exporter.otlp.proto.grpc.{otlp_module}"
            )
        except ImportError:
            raise LivescoreError(
                "OTLP over gRPC needs opentelemetry-exporter-otlp-proto-grpc installed"
            ) from None
        return getattr(module, otlp_class)(**({"endpoint": endpoint} if endpoint else {}))
    module = importlib.import_module(f"opentelemetry.exporter.otlp.proto.http.{otlp_module}")
    url = endpoint.rstrip("/") + path if endpoint else None
    return getattr(module, otlp_class)(**({"endpoint": url} if url else {}))


def configure_from_env(
    worker_id: str | None = None,
    *,
    events: bool = True,
    endpoint: str | None = None,
    metric_readers: Sequence[Any] = (),
) -> TelemetrySetup:
    """Install SDK tracer, logger and meter providers from ``OTEL_*`` variables, unless the
    application (the scorers module) already installed its own.

    Args:
        worker_id: The ``service.instance.id`` of the resource (a random one by default).
        events: Install a logger provider for the ``gen_ai.evaluation.result`` events
            (``False`` when the worker emits spans only: then nothing is sent to a logs
            endpoint).
        endpoint: An OTLP/HTTP base URL for all three signals (``livescore worker
            --otlp-endpoint``), in place of the ``OTEL_EXPORTER_OTLP_*ENDPOINT`` variables.
        metric_readers: Readers for the meter provider besides the exporter's (``livescore
            worker --metrics-port``'s Prometheus reader). An SDK meter provider takes its
            readers when it is made, so one the application installed cannot take them:
            that is an error.
    """
    from opentelemetry import _logs, metrics, trace

    setup = TelemetrySetup()
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return setup
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import SERVICE_INSTANCE_ID, SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider

    given = os.environ.get("OTEL_RESOURCE_ATTRIBUTES", "")
    defaults: dict[str, str] = {}
    if not os.environ.get("OTEL_SERVICE_NAME") and f"{SERVICE_NAME}=" not in given:
        defaults[SERVICE_NAME] = "livescore-worker"
    if f"{SERVICE_INSTANCE_ID}=" not in given:
        defaults[SERVICE_INSTANCE_ID] = worker_id or uuid.uuid4().hex
    resource = Resource.create(defaults)

    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        tracer_provider = TracerProvider(resource=resource)
        span_exporter = _exporter("TRACES", endpoint)
        if span_exporter is not None:
            held = held_span_processor(span_exporter)
            tracer_provider.add_span_processor(held)
            setup.held = held
        trace.set_tracer_provider(tracer_provider)
        setup.tracer_provider = tracer_provider
    if events and not isinstance(_logs.get_logger_provider(), LoggerProvider):
        logger_provider = LoggerProvider(resource=resource)
        log_exporter = _exporter("LOGS", endpoint)
        if log_exporter is not None:
            # Batched; the worker's commit force-flushes it before marking its pairs done.
            logger_provider.add_log_record_processor(BatchLogRecordProcessor(log_exporter))
        _logs.set_logger_provider(logger_provider)
        setup.logger_provider = logger_provider
    if not isinstance(metrics.get_meter_provider(), MeterProvider):
        metric_exporter = _exporter("METRICS", endpoint)
        readers = [PeriodicExportingMetricReader(metric_exporter)] if metric_exporter else []
        readers.extend(metric_readers)
        meter_provider = MeterProvider(resource=resource, metric_readers=readers)
        metrics.set_meter_provider(meter_provider)
        setup.meter_provider = meter_provider
    elif metric_readers:
        raise LivescoreError(
            "the application installed its own meter provider, which takes no more metric "
            "readers: give it a PrometheusMetricReader instead of --metrics-port"
        )
    return setup
