"""``livescore collect``: an OTLP/HTTP receiver that scores the agent runs it is sent."""

from __future__ import annotations

import argparse
import importlib.util
import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from livescore._version import install_hint
from livescore.cli._calibration import add_calibration_argument, calibrate_scorers
from livescore.cli._collect_output import add_output_arguments, finish_outputs, output_sinks
from livescore.cli._common import (
    EXIT_FAILED,
    EXIT_OK,
    UsageError,
    add_command,
    check_broker_options,
    make_console,
    positive_float,
    positive_int,
)
from livescore.cli._export import logs_url, traces_url
from livescore.cli._interrupt import stopping_on_signals
from livescore.cli._loading import (
    add_scorers_argument,
    add_sinks_argument,
    as_items,
    load_attribute,
    load_sinks,
)
from livescore.cli._metrics_port import add_telemetry_arguments, start_telemetry
from livescore.cli._redact import add_redact_argument, redactor_from_args

if TYPE_CHECKING:
    from livescore._emit import EmitSignal
    from livescore.traces import SpanRecord

__all__ = ("add_collect_parser", "run_collect_command")


_DESCRIPTION = (
    "Serve POST /v1/traces (OTLP/HTTP, protobuf or JSON, gzip accepted) and score\n"
    "every agent run the received spans describe (GenAI semantic conventions,\n"
    "OpenInference, OpenLLMetry, the Vercel AI SDK, Mastra, Langfuse, Logfire) with\n"
    "the scorers of MODULE:ATTR. POST /v1/logs takes the log\n"
    "records that carry the messages where an instrumentation captures content in\n"
    "events (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=EVENT_ONLY): each is\n"
    "joined to its span; records of no span are counted and dropped. Point any\n"
    "OTLP exporter, in any language, or an OpenTelemetry Collector at it. A trace\n"
    "is assembled once it has been quiet for --quiet-period; each score is a span,\n"
    "child of the run's span, and a gen_ai.evaluation.result event parented to it\n"
    "(--emit), exported to --otlp-endpoint (or as the OTEL_EXPORTER_OTLP_* variables\n"
    "say). SIGTERM or Ctrl-C stops it: it answers no more requests, assembles what\n"
    "it holds, scores it within --drain-timeout and says what it left."
)
_EPILOG = (
    "exit codes:\n"
    "  0  stopped, with everything received assembled and scored (or counted)\n"
    "  1  stopped, but the drain deadline left work unscored (the summary says what)\n"
    "  2  usage error: bad option, scorers that cannot be loaded, an address that\n"
    "     cannot be bound, a missing extra or token variable\n\n"
    "example: livescore collect myapp.scoring:scorers --listen 127.0.0.1:4318 \\\n"
    "  --otlp-endpoint http://127.0.0.1:6006"
)


def add_collect_parser(sub: Any) -> None:
    """Add the ``collect`` sub-command to ``sub`` (the parser's sub-parsers)."""
    p = add_command(
        sub,
        "collect",
        help="receive OpenTelemetry traces over OTLP/HTTP and score the agent runs in them",
        description=_DESCRIPTION,
        epilog=_EPILOG,
    )
    add_scorers_argument(p)
    _add_receiver_arguments(p)
    _add_scoring_arguments(p)
    add_output_arguments(p)
    _add_limit_arguments(p.add_argument_group("limits"))
    add_redact_argument(
        p,
        placeholders_in="the score spans, events and sinks hold the placeholders (with "
        "--broker, give it to livescore worker; needs the pii extra)",
    )
    add_calibration_argument(p, extra="with --broker, give it to livescore worker")
    p.add_argument(
        "--log-level", default="WARNING", choices=("DEBUG", "INFO", "WARNING", "ERROR"), help=""
    )
    p.set_defaults(handler=run_collect_command)


def _add_receiver_arguments(p: Any) -> None:
    """Where the spans come in and where they go on: the address, the token, --forward,
    --broker and the export of the scores."""
    p.add_argument(
        "--listen",
        metavar="HOST:PORT",
        default="127.0.0.1:4318",
        help="the address to serve (default: 127.0.0.1:4318; 0.0.0.0:4318 to be reached "
        "from other machines)",
    )
    p.add_argument(
        "--token-env",
        metavar="NAME",
        help="require 'Authorization: Bearer <token>', the token read from $NAME",
    )
    p.add_argument(
        "--forward",
        metavar="URL",
        help="also pass every accepted request on, unchanged, to this OTLP/HTTP endpoint "
        "(/v1/traces is added when the URL has no path; log records go to /v1/logs beside "
        "it)",
    )
    p.add_argument(
        "--broker",
        metavar="URL",
        help="hand the runs to the worker fleet (livescore worker) behind this Redis URL "
        "instead of scoring here",
    )
    add_telemetry_arguments(
        p,
        otlp_endpoint_help="export the score spans, events and metrics to this OTLP/HTTP "
        "endpoint (default: $OTEL_EXPORTER_OTLP_ENDPOINT when set)",
    )


def _add_scoring_arguments(p: Any) -> None:
    """What is scored and where the scores go besides OpenTelemetry."""
    add_sinks_argument(p)
    p.add_argument(
        "--conversation-idle-timeout",
        metavar="SECONDS",
        type=float,
        default=None,
        help="score a conversation (the runs sharing gen_ai.conversation.id or session.id) "
        "once it has been quiet this long (default: 300)",
    )
    p.add_argument(
        "--score-failed-runs",
        action="store_true",
        help="score runs whose span ended in an error too (by default they are counted "
        "as dropped, run_error)",
    )
    p.add_argument(
        "--explain",
        action="store_true",
        help="print, for each trace assembled, the run it gave (each field's span and "
        "attribute, what scorers get) or why none, as 'livescore traces inspect' does",
    )


def _add_limit_arguments(limits: Any) -> None:
    """The bounds on what the receiver holds, and the drain deadline."""
    limits.add_argument(
        "--quiet-period",
        type=positive_float,
        default=5.0,
        metavar="SECONDS",
        help="a trace with no new span for this long is assembled (default: 5)",
    )
    limits.add_argument(
        "--max-body-bytes",
        type=positive_int,
        default=16 * 1024 * 1024,
        metavar="N",
        help="largest request body, after decompression (413 past it; default: 16 MiB)",
    )
    limits.add_argument(
        "--max-memory-mb",
        type=positive_int,
        default=256,
        metavar="N",
        help="spans held in open traces, estimated; oldest traces evicted past it, and "
        "requests answered 429 while full (default: 256)",
    )
    limits.add_argument(
        "--max-traces",
        type=positive_int,
        default=10_000,
        metavar="N",
        help="open traces held at once (default: 10000)",
    )
    limits.add_argument(
        "--max-spans-per-trace",
        type=positive_int,
        default=5_000,
        metavar="N",
        help="spans held for one trace; a longer trace is evicted (default: 5000)",
    )
    limits.add_argument(
        "--max-trace-age",
        type=positive_float,
        default=600.0,
        metavar="SECONDS",
        help="a trace still open this long after its first span is evicted (default: 600)",
    )
    limits.add_argument(
        "--max-queue",
        type=positive_int,
        default=1000,
        metavar="N",
        help="runs waiting to be scored; past it they are dropped (queue_full) and requests "
        "answered 429 (default: 1000)",
    )
    limits.add_argument(
        "--drain-timeout",
        type=positive_float,
        default=30.0,
        metavar="SECONDS",
        help="on SIGTERM, time to assemble and score what is held (default: 30)",
    )


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:4318`` for IPv6) as ``(host, port)``.

    Example:
        >>> parse_listen("127.0.0.1:4318")
        ('127.0.0.1', 4318)
    """
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise UsageError(f"--listen must look like HOST:PORT (127.0.0.1:4318), not {text!r}")
    return host.strip("[]"), int(port)


def _require(module: str, what: str, extra: str) -> None:
    if importlib.util.find_spec(module) is None:
        raise UsageError(f"{what} needs {extra}: {install_hint('collect')}")


@dataclass
class _Telemetry:
    tracer_provider: Any = None
    meter_provider: Any = None
    where: str = ""
    logger_provider: Any = None
    metrics_endpoint: Any = None  # --metrics-port's server, stopped after the providers

    def shutdown(self) -> None:
        try:
            for provider in (self.tracer_provider, self.logger_provider, self.meter_provider):
                if provider is not None:
                    provider.shutdown()
        finally:
            if self.metrics_endpoint is not None:
                self.metrics_endpoint.close()


def _telemetry(
    endpoint: str | None,
    listen: tuple[str, int],
    events: bool = True,
    metric_readers: Sequence[Any] = (),
) -> _Telemetry:
    """Providers for the score spans, events and metrics, or none when nowhere to send
    them; ``metric_readers`` (``--metrics-port``'s) go on the meter provider."""
    env = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or os.environ.get(
        "OTEL_EXPORTER_OTLP_ENDPOINT"
    )
    if endpoint is None and not env:
        where = "not exported (give --otlp-endpoint URL)"
        if not metric_readers:
            return _Telemetry(where=where)
        from opentelemetry.sdk.metrics import MeterProvider as _MeterProvider

        return _Telemetry(
            meter_provider=_MeterProvider(resource=_resource(), metric_readers=[*metric_readers]),
            where=where,
        )
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    if endpoint is not None:
        spans_url = traces_url(endpoint)
        metrics_url = spans_url.rsplit("/v1/traces", 1)[0] + "/v1/metrics"
        span_exporter = OTLPSpanExporter(endpoint=spans_url)
        metric_exporter = OTLPMetricExporter(endpoint=metrics_url)
        log_exporter = OTLPLogExporter(endpoint=logs_url(endpoint))
    else:
        spans_url = str(env)
        span_exporter, metric_exporter = OTLPSpanExporter(), OTLPMetricExporter()
        log_exporter = OTLPLogExporter()  # OTEL_EXPORTER_OTLP_(LOGS_)ENDPOINT
    _refuse_sending_to_itself(spans_url, listen)
    resource = _resource()
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(BatchSpanProcessor(span_exporter))
    meter_provider = MeterProvider(
        resource=resource,
        metric_readers=[PeriodicExportingMetricReader(metric_exporter), *metric_readers],
    )
    logger_provider = None
    # Without a logs endpoint of their own, the exporter's default (127.0.0.1:4318) could
    # be this very receiver: no events then.
    if events and (
        endpoint is not None
        or os.environ.get("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT")
        or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    ):
        logger_provider = LoggerProvider(resource=resource)
        logger_provider.add_log_record_processor(BatchLogRecordProcessor(log_exporter))
    return _Telemetry(tracer_provider, meter_provider, spans_url, logger_provider)


def _resource() -> Any:
    from opentelemetry.sdk.resources import Resource

    return Resource.create(
        {"service.name": os.environ.get("OTEL_SERVICE_NAME", "livescore-collect")}
    )


def _refuse_sending_to_itself(spans_url: str, listen: tuple[str, int]) -> None:
    parts = urlsplit(spans_url)
    if (parts.hostname, parts.port) == listen or (
        parts.port == listen[1] and {parts.hostname, listen[0]} <= {"127.0.0.1", "localhost"}
    ):
        raise UsageError(
            f"the score spans would be sent to this receiver itself ({spans_url}): give "
            "--otlp-endpoint the address of your tracing backend"
        )


def _explainer() -> Callable[[Sequence[SpanRecord]], None]:
    """What ``--explain`` calls with each finished trace: its report, on stdout."""
    from livescore.cli._inspect import print_trace_report
    from livescore.traces import explain_traces

    console = make_console()

    def explain(spans: Sequence[SpanRecord]) -> None:
        for report in explain_traces(spans):
            print_trace_report(console, report)

    return explain


def run_collect_command(args: argparse.Namespace) -> int:
    """Run ``livescore collect`` until SIGTERM or Ctrl-C; returns the exit code."""
    from livescore._emit import DEFAULT_EMIT
    from livescore.collect import OTLPReceiver

    err = make_console(stderr=True)
    listen = parse_listen(args.listen)
    _require("opentelemetry.proto", "decoding OTLP protobuf", "opentelemetry-proto")
    _require("opentelemetry.sdk", "exporting the score spans", "the OpenTelemetry SDK")
    check_broker_options(args)
    token = _token(args.token_env)
    forward = traces_url(args.forward, "--forward") if args.forward else None
    logging.basicConfig(
        level=getattr(logging, args.log_level),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    scorers, sinks = _load_scorers(args, err)
    redact = redactor_from_args(args)
    outputs = output_sinks(args)  # --console, --out (its file opened now: usage errors first)
    signals = args.emit or DEFAULT_EMIT
    telemetry, metrics_endpoint = start_telemetry(
        args.metrics_port,
        lambda readers: _telemetry(
            args.otlp_endpoint, listen, events="events" in signals, metric_readers=readers
        ),
    )
    telemetry.metrics_endpoint = metrics_endpoint
    try:
        limits = _assembly_limits(args)
        dispatcher = _dispatcher(args, scorers, [*sinks, *outputs], redact, telemetry, signals)
    except (TypeError, ValueError) as exc:
        telemetry.shutdown()
        raise UsageError(str(exc)) from exc
    pipeline = _pipeline(args, dispatcher, limits, telemetry)
    receiver = OTLPReceiver(
        pipeline,
        host=listen[0],
        port=listen[1],
        max_body_bytes=args.max_body_bytes,
        token=token,
        forward=forward,
        forward_logs=logs_url(args.forward, "--forward") if args.forward else None,
    )
    try:
        receiver.start()
    except OSError as exc:
        dispatcher.shutdown(0)
        telemetry.shutdown()
        raise UsageError(
            f"--listen {args.listen}: cannot listen there ({exc.strerror or exc})"
        ) from None
    with stopping_on_signals() as stop:
        _say_started(err, args, receiver.url, dispatcher, telemetry, signals, forward)
        while not stop.wait(0.5):
            pass
    return _drain(err, receiver, pipeline, dispatcher, telemetry, args.drain_timeout, outputs)


def _token(variable: str | None) -> str | None:
    """The bearer token ``--token-env`` names (None without it)."""
    if not variable:
        return None
    token = os.environ.get(variable, "")
    if not token.strip():
        raise UsageError(f"--token-env {variable}: ${variable} is not set")
    return token


def _load_scorers(args: argparse.Namespace, err: Any) -> tuple[list[Any], list[Any]]:
    """The scorers (calibrated as ``--calibration`` says) and the sinks; with ``--broker``,
    only the sinks ``--sinks`` names (the workers have theirs)."""
    from rich.markup import escape

    module, value = load_attribute(args.scorers, "MODULE:ATTR")
    scorers = as_items(value, "scorers", "MODULE:ATTR", args.scorers)
    sinks = load_sinks(args.sinks, module) if args.sinks or not args.broker else []
    if args.calibration:
        scorers = calibrate_scorers(scorers, args.calibration, lambda line: err.print(escape(line)))
    return scorers, sinks


def _dispatcher(
    args: argparse.Namespace,
    scorers: list[Any],
    sinks: list[Any],
    redact: Any,
    telemetry: _Telemetry,
    signals: Sequence[EmitSignal],
) -> Any:
    from opentelemetry.trace import NoOpTracerProvider

    from livescore.live import DEFAULT_CONVERSATION_IDLE_TIMEOUT, LiveDispatcher
    from livescore.otel import OTelEmitter

    emitter = OTelEmitter(
        # Not exported: the start-up line says so, so the emitter's warning about scores
        # with no SDK provider would only repeat it.
        tracer_provider=telemetry.tracer_provider or NoOpTracerProvider(),
        meter_provider=telemetry.meter_provider,
        logger_provider=telemetry.logger_provider,
        emit=signals,
        semconv_proposals=args.semconv_proposals,
    )
    idle_timeout = args.conversation_idle_timeout
    return LiveDispatcher(
        scorers,
        emitter=emitter,
        sinks=sinks or None,
        broker=args.broker,
        max_queue=args.max_queue,
        name="livescore-collect",
        register_atexit=False,
        redact=redact,
        conversation_idle_timeout=(
            idle_timeout if idle_timeout is not None else DEFAULT_CONVERSATION_IDLE_TIMEOUT
        ),
    )


def _assembly_limits(args: argparse.Namespace) -> Any:
    from livescore.traces import AssemblyLimits

    return AssemblyLimits(
        max_traces=args.max_traces,
        max_spans_per_trace=args.max_spans_per_trace,
        max_bytes=args.max_memory_mb * 1024 * 1024,
        max_trace_age=args.max_trace_age,
        quiet_period=args.quiet_period,
    )


def _pipeline(args: argparse.Namespace, dispatcher: Any, limits: Any, telemetry: _Telemetry) -> Any:
    from livescore.collect import SpanPipeline

    pipeline = SpanPipeline(
        dispatcher,
        limits,
        finish_on_root=False,
        max_queued_spans=max(10_000, args.max_traces * 10),
        score_failed_runs=args.score_failed_runs,
        name="livescore-collect-spans",
        backlog=lambda: _backlogged(dispatcher),
        on_finish=_explainer() if args.explain else None,
    )
    pipeline.report_metrics(telemetry.meter_provider)  # livescore.collect.partial_traces
    return pipeline


def _say_started(
    err: Any,
    args: argparse.Namespace,
    url: str,
    dispatcher: Any,
    telemetry: _Telemetry,
    signals: Sequence[EmitSignal],
    forward: str | None,
) -> None:
    from rich.markup import escape

    from livescore._redaction import redact_url

    where = f"on the fleet at {redact_url(args.broker)}" if args.broker else "here"
    ids = ", ".join(c.scorer_id for c in dispatcher.scorers)
    metrics = telemetry.metrics_endpoint
    err.print(
        f"livescore collect (pid {os.getpid()}): receiving OTLP traces on "
        f"{escape(url)}/v1/traces (log records on /v1/logs); scoring {escape(ids)} "
        f"{escape(where)}; scores ({escape(','.join(signals))}) {escape(telemetry.where)}"
        + (f"; forwarding to {escape(forward)}" if forward else "")
        + (f"; metrics at {escape(metrics.url)}" if metrics else ""),
        soft_wrap=True,
    )


def _backlogged(dispatcher: Any) -> bool:
    """Whether the dispatcher's queue is (nearly) full: the receiver answers 429 then."""
    stats = dispatcher.stats()
    queued = max((s.queued for s in stats.by_scorer.values()), default=0)
    return bool(queued >= dispatcher.max_queue * 0.9)


def _drain(
    err: Any,
    receiver: Any,
    pipeline: Any,
    dispatcher: Any,
    telemetry: _Telemetry,
    timeout: float,
    outputs: Sequence[Any] = (),
) -> int:
    """Stop receiving, assemble and score what is held within ``timeout``, say what
    became of everything received; the exit code."""
    from rich.markup import escape

    deadline = time.monotonic() + timeout

    def left() -> float:
        return max(deadline - time.monotonic(), 0.0)

    err.print(f"livescore collect: stopping; draining within {timeout:g} s")
    receiver.stop(min(5.0, left()))
    # The pipeline hands its waiting runs over while the dispatcher scores; the last
    # quarter of the deadline is the dispatcher's, to finish what it holds.
    assembled = pipeline.shutdown(left() * 0.75)
    dispatcher.shutdown(left())
    finish_outputs(err, outputs, max(left(), 1.0))  # what --console, --out still hold
    try:
        telemetry.shutdown()
    except Exception as exc:  # an unreachable backend must not hide the summary
        err.print(f"[yellow]the score spans could not all be exported: {escape(str(exc))}[/yellow]")
    r, p, d = receiver.stats(), pipeline.stats(), dispatcher.stats()
    for line in (_received_line(r), _log_records_line(p.assembly), _assembled_line(p)):
        if line:
            err.print(line, soft_wrap=True)
    err.print(
        f"scores: scored {d.scored}, failed {d.failed}, skipped {d.skipped}, dropped "
        f"{d.dropped}{' ' + escape(str(dict(d.dropped_by_reason))) if d.dropped else ''}, "
        f"handed off {d.handed_off}",
        soft_wrap=True,
    )
    if r.forwarded or r.forward_failed or r.forward_dropped:
        err.print(
            f"forwarded: {r.forwarded}, failed {r.forward_failed}, dropped {r.forward_dropped}"
        )
    # What the pipeline gave up at its deadline is counted there, not left in its queue.
    unfinished = p.spans_queued + p.assembly.spans_held + p.runs_waiting
    unfinished += p.spans_dropped_at_shutdown
    shutdown_drops = d.dropped_by_reason.get("shutdown", 0)
    if not assembled or unfinished or shutdown_drops:
        err.print(
            f"[red]left at the drain deadline:[/red] {unfinished} span(s) or run(s) not "
            "assembled or handed over, "
            f"{shutdown_drops} score(s) dropped unscored",
            soft_wrap=True,
        )
        return EXIT_FAILED
    return EXIT_OK


def _received_line(r: Any) -> str:
    """The summary's line on the requests: statuses, spans, refusals, log records."""
    statuses = ", ".join(f"{code}: {n}" for code, n in sorted(r.requests.items())) or "none"
    return (
        f"received: requests {statuses}; spans accepted {r.spans_accepted}, rejected "
        f"{r.spans_rejected}; refused (429) {r.requests.get(429, 0)} request(s)"
        # Most 429s come before the body is read: their spans are not known, only counted
        # where the body had been read.
        + (f" ({r.spans_refused} span(s) read before refusing)" if r.spans_refused else "")
        + (
            f"; connections closed at the cap {r.connections_refused}"
            if r.connections_refused
            else ""
        )
        + (f"; bodies too slow (408) {r.bodies_too_slow}" if r.bodies_too_slow else "")
        + (
            f"; log records accepted {r.log_records_accepted}, of no span "
            f"{r.log_records_dropped}, refused (429) {r.log_records_refused}"
            if r.log_records_accepted or r.log_records_dropped or r.log_records_refused
            else ""
        )
    )


def _log_records_line(a: Any) -> str:
    """The summary's line on the log records joined to spans ("" when none came)."""
    from rich.markup import escape

    if not a.events_received:
        return ""
    return (
        f"log records: joined to their span {a.events_joined}"
        + (f", dropped {escape(str(a.events_dropped))}" if a.events_dropped else "")
        + (f", evicted {a.events_evicted}" if a.events_evicted else "")
    )


def _assembled_line(p: Any) -> str:
    """The summary's line on the traces assembled and the runs they gave."""
    from rich.markup import escape

    a = p.assembly
    evicted = sum(a.traces_evicted.values())
    return (
        f"assembled: traces {a.traces_finished} ({a.traces_without_run} without a run"
        + (
            f", {sum(a.traces_finished_early.values())} finished early for room "
            f"{escape(str(a.traces_finished_early))}"
            if a.traces_finished_early
            else ""
        )
        + (
            f", {a.traces_partial} partial: a parent span never arrived (several receivers "
            "need a trace-id balancer)"
            if a.traces_partial
            else ""
        )
        + f"), evicted {evicted}{' ' + escape(str(a.traces_evicted)) if evicted else ''}; runs "
        f"{a.runs_assembled}: submitted {p.runs_submitted}, not sampled "
        f"{p.runs_not_sampled}, failed runs dropped {p.runs_failed_dropped}"
    )
