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

import contextlib
import functools
import logging
import math
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import anyio.from_thread

from livescore._emit import DEFAULT_EMIT, EmitSignal, parse_emit
from livescore.fleet._commit import Commits, export_budget, fence_seconds, make_emitters
from livescore.fleet._counts import WorkerCounts, WorkerStats
from livescore.fleet._engine import Consumer, DeadLetter, Delivery, Requeue
from livescore.fleet._executor import DEFAULT_QUEUE
from livescore.fleet._job_handle import Slice, WorkerJob
from livescore.fleet._job_plan import fail_all, keep_turn, placeholder_scorer, plan_job
from livescore.live import InProcessExecutor, ScorerConfig, ScoringJob
from livescore.otel import Emitter
from livescore.pii import RedactSpec
from livescore.scoring import Scorer, ScoreResult
from livescore.sinks import ScoreSink

if TYPE_CHECKING:
    from concurrent.futures import Future

    from livescore.fleet._conversations import ConversationStore
    from livescore.fleet._job_plan import JobPlan, Pair
    from livescore.fleet._ledger import Ledger
    from livescore.fleet._otel_env import SpanHold
    from livescore.fleet._redis import OutageLog

__all__ = ("FleetWorker", "WorkerStats")

_log = logging.getLogger("livescore.fleet")

T = TypeVar("T")

_BUSY_POLL_S = 0.25
_REDIS_BACKOFF_FIRST = 0.05
_REDIS_BACKOFF_MAX = 2.0


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
        span_hold: The span processor that holds the worker's spans until a commit fences
            and exports them (``livescore worker`` installs one). Without it, a commit
            force-flushes the tracer provider: spans cannot be fenced, and a crash between
            another flush and the commit can duplicate a score.
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
        self.judge_rpm = judge_rpm
        self.judge_concurrency = judge_concurrency
        self.heartbeat_timeout = float(heartbeat_timeout)
        self.drain_timeout = float(drain_timeout)
        self.max_deliveries = max_deliveries
        self.dedupe_ttl = float(dedupe_ttl)
        self.export_deadline = float(export_deadline)
        self.worker_id = uuid.uuid4().hex[:16]
        self.stats = WorkerStats()
        self._counts = WorkerCounts(self.stats)
        self.gate: Any = None
        self._consumer = consumer
        self.span_hold = span_hold
        if not (isinstance(conversation_poll, int | float) and 0 < conversation_poll <= 60):
            raise ValueError(
                f"conversation_poll must be from 0 to 60 seconds, not {conversation_poll!r}"
            )
        self.conversation_poll = float(conversation_poll)
        self._init_run_state()
        self.waiting_for: str | None = None
        """Why the worker is not consuming yet (``"Redis is ..."``); ``None`` otherwise."""
        self.ready = threading.Event()
        """Set once the worker consumes (for tests and supervisors)."""

    def _init_run_state(self) -> None:
        """What :meth:`run` and its threads build and own, empty until it starts."""
        self._conversations: ConversationStore | None = None
        self._ledger: Ledger | None = None
        self._commits: Commits | None = None
        self._portal: anyio.from_thread.BlockingPortal | None = None
        self._scoring: Any = None
        self._send: Any = None
        self._draining = threading.Event()
        self._aborted = threading.Event()
        self._outages: OutageLog | None = None
        self._dead_letter_counter: Any = None

    def __repr__(self) -> str:
        return f"FleetWorker(scorers=[{', '.join(self.scorers)}], concurrency={self.concurrency})"

    @property
    def emit_errors(self) -> int:
        """How many times the emitter raised (the first one is logged)."""
        return self._counts.emit_errors

    @property
    def fence_s(self) -> float:
        """How long a commit's fence holds a pair: an export's longest time and a margin."""
        return fence_seconds(self.span_hold)

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

        outages = self._outages = OutageLog("livescore worker")
        emitters = make_emitters(
            self._emitter_given, self.sinks, self.signals, self.semconv_proposals
        )
        self.emitter = emitters.counts
        self._dead_letter_counter = _dead_letter_counter()
        consumer = self._consumer or DramatiqConsumer(
            self.broker,
            self.queue,
            # Twice the scores in flight: a job whose scores ended waits for its commit
            # (up to ~100 ms) before it is acknowledged, and meanwhile the next job scores.
            concurrency=2 * self.concurrency,
            heartbeat_timeout=self.heartbeat_timeout,
            max_failures=self.max_deliveries,
            outages=outages,
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
            commits = self._commits = Commits(
                ledger, self._counts, emitters, outages, self.span_hold, self.export_deadline
            )
            stack.callback(commits.stop)
            portal, scoring, send = self._start_scoring(stack)
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

    def _start_scoring(
        self, stack: ExitStack
    ) -> tuple[anyio.from_thread.BlockingPortal, Future[None], Any]:
        """Start the scoring loop on a thread of its own, until ``stack`` closes: its
        portal, the task that scores, and the stream that feeds it."""
        from livescore.fleet._gate import RedisJudgeGate

        portal = self._portal = stack.enter_context(
            anyio.from_thread.start_blocking_portal(backend="asyncio")
        )
        send, receive = portal.call(_memory_stream)
        self._send = send
        # Every pair of every job in hand may run: a job's quick pairs never wait behind
        # slow pairs of other jobs; each scorer still scores ``concurrency`` at a time.
        executor = InProcessExecutor(max_concurrency=self.concurrency * len(self.scorers))
        # Always: a 429 pauses the whole fleet even when no budget is configured.
        self.gate = RedisJudgeGate(
            self.broker,
            rpm=self.judge_rpm,
            concurrency=self.judge_concurrency,
            lease=max(c.timeout for c in self.scorers.values()),
        )
        portal.call(_install_gate, self.gate)
        scoring = self._scoring = portal.start_task_soon(_run_executor, executor, receive)
        return portal, scoring, send

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
            self._counts.emit_failed()
        for sink in self.sinks:
            try:
                sink.shutdown(5.0)
            except Exception:
                _log.exception("livescore: sink %r raised from shutdown()", sink.name)

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
            self._redis(lambda: keep_turn(self._conversations, turn, record))
        plan = plan_job(record, self.scorers)
        pairs = plan.pairs
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
            self._counts.add(duplicates=duplicates)
        source = str(record.get("source") or "live")
        reply_to = record.get("reply_to") if isinstance(record.get("reply_to"), str) else None
        if deliveries > self.max_deliveries:
            message = (
                f"the job was delivered {deliveries} times and its worker stopped each time "
                f"before finishing (max_deliveries={self.max_deliveries}); it is not scored "
                "again"
            )
            fail_all(mine, error_type="poisoned_job", message=message)
        handle = self._feed(job_id, owner, plan, mine, source, reply_to)
        while not handle.settled.wait(0.2):
            if handle.abandoned.is_set():
                self._hand_back(delivery, owner, export=True)
            if self._aborted.is_set():
                self._give_back(handle, delivery, owner)
        self._redis(lambda: ledger.complete(delivery.message_id), give_up=False)
        self._counts.add(jobs=1)

    def _give_back(self, handle: WorkerJob, delivery: Delivery, owner: str) -> None:
        """The drain deadline passed: keep what was committed, hand the rest back."""
        commits = self._commits
        assert commits is not None
        finished = handle.close()
        if finished:
            commits.wait()  # the pairs that ended are committed (marked done), if they can be
        if not handle.settled.is_set():
            commits.abandon(handle)
            handle.abandoned.wait(export_budget(self.span_hold) + 15.0)
        self._hand_back(delivery, owner)

    def _hand_back(self, delivery: Delivery, owner: str, *, export: bool = False) -> None:
        """Put the delivery back on the queue (its claims are released): not a crash, so not
        counted against ``max_deliveries``."""
        ledger = self._ledger
        assert ledger is not None
        # Redis away at the drain deadline: the delivery stays counted, no more.
        with contextlib.suppress(Requeue):
            self._redis(lambda: ledger.uncount_delivery(delivery.message_id, owner))
        self._counts.add(requeued=1, export_handbacks=int(export))
        raise Requeue()

    def _dead_letter(self, reason: str, record: Mapping[str, Any] | None) -> None:
        """A message went to the dead-letter set: count it, and drop (counted) the pairs of
        the job it carried that no delivery ended yet."""
        from livescore.fleet._ledger import Mark, valid_job_id
        from livescore.otel import attributes as A

        self._counts.add(dead_letters=1)
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
                self._counts.add(dropped=1)
                self.emitter.record_dropped(sid, reason)

    def _feed(
        self,
        job_id: str,
        owner: str,
        plan: JobPlan,
        pairs: Sequence[Pair],
        source: str,
        reply_to: str | None,
    ) -> WorkerJob:
        """Hand ``pairs`` (those of ``plan`` this delivery claimed) to score to the scoring
        loop; fail the others at once."""
        from livescore.fleet._ledger import valid_reply_to

        commits = self._commits
        assert commits is not None
        run, parent, conversation = plan.run, plan.parent, plan.conversation
        to_score = [p for p in pairs if p.config is not None]
        to_fail = [p for p in pairs if p.config is None]
        configs = tuple(p.config for p in to_score if p.config is not None)
        failing_configs = tuple(ScorerConfig(placeholder_scorer(p.scorer_id)) for p in to_fail)
        job = ScoringJob(run, configs + failing_configs, parent, conversation=conversation)
        handle = WorkerJob(
            commits.add,
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
            self._portal.call(self._send.send_nowait, Slice(handle, scoring))
        return handle


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


def _dead_letter_counter() -> Any:
    """The worker's count of dead letters, on the global meter provider."""
    from opentelemetry import metrics

    from livescore.otel import attributes as A

    return metrics.get_meter(A.INSTRUMENTATION_SCOPE).create_counter(
        "livescore.fleet.dead_letters",
        unit="{message}",
        description="Messages a worker moved to the dead-letter set, by livescore.reason",
    )
