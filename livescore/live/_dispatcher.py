"""The live dispatcher: sample on the hot path, hand jobs to an executor, count everything."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import anyio

from livescore._background import BackgroundQueue, Overflow, fit_to_deadline
from livescore._emit import EmitSignal
from livescore._trace_ids import normalize_span_id, normalize_trace_id
from livescore.live._executor import (
    Executor,
    InProcessExecutor,
    JobHandle,
    ScoringJob,
    broker_executor,
)
from livescore.live._exit import track
from livescore.live._guard import add_worker_thread, is_scoring, remove_worker_thread
from livescore.live._sampling import SamplingDecision, ScorerConfig, decide
from livescore.live._stats import Counts, DispatchStats, total_stats
from livescore.otel import Emitter, current_trace_parent
from livescore.otel import attributes as A
from livescore.runs import Run, RunLike, TraceParent, coerce_run
from livescore.scoring import Scorer, ScoreResult

if TYPE_CHECKING:
    from livescore.sinks import ScoreSink

__all__ = ("LiveDispatcher", "OverflowPolicy")

_log = logging.getLogger("livescore.live")

OverflowPolicy = Overflow
"""What a full queue does: refuse the new run, or evict the oldest queued run for it."""

# How long shutdown waits, past its deadline, for cancelled scoring tasks to unwind (at
# exit, only what the exit deadline leaves).
_CANCEL_GRACE_S = 2.0

_EMITTER_METHODS = (
    "emit",
    "record_sampled",
    "record_dropped",
    "record_handed_off",
    "observe_queue_depth",
    "flush",
)

# Metric deltas waiting for the worker to report them, keyed by (kind, scorer id, reason).
_SAMPLED, _DROPPED, _HANDED_OFF = "sampled", "dropped", "handed_off"


# How long a worker woken by a submit waits for more runs before it starts on them. Scores
# take judge calls of seconds; a few milliseconds more are invisible there, while one
# wake-up per batch instead of per run takes a GIL hand-off off the agent's busy thread.
_LINGER_S = 0.02


class _Job:
    """One accepted job on its way through the executor: the :class:`JobHandle` it gets.

    Its state is guarded by the dispatcher's lock; the methods may be called from any
    thread.
    """

    __slots__ = ("_dispatcher", "done", "job", "remaining", "seq", "taken")

    def __init__(self, dispatcher: LiveDispatcher, job: ScoringJob) -> None:
        self._dispatcher = dispatcher
        self.job = job
        self.seq = 0  # numbered by the queue
        self.taken = False  # False: its pairs are queued; True: the executor has it
        self.done = [False] * len(job.scorers)  # each pair is counted as finished once
        self.remaining = len(job.scorers)  # pairs not yet finished *and* emitted

    def finish(self, index: int, result: ScoreResult, *, start_time_ns: int | None = None) -> None:
        self._dispatcher._finish(self, index, result, start_time_ns)

    def drop(self, reason: str, index: int | None = None) -> None:
        self._dispatcher._end_pairs(self, _indices(self, index), _DROPPED, str(reason))

    def hand_off(self, index: int | None = None) -> None:
        self._dispatcher._end_pairs(self, _indices(self, index), _HANDED_OFF, None)


def _applied_rates(
    configs: list[ScorerConfig], rates: list[float | None]
) -> tuple[float | None, ...] | None:
    """The rates a job carries: only when one differs from its scorer's fixed rate."""
    if all(rate == config.rate for config, rate in zip(configs, rates, strict=True)):
        return None
    return tuple(rates)


def _indices(job: _Job, index: int | None) -> Iterable[int]:
    if index is None:
        return range(len(job.done))
    return (index,) if 0 <= index < len(job.done) else ()


class _JobStream:
    """The jobs an executor takes, as an async iterator on the worker's loop.

    Between jobs it hands the pending metric deltas to the emitter, and when the queue is
    empty it waits in a worker thread on the queue's condition, so the agent's ``submit``
    only notifies a condition variable (it never waits for the loop).
    """

    def __init__(
        self, dispatcher: LiveDispatcher, generation: int, limiter: anyio.CapacityLimiter
    ) -> None:
        self._dispatcher = dispatcher
        self._generation = generation
        self._limiter = limiter

    def __aiter__(self) -> _JobStream:
        return self

    async def __anext__(self) -> JobHandle:
        d = self._dispatcher
        while True:
            job, stop = d._take()
            # After _take, not before: a delta counted once it marked the worker as
            # waiting wakes it, and every earlier one is reported here.
            d._report_metrics()
            if job is not None:
                return job
            if stop:
                raise StopAsyncIteration
            await anyio.to_thread.run_sync(
                d._park, self._generation, abandon_on_cancel=True, limiter=self._limiter
            )


class LiveDispatcher:
    """Score sampled runs in the background without ever slowing the agent.

    :meth:`submit` is O(1) and never blocks or raises: it decides sampling, puts the run on
    a bounded queue and returns. One daemon worker thread, started on the first submit,
    runs an anyio event loop (asyncio) on which the executor takes the queued jobs; the
    default :class:`~livescore.live.InProcessExecutor` scores them there (judge calls never
    touch the agent's thread or loop), within per-scorer concurrency limits and timeouts
    and a global limit on scores in flight. Every score, failure and skip goes to the
    emitter (OpenTelemetry by default); every sampled (run, scorer) pair ends as exactly one
    of scored, failed, skipped, dropped or handed off (to another process, by a broker
    executor), and :meth:`stats` counts them. The sampled and dropped counts reach the
    emitter from the worker too, batched, so that the agent's thread never pays for a meter
    call; :meth:`flush` hands over what is still pending.

    Scores nest under the run's span (``run.trace_id`` / ``run.span_id``), or, for a run
    that carries no span, under the span current when :meth:`submit` was called. A run
    whose trace is not sampled (its trace flags lack the sampled bit) is dropped with
    reason ``"trace_not_sampled"`` without any judge call, unless
    ``score_unsampled_traces=True``.

    Args:
        scorers: Scorers, or :class:`ScorerConfig` for sampling, timeout and concurrency.
        emitter: Where scores and counts go; an :class:`~livescore.otel.OTelEmitter` on the
            global providers by default.
        emit: What the default emitter makes of each score besides its metrics:
            ``("spans", "events")`` (the default, also written ``"spans,events"``), an
            evaluation span under the run's span and a ``gen_ai.evaluation.result`` event
            parented to it; ``"spans"`` or ``"events"`` alone. With ``emitter=``, set it on
            that emitter (``OTelEmitter(emit=...)``); with ``broker=``, on the workers
            (``livescore worker --emit``).
        sinks: Dashboards each finished score also goes to
            (:class:`~livescore.sinks.PhoenixSink`, :class:`~livescore.sinks.LangfuseSink`),
            after the emitter and off the agent's path (each sink queues and delivers on
            its own thread). The emitter is wrapped
            with :func:`~livescore.sinks.with_sinks`: :meth:`shutdown` and
            :meth:`flush_emitter` flush the sinks after the emitter but never shut them
            down (share one sink between dispatchers; it shuts down at exit or when you
            call its ``shutdown``).
        executor: What runs the accepted jobs: :class:`~livescore.live.InProcessExecutor`
            (the default) scores them on the worker thread; a
            :class:`~livescore.fleet.BrokerExecutor` publishes them to a worker fleet.
        broker: Score on a worker fleet instead of in this process: the URL of its broker
            (``"redis://host:6379/0"``), shorthand for
            ``executor=livescore.fleet.BrokerExecutor(broker)``. Sampled runs are published
            from the worker thread and counted as ``handed_off``; ``livescore worker``
            processes score them (``pip install 'livescore-ai[fleet]'``).
        max_queue: Runs that may wait for the executor; beyond that, ``overflow`` applies.
        overflow: ``"drop_new"`` refuses new runs while the queue is full;
            ``"drop_oldest"`` evicts the oldest waiting run instead (fresher runs win).
            Either way the dropped pairs count as dropped with reason ``"queue_full"``.
        max_judge_concurrency: Scores in flight at once, over all scorers, for the default
            executor (16). A score makes its judge calls one after another, so this also
            caps concurrent judge calls. A scorer that cannot keep up holds its share of
            these slots and, through the shared FIFO queue, slows the others: give it a
            lower rate or more concurrency. With ``executor=``, set it on the executor.
        name: Names the worker thread and the ``livescore.queue.depth`` gauge.
        register_atexit: Shut down when the interpreter exits, finishing queued work
            within the process's exit deadline (``LIVESCORE_EXIT_TIMEOUT``, 5 s, shared
            with the sinks, which deliver after the dispatchers; see
            :mod:`livescore.live`) or ``shutdown_timeout``, whichever ends first. The exit
            hook is registered again whenever a worker starts (the first submit), so it
            runs before the exit hooks of OpenTelemetry SDK providers created before that:
            the last scores still reach them. It holds the dispatcher weakly. A dispatcher
            whose worker started stays alive until :meth:`shutdown` (or the ``with`` block)
            ends it.
        shutdown_timeout: The deadline of the shutdown at the end of a ``with`` block, in
            seconds; at exit, the exit deadline cuts it shorter.
        score_unsampled_traces: Score runs whose trace is not sampled too. Their score
            spans cannot join the run's trace (the SDK's ``ParentBased`` samplers drop the
            children of an unsampled span), so each becomes the root of a new trace, linked
            to the run's span and carrying ``livescore.run.trace_id``; your sampler decides
            for that new trace afresh. The scores' metrics are recorded either way.

    Example:
        >>> from livescore import Run
        >>> from livescore.scorers import create_keyword_coverage_scorer
        >>> from livescore.live import LiveDispatcher, ScorerConfig
        >>> dispatcher = LiveDispatcher(
        ...     [ScorerConfig(create_keyword_coverage_scorer(), sampling=1.0)],
        ...     register_atexit=False,
        ... )
        >>> dispatcher.submit(Run(input="Python generators", output="Generators in Python"))
        True
        >>> dispatcher.flush(timeout=10)
        True
        >>> dispatcher.stats().scored
        1
        >>> dispatcher.shutdown()

    Fork safety: a child process gets a fresh, empty dispatcher state (queue, counts,
    worker) and starts its own worker on its first submit; the parent's queued runs stay
    the parent's. A dispatcher shut down before the fork stays shut down in the child.
    """

    def __init__(
        self,
        scorers: Sequence[Scorer | ScorerConfig],
        *,
        emitter: Emitter | None = None,
        emit: str | Iterable[EmitSignal] | None = None,
        sinks: Sequence[ScoreSink] | None = None,
        executor: Executor | None = None,
        broker: str | None = None,
        max_queue: int = 1000,
        overflow: OverflowPolicy = "drop_new",
        max_judge_concurrency: int | None = None,
        name: str = "livescore",
        register_atexit: bool = True,
        shutdown_timeout: float = 10.0,
        score_unsampled_traces: bool = False,
    ) -> None:
        if isinstance(scorers, Scorer | ScorerConfig) or not isinstance(scorers, Sequence):
            raise TypeError("scorers must be a list of Scorer or ScorerConfig")
        configs: list[ScorerConfig] = []
        for item in scorers:
            if isinstance(item, ScorerConfig):
                configs.append(item)
            elif isinstance(item, Scorer):
                configs.append(ScorerConfig(item))
            else:
                raise TypeError(f"scorers must be Scorer or ScorerConfig objects, not {item!r}")
        if not configs:
            raise ValueError("a LiveDispatcher needs at least one scorer")
        ids = [c.scorer_id for c in configs]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"scorer ids must be unique; repeated: {duplicates}")
        _check_int("max_queue", max_queue)
        if emit is not None and emitter is not None:
            raise ValueError(
                "emit= configures the default emitter: with emitter=..., set it there "
                "(OTelEmitter(emit=...))"
            )
        if broker is not None:
            if emit is not None:
                raise ValueError(
                    "with broker=, scores are emitted on the workers: choose what they emit "
                    "there (livescore worker --emit, or FleetWorker(emit=...))"
                )
            if executor is not None:
                raise ValueError("give executor= or broker=, not both")
            if sinks:
                raise ValueError(
                    "with broker=, scores are emitted on the workers: attach the sinks there "
                    "(a `sinks` list beside the scorers, or livescore worker --sinks MODULE:ATTR)"
                )
            executor = broker_executor(broker)
            if max_judge_concurrency is not None:
                raise ValueError(
                    "max_judge_concurrency limits in-process scoring; with broker=, the "
                    "workers' --scorer-concurrency and --fleet-judge-concurrency apply"
                )
        if max_judge_concurrency is not None:
            _check_int("max_judge_concurrency", max_judge_concurrency)
            if executor is not None:
                raise ValueError(
                    "max_judge_concurrency configures the default executor: with executor=..., "
                    "set the concurrency on the executor"
                )
        if overflow not in ("drop_new", "drop_oldest"):
            raise ValueError(f"overflow must be 'drop_new' or 'drop_oldest', not {overflow!r}")
        if not (isinstance(shutdown_timeout, int | float) and shutdown_timeout >= 0):
            raise ValueError(f"shutdown_timeout must be >= 0 seconds, not {shutdown_timeout!r}")
        if executor is None:
            executor = InProcessExecutor(max_concurrency=max_judge_concurrency or 16)
        elif not isinstance(executor, Executor):
            raise TypeError(f"executor must have an async run(jobs) method, not {executor!r}")
        if emitter is None:
            from livescore.otel import OTelEmitter

            emitter = OTelEmitter() if emit is None else OTelEmitter(emit=emit)
        elif not isinstance(emitter, Emitter):
            missing = [m for m in _EMITTER_METHODS if not callable(getattr(emitter, m, None))]
            raise TypeError(
                f"emitter {emitter!r} lacks {', '.join(missing)}: an emitter implements "
                "livescore.otel.Emitter (or subclass OTelEmitter)"
            )
        if sinks:
            from livescore.sinks import with_sinks

            if not isinstance(sinks, Sequence):
                raise TypeError(f"sinks must be a list of sinks, not {sinks!r}")
            emitter = with_sinks(emitter, sinks)
        self.name = name
        self.scorers: tuple[ScorerConfig, ...] = tuple(configs)
        self.emitter: Emitter = emitter
        self.executor: Executor = executor
        self.max_queue = max_queue
        self.overflow: OverflowPolicy = overflow
        self.max_judge_concurrency = max_judge_concurrency
        self.shutdown_timeout = float(shutdown_timeout)
        self.score_unsampled_traces = bool(score_unsampled_traces)
        self._q: BackgroundQueue[_Job] = BackgroundQueue(
            f"{name}-worker",
            self._thread_main,
            max_items=max_queue,
            overflow=overflow,
            linger=_LINGER_S,
            on_fork=self._reset_state,
        )
        self._reset_state()
        track(self, at_exit=register_atexit)
        try:
            emitter.observe_queue_depth(self._queue_depth)
        except Exception:
            _log.exception("livescore: the emitter refused the queue-depth gauge")

    def _reset_state(self) -> None:
        # Called at construction and in a forked child, after the queue was emptied there
        # (the parent's locks may be held by threads that do not exist in the child).
        self._lock = self._q.lock  # guards the counts below and the queue
        self._counts: dict[str, Counts] = {c.scorer_id: Counts() for c in self.scorers}
        # Metric deltas counted but not yet handed to the emitter. The worker reports them,
        # so the agent's thread never pays for a meter call (an SDK Counter.add costs
        # ~10 µs); see _report_metrics.
        self._pending: dict[tuple[str, str, str | None], int] = {}
        # Held while reporting (taken before self._lock, never inside it): a flush waits
        # for a report in progress on the worker instead of returning before it lands.
        self._report_lock = threading.Lock()
        self._emit_errors = 0
        self._logged_emit_error = False

    def __repr__(self) -> str:
        ids = ", ".join(c.scorer_id for c in self.scorers)
        return f"LiveDispatcher({self.name!r}, scorers=[{ids}])"

    def __enter__(self) -> LiveDispatcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown(self.shutdown_timeout)

    # -- hot path ------------------------------------------------------------------------

    def sample(self, key: str | None) -> SamplingDecision:
        """Decide which scorers will score the run with this key (pure: counts nothing).

        Call it when the run starts, with its trace id (or run id), to skip capturing runs
        no scorer wants; pass the decision to :meth:`submit`. Scorers whose sampling is a
        predicate are in ``decision.deferred`` and decide at submit. A key that is a trace
        id (32 hex digits, or ``0x``-prefixed) is normalised first (lowercase, no ``0x``,
        zero-padded), so its spelling never changes the decision; :meth:`submit` keys a
        run's ``trace_id`` the same way. A scorer with a
        :class:`~livescore.live.BudgetSampling` counts the run toward its target here.

        Example:
            >>> from livescore.scorers import create_keyword_coverage_scorer
            >>> d = LiveDispatcher([create_keyword_coverage_scorer()], register_atexit=False)
            >>> d.sample("4bf92f3577b34da6a3ce929d0e0e4736").sampled
            True
        """
        if key is not None and (len(key) == 32 or key[:2] in ("0x", "0X")):
            # What looks like a trace id (not a run id) is keyed by its canonical form.
            key = normalize_trace_id(key) or key
        return decide(self.scorers, key)

    def submit(self, run: RunLike, decision: SamplingDecision | None = None) -> bool:
        """Hand a finished run to the worker. O(1); never blocks, never raises.

        Args:
            run: The finished run: a :class:`~livescore.Run` or its mapping form.
            decision: From :meth:`sample`; decided now from the run's trace id (or the
                trace of the span current now, or ``run.run_id``) when omitted.

        Returns:
            Whether the run was queued for at least one scorer. ``False`` when no scorer
            sampled it, its trace is not sampled, the queue was full (``drop_new``), or the
            dispatcher is shut down; all but the first count as dropped.
        """
        try:
            return self._submit(run, decision)
        except Exception:
            # A bug here must not reach the agent; the pairs already counted stay counted.
            _log.exception("livescore: submit failed; the run is not scored")
            return False

    def _submit(self, run: RunLike, decision: SamplingDecision | None) -> bool:
        if not isinstance(run, Run):
            run = coerce_run(run)
        # Cheap checks only, on every submit: the full parent is built for accepted runs.
        trace_id = normalize_trace_id(run.trace_id) if run.trace_id is not None else None
        current: TraceParent | None = None
        if trace_id is None or run.span_id is None:
            # A run with no span of its own nests under the span the agent ran in.
            current = current_trace_parent()
            if current is not None and run.trace_id is not None and trace_id != current.trace_id:
                current = None
            if current is not None:
                trace_id = current.trace_id
        if decision is None:
            # trace_id is normalised already; anything else goes through sample() as a key.
            if trace_id is not None:
                decision = decide(self.scorers, trace_id)
            else:
                decision = self.sample(run.trace_id or run.run_id)
        configs = list(decision.scorers)
        rates = [decision.rate_of(i) for i in range(len(configs))]
        broken: list[ScorerConfig] = []
        for config in decision.deferred:
            try:
                if config.sampling(run):  # type: ignore[operator]
                    configs.append(config)
                    rates.append(None)
            except Exception:
                _log.exception("livescore: sampling predicate of %r raised", config.scorer_id)
                broken.append(config)
        if not configs and not broken:
            return False
        if current is not None:
            trace_sampled = current.sampled
        else:
            trace_sampled = trace_id is None or bool(run.trace_flags & 1)
        accepted = False
        q = self._q
        with self._lock:
            for config in (*configs, *broken):
                self._count_sampled(config.scorer_id)
            for config in broken:
                self._count_drop(config.scorer_id, "sampling_error")
            if not configs:
                pass
            elif q.closed:
                for config in configs:
                    self._count_drop(config.scorer_id, "shutdown")
            elif not (trace_sampled or self.score_unsampled_traces):
                # Its spans would vanish in the SDK: no judge is paid for them.
                for config in configs:
                    self._count_drop(config.scorer_id, "trace_not_sampled")
            elif not q.admits_locked():
                for config in configs:
                    self._count_drop(config.scorer_id, "queue_full")
            else:
                parent = current if current is not None else _parent_of(run, trace_id)
                job = ScoringJob(run, tuple(configs), parent, _applied_rates(configs, rates))
                evicted = q.put_locked(_Job(self, job))
                if evicted is not None:
                    self._drop_job(evicted, "queue_full")
                for config in configs:
                    self._counts_of(config.scorer_id).queued += 1
                accepted = True
            report_here = self._hand_over_metrics()
        if not q.start_pending():
            self._no_worker()
        if report_here:
            self._report_metrics()
        return accepted

    def drop(self, decision: SamplingDecision, reason: str) -> None:
        """Count a sampled run that will never be submitted (evicted, abandoned…).

        Each of ``decision.scorers`` counts as sampled and dropped with ``reason``; scorers
        with a predicate never decided, so they count nothing. Never raises.

        Example:
            >>> from livescore.scorers import create_keyword_coverage_scorer
            >>> d = LiveDispatcher([create_keyword_coverage_scorer()], register_atexit=False)
            >>> d.drop(d.sample("some-trace-id"), "evicted")
            >>> d.stats().dropped_by_reason
            {'evicted': 1}
        """
        try:
            with self._lock:
                for config in decision.scorers:
                    self._count_sampled(config.scorer_id)
                    self._count_drop(config.scorer_id, str(reason))
                report_here = self._hand_over_metrics()
            if report_here:
                self._report_metrics()
        except Exception:
            _log.exception("livescore: drop() failed")

    # -- accounting (callers hold self._lock) --------------------------------------------

    def _counts_of(self, scorer_id: str) -> Counts:
        counts = self._counts.get(scorer_id)
        if counts is None:  # a decision made by another dispatcher's scorers
            counts = self._counts[scorer_id] = Counts()
        return counts

    def _add_pending(self, kind: str, scorer_id: str, reason: str | None) -> None:
        key = (kind, scorer_id, reason)
        self._pending[key] = self._pending.get(key, 0) + 1

    def _count_sampled(self, scorer_id: str) -> None:
        self._counts_of(scorer_id).sampled += 1
        self._add_pending(_SAMPLED, scorer_id, None)

    def _count_drop(self, scorer_id: str, reason: str) -> None:
        counts = self._counts_of(scorer_id)
        counts.dropped += 1
        counts.dropped_by_reason[reason] = counts.dropped_by_reason.get(reason, 0) + 1
        self._add_pending(_DROPPED, scorer_id, reason)

    def _drop_job(self, job: _Job, reason: str) -> None:
        """Drop every unfinished pair of ``job``."""
        self._end_pairs_locked(job, range(len(job.done)), _DROPPED, reason)

    def _end_pairs_locked(
        self, job: _Job, indices: Iterable[int], kind: str, reason: str | None
    ) -> None:
        for i in indices:
            if job.done[i]:
                continue
            job.done[i] = True
            scorer_id = job.job.scorers[i].scorer_id
            counts = self._counts_of(scorer_id)
            if job.taken:
                counts.in_flight -= 1
            else:
                counts.queued -= 1
            if kind == _HANDED_OFF:
                counts.handed_off += 1
                self._add_pending(_HANDED_OFF, scorer_id, None)
            else:
                self._count_drop(scorer_id, reason or "dropped")
            self._complete(job)

    def _end_pairs(self, job: _Job, indices: Iterable[int], kind: str, reason: str | None) -> None:
        # An executor's report, from any thread; its deltas reach the emitter at the
        # worker's next look at its queue (or a flush).
        try:
            with self._lock:
                self._end_pairs_locked(job, indices, kind, reason)
        except Exception:
            _log.exception("livescore: an executor's report failed")

    def _complete(self, job: _Job) -> None:
        job.remaining -= 1
        if job.remaining == 0:
            self._q.finish_locked(job)

    def _hand_over_metrics(self) -> bool:
        """Make sure someone reports the deltas just counted; ``True``: the caller must.

        The worker reports them when it next looks at its queue (waking it if it is
        parked: a notify, no wait). With no worker, or once shut down (when the agent's
        speed no longer matters and the worker may be gone for good), the caller does.
        """
        if not self._q.running or self._q.closed:
            return True
        self._q.wake_locked()
        return False

    def _report_metrics(self, timeout: float | None = None) -> bool:
        """Hand the pending metric deltas to the emitter (outside ``self._lock``).

        Returns ``False`` only when another thread's report did not end within ``timeout``.
        """
        if not self._report_lock.acquire(timeout=-1 if timeout is None else max(timeout, 0)):
            return False
        try:
            with self._lock:
                if not self._pending:  # the common case on the worker: nothing to report
                    return True
                pending, self._pending = self._pending, {}
            for (kind, scorer_id, reason), count in pending.items():
                # One failed call costs its own deltas, not the others'; a broken emitter
                # costs a log line and a count, never a run.
                try:
                    if kind == _SAMPLED:
                        self.emitter.record_sampled(scorer_id, count)
                    elif kind == _HANDED_OFF:
                        self.emitter.record_handed_off(scorer_id, count)
                    else:
                        self.emitter.record_dropped(scorer_id, reason or "dropped", count)
                except Exception:
                    self._emit_failed()
            return True
        finally:
            self._report_lock.release()

    def _emit_failed(self) -> None:
        with self._lock:
            self._emit_errors += 1
            first = not self._logged_emit_error
            self._logged_emit_error = True
        if first:
            _log.exception("livescore: the emitter raised (logged once; see stats().emit_errors)")

    # -- worker --------------------------------------------------------------------------

    def _no_worker(self) -> None:
        # The worker could not start (e.g. "can't create new thread at interpreter
        # shutdown"): what it would have taken is dropped; the next submit tries again.
        _log.error("livescore: cannot start the scoring worker; queued runs dropped")
        with self._lock:
            if not self._q.running:
                for job in self._q.discard_locked():
                    self._drop_job(job, "no_worker")
        self._report_metrics()  # no worker will

    def _thread_main(self, generation: int) -> None:
        ident = threading.get_ident()
        add_worker_thread(ident)
        try:
            # The worker is an anyio event loop in this thread. Other threads reach it only
            # through conditions that threads of its own wait on (anyio.to_thread), never
            # by calling into the loop: a BlockingPortal call waits until the loop runs it,
            # which would make the agent's submit wait behind a busy loop.
            anyio.run(self._worker_main, generation, backend="asyncio")
        except BaseException:
            _log.exception("livescore: the scoring worker stopped")
        finally:
            remove_worker_thread(ident)
            with self._lock:
                # Normally nothing is left; after a crash, what was accepted is dropped.
                reason = "shutdown" if self._q.stopping else "worker_error"
                for job in self._q.discard_locked():
                    self._drop_job(job, reason)
                self._q.thread_ended_locked()
            self._report_metrics()  # the last deltas of this worker, and its drops

    async def _worker_main(self, generation: int) -> None:
        # The two threads that wait on the worker's behalf (for work, for an abort) get a
        # limiter of their own: busy synchronous scorer steps never keep them from waiting.
        signals = anyio.CapacityLimiter(2)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._cancel_on_abort, tg.cancel_scope, generation, signals)
                await self.executor.run(_JobStream(self, generation, signals))
                tg.cancel_scope.cancel()  # done: stop waiting for an abort
        finally:
            with self._lock:
                # Let this worker's parked threads go (they check the generation).
                self._q.retire_locked(generation)

    async def _cancel_on_abort(
        self, scope: anyio.CancelScope, generation: int, limiter: anyio.CapacityLimiter
    ) -> None:
        await anyio.to_thread.run_sync(
            self._q.wait_for_abort, generation, abandon_on_cancel=True, limiter=limiter
        )
        scope.cancel()

    def _park(self, generation: int) -> None:
        """In a worker thread: wait until submit, drop or shutdown has news for the worker.

        Woken by a submit, it lingers a few milliseconds before handing back to the loop:
        runs submitted meanwhile find the worker awake and queue without a notify, so a
        busy agent pays one wake-up (a GIL hand-off on its thread) per batch instead of
        per run. Shutdown and flush cut the linger short.
        """
        with self._lock:
            self._q.park_locked(generation)

    def _take(self) -> tuple[_Job | None, bool]:
        q = self._q
        with self._lock:
            if q.queue:
                job = q.queue.popleft()
                job.taken = True
                for i, config in enumerate(job.job.scorers):
                    if not job.done[i]:
                        counts = self._counts_of(config.scorer_id)
                        counts.queued -= 1
                        counts.in_flight += 1
                return job, False
            if q.stopping:
                return None, True
            q.idle_locked()
            return None, False

    def _finish(
        self, job: _Job, index: int, result: ScoreResult, start_time_ns: int | None
    ) -> None:
        try:
            with self._lock:
                if not 0 <= index < len(job.done) or job.done[index]:
                    # Shutdown gave up on it and counted it as dropped, or a second report.
                    return
                job.done[index] = True
                config = job.job.scorers[index]
                config.record_score(result)  # a budget-following rate learns the cost
                counts = self._counts_of(config.scorer_id)
                counts.in_flight -= 1
                if result.status == "scored":
                    counts.scored += 1
                elif result.status == "skipped":
                    counts.skipped += 1
                else:
                    counts.failed += 1
                    error_type = result.error_type or "error"
                    counts.failed_by_type[error_type] = counts.failed_by_type.get(error_type, 0) + 1
        except Exception:
            _log.exception("livescore: an executor's report failed")
            return
        try:
            self.emitter.emit(
                job.job.run,
                result,
                sample_rate=job.job.rate_of(index),
                source="live",
                scorer_version=config.scorer.version,
                start_time_ns=start_time_ns,
                parent=job.job.parent,
            )
        except Exception:
            self._emit_failed()
        finally:
            # Completion (what flush waits for) comes after the emission.
            with self._lock:
                self._complete(job)

    # -- lifecycle -----------------------------------------------------------------------

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every run accepted so far is scored (or handed off) and emitted.

        Runs submitted while waiting are not waited for. The counts still waiting for the
        worker to report them reach the emitter before it returns, so its metrics then
        agree with :meth:`stats`. Called from inside a scorer (a step, ``get_context``, or
        a thread a scorer started), it returns ``False`` at once: the scorer's own work is
        part of what it would wait for.

        Args:
            timeout: Seconds to wait at most; ``None`` waits as long as it takes.

        Returns:
            ``True`` when all that work is done, ``False`` on timeout (or from a scorer).
        """
        if is_scoring():
            return False  # the worker cannot wait for itself
        deadline = None if timeout is None else time.monotonic() + max(timeout, 0.0)
        done = self._q.flush(timeout)
        # Report here: the worker may be parked, busy for a while, or gone.
        return self._report_metrics(_left(deadline)) and done

    async def aflush(self, timeout: float | None = None) -> bool:  # noqa: ASYNC109
        """:meth:`flush` for async code: waits in a thread, not on the event loop.

        Like :meth:`flush`, it returns ``False`` at once when awaited inside a scorer.
        """
        if is_scoring():
            return False
        return await anyio.to_thread.run_sync(self.flush, timeout)

    def flush_emitter(self, timeout: float | None = None) -> bool:
        """Report pending counts and flush the emitter (export buffered spans). Never raises.

        Returns:
            ``False`` when that did not finish within ``timeout``, or the emitter raised.
        """
        deadline = None if timeout is None else time.monotonic() + max(timeout, 0.0)
        reported = self._report_metrics(_left(deadline))
        try:
            return bool(self.emitter.flush(_left(deadline))) and reported
        except Exception:
            self._emit_failed()
            return False

    def shutdown(self, timeout: float | None = None) -> None:
        """Stop accepting runs, finish what was accepted within ``timeout``, stop the worker.

        Work still unfinished at the deadline is cancelled and counted as dropped with
        reason ``"shutdown"``; later submissions are counted the same way and do nothing.
        Then the emitter is flushed (:meth:`Emitter.flush`; an OpenTelemetry emitter
        force-flushes its providers but never shuts them down: they belong to the
        application). Safe to call more than once.

        Args:
            timeout: Seconds to wait for queued and running scores; ``None`` waits.
        """
        try:
            self._shutdown(timeout, _CANCEL_GRACE_S)
        except Exception:
            _log.exception("livescore: shutdown failed")

    def _exit_shutdown(self, deadline: float) -> None:
        """The exit-time shutdown: within ``shutdown_timeout`` and the exit ``deadline``."""
        try:
            self._shutdown(*fit_to_deadline(deadline, self.shutdown_timeout, _CANCEL_GRACE_S))
        except Exception:
            _log.exception("livescore: shutdown failed")

    def _shutdown(self, timeout: float | None, grace: float) -> None:
        deadline = None if timeout is None else time.monotonic() + max(timeout, 0.0)
        self._q.close()
        if is_scoring():
            return  # called from a scorer: stop accepting, the rest is up to the app
        # Past the deadline the worker is told to cancel what it runs; it gets the grace to
        # unwind. Its own last act drops whatever it left; what is left beyond that, a
        # scorer blocking the worker's loop in synchronous code holds.
        left = self._q.shutdown(timeout, flush=self.flush, grace=grace)
        if left:
            _log.warning("livescore: the scoring worker did not stop; dropping its work")
            with self._lock:
                for job in left:
                    self._drop_job(job, "shutdown")
        # The last counts reach the emitter before its own flush sends them on.
        self.flush_emitter(_left(deadline))

    @property
    def closed(self) -> bool:
        """Whether :meth:`shutdown` was called (submissions are then counted no-ops)."""
        return self._q.closed

    def stats(self) -> DispatchStats:
        """A consistent snapshot of the counts (per scorer and in total).

        Example:
            >>> from livescore.scorers import create_keyword_coverage_scorer
            >>> d = LiveDispatcher([create_keyword_coverage_scorer()], register_atexit=False)
            >>> d.stats().sampled
            0
        """
        with self._lock:
            per_scorer = {sid: c.snapshot() for sid, c in self._counts.items()}
            emit_errors = self._emit_errors
        return total_stats(per_scorer, emit_errors)

    def _queue_depth(self) -> list[tuple[int, dict[str, str]]]:
        return [(len(self._q.queue), {A.LIVESCORE_DISPATCHER: self.name})]


def _parent_of(run: Run, trace_id: str | None) -> TraceParent | None:
    """The run's own span as a parent (``trace_id`` is already normalised)."""
    if trace_id is None:
        return None
    span_id = normalize_span_id(run.span_id)
    if span_id is None:
        return None
    return TraceParent(trace_id, span_id, run.trace_flags & 0xFF)


def _left(deadline: float | None) -> float | None:
    return None if deadline is None else max(deadline - time.monotonic(), 0.0)


def _check_int(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, not {value}")
