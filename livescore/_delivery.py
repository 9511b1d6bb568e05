"""What reached an OTLP endpoint, said in one line; the OpenTelemetry SDK's log noise kept off.

The SDK's OTLP exporter never raises: it logs each retry ("Transient error … retrying in
0.92s") and returns a failure, so a command that sends spans to a dead endpoint would
print a page of raw exporter lines and still claim success. The commands wrap each
exporter in a :class:`SpanDelivery` (counts what was and was not delivered) and hold the
SDK's log records in a :class:`SdkLogCapture` while they run, then say in one line what was
not delivered and why (``connection refused``, ``HTTP 404``, ``timed out``).

No OpenTelemetry SDK import here: the exporters are duck-typed (``export``,
``force_flush``, ``shutdown``), so importing this module stays light.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Sequence
from types import TracebackType
from typing import Any

__all__ = ("SdkLogCapture", "SpanDelivery", "failure_reason")

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

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
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


class SpanDelivery:
    """A span exporter wrapped to count the spans it delivered and failed to deliver.

    Args:
        exporter: The real exporter (an ``OTLPSpanExporter``).
        url: Where it sends (for the report line).

    Example:
        >>> class Refusing:
        ...     def export(self, spans): return "FAILURE"
        ...     def shutdown(self): pass
        ...     def force_flush(self, timeout_millis=30000): return True
        >>> delivery = SpanDelivery(Refusing(), "http://127.0.0.1:1/v1/traces")
        >>> _ = delivery.export([object(), object()])
        >>> delivery.summary([]), delivery.complete
        ('2 of 2 span(s) not delivered to http://127.0.0.1:1/v1/traces', False)
    """

    def __init__(self, exporter: Any, url: str) -> None:
        self.exporter = exporter
        self.url = url
        self.delivered = 0
        self.failed = 0
        self._lock = threading.Lock()
        self._deadline: float | None = None

    def give_up_after(self, seconds: float) -> None:
        """Fail (and count) every export that starts more than ``seconds`` from now.

        For the end of a command: a dead endpoint then costs one exporter timeout, not
        one per batch still queued.
        """
        self._deadline = time.monotonic() + max(0.0, seconds)

    def export(self, spans: Sequence[Any]) -> Any:
        """Export through the wrapped exporter, counting the outcome."""
        if self._deadline is not None and time.monotonic() > self._deadline:
            from opentelemetry.sdk.trace.export import SpanExportResult

            with self._lock:
                self.failed += len(spans)
            return SpanExportResult.FAILURE
        try:
            result = self.exporter.export(spans)
        except Exception:
            with self._lock:
                self.failed += len(spans)
            raise
        ok = getattr(result, "name", result) == "SUCCESS"
        with self._lock:
            if ok:
                self.delivered += len(spans)
            else:
                self.failed += len(spans)
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
        """Whether every span given to it was delivered."""
        return self.failed == 0

    def summary(self, messages: Sequence[str]) -> str:
        """One line: how many spans were (not) delivered, and why (from ``messages``)."""
        total = self.delivered + self.failed
        if self.failed == 0:
            return f"{total} span(s) sent to {self.url}"
        reason = failure_reason(messages)
        return f"{self.failed} of {total} span(s) not delivered to {self.url}" + (
            f" ({reason})" if reason else ""
        )
