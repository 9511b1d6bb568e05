"""``livescore eval``'s export options (spans and events over OTLP/HTTP, scores into
dashboards, what was not delivered said in one line per destination), and ``--emit`` /
``--semconv-proposals``, which every command that emits scores shares."""

from __future__ import annotations

import argparse
import importlib.util
import socket
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from livescore._delivery import (
    Delivery,
    SdkLogCapture,
    otlp_event_deliveries,
    otlp_logs_url,
    otlp_span_deliveries,
    otlp_traces_url,
)
from livescore._version import install_hint
from livescore.cli._common import UsageError

if TYPE_CHECKING:
    from rich.console import Console

    from livescore._emit import EmitSignal
    from livescore.sinks import BatchingSink

__all__ = (
    "SINK_RETRY_DEADLINE_S",
    "Export",
    "add_emit_arguments",
    "add_export_arguments",
    "emit_signals",
    "logs_url",
    "traces_url",
)
SINK_RETRY_DEADLINE_S = 10.0

CONNECT_TIMEOUT_S = 5.0
"""How long the check before scoring waits for a destination to accept a connection."""
"""Seconds of retries the command gives a dashboard score (its span is exported first, so
one the dashboard still lacks after this is not coming)."""

EMIT_HELP = (
    "what each score becomes besides its metrics: spans (an evaluation span under the run's "
    "span: Jaeger, Tempo, Phoenix, Langfuse), events (a gen_ai.evaluation.result log record "
    "parented to the run's span, as the GenAI semantic conventions define it: a logs "
    "pipeline) or spans,events (the default)"
)
PROPOSALS_HELP = (
    "also set the attributes of open GenAI convention proposals: "
    "gen_ai.evaluation.evaluator.id, .version and .type (semantic-conventions-genai PR "
    "#359) and gen_ai.evaluation.target (the agent's name, as pydantic-evals emits it)"
)


def emit_signals(text: str) -> tuple[EmitSignal, ...]:
    """An ``argparse`` type for ``--emit``: ``spans``, ``events`` or ``spans,events``.

    Example:
        >>> emit_signals("events,spans")
        ('spans', 'events')
    """
    from livescore._emit import parse_emit

    try:
        return parse_emit(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("emit: ")) from None


def add_emit_arguments(group: Any) -> None:
    """Add ``--emit`` and ``--semconv-proposals`` to an argument group."""
    group.add_argument("--emit", metavar="SIGNALS", type=emit_signals, help=EMIT_HELP)
    group.add_argument("--semconv-proposals", action="store_true", help=PROPOSALS_HELP)


def add_export_arguments(group: Any) -> None:
    """Add ``--otlp-endpoint``, ``--phoenix`` and ``--langfuse`` to an argument group."""
    group.add_argument(
        "--otlp-endpoint",
        metavar="URL",
        help="send each item's trace (its run span and score spans) and the scores' "
        "gen_ai.evaluation.result events to this OTLP/HTTP endpoint (/v1/traces and "
        "/v1/logs are added when the URL has no path); spans and events it does not take "
        "are counted, said in one line, and make the command exit 1",
    )
    group.add_argument(
        "--phoenix",
        metavar="URL",
        nargs="?",
        const="",
        help="send the traces to Arize Phoenix at URL and each score as a span annotation "
        "(its score badges); URL defaults to $PHOENIX_COLLECTOR_ENDPOINT, else "
        "http://localhost:6006 ($PHOENIX_API_KEY is sent when set); a score not delivered "
        f"after {SINK_RETRY_DEADLINE_S:g} s of retries is counted as failed (exit 1)",
    )
    group.add_argument(
        "--langfuse",
        action="store_true",
        help="also send each score to Langfuse as a score on the item's trace "
        "($LANGFUSE_PUBLIC_KEY, $LANGFUSE_SECRET_KEY, $LANGFUSE_BASE_URL; send the traces "
        f"there with --otlp-endpoint); a score not delivered after {SINK_RETRY_DEADLINE_S:g} "
        "s of retries is counted as failed (exit 1)",
    )


def traces_url(endpoint: str, option: str = "--otlp-endpoint") -> str:
    """The OTLP/HTTP traces URL for ``endpoint`` (``/v1/traces`` added to a bare host).

    Example:
        >>> traces_url("http://127.0.0.1:6006")
        'http://127.0.0.1:6006/v1/traces'
    """
    try:
        return otlp_traces_url(endpoint, option)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def logs_url(endpoint: str, option: str = "--otlp-endpoint") -> str:
    """The OTLP/HTTP logs URL beside ``endpoint``'s traces URL (where the events go).

    Example:
        >>> logs_url("http://127.0.0.1:4318")
        'http://127.0.0.1:4318/v1/logs'
        >>> logs_url("http://127.0.0.1:4318/otlp/v1/traces")
        'http://127.0.0.1:4318/otlp/v1/logs'
    """
    return otlp_logs_url(traces_url(endpoint, option))


@dataclass
class Export:
    """What the export options set up: a tracer provider (or none), a logger provider for
    the events (or none), the sinks, and what became of the spans and events
    (:attr:`deliveries`) and of the SDK's log lines (:attr:`logs`)."""

    tracer_provider: Any = None
    sinks: list[BatchingSink[Any]] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)
    deliveries: list[Delivery] = field(default_factory=list)
    logs: SdkLogCapture = field(default_factory=SdkLogCapture)
    logger_provider: Any = None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Export:
        """Check the options and build what they name (nothing when none is given).

        The SDK's log lines are held from here until :meth:`close`.

        Raises:
            UsageError: A bad URL, missing Langfuse keys, or no OpenTelemetry SDK.
        """
        from livescore.sinks import LangfuseSink, PhoenixSink

        export = cls()
        if args.otlp_endpoint:
            export.urls.append(traces_url(args.otlp_endpoint))
            check_reachable("--otlp-endpoint", args.otlp_endpoint)
        try:
            if args.phoenix is not None:
                try:
                    phoenix = PhoenixSink(
                        args.phoenix or None, retry_deadline=SINK_RETRY_DEADLINE_S
                    )
                except ValueError as exc:
                    raise UsageError(f"--phoenix: {exc}") from None
                export.sinks.append(phoenix)
                check_reachable("--phoenix", phoenix.endpoint)
                # Phoenix annotates the spans it has: the traces go there too.
                url = traces_url(phoenix.endpoint, "--phoenix")
                if url not in export.urls:
                    export.urls.append(url)
            if args.langfuse:
                try:
                    langfuse = LangfuseSink(retry_deadline=SINK_RETRY_DEADLINE_S)
                except (ImportError, ValueError) as exc:
                    raise UsageError(f"--langfuse: {exc}") from None
                export.sinks.append(langfuse)
                if langfuse.base_url:
                    check_reachable("--langfuse", langfuse.base_url)
            if export.urls:
                export.tracer_provider, export.deliveries = _tracer_provider(export.urls)
                export.logs.__enter__()
            # The events go to --otlp-endpoint only: Phoenix has no logs endpoint.
            if args.otlp_endpoint and "events" in (getattr(args, "emit", None) or ("events",)):
                export.logger_provider, events = otlp_event_deliveries(
                    export.tracer_provider.resource, [logs_url(args.otlp_endpoint)]
                )
                export.deliveries += events
        except UsageError:
            export.close()
            raise
        return export

    def report(self, console: Console) -> bool:
        """One line per destination: what became of the spans and scores it was given.

        Returns:
            Whether everything was delivered (no span and no score failed or dropped).
        """
        from rich.markup import escape

        complete = True
        for delivery in self.deliveries:
            line = escape(delivery.summary(self.logs.messages))
            label = "traces" if delivery.what == "span" else "events"
            if delivery.complete:
                console.print(f"{label}: {line}")
            else:
                complete = False
                console.print(f"[red]{label}:[/red] {line}")
        for sink in self.sinks:
            got = sink.stats()
            if got.failed or got.dropped:
                complete = False
            console.print(
                f"{escape(sink.name)}: sent {got.sent} · failed {got.failed} · skipped "
                f"{got.skipped} · dropped {got.dropped}"
                + (f" ({escape(str(dict(got.failed_by_reason)))})" if got.failed else "")
            )
        return complete

    def close(self, timeout: float = 10.0) -> None:
        """Export what is left within about ``timeout`` seconds, then shut the providers
        and the sinks down.

        Spans and events still queued when the time is up are counted as not delivered.
        """
        for delivery in self.deliveries:
            delivery.give_up_after(timeout)
        if self.tracer_provider is not None:
            self.tracer_provider.shutdown()
        if self.logger_provider is not None:
            self.logger_provider.shutdown()
        for sink in self.sinks:
            sink.shutdown(min(sink.shutdown_timeout, timeout))
        self.logs.__exit__(None, None, None)


def check_reachable(option: str, url: str, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """Refuse to start when nothing accepts a connection at ``url``'s host and port.

    Checked before scoring, as ``--out`` is: a destination that is down would otherwise be
    found only after the judge has been paid, as seconds of retries and "not delivered". A
    connection is all it asks (no request, no credentials); behind a proxy the environment
    names, the proxy carries the traffic and nothing is checked here.

    Raises:
        UsageError: Refused, timed out, or the host name does not resolve.
    """
    parts = urlsplit(url)
    host = parts.hostname
    if not host:
        return  # the URL checks said what is wrong with it
    port = parts.port or (443 if parts.scheme == "https" else 80)
    if urllib.request.getproxies() and not urllib.request.proxy_bypass(host):
        return
    shown = f"{parts.scheme}://{host}:{port}"  # no credentials from the URL
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as exc:
        if isinstance(exc, ConnectionRefusedError):
            reason = "connection refused"
        elif isinstance(exc, TimeoutError):
            reason = f"no answer within {timeout:g} s"
        elif isinstance(exc, socket.gaierror):
            reason = f"cannot resolve {host!r}"
        else:
            reason = exc.strerror or type(exc).__name__
        raise UsageError(
            f"{option}: nothing answers at {shown} ({reason}); start it or leave {option} "
            "out (checked before scoring: nothing was scored)"
        ) from None


def _require_sdk() -> None:
    if importlib.util.find_spec("opentelemetry.sdk") is None or (
        importlib.util.find_spec("opentelemetry.exporter.otlp.proto.http") is None
    ):
        raise UsageError(
            "exporting traces needs the OpenTelemetry SDK and its OTLP exporter: "
            f"{install_hint('sdk')}"
        )


def _tracer_provider(urls: Sequence[str]) -> tuple[Any, list[Delivery]]:
    _require_sdk()
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider

    # Its own provider, not the global one: the command is a guest in whatever process
    # runs it (tests, notebooks).
    provider = TracerProvider(resource=Resource.create({"service.name": "livescore-eval"}))
    return provider, otlp_span_deliveries(provider, urls)
