"""The worker side: :class:`FleetWorker` scores the jobs the agents published.

Each job goes through the same code as in-process scoring: the worker rebuilds the
:class:`~livescore.live.ScoringJob` and feeds it to an
:class:`~livescore.live.InProcessExecutor` running on the worker's scoring loop, through a
worker-side :class:`~livescore.live.JobHandle`. When a pair ends, its score span is made
(and held); a *commit* on the export thread then, for every pair that ended since the last
one, checks in Redis that the pair's claim is still this delivery's (the *fence*), exports
the spans, marks the pairs done, and only then counts them (metrics, sinks) — so a score is
counted once, by the worker whose span left. The engine's thread that delivered the job
waits until every pair of it was committed; only then does it return, and the engine
acknowledges the message.

What can go wrong, and what the worker does:

- Redis away (down, out of memory, read-only): every ledger call waits and retries with
  backoff, logged once; a failed commit is retried by itself; nothing is acknowledged in
  the meantime.
- The collector away (refusing, 503): the job is held, unacknowledged, and its export
  retried with backoff; after ``export_deadline`` seconds its spans are discarded and the
  job goes back to the queue (its pairs uncounted here, scored again later), so nothing is
  acknowledged that did not leave and nothing is counted that was not delivered.
- A claim lapsed (the worker was frozen or cut off past its heartbeat timeout, and another
  worker took the job over): the fence fails, the score is discarded, never exported.
- A message that is not a job (undecodable, wrong arguments), or fails again and again:
  dead-lettered by the engine and counted here.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import logging
import math
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import anyio.from_thread

from livescore._catalog import parse_scorer_spec
from livescore._emit import DEFAULT_EMIT, EmitSignal, parse_emit
from livescore.fleet._barrier import ExportBarrier
from livescore.fleet._engine import Consumer, DeadLetter, Delivery, Requeue
from livescore.fleet._executor import DEFAULT_QUEUE
from livescore.live import InProcessExecutor, ScorerConfig, ScoringJob
from livescore.otel import Emitter
from livescore.pii import RedactSpec
from livescore.runs import Conversation, Run, TraceParent
from livescore.scoring import Scorer, ScoreResult, create_scorer
from livescore.sinks import ScoreSink, with_sinks

if TYPE_CHECKING:
    from concurrent.futures import Future

    from livescore.fleet._conversations import ConversationStore
    from livescore.fleet._ledger import Ledger
    from livescore.fleet._otel_env import SpanHold
    from livescore.fleet._redis import OutageLog

__all__ = ("FleetWorker", "WorkerStats")

_log = logging.getLogger("livescore.fleet")

T = TypeVar("T")

_BUSY_POLL_S = 0.25
_REDIS_BACKOFF_FIRST = 0.05
_REDIS_BACKOFF_MAX = 2.0
_WINDOWS_KEPT = 10_000


@dataclass(slots=True)
class WorkerStats:
    """What one worker process did (its OpenTelemetry metrics say the same per scorer).

    Attributes:
        jobs: Deliveries handled to the end (acknowledged).
        scored, failed, skipped, dropped: How the pairs this worker ended ended (counted
            once their spans were exported and the pairs marked done).
        duplicates: Pairs skipped because another delivery had already ended them, or held
            them past the wait.
        requeued: Deliveries handed back to the queue (at shutdown, or past the export
            deadline).
        export_handbacks: Of those, the deliveries handed back because their spans could
            not be exported within ``export_deadline``.
        fenced: Pairs whose claim had lapsed by their commit (this worker was frozen or cut
            off past its heartbeat timeout and another worker took them over): their scores
            were discarded here, never exported nor counted.
        late_exports: Pairs whose span left but whose claim another worker had taken by the
            time of the mark (a freeze longer than the fence, right after the export): a
            duplicate span, counted once, by the other worker.
        dead_letters: Messages moved to the dead-letter set (undecodable, not a job, or
            failing every time).
        failed_by_type: Failed pairs by ``error.type``.
        loop_cpu_s: CPU seconds of the scoring loop's thread (scorers, judge calls,
            emission), set when the worker stops.
        commit_windows_s: For recent commits, the seconds from the export's start to the
            marks' write: a worker killed within it leaves pairs exported but not marked
            (scored again: the one duplicate window left). Up to 10,000 kept.
    """

    jobs: int = 0
    scored: int = 0
    failed: int = 0
    skipped: int = 0
    dropped: int = 0
    duplicates: int = 0
    requeued: int = 0
    export_handbacks: int = 0
    fenced: int = 0
    late_exports: int = 0
    dead_letters: int = 0
    failed_by_type: dict[str, int] = field(default_factory=dict)
    loop_cpu_s: float = 0.0
    commit_windows_s: collections.deque[float] = field(
        default_factory=lambda: collections.deque(maxlen=_WINDOWS_KEPT)
    )


@dataclass(slots=True)
class _Pair:
    scorer_id: str
    sample_rate: float | None
    config: ScorerConfig | None  # None: fails without scoring
    failure: tuple[str, str] | None = None  # (error type, message)


class _WorkerJob:
    """The worker-side :class:`~livescore.live.JobHandle` of one delivery.

    A pair's end makes its span (held) and queues its mark for the next commit in one step
    (see :meth:`FleetWorker._commit`); the job is settled when every pair was committed
    (marked done, or found ended elsewhere).
    """

    def __init__(
        self,
        worker: FleetWorker,
        job_id: str,
        owner: str,
        job: ScoringJob,
        rates: Sequence[float | None],
        source: str,
        reply_to: str | None,
    ) -> None:
        self._worker = worker
        self.job_id = job_id
        self.owner = owner
        self._job = job
        self._rates = tuple(rates)
        self._source = source
        self.reply_to = reply_to
        self._lock = threading.Lock()
        self.statuses: dict[str, str] = {}
        self.claimed = frozenset(c.scorer_id for c in job.scorers)
        self.settled_ids: set[str] = set()
        self._closed = False
        self.settled = threading.Event()
        self.abandoned = threading.Event()
        """Set by the commit thread once the job is handed back (claims released)."""
        if not self.claimed:
            self.settled.set()

    @property
    def job(self) -> ScoringJob:
        return self._job

    def close(self) -> dict[str, str]:
        """Refuse every later report (the job goes back to the queue); what ended so far."""
        with self._lock:
            self._closed = True
            return dict(self.statuses)

    def settle(self, scorer_id: str) -> None:
        """The pair was committed (called by the commit)."""
        with self._lock:
            self.settled_ids.add(scorer_id)
            if self.settled_ids >= self.claimed:
                self.settled.set()

    def _end(self, index: int, status: str) -> str | None:
        with self._lock:
            if self._closed or not 0 <= index < len(self._job.scorers):
                return None
            sid = self._job.scorers[index].scorer_id
            if sid in self.statuses:
                return None  # reported twice: the first report wins
            self.statuses[sid] = status
            return sid

    def finish(self, index: int, result: ScoreResult, *, start_time_ns: int | None = None) -> None:
        sid = self._end(index, result.status)
        if sid is None:
            return
        worker = self._worker
        config = self._job.scorers[index]
        emit = _EmitArgs(
            run=self._job.run,
            result=result,
            sample_rate=self._rates[index],
            source=self._source,
            scorer_version=config.scorer.version,
            start_time_ns=start_time_ns,
            parent=self._job.parent,
        )
        worker._emit_and_queue(self, sid, result.status, result, emit)

    def drop(self, reason: str, index: int | None = None) -> None:
        indices = range(len(self._job.scorers)) if index is None else (index,)
        for i in indices:
            sid = self._end(i, "dropped")
            if sid is None:
                continue
            result = ScoreResult(
                run_id=self._job.run.run_id,
                scorer_id=sid,
                status="failed",
                error=f"dropped on the worker ({reason})",
                error_type=reason,
            )
            self._worker._emit_and_queue(self, sid, "dropped", result, None, drop_reason=reason)

    def hand_off(self, index: int | None = None) -> None:
        # Nothing hands a job on from a worker; a report like this is a bug, counted.
        self.drop("handed_off_on_worker", index)


@dataclass(frozen=True, slots=True)
class _EmitArgs:
    run: Run
    result: ScoreResult
    sample_rate: float | None
    source: str
    scorer_version: str | None
    start_time_ns: int | None
    parent: TraceParent | None

    def to(self, emitter: Emitter) -> None:
        emitter.emit(
            self.run,
            self.result,
            sample_rate=self.sample_rate,
            source=self.source,
            scorer_version=self.scorer_version,
            start_time_ns=self.start_time_ns,
            parent=self.parent,
        )


@dataclass(slots=True)
class _Mark:
    """One pair's end on its way through a commit: fence, export, mark, count."""

    handle: _WorkerJob
    scorer_id: str
    status: str
    result: ScoreResult
    emit: _EmitArgs | None  # None: a dropped pair (no span)
    drop_reason: str | None = None
    spans: list[Any] = field(default_factory=list)
    fenced_until: float = 0.0  # monotonic; 0: not fenced yet
    failing_since: float | None = None  # monotonic: its first failed export
    event_sent: bool = False  # its gen_ai.evaluation.result event was handed to the SDK


class FleetWorker:
    """Score the jobs agents publish to a broker: what ``livescore worker`` runs.

    Args:
        scorers: The scorers jobs may name, by id (the same list the agents use). A
            :class:`~livescore.live.ScorerConfig` keeps its ``timeout``; its sampling was
            decided by the agent, and ``concurrency`` replaces its ``max_concurrency``.
        broker: The Redis URL.
        concurrency: Scores in flight at once per scorer in this process. The worker holds
            up to twice as many jobs: those whose scores ended wait for their export and
            acknowledgement while the next ones score.
        queue: The queue to consume.
        sinks: Where each score goes besides OpenTelemetry.
        emitter: Where scores and counts go. By default an
            :class:`~livescore.otel.OTelEmitter` on the global providers (``livescore
            worker`` configures an SDK from the ``OTEL_*`` variables first), whose spans are
            fenced and exported by the commit and whose counts follow the marks. A custom
            emitter gets each score when it ends (spans and counts together), so only its
            ``flush`` is checked by the commit.
        emit: What the default emitter makes of each score besides metrics: ``"spans"``,
            ``"events"`` or both (the default); see ``LiveDispatcher(emit=...)``. With
            ``emitter=``, set it on that emitter. A score's event leaves with the commit
            that exports its span, before its mark (never for a fenced score).
        judge_rpm: Judge requests per minute across every worker on this broker.
        judge_concurrency: Judge requests in flight across every worker on this broker.
        heartbeat_timeout: Seconds of silence after which a worker counts as dead and its
            jobs are delivered again.
        drain_timeout: At shutdown, seconds the jobs in flight get to finish; the rest go
            back to the queue.
        max_deliveries: Deliveries of one job after which it is no longer scored but each
            of its pairs fails with ``error.type = "poisoned_job"`` (a job that kills its
            worker every time); one delivery more and its message is dead-lettered.
        dedupe_ttl: Seconds a job's ledger entry is kept: a duplicate delivered within it
            is recognised.
        export_deadline: Seconds a job's spans may keep failing to export (the collector
            refusing or away) before the job goes back to the queue, its scores discarded.
        consumer: The engine's consumer (Dramatiq by default).
        span_hold: The span processor that holds the worker's spans until a commit exports
            them (``livescore worker`` installs one; see :meth:`_commit`). Without it, a
            commit force-flushes the tracer provider: spans cannot be fenced, and a crash
            between another flush and the commit can duplicate a score.
        conversation_poll: With conversation scorers among ``scorers``: seconds between
            looks at the conversations due in Redis (how late, at most, a quiet
            conversation's evaluation is published past its idle timeout).
        redact: Keep personal data from the judge and from the scores this worker emits:
            every scorer runs as :meth:`~livescore.Scorer.with_redaction` ``(redact)``
            (``livescore worker --redact``). The jobs reach Redis with the run's text as
            it was; redaction happens here, before the judge.

    Conversations: a job that carries a conversation's turn appends it to the
    conversation in Redis (see :mod:`livescore.fleet`); with conversation scorers, every
    worker also runs a timer that publishes the evaluation of each conversation gone
    quiet, which any worker then scores like another job, once.

    Example:
        >>> from livescore.scorers import create_keyword_coverage_scorer
        >>> worker = FleetWorker([create_keyword_coverage_scorer()],
        ...                      broker="redis://127.0.0.1:6379/0", concurrency=8)
        >>> sorted(worker.scorers)
        ['keyword-coverage']
    """

    def __init__(
        self,
        scorers: Sequence[Scorer | ScorerConfig],
        *,
        broker: str,
        concurrency: int = 16,
        queue: str = DEFAULT_QUEUE,
        sinks: Sequence[ScoreSink] | None = None,
        emitter: Emitter | None = None,
        emit: str | Sequence[EmitSignal] | None = None,
        semconv_proposals: bool = False,
        judge_rpm: float | None = None,
        judge_concurrency: int | None = None,
        heartbeat_timeout: float = 60.0,
        drain_timeout: float = 30.0,
        max_deliveries: int = 3,
        dedupe_ttl: float = 6 * 3600.0,
        export_deadline: float = 300.0,
        consumer: Consumer | None = None,
        span_hold: SpanHold | None = None,
        conversation_poll: float = 0.2,
        redact: RedactSpec | None = None,
    ) -> None:
        _check_options(
            broker,
            concurrency,
            max_deliveries,
            judge_rpm,
            judge_concurrency,
            heartbeat_timeout=heartbeat_timeout,
            drain_timeout=drain_timeout,
            dedupe_ttl=dedupe_ttl,
            export_deadline=export_deadline,
        )
        self.scorers: dict[str, ScorerConfig] = _worker_scorers(scorers, concurrency, redact)
        self.broker = broker
        self.concurrency = concurrency
        self.queue = queue
        self.sinks = tuple(sinks or ())
        if emit is not None and emitter is not None:
            raise ValueError(
                "emit= configures the default emitter: with emitter=..., set it there "
                "(OTelEmitter(emit=...))"
            )
        self.signals: tuple[EmitSignal, ...] = parse_emit(DEFAULT_EMIT if emit is None else emit)
        """What the default emitter makes of each score (``emit``)."""
        self.semconv_proposals = bool(semconv_proposals)
        self._emitter_given = emitter
        self.emitter: Emitter = emitter  # type: ignore[assignment]  # set in run()
        self._span_emitter: Emitter | None = None
        self._event_emitter: Emitter | None = None
        self.judge_rpm = judge_rpm
        self.judge_concurrency = judge_concurrency
        self.heartbeat_timeout = float(heartbeat_timeout)
        self.drain_timeout = float(drain_timeout)
        self.max_deliveries = max_deliveries
        self.dedupe_ttl = float(dedupe_ttl)
        self.export_deadline = float(export_deadline)
        self.worker_id = uuid.uuid4().hex[:16]
        self.stats = WorkerStats()
        self.emit_errors = 0
        self.gate: Any = None
        self._consumer = consumer
        self.span_hold = span_hold
        if not (isinstance(conversation_poll, int | float) and 0 < conversation_poll <= 60):
            raise ValueError(
                f"conversation_poll must be from 0 to 60 seconds, not {conversation_poll!r}"
            )
        self.conversation_poll = float(conversation_poll)
        self._lock = threading.Lock()
        self._commit_lock = threading.Lock()  # span emission + queueing of a mark, vs a commit
        self._init_run_state()
        self.waiting_for: str | None = None
        """Why the worker is not consuming yet (``"Redis is ..."``); ``None`` otherwise."""
        self.ready = threading.Event()
        """Set once the worker consumes (for tests and supervisors)."""

    def _init_run_state(self) -> None:
        """What :meth:`run` and its threads build and own, empty until it starts."""
        self._conversations: ConversationStore | None = None
        self._pending: list[_Mark] = []
        self._abandon: list[_WorkerJob] = []
        # Owned by the commit thread: marks not exported yet, and exported but not marked.
        self._held: list[_Mark] = []
        self._exported: list[_Mark] = []
        self._untagged: list[Any] = []
        self._ledger: Ledger | None = None
        self._barrier: ExportBarrier | None = None
        self._portal: anyio.from_thread.BlockingPortal | None = None
        self._scoring: Any = None
        self._send: Any = None
        self._draining = threading.Event()
        self._aborted = threading.Event()
        self._outages: OutageLog | None = None
        self._export_failing = False
        self._dead_letter_counter: Any = None
        self._window_start = 0.0

    def __repr__(self) -> str:
        return f"FleetWorker(scorers=[{', '.join(self.scorers)}], concurrency={self.concurrency})"

    @property
    def fence_s(self) -> float:
        """How long a commit's fence holds a pair: an export's longest time and a margin."""
        return 2 * self._export_budget() + 10.0

    def _export_budget(self) -> float:
        hold = self.span_hold
        return float(getattr(hold, "export_timeout", 10.0)) if hold is not None else 10.0

    # -- lifecycle ------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        """Consume and score until ``stop`` is set, then shut down gracefully: jobs in
        flight get ``drain_timeout`` seconds to finish, the rest go back to the queue.

        While Redis cannot take writes (down, out of memory, read-only) at start, it waits
        (``waiting_for`` says why) until it can, or ``stop`` is set.

        Raises:
            redis.AuthenticationError: The broker refused the credentials.
            redis.RedisError: The broker answered with an error that waiting cannot fix.
        """
        from livescore.fleet._conversations import ConversationStore
        from livescore.fleet._dramatiq import DramatiqConsumer
        from livescore.fleet._ledger import Ledger
        from livescore.fleet._redis import OutageLog, redis_client

        self._outages = OutageLog("livescore worker")
        self._make_emitters()
        consumer = self._consumer or DramatiqConsumer(
            self.broker,
            self.queue,
            # Twice the scores in flight: a job whose scores ended waits for its commit
            # (up to ~100 ms) before it is acknowledged, and meanwhile the next job scores.
            concurrency=2 * self.concurrency,
            heartbeat_timeout=self.heartbeat_timeout,
            max_failures=self.max_deliveries,
            outages=self._outages,
        )
        with ExitStack() as stack:
            client = redis_client(self.broker)
            stack.callback(client.close)
            ledger = self._ledger = Ledger(
                client, self.worker_id, alive_ttl=self.heartbeat_timeout, ttl=self.dedupe_ttl
            )
            if not self._wait_for_broker(client, ledger, stop):
                return
            ledger.start_heartbeat()
            stack.callback(ledger.stop_heartbeat)
            self._conversations = ConversationStore(client)
            if any(c.scorer.level == "conversation" for c in self.scorers.values()):
                self._start_conversation_timer(self._conversations, stack)
            barrier = self._barrier = ExportBarrier(self._commit)
            stack.callback(barrier.stop)
            portal = self._portal = stack.enter_context(
                anyio.from_thread.start_blocking_portal(backend="asyncio")
            )
            send, receive = portal.call(_memory_stream)
            self._send = send
            # Every pair of every job in hand may run: a job's quick pairs never wait behind
            # slow pairs of other jobs; each scorer still scores ``concurrency`` at a time.
            executor = InProcessExecutor(max_concurrency=self.concurrency * len(self.scorers))
            from livescore.fleet._gate import RedisJudgeGate

            # Always: a 429 pauses the whole fleet even when no budget is configured.
            self.gate = RedisJudgeGate(
                self.broker,
                rpm=self.judge_rpm,
                concurrency=self.judge_concurrency,
                lease=max(c.timeout for c in self.scorers.values()),
            )
            portal.call(_install_gate, self.gate)
            scoring = self._scoring = portal.start_task_soon(_run_executor, executor, receive)
            watcher = threading.Thread(
                target=self._drain_when_stopped, args=(stop,), name="livescore-fleet-drain"
            )
            watcher.daemon = True
            watcher.start()
            self.ready.set()
            try:
                consumer.run(
                    self._handle,
                    stop=stop,
                    drain_timeout=self.drain_timeout,
                    on_dead_letter=self._dead_letter,
                )
            finally:
                self._stop_scoring(portal, scoring, send)

    def _start_conversation_timer(self, store: ConversationStore, stack: ExitStack) -> None:
        """Publish the conversations that went quiet, until ``stack`` closes."""
        from livescore.fleet._conversations import ConversationTimer
        from livescore.fleet._dramatiq import DramatiqPublisher

        publisher = DramatiqPublisher(self.broker, self.queue)
        stack.callback(publisher.close)
        timer = ConversationTimer(
            store,
            publisher.publish,
            poll=self.conversation_poll,
            lease=max(c.timeout for c in self.scorers.values()) + 30.0,
        )
        timer.start()
        stack.callback(timer.stop)

    def _stop_scoring(
        self, portal: anyio.from_thread.BlockingPortal, scoring: Future[None], send: Any
    ) -> None:
        """After the consumer returned: end the scoring loop, then flush what it emitted."""
        scoring.cancel()
        self._aborted.set()
        portal.call(send.close)
        self.stats.loop_cpu_s = portal.call(time.thread_time)
        if self.gate is not None:
            portal.call(self.gate.aclose)
        try:
            self.emitter.flush(10.0)
        except Exception:
            self._emit_failed()
        for sink in self.sinks:
            try:
                sink.shutdown(5.0)
            except Exception:
                _log.exception("livescore: sink %r raised from shutdown()", sink.name)

    def _make_emitters(self) -> None:
        """Spans at a pair's end, counts (metrics, sinks) once it is committed."""
        from opentelemetry import metrics

        from livescore.otel import attributes as A

        if self._emitter_given is None:
            from opentelemetry.metrics import NoOpMeterProvider
            from opentelemetry.trace import NoOpTracerProvider

            from livescore.otel import OTelEmitter

            # Three emitters, one per moment: spans at a pair's end (held), events at the
            # commit that exports those spans (a fenced pair's never leaves), counts once
            # the pair is marked done.
            self._span_emitter = OTelEmitter(
                meter_provider=NoOpMeterProvider(),
                tracer_provider=None if "spans" in self.signals else NoOpTracerProvider(),
                emit="spans",
                semconv_proposals=self.semconv_proposals,
            )
            self._event_emitter = (
                OTelEmitter(
                    meter_provider=NoOpMeterProvider(),
                    tracer_provider=NoOpTracerProvider(),
                    emit="events",
                    semconv_proposals=self.semconv_proposals,
                )
                if "events" in self.signals
                else None
            )
            self.emitter = with_sinks(
                OTelEmitter(
                    tracer_provider=NoOpTracerProvider(),
                    emit="spans",
                    semconv_proposals=self.semconv_proposals,
                ),
                self.sinks,
            )
        else:
            self._span_emitter = None
            self._event_emitter = None
            self.emitter = with_sinks(self._emitter_given, self.sinks)
        self._dead_letter_counter = metrics.get_meter(A.INSTRUMENTATION_SCOPE).create_counter(
            "livescore.fleet.dead_letters",
            unit="{message}",
            description="Messages a worker moved to the dead-letter set, by livescore.reason",
        )

    def _wait_for_broker(self, client: Any, ledger: Ledger, stop: threading.Event) -> bool:
        """Wait until Redis takes a write (this worker's first heartbeat); ``False`` if
        ``stop`` was set first. Says why it waits, once."""
        from livescore.fleet._redis import check_eviction_policy, outage_reason

        backoff = _REDIS_BACKOFF_FIRST
        while True:
            try:
                ledger.beat()
                break
            except Exception as exc:
                reason = outage_reason(exc)
                if reason is None:
                    raise
                if self.waiting_for is None:
                    self.waiting_for = f"Redis is {reason}"
                    _log.warning(
                        "livescore worker: waiting for Redis at %s: it is %s",
                        _redacted(self.broker),
                        reason,
                    )
            if stop.wait(backoff):
                return False
            backoff = min(backoff * 2, _REDIS_BACKOFF_MAX)
        if self.waiting_for is not None:
            _log.warning("livescore worker: Redis takes writes again; starting")
        self.waiting_for = None
        check_eviction_policy(client, "livescore worker")
        return True

    def _drain_when_stopped(self, stop: threading.Event) -> None:
        stop.wait()
        self._draining.set()
        if not self._aborted.wait(self.drain_timeout):
            _log.warning(
                "livescore worker: jobs still in flight after %.0fs go back to the queue",
                self.drain_timeout,
            )
            # Stop scoring first, so nothing is emitted for a pair handed back.
            if self._scoring is not None:
                self._scoring.cancel()
            self._aborted.set()

    # -- Redis calls from the engine's threads ----------------------------------------------

    def _redis(self, call: Callable[[], T], *, give_up: bool = True) -> T:
        """Run a ledger ``call``, waiting out Redis outages (logged once); at the drain
        deadline (``give_up``) hand the job back instead of waiting on."""
        from livescore.fleet._redis import outage_reason

        assert self._outages is not None
        backoff = _REDIS_BACKOFF_FIRST
        while True:
            try:
                result = call()
            except Exception as exc:
                reason = outage_reason(exc)
                if reason is None:
                    raise
                self._outages.down(reason, "jobs wait, unacknowledged")
                if give_up and self._aborted.is_set():
                    raise Requeue() from None
                self._aborted.wait(backoff) if give_up else time.sleep(backoff)
                backoff = min(backoff * 2, _REDIS_BACKOFF_MAX)
                continue
            self._outages.up()
            return result

    # -- one delivery (on an engine thread) ---------------------------------------------------

    def _handle(self, record: Mapping[str, Any], delivery: Delivery) -> None:
        from livescore.fleet._ledger import valid_job_id

        ledger = self._ledger
        assert ledger is not None
        if self._draining.is_set():
            raise Requeue()
        owner = ledger.new_owner()
        deliveries = self._redis(lambda: ledger.count_delivery(delivery.message_id, owner))
        if deliveries > self.max_deliveries + 1:
            # Even failing its pairs did not end it (it crashes there too): set it aside.
            raise DeadLetter("too_many_deliveries")
        raw_id = record.get("id")
        job_id = raw_id if valid_job_id(raw_id) else delivery.message_id
        turn = record.get("turn")
        if turn is not None:
            # Kept before anything is scored: a redelivered job keeps it once (idempotent).
            self._redis(lambda: self._keep_turn(turn, record))
        run, parent, pairs, conversation = self._plan(record)
        if not pairs:
            if turn is None:
                _log.error("livescore worker: job %s names no scorer; ignored", job_id)
            self._redis(lambda: ledger.complete(delivery.message_id))
            return
        lease = max((p.config.timeout if p.config else 60.0) for p in pairs) + 60.0
        ids = [p.scorer_id for p in pairs]
        states = self._redis(lambda: ledger.claim(job_id, ids, owner=owner, lease=lease))
        deadline = time.monotonic() + lease + self.heartbeat_timeout
        while any(s == "busy" for s in states.values()):
            # Another live delivery has these pairs right now (a duplicate): they end there,
            # or its claim lapses and they are ours.
            if self._draining.is_set():
                claimed = [s for s, v in states.items() if v == "claimed"]
                self._redis(functools.partial(ledger.release, job_id, claimed, owner=owner))
                self._hand_back(delivery, owner)
            if time.monotonic() > deadline:
                break
            time.sleep(_BUSY_POLL_S)
            busy = [s for s, v in states.items() if v == "busy"]
            again = functools.partial(ledger.claim, job_id, busy, owner=owner, lease=lease)
            states.update(self._redis(again))
        mine = [p for p in pairs if states.get(p.scorer_id) == "claimed"]
        duplicates = sum(1 for p in pairs if states.get(p.scorer_id) != "claimed")
        if duplicates:
            with self._lock:
                self.stats.duplicates += duplicates
        source = str(record.get("source") or "live")
        reply_to = record.get("reply_to") if isinstance(record.get("reply_to"), str) else None
        if deliveries > self.max_deliveries:
            message = (
                f"the job was delivered {deliveries} times and its worker stopped each time "
                f"before finishing (max_deliveries={self.max_deliveries}); it is not scored "
                "again"
            )
            for p in mine:
                p.config, p.failure = None, ("poisoned_job", message)
        handle = self._feed(job_id, owner, run, parent, mine, source, reply_to, conversation)
        while not handle.settled.wait(0.2):
            if handle.abandoned.is_set():
                self._hand_back(delivery, owner, export=True)
            if self._aborted.is_set():
                self._give_back(handle, delivery, owner)
        self._redis(lambda: ledger.complete(delivery.message_id), give_up=False)
        with self._lock:
            self.stats.jobs += 1

    def _give_back(self, handle: _WorkerJob, delivery: Delivery, owner: str) -> None:
        """The drain deadline passed: keep what was committed, hand the rest back."""
        finished = handle.close()
        if finished:
            self._barrier_wait()  # the pairs that ended are committed (marked done), if they can be
        if not handle.settled.is_set():
            with self._commit_lock:
                self._abandon.append(handle)
            if self._barrier is not None:
                self._barrier.request()
            handle.abandoned.wait(self._export_budget() + 15.0)
        self._hand_back(delivery, owner)

    def _hand_back(self, delivery: Delivery, owner: str, *, export: bool = False) -> None:
        """Put the delivery back on the queue (its claims are released): not a crash, so not
        counted against ``max_deliveries``."""
        ledger = self._ledger
        assert ledger is not None
        # Redis away at the drain deadline: the delivery stays counted, no more.
        with contextlib.suppress(Requeue):
            self._redis(lambda: ledger.uncount_delivery(delivery.message_id, owner))
        with self._lock:
            self.stats.requeued += 1
            if export:
                self.stats.export_handbacks += 1
        raise Requeue()

    def _barrier_wait(self) -> None:
        barrier = self._barrier
        if barrier is not None and not barrier.wait(barrier.timeout + 1.0):
            _log.warning("livescore worker: a commit did not finish in time")

    def _dead_letter(self, reason: str, record: Mapping[str, Any] | None) -> None:
        """A message went to the dead-letter set: count it, and drop (counted) the pairs of
        the job it carried that no delivery ended yet."""
        from livescore.fleet._ledger import Mark, valid_job_id
        from livescore.otel import attributes as A

        with self._lock:
            self.stats.dead_letters += 1
        if self._dead_letter_counter is not None:
            self._dead_letter_counter.add(1, {A.LIVESCORE_REASON: reason})
        raw_id = record.get("id") if record is not None else None
        entries = record.get("scorers") if record is not None else None
        if not valid_job_id(raw_id) or not isinstance(entries, list):
            return  # nothing an agent counted as handed off
        ledger = self._ledger
        assert ledger is not None
        job_id = str(raw_id)
        ids = list(
            dict.fromkeys(
                e["id"] for e in entries if isinstance(e, Mapping) and isinstance(e.get("id"), str)
            )
        )
        owner = ledger.new_owner()
        states = self._redis(lambda: ledger.claim(job_id, ids, owner=owner, lease=60.0))
        mine = [sid for sid in ids if states.get(sid) == "claimed"]
        outcomes = self._redis(
            lambda: ledger.mark([Mark(job_id, sid, owner, "dropped") for sid in mine])
        )
        for sid, outcome in zip(mine, outcomes, strict=True):
            if outcome == "marked":
                with self._lock:
                    self.stats.dropped += 1
                self.emitter.record_dropped(sid, reason)

    # -- emission and commits ---------------------------------------------------------------------

    def _emit_and_queue(
        self,
        handle: _WorkerJob,
        scorer_id: str,
        status: str,
        result: ScoreResult,
        emit: _EmitArgs | None,
        *,
        drop_reason: str | None = None,
    ) -> None:
        """Make one pair's span (held with its mark) and queue the mark for the next
        commit, atomically with respect to commits."""
        mark = _Mark(handle, scorer_id, status, result, emit, drop_reason)
        with self._commit_lock:
            if emit is not None:
                try:
                    if self._span_emitter is None:
                        emit.to(self.emitter)  # a custom emitter: everything now
                    elif self.span_hold is not None:
                        with self.span_hold.capture(mark.spans):
                            emit.to(self._span_emitter)
                    else:
                        emit.to(self._span_emitter)
                except Exception:
                    self._emit_failed()
            self._pending.append(mark)
        if self._barrier is not None:
            self._barrier.request()

    def _commit(self, timeout: float) -> bool:
        """Commit the pairs that ended since the last commit (on the export barrier's
        thread): fence their claims, export their spans, mark them done, count them.

        A pair whose claim another delivery took is discarded (never exported). When the
        export fails, the marks wait for the next commit (the barrier retries) and their
        jobs stay unacknowledged; past ``export_deadline``, their jobs go back to the queue.
        When Redis fails after the export, the marks are written by a later commit,
        without exporting again. A worker killed between the export and the marks (one
        Redis round trip, :attr:`WorkerStats.commit_windows_s`) leaves those pairs
        exported but not marked: scored again, the one duplicate left.

        Returns:
            ``False`` while something is left to commit.
        """
        from livescore.fleet._redis import outage_reason

        with self._commit_lock:
            self._held.extend(self._pending)
            self._pending = []
            abandon, self._abandon = self._abandon, []
            if self.span_hold is not None:
                self._untagged.extend(self.span_hold.take())
        for handle in abandon:
            self._abandon_now(handle)
        try:
            if not self._mark_exported():
                return False
            if not self._held and not self._untagged:
                return True
            self._fence()
            exported = self._export(timeout)
            if exported is None:
                return False
            if not exported:
                self._export_failed()
                return False
            return self._mark_exported()
        except Exception as exc:
            reason = outage_reason(exc)
            if reason is None:
                _log.exception("livescore worker: a commit failed; retrying")
            else:
                assert self._outages is not None
                self._outages.down(reason, "scores wait to be marked done")
            return False

    def _fence(self) -> None:
        """Hold the claims of the marks about to be exported for :attr:`fence_s`, in Redis,
        so that no other delivery can take them while the export runs; discard the marks
        whose claims another delivery has taken."""
        ledger = self._ledger
        assert ledger is not None
        now = time.monotonic()
        budget = self._export_budget() + 1.0
        need = [m for m in self._held if m.fenced_until < now + budget]
        if not need:
            return
        sent = time.monotonic()
        held = ledger.fence(
            [(m.handle.job_id, m.scorer_id, m.handle.owner) for m in need], seconds=self.fence_s
        )
        lost: set[int] = set()
        for mark, mine in zip(need, held, strict=True):
            if mine:
                # Measured from before the call: the fence ends no earlier than this.
                mark.fenced_until = sent + self.fence_s
            else:
                lost.add(id(mark))
        if not lost:
            return
        gone = [m for m in self._held if id(m) in lost]
        self._held = [m for m in self._held if id(m) not in lost]
        with self._lock:
            self.stats.fenced += len(gone)
        _log.warning(
            "livescore worker: %d score(s) discarded: their claims lapsed (this worker was "
            "frozen or cut off past its heartbeat timeout) and another worker took them over",
            len(gone),
        )
        for mark in gone:
            mark.handle.settle(mark.scorer_id)

    def _export(self, timeout: float) -> bool | None:
        """Export the spans of the held marks (and any others held); ``None`` when a fence
        ran out before the export could start (the next commit fences again)."""
        hold = self.span_hold
        self._window_start = time.monotonic()
        if self._span_emitter is None:
            # A custom emitter delivers (and counted) its scores itself: flushed, not held.
            if not self.emitter.flush(timeout):
                self._emit_failed()
            exported = True
        else:
            if hold is not None and any(m.fenced_until <= self._window_start for m in self._held):
                return None
            if not self._export_events(timeout):
                return False
            if hold is None:
                exported = _force_flush_traces(timeout)
            else:
                spans = [s for m in self._held for s in m.spans] + self._untagged
                exported = hold.export(spans)
        if exported:
            self._untagged = []
            self._exported.extend(self._held)
            self._held = []
            if self._export_failing:
                self._export_failing = False
                _log.warning("livescore worker: spans export again")
        return exported

    def _export_events(self, timeout: float) -> bool:
        """Hand the held marks' ``gen_ai.evaluation.result`` events to the SDK (once each)
        and flush them, before their spans: a failed flush is a failed export (the events
        are made again by the retry, so they leave at least once, like the spans)."""
        emitter = self._event_emitter
        if emitter is None:
            return True
        for mark in self._held:
            if mark.emit is not None and not mark.event_sent:
                mark.event_sent = True
                try:
                    mark.emit.to(emitter)
                except Exception:
                    self._emit_failed()
        if _force_flush_logs(timeout):
            return True
        for mark in self._held:
            mark.event_sent = False
        return False

    def _export_failed(self) -> None:
        """The collector refused or did not answer: keep the marks; past the deadline, hand
        their jobs back to the queue."""
        now = time.monotonic()
        if not self._export_failing:
            self._export_failing = True
            _log.warning(
                "livescore worker: the spans could not be exported (the collector refuses or "
                "does not answer); %d job(s) wait, unacknowledged, and the export is retried "
                "(after %.0f s a job goes back to the queue)",
                len({id(m.handle) for m in self._held}),
                self.export_deadline,
            )
        expired: dict[int, _WorkerJob] = {}
        for mark in self._held:
            if mark.failing_since is None:
                mark.failing_since = now
            elif now - mark.failing_since > self.export_deadline:
                expired[id(mark.handle)] = mark.handle
        if expired:
            _log.warning(
                "livescore worker: %d job(s) could not export their spans for %.0f s; they "
                "go back to the queue, their scores discarded",
                len(expired),
                self.export_deadline,
            )
        for handle in expired.values():
            handle.close()
            self._abandon_now(handle)

    def _mark_exported(self) -> bool:
        """Mark the exported pairs done (each only where its claim is still this
        delivery's), then count them; ``False`` if Redis did not take the marks."""
        from livescore.fleet._ledger import Mark

        if not self._exported:
            return True
        ledger = self._ledger
        assert ledger is not None
        marks = self._exported
        outcomes = ledger.mark(
            [
                Mark(
                    m.handle.job_id,
                    m.scorer_id,
                    m.handle.owner,
                    m.status,
                    m.handle.reply_to,
                    m.result if m.handle.reply_to else None,
                )
                for m in marks
            ]
        )
        window = time.monotonic() - self._window_start
        self._exported = []
        late = 0
        for mark, outcome in zip(marks, outcomes, strict=True):
            if outcome == "marked":
                self._count(mark)
            else:
                late += 1
            mark.handle.settle(mark.scorer_id)
        with self._lock:
            self.stats.commit_windows_s.append(window)
            self.stats.late_exports += late
        if late:
            _log.warning(
                "livescore worker: %d score(s) were exported after another worker took them "
                "over (a freeze longer than the fence): a duplicate span each, counted once",
                late,
            )
        self._flush_counts()
        return True

    def _count(self, mark: _Mark) -> None:
        """The pair is committed: count it once (metrics, sinks, stats)."""
        if mark.drop_reason is not None:
            with self._lock:
                self.stats.dropped += 1
            try:
                self.emitter.record_dropped(mark.scorer_id, mark.drop_reason)
            except Exception:
                self._emit_failed()
            return
        self._record(mark.result)
        if self._span_emitter is not None and mark.emit is not None:
            try:
                mark.emit.to(self.emitter)  # metrics and sinks (its spans go nowhere)
            except Exception:
                self._emit_failed()

    def _flush_counts(self) -> None:
        """Push out the counts of what was just marked (a crash after an acknowledgement
        must not lose them)."""
        timeout = 5.0
        try:
            if self.span_hold is None and self._span_emitter is None:
                self.emitter.flush(timeout)
                return
            from opentelemetry import metrics

            force_flush = getattr(metrics.get_meter_provider(), "force_flush", None)
            if callable(force_flush):
                force_flush(int(timeout * 1000))
            for sink in self.sinks:
                try:
                    sink.flush(timeout)
                except Exception:
                    _log.exception("livescore: sink %r raised from flush()", sink.name)
        except Exception:
            self._emit_failed()

    def _abandon_now(self, handle: _WorkerJob) -> None:
        """Hand ``handle`` back (commit thread): drop its marks not exported (their spans
        never leave), release its claims on pairs not exported, and tell its thread."""
        ledger = self._ledger
        assert ledger is not None
        handle.close()
        self._held = [m for m in self._held if m.handle is not handle]
        keep = set(handle.settled_ids) | {m.scorer_id for m in self._exported if m.handle is handle}
        release = sorted(handle.claimed - keep)
        try:
            ledger.release(handle.job_id, release, owner=handle.owner)
        except Exception:
            # Redis is away: the claims lapse with this worker's heartbeat, or expire.
            _log.debug("releasing claims failed", exc_info=True)
        handle.abandoned.set()

    def _keep_turn(self, turn: Any, record: Mapping[str, Any]) -> None:
        """A conversation's turn (or end request) goes to Redis. Idempotent: a turn
        delivered twice is kept once. A Redis error raises (the caller waits it out)."""
        store = self._conversations
        if store is None:
            return
        if not isinstance(turn, Mapping) or not isinstance(turn.get("id"), str):
            _log.error("livescore worker: a job's conversation turn is malformed; ignored")
            return
        if turn.get("end"):
            store.end(turn["id"])
            return
        run = record.get("run")
        if isinstance(run, Mapping):
            store.add_turn(turn, run, record.get("parent"))

    def _plan(
        self, record: Mapping[str, Any]
    ) -> tuple[Run, TraceParent | None, list[_Pair], Conversation | None]:
        """The run, its parent span, each pair (to score, or to fail at once, why) and the
        conversation a conversation's evaluation judges."""
        from livescore.fleet._ledger import valid_reply_to

        entries = record.get("scorers")
        pairs: list[_Pair] = []
        seen: set[str] = set()
        for entry in entries if isinstance(entries, list) else ():
            sid = entry.get("id") if isinstance(entry, Mapping) else None
            if not isinstance(sid, str) or not sid or sid in seen:
                continue
            seen.add(sid)
            rate = entry.get("sample_rate")
            rate = (
                float(rate)
                if isinstance(rate, int | float) and not isinstance(rate, bool)
                else None
            )
            config = self.scorers.get(sid)
            failure = None
            if config is None:
                failure = ("unknown_scorer", _unknown_scorer(sid, self.scorers))
            pairs.append(_Pair(sid, rate, config, failure))
        version = record.get("format", 1)
        raw_run = record.get("run")
        run_id = raw_run.get("run_id") if isinstance(raw_run, Mapping) else None
        fallback = Run(run_id=str(run_id or record.get("id") or uuid.uuid4().hex))
        try:
            parent = TraceParent.from_dict(record.get("parent"))
        except Exception:
            parent = None
        if not isinstance(version, int) or isinstance(version, bool) or version > ScoringJob.FORMAT:
            message = (
                f"this job record has format {version!r}; this worker reads up to "
                f"{ScoringJob.FORMAT} (upgrade livescore on the workers)"
            )
            for p in pairs:
                p.config, p.failure = None, ("unsupported_job_format", message)
            return fallback, parent, pairs, None
        reply_to = record.get("reply_to")
        if reply_to is not None and not valid_reply_to(reply_to):
            message = (
                f"the job's reply_to {str(reply_to)[:80]!r} is not an evaluation's result "
                "list (livescore:fleet:eval:<id>:results); nothing is sent there"
            )
            for p in pairs:
                p.config, p.failure = None, ("invalid_job", message)
            return fallback, parent, pairs, None
        conversation: Conversation | None = None
        try:
            run = Run.from_dict(raw_run)  # type: ignore[arg-type]
            raw_conversation = record.get("conversation")
            if raw_conversation is not None:
                conversation = Conversation.from_dict(raw_conversation)
        except Exception as exc:
            message = f"the job's run could not be read: {type(exc).__name__}: {exc}"
            for p in pairs:
                p.config, p.failure = None, ("invalid_job", message)
            return fallback, parent, pairs, None
        return run, parent, pairs, conversation

    def _feed(
        self,
        job_id: str,
        owner: str,
        run: Run,
        parent: TraceParent | None,
        pairs: Sequence[_Pair],
        source: str,
        reply_to: str | None,
        conversation: Conversation | None = None,
    ) -> _WorkerJob:
        """Hand the pairs to score to the scoring loop; fail the others at once."""
        from livescore.fleet._ledger import valid_reply_to

        to_score = [p for p in pairs if p.config is not None]
        to_fail = [p for p in pairs if p.config is None]
        configs = tuple(p.config for p in to_score if p.config is not None)
        failing_configs = tuple(ScorerConfig(_placeholder_scorer(p.scorer_id)) for p in to_fail)
        job = ScoringJob(run, configs + failing_configs, parent, conversation=conversation)
        handle = _WorkerJob(
            self,
            job_id,
            owner,
            job,
            [p.sample_rate for p in to_score] + [p.sample_rate for p in to_fail],
            source,
            reply_to if valid_reply_to(reply_to) else None,
        )
        for offset, p in enumerate(to_fail):
            assert p.failure is not None
            error_type, message = p.failure
            handle.finish(
                len(configs) + offset,
                ScoreResult(
                    run_id=run.run_id,
                    scorer_id=p.scorer_id,
                    status="failed",
                    error=message,
                    error_type=error_type,
                ),
            )
        if configs:
            scoring = ScoringJob(run, configs, parent, conversation=conversation)
            # The executor sees only the pairs it scores; the handle knows them all.
            assert self._portal is not None
            self._portal.call(self._send.send_nowait, _Slice(handle, scoring))
        return handle

    # -- counting -------------------------------------------------------------------------------

    def _record(self, result: ScoreResult) -> None:
        with self._lock:
            if result.status == "scored":
                self.stats.scored += 1
            elif result.status == "skipped":
                self.stats.skipped += 1
            else:
                self.stats.failed += 1
                kind = result.error_type or "error"
                self.stats.failed_by_type[kind] = self.stats.failed_by_type.get(kind, 0) + 1

    def _emit_failed(self) -> None:
        with self._lock:
            self.emit_errors += 1
            first = self.emit_errors == 1
        if first:
            _log.exception("livescore worker: the emitter raised (logged once)")


class _Slice:
    """The executor's view of a delivery: only the pairs it scores (same order, first)."""

    def __init__(self, handle: _WorkerJob, job: ScoringJob) -> None:
        self._handle = handle
        self._job = job

    @property
    def job(self) -> ScoringJob:
        return self._job

    def finish(self, index: int, result: ScoreResult, *, start_time_ns: int | None = None) -> None:
        self._handle.finish(index, result, start_time_ns=start_time_ns)

    def drop(self, reason: str, index: int | None = None) -> None:
        if index is None:
            for i in range(len(self._job.scorers)):
                self._handle.drop(reason, i)
        else:
            self._handle.drop(reason, index)

    def hand_off(self, index: int | None = None) -> None:
        self.drop("handed_off_on_worker", index)


def _check_options(
    broker: str,
    concurrency: object,
    max_deliveries: object,
    judge_rpm: float | None,
    judge_concurrency: int | None,
    **timeouts: float,
) -> None:
    """The argument errors of :class:`FleetWorker` (``timeouts``: positive seconds)."""
    from livescore.fleet._redis import validate_url

    validate_url(broker)
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ValueError(f"concurrency must be a positive int, not {concurrency!r}")
    if not isinstance(max_deliveries, int) or max_deliveries < 1:
        raise ValueError(f"max_deliveries must be a positive int, not {max_deliveries!r}")
    for name, value in timeouts.items():
        if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be a positive number of seconds, not {value!r}")
    if judge_rpm is not None and not judge_rpm > 0:
        raise ValueError(f"judge_rpm must be positive, not {judge_rpm!r}")
    if judge_concurrency is not None and judge_concurrency < 1:
        raise ValueError(f"judge_concurrency must be at least 1, not {judge_concurrency!r}")


def _worker_scorers(
    scorers: Sequence[Scorer | ScorerConfig], concurrency: int, redact: RedactSpec | None
) -> dict[str, ScorerConfig]:
    """The worker's scorers by id, each ``concurrency`` at a time (redacting when asked)."""
    configs: dict[str, ScorerConfig] = {}
    for item in scorers:
        base = item if isinstance(item, ScorerConfig) else None
        scorer = item.scorer if isinstance(item, ScorerConfig) else item
        if not isinstance(scorer, Scorer):
            raise TypeError(f"scorers must be Scorer or ScorerConfig objects, not {item!r}")
        if scorer.id in configs:
            raise ValueError(f"scorer ids must be unique; repeated: {scorer.id!r}")
        if redact is not None:
            scorer = scorer.with_redaction(redact)
        configs[scorer.id] = ScorerConfig(
            scorer,
            timeout=base.timeout if base is not None else 60.0,
            max_concurrency=concurrency,
        )
    if not configs:
        raise ValueError("a FleetWorker needs at least one scorer")
    return configs


def _redacted(url: str) -> str:
    from livescore._redaction import redact_url

    return redact_url(url)


def _force_flush_traces(timeout: float) -> bool:
    from opentelemetry import trace

    force_flush = getattr(trace.get_tracer_provider(), "force_flush", None)
    return bool(force_flush(int(timeout * 1000))) if callable(force_flush) else True


def _force_flush_logs(timeout: float) -> bool:
    from opentelemetry import _logs

    force_flush = getattr(_logs.get_logger_provider(), "force_flush", None)
    return bool(force_flush(int(timeout * 1000))) if callable(force_flush) else True


def _placeholder_scorer(scorer_id: str) -> Scorer:
    """A scorer that stands for an id the worker cannot score (it is never run)."""
    return create_scorer(id=scorer_id, description="not scored here", generate_score=_never)


def _never(ctx: Any) -> float:
    raise RuntimeError("never run")


async def _memory_stream() -> tuple[Any, Any]:
    return anyio.create_memory_object_stream[Any](max_buffer_size=math.inf)


def _install_gate(gate: Any) -> None:
    from livescore._request_gate import use_request_gate

    use_request_gate(gate)


async def _run_executor(executor: InProcessExecutor, receive: Any) -> None:
    try:
        async with receive:
            await executor.run(receive)
    except Exception:
        _log.exception("livescore worker: the scoring loop stopped")
        raise


def _unknown_scorer(sid: str, known: Mapping[str, Any]) -> str:
    """Why a job's scorer cannot be scored here, and, for a catalog scorer (the jobs of
    ``livescore eval --broker`` name them), how the workers build it."""
    message = (
        f"scorer {sid!r} is not among this worker's scorers ({', '.join(known)}): start the "
        "workers with the agents' scorers"
    )
    try:
        entry, _ = parse_scorer_spec(sid)
    except ValueError:
        return message
    options = ", ScorerOptions(model=...)" if entry.needs_judge else ""
    return (
        f"{message}; it is the catalog's {entry.name} scorer: add "
        f"livescore.scorers.build_scorer({sid!r}{options}) to them"
    )
