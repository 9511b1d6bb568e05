"""``livescore worker``: score the jobs agents publish to a broker, on this machine."""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

from livescore.cli._common import EXIT_OK, UsageError, make_console, positive_float, positive_int
from livescore.cli._cost import (
    add_judge_budget_arguments,
    apply_judge_prices,
    attach_budget,
    judge_budget_from_args,
)

__all__ = ("add_worker_parser", "load_attribute", "run_worker_command")


def add_worker_parser(sub: Any) -> None:
    """Add the ``worker`` sub-command to ``sub`` (the parser's sub-parsers)."""
    p = sub.add_parser(
        "worker",
        help="score the runs agents publish to a broker (a worker of the scoring fleet)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Consume the scoring jobs that agents publish with broker=URL and score them\n"
            "with the scorers of MODULE:ATTR (a list of scorers, or a function returning\n"
            "one; the same list the agents use). Each score becomes an OpenTelemetry span,\n"
            "a child of the run's span, and a gen_ai.evaluation.result event parented to it\n"
            "(--emit), exported as the OTEL_* variables say (OTLP over HTTP to\n"
            "OTEL_EXPORTER_OTLP_ENDPOINT by default) or to --otlp-endpoint. Start as many\n"
            "workers, on as many machines, as the judge allows; SIGTERM stops one gracefully."
        ),
        epilog=(
            "example: livescore worker myapp.scoring:scorers --broker redis://host:6379/0 \\\n"
            "  --scorer-concurrency 64 --fleet-judge-rpm 3000 --judge-budget 20/day"
        ),
    )
    p.add_argument("scorers", metavar="MODULE:ATTR", help="where the scorers are")
    p.add_argument(
        "--broker",
        metavar="URL",
        default=os.environ.get("LIVESCORE_BROKER"),
        help="the broker's Redis URL (default: $LIVESCORE_BROKER)",
    )
    p.add_argument(
        "--scorer-concurrency",
        type=positive_int,
        default=16,
        metavar="N",
        help="scores in flight at once per scorer in this process (default: 16); the worker "
        "holds up to twice as many jobs",
    )
    p.add_argument("--queue", default="livescore", help="the queue to consume (default: livescore)")
    p.add_argument(
        "--sinks",
        metavar="MODULE:ATTR",
        help="score sinks besides OpenTelemetry (default: a 'sinks' attribute of the "
        "scorers' module, if it has one)",
    )
    export = p.add_argument_group("export")
    export.add_argument(
        "--otlp-endpoint",
        metavar="URL",
        help="send the score spans, events and metrics to this OTLP/HTTP endpoint "
        "(/v1/traces, /v1/logs and /v1/metrics are added; default: as the OTEL_* "
        "variables say)",
    )
    from livescore.cli._export import add_emit_arguments

    add_emit_arguments(export)
    limits = p.add_argument_group("judge limits shared by every worker on this broker")
    limits.add_argument(
        "--fleet-judge-rpm",
        type=positive_float,
        metavar="N",
        help="judge requests per minute, all workers together",
    )
    limits.add_argument(
        "--fleet-judge-concurrency",
        type=positive_int,
        metavar="N",
        help="judge requests in flight, all workers together",
    )
    add_judge_budget_arguments(limits)
    reliability = p.add_argument_group("reliability")
    reliability.add_argument(
        "--drain-timeout",
        type=positive_float,
        default=30.0,
        metavar="SECONDS",
        help="on SIGTERM, time for the jobs in flight to finish; the rest go back to the "
        "queue (default: 30)",
    )
    reliability.add_argument(
        "--heartbeat-timeout",
        type=positive_float,
        default=60.0,
        metavar="SECONDS",
        help="silence after which a worker counts as dead and its jobs are delivered "
        "again (default: 60)",
    )
    reliability.add_argument(
        "--max-deliveries",
        type=positive_int,
        default=3,
        metavar="N",
        help="deliveries of a job that keeps killing its worker before it fails as "
        "poisoned_job (default: 3)",
    )
    reliability.add_argument(
        "--dedupe-ttl",
        type=positive_float,
        default=21_600.0,
        metavar="SECONDS",
        help="how long a job is remembered, so a duplicate delivery is not scored twice "
        "(default: 21600)",
    )
    p.add_argument(
        "--log-level", default="INFO", choices=("DEBUG", "INFO", "WARNING", "ERROR"), help=""
    )
    p.set_defaults(handler=run_worker_command)


def load_attribute(spec: str, option: str) -> tuple[Any, Any]:
    """Import ``module:attr`` (the current directory importable); ``(module, value)``."""
    module_name, sep, attr_path = spec.partition(":")
    if not sep or not module_name or not attr_path:
        raise UsageError(f"{option} must look like 'module:attribute', not {spec!r}")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise UsageError(f"{option}: cannot import {module_name!r}: {exc}") from exc
    value: Any = module
    for part in attr_path.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            raise UsageError(f"{option}: {module_name!r} has no attribute {attr_path!r}") from None
    return module, value


def _as_list(value: Any, what: str, option: str) -> list[Any]:
    if callable(value) and not isinstance(value, Sequence):
        from livescore.live import ScorerConfig
        from livescore.scoring import Scorer

        if not isinstance(value, Scorer | ScorerConfig):
            value = value()
    if not isinstance(value, Sequence) or isinstance(value, str):
        value = [value]
    items = list(value)
    if not items and what == "scorers":
        raise UsageError(f"{option}: the list of scorers is empty")
    return items


def run_worker_command(args: argparse.Namespace) -> int:
    """Run ``livescore worker`` until SIGTERM or Ctrl-C; returns the exit code."""
    err = make_console(stderr=True)
    if not args.broker:
        raise UsageError("--broker URL is required (or set LIVESCORE_BROKER)")
    try:
        import dramatiq  # noqa: F401
        import redis  # noqa: F401
    except ImportError:
        raise UsageError(
            "livescore worker needs the fleet extra: pip install 'livescore-ai[fleet]'"
        ) from None
    apply_judge_prices(args.judge_prices)  # before the scorers' module builds its judges
    module, value = load_attribute(args.scorers, "MODULE:ATTR")
    logging.basicConfig(
        level=getattr(logging, args.log_level),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    scorers = _as_list(value, "scorers", "MODULE:ATTR")
    if args.sinks:
        _, sink_value = load_attribute(args.sinks, "--sinks")
        sinks = _as_list(sink_value, "sinks", "--sinks")
    else:
        sinks = _as_list(getattr(module, "sinks", None) or [], "sinks", "sinks")

    from livescore._emit import DEFAULT_EMIT
    from livescore._redaction import redact_url
    from livescore.cli._export import traces_url
    from livescore.fleet import FleetWorker, configure_from_env
    from livescore.otel import OTelEmitter

    endpoint = None
    if args.otlp_endpoint:
        endpoint = traces_url(args.otlp_endpoint).removesuffix("/v1/traces")
    signals = args.emit or DEFAULT_EMIT

    budget = judge_budget_from_args(args, args.broker)
    if budget is not None:
        judges = [getattr(getattr(item, "scorer", item), "judge", None) for item in scorers]
        attach_budget(judges, budget, "--judge-budget")

    try:
        worker = FleetWorker(
            scorers,
            broker=args.broker,
            # On the global providers, which configure_from_env installs below.
            emitter=OTelEmitter(emit=signals, semconv_proposals=args.semconv_proposals),
            concurrency=args.scorer_concurrency,
            queue=args.queue,
            sinks=sinks,
            judge_rpm=args.fleet_judge_rpm,
            judge_concurrency=args.fleet_judge_concurrency,
            heartbeat_timeout=args.heartbeat_timeout,
            drain_timeout=args.drain_timeout,
            max_deliveries=args.max_deliveries,
            dedupe_ttl=args.dedupe_ttl,
        )
    except (TypeError, ValueError) as exc:
        raise UsageError(str(exc)) from exc
    telemetry = configure_from_env(worker.worker_id, events="events" in signals, endpoint=endpoint)
    worker.span_hold = telemetry.held

    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    err.print(
        f"livescore worker {worker.worker_id} (pid {os.getpid()}): scoring "
        f"{', '.join(worker.scorers)} from queue {args.queue!r} at "
        f"{redact_url(args.broker)}, scorer concurrency {args.scorer_concurrency}"
        + (f"; {budget.describe()} shared by the fleet" if budget is not None else ""),
        soft_wrap=True,
    )
    try:
        worker.run(stop)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        telemetry.shutdown()
    s = worker.stats
    err.print(
        f"livescore worker {worker.worker_id} stopped: {s.jobs} job(s); scored {s.scored}, "
        f"failed {s.failed}, skipped {s.skipped}, dropped {s.dropped}; duplicates skipped "
        f"{s.duplicates}; handed back to the queue {s.requeued}; scoring-loop CPU "
        f"{s.loop_cpu_s:.3f} s"
        + (
            f"; judge budget: {budget.stats.admitted} admitted, {budget.stats.exhausted} "
            f"skipped (budget_exhausted), ${budget.stats.settled_usd:.6f} spent here"
            if budget is not None
            else ""
        ),
        soft_wrap=True,
    )
    return EXIT_OK
