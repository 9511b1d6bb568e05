"""The worker side: :class:`FleetWorker` scores the jobs the agents published.

Each job goes through the same code as in-process scoring: the worker rebuilds the
:class:`~livescore.live.ScoringJob` and feeds it to an
:class:`~livescore.live.InProcessExecutor` running on the worker's scoring loop, through a
worker-side :class:`~livescore.live.JobHandle` whose ``finish`` emits the score (through the
worker's emitter and its sinks) and counts it. The engine's thread that delivered the job
waits until every pair of it ended, its scores were exported, and the pairs were marked
done in the ledger; only then does it return, and the engine acknowledges the message.
"""

from __future__ import annotations

import logging
import math
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
import anyio.from_thread

from livescore._catalog import parse_scorer_spec
from livescore._emit import DEFAULT_EMIT, EmitSignal, parse_emit
from livescore.fleet._barrier import ExportBarrier
from livescore.fleet._engine import Consumer, Delivery, Requeue
from livescore.fleet._executor import DEFAULT_QUEUE
from livescore.live import InProcessExecutor, ScorerConfig, ScoringJob
from livescore.otel import Emitter
from livescore.runs import Run, TraceParent
from livescore.scoring import Scorer, ScoreResult, create_scorer
from livescore.sinks import ScoreSink, with_sinks

if TYPE_CHECKING:
    from livescore.fleet._ledger import Ledger
    from livescore.fleet._otel_env import SpanHold

__all__ = ("FleetWorker", "WorkerStats")

_log = logging.getLogger("livescore.fleet")

_BUSY_POLL_S = 0.25


@dataclass(slots=True)
class WorkerStats:
    """What one worker process did (its OpenTelemetry metrics say the same per scorer).

    Attributes:
        jobs: Deliveries handled to the end (acknowledged).
        scored, failed, skipped, dropped: How the pairs this worker ended ended.
        duplicates: Pairs skipped because an earlier delivery had already ended them.
        requeued: Deliveries handed back to the queue at shutdown.
        failed_by_type: Failed pairs by ``error.type``.
        loop_cpu_s: CPU seconds of the scoring loop's thread (scorers, judge calls,
            emission), set when the worker stops.
    """

    jobs: int = 0
    scored: int = 0
    failed: int = 0
    skipped: int = 0
    dropped: int = 0
    duplicates: int = 0
    requeued: int = 0
    failed_by_type: dict[str, int] = field(default_factory=dict)
    loop_cpu_s: float = 0.0


@dataclass(slots=True)
class _Pair:
    scorer_id: str
    sample_rate: float | None
    config: ScorerConfig | None  # None: fails without scoring
    failure: tuple[str, str] | None = None  # (error type, message)


class _WorkerJob:
    """The worker-side :class:`~livescore.live.JobHandle` of one delivery.

    A pair's end is emitted and queued for the next commit in one step (see
    :meth:`FleetWorker._commit`); the job is settled when every pair ended and was marked
    done in the ledger.
    """

    def __init__(
        self,
        worker: FleetWorker,
        job_id: str,
        job: ScoringJob,
        rates: Sequence[float | None],
        source: str,
        reply_to: str | None,
    ) -> None:
        self._worker = worker
        self.job_id = job_id
        self._job = job
        self._rates = tuple(rates)
        self._source = source
        self.reply_to = reply_to
        self._lock = threading.Lock()
        self.statuses: dict[str, str] = {}
        self._unmarked = len(job.scorers)
        self._closed = False
        self.settled = threading.Event()
        if self._unmarked == 0:
            self.settled.set()

    @property
    def job(self) -> ScoringJob:
        return self._job

    def close(self) -> dict[str, str]:
        """Refuse every later report (the job goes back to the queue); what ended so far."""
        with self._lock:
            self._closed = True
            return dict(self.statuses)

    def marked(self, count: int) -> None:
        """``count`` of its pairs were marked done (called by the commit)."""
        with self._lock:
            self._unmarked -= count
            if self._unmarked <= 0:
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
        self._worker._record(result)
        config = self._job.scorers[index]
        self._worker._emit_and_queue(
            self,
            sid,
            result.status,
            result,
            lambda: self._worker.emitter.emit(
                self._job.run,
                result,
                sample_rate=self._rates[index],
                source=self._source,
                scorer_version=config.scorer.version,
                start_time_ns=start_time_ns,
                parent=self._job.parent,
            ),
        )

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
            with self._worker._lock:
                self._worker.stats.dropped += 1
            self._worker._emit_and_queue(
                self,
                sid,
                "dropped",
                result,
                lambda sid=sid: self._worker.emitter.record_dropped(sid, reason),  # type: ignore[misc]
            )

    def hand_off(self, index: int | None = None) -> None:
        # Nothing hands a job on from a worker; a report like this is a bug, counted.
        self.drop("handed_off_on_worker", index)


@dataclass(slots=True)
class _Mark:
    handle: _WorkerJob
    scorer_id: str
    status: str
    result: ScoreResult | None  # sent back to an offline evaluation


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
        emitter: Where scores and counts go; an :class:`~livescore.otel.OTelEmitter` on the
            global providers by default (``livescore worker`` configures an SDK from the
            ``OTEL_*`` variables first).
        emit: What the default emitter makes of each score besides metrics: ``"spans"``,
            ``"events"`` or both (the default); see ``LiveDispatcher(emit=...)``. With
            ``emitter=``, set it on that emitter.
        judge_rpm: Judge requests per minute across every worker on this broker.
        judge_concurrency: Judge requests in flight across every worker on this broker.
        heartbeat_timeout: Seconds of silence after which a worker counts as dead and its
            jobs are delivered again.
        drain_timeout: At shutdown, seconds the jobs in flight get to finish; the rest go
            back to the queue.
        max_deliveries: Deliveries of one job after which it is no longer scored but each
            of its pairs fails with ``error.type = "poisoned_job"`` (a job that kills its
            worker every time).
        dedupe_ttl: Seconds a job's ledger entry is kept: a duplicate delivered within it
            is recognised.
        consumer: The engine's consumer (Dramatiq by default).
        span_hold: The span processor that holds the worker's spans until a commit exports
            them (``livescore worker`` installs one; see :meth:`_commit`). Without it, a
            commit force-flushes the tracer provider, and a crash between another flush
            and the commit can duplicate a score.

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
        judge_rpm: float | None = None,
        judge_concurrency: int | None = None,
        heartbeat_timeout: float = 60.0,
        drain_timeout: float = 30.0,
        max_deliveries: int = 3,
        dedupe_ttl: float = 6 * 3600.0,
        consumer: Consumer | None = None,
        span_hold: SpanHold | None = None,
    ) -> None:
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise ValueError(f"concurrency must be a positive int, not {concurrency!r}")
        if not isinstance(max_deliveries, int) or max_deliveries < 1:
            raise ValueError(f"max_deliveries must be a positive int, not {max_deliveries!r}")
        for name, value in (
            ("heartbeat_timeout", heartbeat_timeout),
            ("drain_timeout", drain_timeout),
            ("dedupe_ttl", dedupe_ttl),
        ):
            if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a positive number of seconds, not {value!r}")
        if judge_rpm is not None and not judge_rpm > 0:
            raise ValueError(f"judge_rpm must be positive, not {judge_rpm!r}")
        if judge_concurrency is not None and judge_concurrency < 1:
            raise ValueError(f"judge_concurrency must be at least 1, not {judge_concurrency!r}")
        self.scorers: dict[str, ScorerConfig] = {}
        for item in scorers:
            base = item if isinstance(item, ScorerConfig) else None
            scorer = item.scorer if isinstance(item, ScorerConfig) else item
            if not isinstance(scorer, Scorer):
                raise TypeError(f"scorers must be Scorer or ScorerConfig objects, not {item!r}")
            if scorer.id in self.scorers:
                raise ValueError(f"scorer ids must be unique; repeated: {scorer.id!r}")
            self.scorers[scorer.id] = ScorerConfig(
                scorer,
                timeout=base.timeout if base is not None else 60.0,
                max_concurrency=concurrency,
            )
        if not self.scorers:
            raise ValueError("a FleetWorker needs at least one scorer")
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
        self._emitter_given = emitter
        self.emitter: Emitter = emitter  # type: ignore[assignment]  # set in run()
        self.judge_rpm = judge_rpm
        self.judge_concurrency = judge_concurrency
        self.heartbeat_timeout = float(heartbeat_timeout)
        self.drain_timeout = float(drain_timeout)
        self.max_deliveries = max_deliveries
        self.dedupe_ttl = float(dedupe_ttl)
        self.worker_id = uuid.uuid4().hex[:16]
        self.stats = WorkerStats()
        self.emit_errors = 0
        self.gate: Any = None
        self._consumer = consumer
        self.span_hold = span_hold
        self._lock = threading.Lock()
        self._commit_lock = threading.Lock()  # emission + queueing of a mark, vs a commit
        self._pending: list[_Mark] = []
        self._ledger: Ledger | None = None
        self._barrier: ExportBarrier | None = None
        self._portal: anyio.from_thread.BlockingPortal | None = None
        self._scoring: Any = None
        self._send: Any = None
        self._draining = threading.Event()
        self._aborted = threading.Event()
        self.ready = threading.Event()
        """Set once the worker consumes (for tests and supervisors)."""

    def __repr__(self) -> str:
        return f"FleetWorker(scorers=[{', '.join(self.scorers)}], concurrency={self.concurrency})"

    # -- lifecycle ------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        """Consume and score until ``stop`` is set, then shut down gracefully: jobs in
        flight get ``drain_timeout`` seconds to finish, the rest go back to the queue."""
        from livescore.fleet._dramatiq import DramatiqConsumer, redis_client
        from livescore.fleet._ledger import Ledger

        if self._emitter_given is None:
            from livescore.otel import OTelEmitter

            base: Emitter = OTelEmitter(emit=self.signals)
        else:
            base = self._emitter_given
        self.emitter = with_sinks(base, self.sinks)
        consumer = self._consumer or DramatiqConsumer(
            self.broker,
            self.queue,
            # Twice the scores in flight: a job whose scores ended waits for its commit
            # (up to ~100 ms) before it is acknowledged, and meanwhile the next job scores.
            concurrency=2 * self.concurrency,
            heartbeat_timeout=self.heartbeat_timeout,
        )
        with ExitStack() as stack:
            client = redis_client(self.broker)
            stack.callback(client.close)
            ledger = self._ledger = Ledger(
                client, self.worker_id, alive_ttl=self.heartbeat_timeout, ttl=self.dedupe_ttl
            )
            ledger.start_heartbeat()
            stack.callback(ledger.stop_heartbeat)
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
                consumer.run(self._handle, stop=stop, drain_timeout=self.drain_timeout)
            finally:
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

    # -- one delivery (on an engine thread) ---------------------------------------------------

    def _handle(self, record: Mapping[str, Any], delivery: Delivery) -> None:
        ledger = self._ledger
        assert ledger is not None
        if self._draining.is_set():
            raise Requeue()
        deliveries = ledger.count_delivery(delivery.message_id)
        if not isinstance(record, Mapping):
            _log.error("livescore worker: a message that is not a job record was ignored")
            return
        job_id = str(record.get("id") or delivery.message_id)
        run, parent, pairs = self._plan(record)
        if not pairs:
            _log.error("livescore worker: job %s names no scorer; ignored", job_id)
            ledger.complete(job_id, {}, message_id=delivery.message_id)
            return
        owner = ledger.owner(delivery.message_id)
        lease = max((p.config.timeout if p.config else 60.0) for p in pairs) + 60.0
        states = ledger.claim(job_id, [p.scorer_id for p in pairs], owner=owner, lease=lease)
        deadline = time.monotonic() + lease + self.heartbeat_timeout
        while any(s == "busy" for s in states.values()):
            # Another live worker has these pairs right now (a duplicate delivery): they end
            # there, or its claim lapses and they are ours.
            if self._draining.is_set():
                ledger.release(
                    job_id, [s for s, v in states.items() if v == "claimed"], owner=owner
                )
                ledger.uncount_delivery(delivery.message_id)
                self._count_requeue()
                raise Requeue()
            if time.monotonic() > deadline:
                break
            time.sleep(_BUSY_POLL_S)
            busy = [s for s, v in states.items() if v == "busy"]
            states.update(ledger.claim(job_id, busy, owner=owner, lease=lease))
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
        handle = self._feed(job_id, run, parent, mine, source, reply_to)
        while not handle.settled.wait(0.2):
            if self._aborted.is_set():
                self._give_back(ledger, job_id, handle, mine, owner, delivery)
        ledger.complete(job_id, {}, message_id=delivery.message_id)
        with self._lock:
            self.stats.jobs += 1

    def _give_back(
        self,
        ledger: Ledger,
        job_id: str,
        handle: _WorkerJob,
        mine: Sequence[_Pair],
        owner: str,
        delivery: Delivery,
    ) -> None:
        """The drain deadline passed: keep what ended, hand the rest back to the queue."""
        finished = handle.close()
        if finished:
            self._barrier_wait()  # the pairs that ended are committed (marked done)
        ledger.release(
            job_id, [p.scorer_id for p in mine if p.scorer_id not in finished], owner=owner
        )
        ledger.uncount_delivery(delivery.message_id)
        self._count_requeue()
        raise Requeue()

    def _barrier_wait(self) -> None:
        barrier = self._barrier
        if barrier is not None and not barrier.wait(barrier.timeout + 1.0):
            _log.warning("livescore worker: a commit did not finish in time")

    # -- emission and commits ---------------------------------------------------------------------

    def _emit_and_queue(
        self,
        handle: _WorkerJob,
        scorer_id: str,
        status: str,
        result: ScoreResult,
        emit: Any,
    ) -> None:
        """Emit one pair's end and queue its mark for the next commit, atomically with
        respect to commits: a commit exports exactly the spans of the marks it writes."""
        mark = _Mark(handle, scorer_id, status, result if handle.reply_to else None)
        with self._commit_lock:
            try:
                emit()
            except Exception:
                self._emit_failed()
            self._pending.append(mark)
        if self._barrier is not None:
            self._barrier.request()

    def _commit(self, timeout: float) -> bool:
        """Export the spans of the pairs that ended since the last commit, then mark those
        pairs done in the ledger (on the export barrier's thread).

        Both sets are taken under one lock, so a pair is marked done in the commit that
        exported its span, right after the export: a worker killed between the two (about
        a Redis round trip) leaves a pair exported but not marked, which is scored again (a
        duplicate, never a loss). Metrics and sinks are flushed after the marks.
        """
        with self._commit_lock:
            marks, self._pending = self._pending, []
            spans = self.span_hold.take() if self.span_hold is not None else None
        if spans is not None and self.span_hold is not None:
            exported = self.span_hold.export(spans)
        else:
            exported = _force_flush_traces(timeout)
        # The pairs' gen_ai.evaluation.result events leave before their marks too.
        exported = _force_flush_logs(timeout) and exported
        if marks:
            ledger = self._ledger
            assert ledger is not None
            try:
                ledger.mark_many(
                    [
                        (m.handle.job_id, m.scorer_id, m.status, m.handle.reply_to, m.result)
                        for m in marks
                    ]
                )
            except Exception:
                # Redis is away: keep the marks for the next commit (their spans left).
                _log.warning(
                    "livescore worker: marking scores done failed; retrying", exc_info=True
                )
                with self._commit_lock:
                    self._pending[:0] = marks
                return False
            counts: dict[int, tuple[_WorkerJob, int]] = {}
            for m in marks:
                handle, n = counts.get(id(m.handle), (m.handle, 0))
                counts[id(m.handle)] = (handle, n + 1)
            for handle, n in counts.values():
                handle.marked(n)
        try:
            flushed = (
                self.emitter.flush(timeout) if self.span_hold is None else self._flush_rest(timeout)
            )
        except Exception:
            self._emit_failed()
            flushed = False
        return exported and flushed

    def _flush_rest(self, timeout: float) -> bool:
        """Metrics and sinks (the spans were exported by the commit)."""
        from opentelemetry import metrics

        done = True
        force_flush = getattr(metrics.get_meter_provider(), "force_flush", None)
        if callable(force_flush):
            done = bool(force_flush(int(timeout * 1000)))
        for sink in self.sinks:
            try:
                done = sink.flush(timeout) and done
            except Exception:
                _log.exception("livescore: sink %r raised from flush()", sink.name)
                done = False
        return done

    def _count_requeue(self) -> None:
        with self._lock:
            self.stats.requeued += 1

    def _plan(self, record: Mapping[str, Any]) -> tuple[Run, TraceParent | None, list[_Pair]]:
        """The run, its parent span and each pair: to score, or to fail at once (why)."""
        entries = record.get("scorers")
        pairs: list[_Pair] = []
        seen: set[str] = set()
        for entry in entries if isinstance(entries, list) else ():
            sid = entry.get("id") if isinstance(entry, Mapping) else None
            if not isinstance(sid, str) or sid in seen:
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
            return fallback, parent, pairs
        try:
            run = Run.from_dict(raw_run)  # type: ignore[arg-type]
        except Exception as exc:
            message = f"the job's run could not be read: {type(exc).__name__}: {exc}"
            for p in pairs:
                p.config, p.failure = None, ("invalid_job", message)
            return fallback, parent, pairs
        return run, parent, pairs

    def _feed(
        self,
        job_id: str,
        run: Run,
        parent: TraceParent | None,
        pairs: Sequence[_Pair],
        source: str,
        reply_to: str | None,
    ) -> _WorkerJob:
        """Hand the pairs to score to the scoring loop; fail the others at once."""
        to_score = [p for p in pairs if p.config is not None]
        to_fail = [p for p in pairs if p.config is None]
        configs = tuple(p.config for p in to_score if p.config is not None)
        failing_configs = tuple(ScorerConfig(_placeholder_scorer(p.scorer_id)) for p in to_fail)
        job = ScoringJob(run, configs + failing_configs, parent)
        handle = _WorkerJob(
            self,
            job_id,
            job,
            [p.sample_rate for p in to_score] + [p.sample_rate for p in to_fail],
            source,
            reply_to,
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
            scoring = ScoringJob(run, configs, parent)
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
