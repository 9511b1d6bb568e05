"""``livescore worker``: score the jobs agents publish to a broker, on this machine (its exit
codes and failures: ``livescore worker --help``, docs/fleet-faults.md)."""

from __future__ import annotations

import argparse
import logging
import os
import queue
import sys
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

from livescore._version import install_hint
from livescore.cli._calibration import add_calibration_argument, calibrate_scorers
from livescore.cli._common import (
    EXIT_OK,
    UsageError,
    add_command,
    positive_float,
    positive_int,
)
from livescore.cli._cost import (
    add_judge_budget_arguments,
    apply_judge_prices,
    attach_budget,
    judge_budget_from_args,
)
from livescore.cli._export import traces_url
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

__all__ = (
    "EXIT_BROKER_UNAVAILABLE",
    "EXIT_INTERNAL",
    "EXIT_STARTUP_TIMEOUT",
    "add_worker_parser",
    "run_worker_command",
)

EXIT_BROKER_UNAVAILABLE = 69
"""The broker did not take writes before the start-up deadline (sysexits' EX_UNAVAILABLE)."""
EXIT_INTERNAL = 70
"""An internal error (sysexits' EX_SOFTWARE)."""
EXIT_STARTUP_TIMEOUT = 75
"""Start-up (loading the scorers) did not finish before the deadline (EX_TEMPFAIL)."""

_EXIT_CODES = """exit codes:
  0   stopped by SIGTERM or Ctrl-C, gracefully
  2   usage or configuration error (options, broker URL or credentials, MODULE:ATTR)
  69  the broker did not take writes before --startup-timeout (down, full, read-only)
  70  internal error
  75  start-up did not finish before --startup-timeout (a hanging import or factory)"""


_DESCRIPTION = (
    "Consume the scoring jobs that agents publish with broker=URL and score them\n"
    "with the scorers of MODULE:ATTR (a list of scorers, or a function returning\n"
    "one; the same list the agents use). Each score becomes an OpenTelemetry span,\n"
    "a child of the run's span, and a gen_ai.evaluation.result event parented to it\n"
    "(--emit), exported as the OTEL_* variables say (OTLP over HTTP to\n"
    "OTEL_EXPORTER_OTLP_ENDPOINT by default) or to --otlp-endpoint. Start as many\n"
    "workers, on as many machines, as the judge allows; SIGTERM stops one gracefully.\n\n"
    "Give the broker URL in $LIVESCORE_BROKER (or the variable --broker-env names)\n"
    "when it holds a password: a --broker argument is visible to every user in ps."
)


def add_worker_parser(sub: Any) -> None:
    """Add the ``worker`` sub-command to ``sub`` (the parser's sub-parsers)."""
    p = add_command(
        sub,
        "worker",
        help="score the runs agents publish to a broker (a worker of the scoring fleet)",
        description=_DESCRIPTION,
        epilog=(
            "example: LIVESCORE_BROKER=redis://:secret@host:6379/0 \\\n"
            "  livescore worker myapp.scoring:scorers --scorer-concurrency 64 \\\n"
            "  --fleet-judge-rpm 3000 --judge-budget 20/day\n\n" + _EXIT_CODES
        ),
    )
    add_scorers_argument(p)
    _add_queue_arguments(p)
    add_telemetry_arguments(
        p.add_argument_group("export"),
        otlp_endpoint_help="send the score spans, events and metrics to this OTLP/HTTP "
        "endpoint (/v1/traces, /v1/logs and /v1/metrics are added; default: as the OTEL_* "
        "variables say)",
    )
    _add_fleet_limit_arguments(
        p.add_argument_group("judge limits shared by every worker on this broker")
    )
    _add_reliability_arguments(p.add_argument_group("reliability"))
    add_redact_argument(
        p,
        placeholders_in="the scores this worker emits hold the placeholders (the jobs in "
        "Redis hold the run as published; needs the pii extra)",
    )
    add_calibration_argument(p)
    p.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="more logs: -v every library's INFO (judge requests...), -vv DEBUG",
    )
    p.add_argument(
        "--log-level",
        choices=("DEBUG", "INFO", "WARNING", "ERROR"),
        help="the log level of every logger (overrides -v)",
    )
    p.set_defaults(handler=run_worker_command)


def _add_queue_arguments(p: Any) -> None:
    """The broker, the queue, how many scores at once, the sinks."""
    broker = p.add_mutually_exclusive_group()
    broker.add_argument(
        "--broker",
        metavar="URL",
        help="the broker's Redis URL (default: $LIVESCORE_BROKER); a password here shows in ps",
    )
    broker.add_argument(
        "--broker-env",
        metavar="NAME",
        help="read the broker's URL from the environment variable NAME",
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
    add_sinks_argument(p)


def _add_fleet_limit_arguments(limits: Any) -> None:
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


def _add_reliability_arguments(reliability: Any) -> None:
    """Deadlines and redelivery: what happens when a worker, the broker or the collector
    fails."""
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
        "poisoned_job (default: 3); one more and it is dead-lettered",
    )
    reliability.add_argument(
        "--dedupe-ttl",
        type=positive_float,
        default=21_600.0,
        metavar="SECONDS",
        help="how long a job is remembered, so a duplicate delivery is not scored twice "
        "(default: 21600)",
    )
    reliability.add_argument(
        "--export-deadline",
        type=positive_float,
        default=300.0,
        metavar="SECONDS",
        help="how long a job's spans may keep failing to export (the collector down) "
        "before the job goes back to the queue (default: 300)",
    )
    reliability.add_argument(
        "--startup-timeout",
        type=positive_float,
        default=60.0,
        metavar="SECONDS",
        help="the time to load the scorers and reach a broker that takes writes; past it "
        "the worker exits (69 or 75) (default: 60)",
    )


class _StderrLines:
    """Lines for stderr, written by a thread of their own.

    A stderr nobody reads (a pipe whose reader hangs, a full log collector) blocks the
    thread that writes to it; here that is never a worker's thread: past ``max_lines``
    waiting, lines are dropped, and the count is written once the stream drains.
    """

    def __init__(self, stream: TextIO, max_lines: int = 10_000) -> None:
        self._stream = stream
        self._queue: queue.Queue[str | None] = queue.Queue(max_lines)
        self.dropped = 0
        self._reported = 0
        self._thread = threading.Thread(target=self._run, name="livescore-stderr", daemon=True)
        self._thread.start()

    def write(self, line: str) -> None:
        try:
            self._queue.put_nowait(line)
        except queue.Full:
            self.dropped += 1

    def _run(self) -> None:
        while True:
            line = self._queue.get()
            if line is None:
                return
            try:
                if self.dropped > self._reported:
                    lost, self._reported = self.dropped - self._reported, self.dropped
                    self._stream.write(
                        f"livescore worker: {lost} log line(s) dropped: stderr was full\n"
                    )
                self._stream.write(line + "\n")
                self._stream.flush()
            except (OSError, ValueError):
                pass  # stderr closed: nothing left to tell

    def close(self, timeout: float = 5.0) -> None:
        """Write what is queued, for at most ``timeout`` seconds (stderr may be stuck)."""
        try:
            self._queue.put(None, timeout=timeout)
        except queue.Full:
            return
        self._thread.join(timeout)


class _LinesHandler(logging.Handler):
    def __init__(self, lines: _StderrLines) -> None:
        super().__init__()
        self._lines = lines

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self._lines.write(self.format(record))
        except Exception:
            self.handleError(record)


class _Logging:
    """The worker's logging, set up for the command and undone after it (the command also
    runs inside other programs' processes: tests, notebooks)."""

    def __init__(self, verbose: int, level: str | None) -> None:
        self.lines = _StderrLines(sys.stderr)
        self.verbose = verbose
        root = logging.getLogger()
        self._saved = (root.level, list(root.handlers))
        self._quieted: dict[str, int] = {}
        handler = _LinesHandler(self.lines)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.handlers = [handler]
        if level is not None:
            root.setLevel(getattr(logging, level))
            self._set("livescore", getattr(logging, level))
        elif verbose >= 2:
            root.setLevel(logging.DEBUG)
        elif verbose == 1:
            root.setLevel(logging.INFO)
        else:
            # Quiet: livescore's own warnings (each outage once), other libraries' errors.
            # The OpenTelemetry exporters log every failed attempt; the worker says it once.
            # Dramatiq's own errors about messages (an unknown actor...) carry tracebacks;
            # the worker reports each dead letter in one line.
            root.setLevel(logging.WARNING)
            self._set("opentelemetry", logging.CRITICAL)
            self._set("dramatiq", logging.CRITICAL)
        self._set("livescore", min(logging.INFO, root.level))

    def _set(self, name: str, level: int) -> None:
        logger = logging.getLogger(name)
        self._quieted.setdefault(name, logger.level)
        logger.setLevel(level)

    def say(self, line: str) -> None:
        self.lines.write(line)

    def close(self) -> None:
        self.lines.close()
        root = logging.getLogger()
        root.setLevel(self._saved[0])
        root.handlers = self._saved[1]
        for name, level in self._quieted.items():
            logging.getLogger(name).setLevel(level)


class _Watchdog:
    """Ends the process when start-up does not finish in time: an import or a scorer
    factory that hangs never returns control, so a deadline must come from outside."""

    def __init__(self, seconds: float, log: _Logging) -> None:
        self.seconds = seconds
        self.phase = "loading the scorers"
        self.worker: Any = None
        self.broker = ""
        self._done = threading.Event()
        self._log = log
        self._thread = threading.Thread(target=self._run, name="livescore-startup", daemon=True)
        self._thread.start()

    def done(self) -> None:
        self._done.set()

    def _run(self) -> None:
        if self._done.wait(self.seconds):
            return
        worker = self.worker
        waiting = getattr(worker, "waiting_for", None) if worker is not None else None
        if worker is not None and waiting is None and self.phase == "connecting":
            waiting = "not answering"
        if waiting is not None:
            message = (
                f"error: the broker at {self.broker} did not take writes within "
                f"{self.seconds:g} s ({waiting}); the worker exits"
            )
            code = EXIT_BROKER_UNAVAILABLE
        else:
            message = (
                f"error: start-up did not finish within {self.seconds:g} s: still "
                f"{self.phase} (an import or a scorer factory that never returns?)"
            )
            code = EXIT_STARTUP_TIMEOUT
        self._log.say(message)
        self._log.lines.close(2.0)
        os._exit(code)


def _broker_url(args: argparse.Namespace, log: _Logging) -> str:
    from livescore._redaction import redact_url

    if args.broker_env:
        url = os.environ.get(args.broker_env)
        if not url:
            raise UsageError(
                f"--broker-env {args.broker_env}: that environment variable is not set"
            )
        return url
    if args.broker:
        if redact_url(args.broker) != args.broker:
            log.say(
                "livescore worker: warning: the --broker URL's password is visible to every "
                "user of this machine (ps, /proc); pass it in $LIVESCORE_BROKER or with "
                "--broker-env NAME"
            )
        return str(args.broker)
    url = os.environ.get("LIVESCORE_BROKER")
    if not url:
        raise UsageError("--broker URL is required (or set LIVESCORE_BROKER)")
    return url


def run_worker_command(args: argparse.Namespace) -> int:
    """Run ``livescore worker`` until SIGTERM or Ctrl-C; returns the exit code."""
    log = _Logging(args.verbose, args.log_level)
    watchdog = _Watchdog(args.startup_timeout, log)
    try:
        return _run(args, log, watchdog)
    except (UsageError, KeyboardInterrupt):
        raise
    except Exception as exc:
        if args.verbose or args.log_level == "DEBUG":
            logging.getLogger("livescore.fleet").exception("livescore worker: internal error")
        log.say(
            f"error: internal error: {type(exc).__name__}: {exc} (run with -v for the "
            "traceback; please report it)"
        )
        return EXIT_INTERNAL
    finally:
        watchdog.done()
        log.close()


def _run(args: argparse.Namespace, log: _Logging, watchdog: _Watchdog) -> int:
    from livescore._emit import DEFAULT_EMIT
    from livescore._redaction import redact_url

    broker = _broker_url(args, log)
    _require_fleet_extra()
    watchdog.broker = redact_url(broker)
    scorers, sinks = _load_scorers(args, log, watchdog)
    endpoint = None
    if args.otlp_endpoint:
        endpoint = traces_url(args.otlp_endpoint).removesuffix("/v1/traces")
    signals = args.emit or DEFAULT_EMIT
    if args.redact:
        watchdog.phase = "loading the personal-data redactor"
    redact = redactor_from_args(args)
    budget = judge_budget_from_args(args, broker)
    if budget is not None:
        judges = [getattr(getattr(item, "scorer", item), "judge", None) for item in scorers]
        attach_budget(judges, budget, "--judge-budget")
    worker = _fleet_worker(args, broker, scorers, sinks, signals, redact)
    telemetry, metrics_endpoint = start_telemetry(
        args.metrics_port,
        lambda readers: _configure_telemetry(worker, "events" in signals, endpoint, readers),
    )
    worker.span_hold = telemetry.held
    watchdog.worker = worker
    watchdog.phase = "connecting"
    started = (
        f"livescore worker {worker.worker_id} (pid {os.getpid()}): scoring "
        f"{', '.join(worker.scorers)} from queue {args.queue!r} at "
        f"{redact_url(broker)}, scorer concurrency {args.scorer_concurrency}"
        + (f"; {budget.describe()} shared by the fleet" if budget is not None else "")
        + (f"; metrics at {metrics_endpoint.url}" if metrics_endpoint else "")
    )
    try:
        _serve(worker, log, watchdog, started, redact_url(broker))
    finally:
        telemetry.shutdown()
        if metrics_endpoint is not None:
            metrics_endpoint.close()
    log.say(_stopped_line(worker, budget))
    return EXIT_OK


def _require_fleet_extra() -> None:
    try:
        import dramatiq  # noqa: F401
        import redis  # noqa: F401
    except ImportError:
        raise UsageError(
            f"livescore worker needs the fleet extra: {install_hint('fleet')}"
        ) from None


def _load_scorers(
    args: argparse.Namespace, log: _Logging, watchdog: _Watchdog
) -> tuple[list[Any], list[Any]]:
    """The scorers (calibrated as ``--calibration`` says) and the sinks, each step named
    to the watchdog (a hanging import is said to hang there)."""
    watchdog.phase = f"loading {args.scorers}"
    apply_judge_prices(args.judge_prices)  # before the scorers' module builds its judges
    module, value = load_attribute(args.scorers, "MODULE:ATTR")
    scorers = as_items(value, "scorers", "MODULE:ATTR", args.scorers)
    if args.calibration:
        watchdog.phase = f"loading {args.calibration}"
        scorers = calibrate_scorers(scorers, args.calibration, log.say)
    if args.sinks:
        watchdog.phase = f"loading {args.sinks}"
    return scorers, load_sinks(args.sinks, module)


def _fleet_worker(
    args: argparse.Namespace,
    broker: str,
    scorers: list[Any],
    sinks: list[Any],
    signals: Sequence[EmitSignal],
    redact: Any,
) -> Any:
    from livescore.fleet import FleetWorker

    try:
        return FleetWorker(
            scorers,
            broker=broker,
            # The default emitters, on the global providers configure_from_env installs:
            # their spans are held and fenced by the commit.
            emit=signals,
            semconv_proposals=args.semconv_proposals,
            concurrency=args.scorer_concurrency,
            queue=args.queue,
            sinks=sinks,
            judge_rpm=args.fleet_judge_rpm,
            judge_concurrency=args.fleet_judge_concurrency,
            heartbeat_timeout=args.heartbeat_timeout,
            drain_timeout=args.drain_timeout,
            max_deliveries=args.max_deliveries,
            dedupe_ttl=args.dedupe_ttl,
            export_deadline=args.export_deadline,
            redact=redact,
        )
    except (TypeError, ValueError) as exc:
        raise UsageError(str(exc)) from exc


def _configure_telemetry(
    worker: Any, events: bool, endpoint: str | None, metric_readers: list[Any]
) -> Any:
    from livescore.fleet import configure_from_env

    try:
        return configure_from_env(
            worker.worker_id, events=events, endpoint=endpoint, metric_readers=metric_readers
        )
    except Exception as exc:  # an OTEL_* variable that names what is not installed
        raise UsageError(str(exc)) from exc


def _serve(worker: Any, log: _Logging, watchdog: _Watchdog, started: str, broker: str) -> None:
    """Run ``worker`` until SIGTERM or Ctrl-C; once it is ready (the broker took writes),
    the watchdog lets go and ``started`` is said."""
    import redis

    finished = threading.Event()
    with stopping_on_signals() as stop:

        def ready() -> None:
            while not worker.ready.wait(0.2):
                if finished.is_set():
                    return
            if not stop.is_set():
                watchdog.done()
                log.say(started)

        threading.Thread(target=ready, name="livescore-ready", daemon=True).start()
        try:
            worker.run(stop)
        except redis.AuthenticationError as exc:
            raise UsageError(
                f"the broker at {broker} refused the credentials ({exc}); check the "
                "URL's user and password"
            ) from None
        except redis.RedisError as exc:
            raise UsageError(
                f"the broker at {broker} answered with an error: {type(exc).__name__}: {exc}"
            ) from None
        finally:
            finished.set()
            watchdog.done()


def _stopped_line(worker: Any, budget: Any) -> str:
    s = worker.stats
    # Jobs (deliveries) and scores (a job's scorers, each) apart: a job of two scorers is
    # one job and two scores.
    return (
        f"livescore worker {worker.worker_id} stopped: {s.jobs} job(s) handled, "
        f"{s.requeued} handed back to the queue, {s.dead_letters} dead letter(s); scores: "
        f"scored {s.scored}, failed {s.failed}, skipped {s.skipped}, dropped {s.dropped}, "
        f"duplicates skipped {s.duplicates}, fenced {s.fenced}; scoring-loop CPU "
        f"{s.loop_cpu_s:.3f} s"
        + (
            f"; judge budget: {budget.stats.admitted} admitted, {budget.stats.exhausted} "
            f"skipped (budget_exhausted), ${budget.stats.settled_usd:.6f} spent here"
            if budget is not None
            else ""
        )
    )
