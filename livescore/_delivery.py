"""What reached an OTLP endpoint, said in one line; the OpenTelemetry SDK's log noise kept off.

The SDK's OTLP exporters never raise: they log each retry ("Transient error … retrying in
0.92s") and return a failure, so a command that sends spans or events to a dead endpoint
would print a page of raw exporter lines and still claim success. The commands wrap each
exporter in a :class:`Delivery` (counts what was and was not delivered: spans to
``/v1/traces``, the scores' events to ``/v1/logs``), built by :func:`otlp_span_deliveries`
and :func:`otlp_event_deliveries`, and hold the SDK's log records in a
:class:`SdkLogCapture` while they run, then say in one line per endpoint what was not
delivered and why (``connection refused``, ``HTTP 404``, ``timed out``).

The exporters are duck-typed (``export``, ``force_flush``, ``shutdown``); the SDK is
imported only by the two builders, so importing this module stays light.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

__all__ = (
    "Delivery",
    "SdkLogCapture",
    "failure_reason",
    "otlp_event_deliveries",
    "otlp_logs_url",
    "otlp_span_deliveries",
    "otlp_traces_url",
)

_SDK_LOGGER = "opentelemetry"
_MAX_KEPT = 50


class SdkLogCapture(logging.Handler):
    """Holds the OpenTelemetry SDK's log records (logger ``opentelemetry``) for a while.

    While the ``with`` block runs, the records go here instead of to the terminal; the
    logger is restored at exit. :attr:`messages` keeps the first few warnings and errors
    (their reason feeds :func:`failure_reason`).

    Example:
        >>> import logging
        >>> with SdkLogCapture() as capture:
        ...     logging.getLogger("opentelemetry.x").warning("Transient error: refused")
        >>> capture.messages
        ['Transient error: refused']
    """

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []
        self._logger = logging.getLogger(_SDK_LOGGER)
        self._propagate = True
        self._entered = False

    def emit(self, record: logging.LogRecord) -> None:
        if len(self.messages) < _MAX_KEPT:
            try:
                self.messages.append(record.getMessage())
            except Exception:  # a record whose arguments do not format: keep its template
                self.messages.append(str(record.msg))

    def __enter__(self) -> SdkLogCapture:
        if not self._entered:
            self._entered = True
            self._propagate = self._logger.propagate
            self._logger.addHandler(self)
            self._logger.propagate = False
        return self

    def __exit__(self, *exc: object) -> None:
        if self._entered:  # an exit without an entry (or a second one) changes nothing
            self._entered = False
            self._logger.removeHandler(self)
            self._logger.propagate = self._propagate


_REASONS = (
    (re.compile(r"connection refused|errno 111\b", re.I), "connection refused"),
    (
        re.compile(r"name or service not known|nodename nor servname|getaddrinfo", re.I),
        "unknown host",
    ),
    (re.compile(r"timed? ?out|timeout", re.I), "timed out"),
    (
        re.compile(r"connection (?:reset|aborted)|remote end closed|broken pipe", re.I),
        "connection dropped",
    ),
)
_HTTP_CODE = re.compile(r"\bcode: (\d{3})\b")


def otlp_traces_url(endpoint: str, option: str = "--otlp-endpoint") -> str:
    """The OTLP/HTTP traces URL for ``endpoint`` (``/v1/traces`` added to a bare host).

    Raises:
        ValueError: ``endpoint`` is not an http(s) URL (said of ``option``).
    """
    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"{option} must be an http(s) URL, not {endpoint!r}")
    if parts.path in ("", "/"):
        return endpoint.rstrip("/") + "/v1/traces"
    return endpoint


def otlp_logs_url(traces_url: str) -> str:
    """The OTLP/HTTP logs URL beside ``traces_url`` (where the events go)."""
    if traces_url.endswith("/v1/traces"):
        return traces_url.removesuffix("/v1/traces") + "/v1/logs"
    parts = urlsplit(traces_url)
    return f"{parts.scheme}://{parts.netloc}/v1/logs"


def failure_reason(messages: Sequence[str]) -> str | None:
    """A short reason for failed exports, read from the exporter's log messages.

    Example:
        >>> failure_reason(["Failed to export spans batch code: 404, reason: Not Found"])
        'HTTP 404'
        >>> failure_reason(["Transient error [Errno 111] Connection refused encountered"])
        'connection refused'
    """
    for message in messages:
        found = _HTTP_CODE.search(message)
        if found:
            return f"HTTP {found.group(1)}"
    for message in messages:
        for pattern, reason in _REASONS:
            if pattern.search(message):
                return reason
    if not messages:
        return None
    first = " ".join(messages[0].split())
    return first if len(first) <= 80 else first[:79] + "…"


class Delivery:
    """An OTLP exporter wrapped to count the items it delivered and failed to deliver.

    Args:
        exporter: The real exporter (an ``OTLPSpanExporter`` or an ``OTLPLogExporter``).
        url: Where it sends (for the report line).
        what: What it exports, for the report line: ``"span"`` or ``"event"``.
        failure: The exporter's failure result, returned for an export given up on
            (:meth:`give_up_after`).
        hints: What to do, said after a reason (``{"HTTP 404": "…"}``).

    Example:
        >>> class Refusing:
        ...     def export(self, spans): return "FAILURE"
        ...     def shutdown(self): pass
        ...     def force_flush(self, timeout_millis=30000): return True
        >>> delivery = Delivery(Refusing(), "http://127.0.0.1:1/v1/traces", "span", "FAILURE")
        >>> _ = delivery.export([object(), object()])
        >>> delivery.summary([]), delivery.complete
        ('2 of 2 span(s) not delivered to http://127.0.0.1:1/v1/traces', False)
    """

    def __init__(
        self,
        exporter: Any,
        url: str,
        what: str,
        failure: Any,
        hints: Mapping[str, str] | None = None,
    ) -> None:
        self.exporter = exporter
        self.url = url
        self.what = what
        self.hints = dict(hints or {})
        self.delivered = 0
        self.failed = 0
        self._failure = failure
        self._lock = threading.Lock()
        self._deadline: float | None = None

    def give_up_after(self, seconds: float) -> None:
        """Fail (and count) every export that starts more than ``seconds`` from now.

        For the end of a command: a dead endpoint then costs one exporter timeout, not
        one per batch still queued.
        """
        self._deadline = time.monotonic() + max(0.0, seconds)

    def export(self, items: Sequence[Any]) -> Any:
        """Export through the wrapped exporter, counting the outcome."""
        if self._deadline is not None and time.monotonic() > self._deadline:
            with self._lock:
                self.failed += len(items)
            return self._failure
        try:
            result = self.exporter.export(items)
        except Exception:
            with self._lock:
                self.failed += len(items)
            raise
        ok = getattr(result, "name", result) == "SUCCESS"
        with self._lock:
            if ok:
                self.delivered += len(items)
            else:
                self.failed += len(items)
        return result

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """The wrapped exporter's ``force_flush``."""
        flush = getattr(self.exporter, "force_flush", None)
        return bool(flush(timeout_millis)) if flush is not None else True

    def shutdown(self) -> None:
        """The wrapped exporter's ``shutdown``."""
        self.exporter.shutdown()

    @property
    def complete(self) -> bool:
        """Whether every item given to it was delivered."""
        return self.failed == 0

    def summary(self, messages: Sequence[str]) -> str:
        """One line: how many items were (not) delivered, and why (from ``messages``)."""
        total = self.delivered + self.failed
        if self.failed == 0:
            return f"{total} {self.what}(s) sent to {self.url}"
        reason = failure_reason(messages)
        hint = self.hints.get(reason or "")
        why = f"{reason}: {hint}" if reason and hint else reason
        return f"{self.failed} of {total} {self.what}(s) not delivered to {self.url}" + (
            f" ({why})" if why else ""
        )


# Traces-only backends (Jaeger) answer /v1/logs with 404.
_NO_LOGS = {"HTTP 404": "the endpoint takes no logs (Jaeger takes none); --emit spans sends none"}


def otlp_span_deliveries(provider: Any, urls: Sequence[str]) -> list[Delivery]:
    """An OTLP/HTTP span exporter per traces URL on ``provider`` (an SDK
    ``TracerProvider``), batched, each counted by its :class:`Delivery`."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExportResult

    deliveries = []
    for url in urls:
        delivery = Delivery(OTLPSpanExporter(endpoint=url), url, "span", SpanExportResult.FAILURE)
        deliveries.append(delivery)
        provider.add_span_processor(BatchSpanProcessor(delivery))  # type: ignore[arg-type]
    return deliveries


def otlp_event_deliveries(resource: Any, urls: Sequence[str]) -> tuple[Any, list[Delivery]]:
    """An SDK ``LoggerProvider`` (of ``resource``) that sends its log records, the scores'
    ``gen_ai.evaluation.result`` events, to each OTLP/HTTP logs URL, batched, each counted
    by its :class:`Delivery`: the command's own provider, not the global one."""
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import BatchLogRecordProcessor, LogExportResult

    provider = LoggerProvider(resource=resource)
    deliveries = []
    for url in urls:
        exporter = OTLPLogExporter(endpoint=url)
        delivery = Delivery(exporter, url, "event", LogExportResult.FAILURE, _NO_LOGS)
        deliveries.append(delivery)
        provider.add_log_record_processor(BatchLogRecordProcessor(delivery))  # type: ignore[arg-type]
    return provider, deliveries
