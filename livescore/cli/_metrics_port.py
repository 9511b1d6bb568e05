"""The telemetry options ``worker`` and ``collect`` share, and ``--metrics-port``: the metrics
for Prometheus to scrape, from OpenTelemetry's Prometheus exporter on a registry of its own (not
the process-wide default: the command also runs inside other programs)."""

from __future__ import annotations

import argparse
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from livescore._version import install_hint
from livescore.cli._common import UsageError
from livescore.cli._export import add_emit_arguments

__all__ = (
    "MetricsEndpoint",
    "add_telemetry_arguments",
    "metrics_address",
    "start_metrics",
    "start_telemetry",
)

T = TypeVar("T")

METRICS_PORT_HELP = (
    "serve the metrics for Prometheus to scrape at http://HOST:PORT/metrics (OpenTelemetry's "
    "Prometheus exporter; PORT alone listens on every interface; 9464 is the usual port)"
)


def metrics_address(text: str) -> tuple[str, int]:
    """An ``argparse`` type for ``--metrics-port``: ``PORT`` or ``HOST:PORT``.

    Example:
        >>> metrics_address("9464"), metrics_address("127.0.0.1:9464")
        (('0.0.0.0', 9464), ('127.0.0.1', 9464))
    """
    host, sep, port = text.rpartition(":")
    if not sep:
        host = "0.0.0.0"
    host = host.strip("[]")
    try:
        number = int(port)
    except ValueError:
        number = -1
    if not host or not 0 <= number <= 65535:
        raise argparse.ArgumentTypeError(f"expected PORT or HOST:PORT, not {text!r}")
    return host, number


def add_telemetry_arguments(group: Any, *, otlp_endpoint_help: str) -> None:
    """Add ``--otlp-endpoint``, ``--emit``, ``--semconv-proposals`` and ``--metrics-port``."""
    group.add_argument("--otlp-endpoint", metavar="URL", help=otlp_endpoint_help)
    add_emit_arguments(group)
    group.add_argument(
        "--metrics-port", metavar="[HOST:]PORT", type=metrics_address, help=METRICS_PORT_HELP
    )


@dataclass
class MetricsEndpoint:
    """A Prometheus endpoint: the metric reader to give a meter provider, and its server."""

    reader: Any
    server: Any
    host: str
    port: int

    @property
    def url(self) -> str:
        """Where Prometheus scrapes."""
        host = "127.0.0.1" if self.host == "0.0.0.0" else self.host
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.port}/metrics"

    def close(self) -> None:
        """Stop serving (the reader goes with its meter provider's shutdown)."""
        self.server.shutdown()
        self.server.server_close()


def start_metrics(address: tuple[str, int], option: str = "--metrics-port") -> MetricsEndpoint:
    """Serve a new Prometheus metric reader at ``address``; one-line usage errors for a
    missing package or a port that cannot be bound."""
    if importlib.util.find_spec("opentelemetry.exporter.prometheus") is None:
        raise UsageError(
            f"{option} needs OpenTelemetry's Prometheus exporter: {install_hint('prometheus')}"
        )
    from opentelemetry.exporter.prometheus import PrometheusMetricReader
    from prometheus_client import CollectorRegistry, start_http_server

    registry = CollectorRegistry()
    host, port = address
    try:
        server, _thread = start_http_server(port, addr=host, registry=registry)
    except OSError as exc:
        raise UsageError(f"{option}: cannot listen on {host}:{port}: {exc.strerror}") from None
    # The exporter translates the names and units (livescore.judge.latency in s becomes
    # livescore_judge_latency_seconds); its target_info carries the resource.
    reader = PrometheusMetricReader(registry=registry)
    return MetricsEndpoint(reader, server, host, int(server.server_address[1]))


def start_telemetry(
    address: tuple[str, int] | None, start: Callable[[list[Any]], T]
) -> tuple[T, MetricsEndpoint | None]:
    """``start(metric_readers)``, given the reader of the endpoint ``--metrics-port``
    serves (from here; none when ``address`` is None), and that endpoint; closed again when
    ``start`` raises."""
    endpoint = start_metrics(address) if address is not None else None
    try:
        return start([endpoint.reader] if endpoint is not None else []), endpoint
    except BaseException:
        if endpoint is not None:
            endpoint.close()
        raise
