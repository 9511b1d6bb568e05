"""The live dispatcher: sample on the hot path, score on a worker thread, count everything."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import logging
import os
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

import anyio

from livescore.live._guard import _SCORING, _add_worker_thread, _remove_worker_thread
from livescore.live._guard import _reset_after_fork as _reset_guard_after_fork
from livescore.live._sampling import SamplingDecision, ScorerConfig, decide
from livescore.live._stats import DispatchStats, _Counts, _total
from livescore.otel import attributes as A
from livescore.otel._emitter import Emitter
from livescore.runs._model import Run, coerce_run
from livescore.scoring._result import ScoreResult, ScorerRunError
from livescore.scoring._scorer import Scorer

__all__ = ("LiveDispatcher", "OverflowPolicy")

_log = logging.getLogger("livescore.live")

OverflowPolicy = Literal["drop_new", "drop_oldest"]
"""What a full queue does: refuse the new run, or evict the oldest queued run for it."""

# How long shutdown waits, past its deadline, for cancelled scoring tasks to unwind.
_CANCEL_GRACE_S = 2.0


class _Job:
    """One accepted run on its way through the worker; guarded by the dispatcher's lock."""

    __slots__ = ("configs", "done", "remaining", "run", "seq", "taken")

    def __init__(self, run: Run, configs: tuple[ScorerConfig, ...], seq: int) -> None:
        self.run = run
        self.configs = configs
        self.seq = seq
        self.taken = False  # False: its pairs are queued; True: in flight
        self.done = [False] * len(configs)  # each pair is counted as finished exactly once
        self.remaining = len(configs)  # pairs not yet finished *and* emitted


class LiveDispatcher:
    """Score sampled runs on a background worker without ever slowing the agent.

    :meth:`submit` is O(1) and never blocks or raises: it decides sampling, puts the run on
    a bounded queue and returns. One daemon worker thread, started on the first submit,
    owns an event loop that runs the scorers (judge calls never touch the agent's thread or
    loop), within per-scorer concurrency limits and timeouts and a global limit on scores
    in flight. Every score, failure and skip goes to the emitter (OpenTelemetry by
    default); every sampled (run, scorer) pair ends as exactly one of scored, failed,
    skipped or dropped, and :meth:`stats` counts them. The sampled and dropped counts
    reach the emitter from the worker too, batched, so that the agent's thread never pays
    for a meter call; :meth:`flush` hands over what is still pending.

    Args:
        scorers: Scorers, or :class:`ScorerConfig` for sampling, timeout and concurrency.
        emitter: Where scores go; an :class:`~livescore.otel.OTelEmitter` on the global
            providers by default.
        max_queue: Runs that may wait for the worker; beyond that, ``overflow`` applies.
        overflow: ``"drop_new"`` refuses new runs while the queue is full;
            ``"drop_oldest"`` evicts the oldest waiting run instead (fresher runs win).
            Either way the dropped pairs count as dropped with reason ``"queue_full"``.
        max_judge_concurrency: Scores in flight at once, over all scorers. A score makes
            its judge calls one after another, so this also caps concurrent judge calls. A
            scorer that cannot keep up holds its share of these slots and, through the
            shared FIFO queue, slows the others: give it a lower rate or more concurrency.
        name: Names the worker thread and the ``livescore.queue.depth`` gauge.
        register_atexit: Shut down (finishing queued work within ``shutdown_timeout``) when
            the interpreter exits. The hook runs before ``atexit`` handlers, so an SDK
            provider created later is still open for the last scores; it holds the
            dispatcher weakly. A dispatcher whose worker started stays alive until
            :meth:`shutdown` (or the ``with`` block) ends it.
        shutdown_timeout: The deadline of the exit-time shutdown, in seconds.

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
        max_queue: int = 1000,
        overflow: OverflowPolicy = "drop_new",
        max_judge_concurrency: int = 16,
        name: str = "livescore",
        register_atexit: bool = True,
        shutdown_timeout: float = 10.0,
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
        _check_int("max_judge_concurrency", max_judge_concurrency)
        if overflow not in ("drop_new", "drop_oldest"):
            raise ValueError(f"overflow must be 'drop_new' or 'drop_oldest', not {overflow!r}")
        if not (isinstance(shutdown_timeout, int | float) and shutdown_timeout >= 0):
            raise ValueError(f"shutdown_timeout must be >= 0 seconds, not {shutdown_timeout!r}")
        if emitter is None:
            from livescore.otel._emitter import OTelEmitter

            emitter = OTelEmitter()
        self.name = name
        self.scorers: tuple[ScorerConfig, ...] = tuple(configs)
        self.emitter: Emitter = emitter
        self.max_queue = max_queue
        self.overflow: OverflowPolicy = overflow
        self.max_judge_concurrency = max_judge_concurrency
        self.shutdown_timeout = float(shutdown_timeout)
        self._closed = False
        self._reset_state()
        _DISPATCHERS.add(self)
        if register_atexit:
            _AT_EXIT.add(self)
        observe = getattr(emitter, "observe_queue_depth", None)
        if callable(observe):
            try:
                observe(self._queue_depth)
            except Exception:
                _log.exception("livescore: the emitter refused the queue-depth gauge")

    def _reset_state(self) -> None:
        # Called at construction and in a forked child (whose copies of the parent's locks
        # may be held by threads that do not exist there).
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._queue: deque[_Job] = deque()
        self._outstanding: dict[int, _Job] = {}  # accepted, unfinished; in seq order
        self._counts: dict[str, _Counts] = {c.scorer_id: _Counts() for c in self.scorers}
        self._seq = 0
        # Metric deltas counted but not yet handed to the emitter, keyed by (scorer id, drop
        # reason; None for sampled). The worker reports them, so the agent's thread never
        # pays for a meter call (an SDK Counter.add costs ~10 µs); see _report_metrics.
        self._pending: dict[tuple[str, str | None], int] = {}
        # Held while reporting (taken before self._lock, never inside it): a flush waits
        # for a report in progress on the worker instead of returning before it lands.
        self._report_lock = threading.Lock()
        self._emit_errors = 0
        self._logged_emit_error = False
        self._thread: threading.Thread | None = None
        self._worker_ident: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None
        self._cancel: Callable[[], None] | None = None
        self._waiting = False  # the worker sleeps until a submit wakes it
        self._stopping = False  # the worker exits once the queue is empty
        self._abort = False  # the worker cancels everything now
        self._flush_waiters = 0

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
        predicate are in ``decision.deferred`` and decide at submit.

        Example:
            >>> from livescore.scorers import create_keyword_coverage_scorer
            >>> d = LiveDispatcher([create_keyword_coverage_scorer()], register_atexit=False)
            >>> d.sample("4bf92f3577b34da6a3ce929d0e0e4736").sampled
            True
        """
        return decide(self.scorers, key)

    def submit(self, run: Run, decision: SamplingDecision | None = None) -> bool:
        """Hand a finished run to the worker. O(1); never blocks, never raises.

        Args:
            run: The finished run.
            decision: From :meth:`sample`; decided now from ``run.trace_id`` (or
                ``run.run_id``) when omitted.

        Returns:
            Whether the run was queued for at least one scorer. ``False`` when no scorer
            sampled it, the queue was full (``drop_new``), or the dispatcher is shut down;
            the last two count as dropped.
        """
        try:
            return self._submit(run, decision)
        except Exception:
            # A bug here must not reach the agent; the pairs already counted stay counted.
            _log.exception("livescore: submit failed; the run is not scored")
            return False

    def _submit(self, run: Run, decision: SamplingDecision | None) -> bool:
        if not isinstance(run, Run):
            run = coerce_run(run)
        if decision is None:
            decision = self.sample(run.trace_id or run.run_id)
        configs = list(decision.scorers)
        broken: list[ScorerConfig] = []
        for config in decision.deferred:
            try:
                if config.sampling(run):  # type: ignore[operator]
                    configs.append(config)
            except Exception:
                _log.exception("livescore: sampling predicate of %r raised", config.scorer_id)
                broken.append(config)
        if not configs and not broken:
            return False
        accepted = False
        start: threading.Thread | None = None
        with self._lock:
            for config in (*configs, *broken):
                self._count_sampled(config.scorer_id)
            for config in broken:
                self._count_drop(config.scorer_id, "sampling_error")
            if not configs:
                pass
            elif self._closed:
                for config in configs:
                    self._count_drop(config.scorer_id, "shutdown")
            elif len(self._queue) >= self.max_queue and self.overflow == "drop_new":
                for config in configs:
                    self._count_drop(config.scorer_id, "queue_full")
            else:
                if len(self._queue) >= self.max_queue:
                    self._drop_job(self._queue.popleft(), "queue_full")
                self._seq += 1
                job = _Job(run, tuple(configs), self._seq)
                self._queue.append(job)
                self._outstanding[job.seq] = job
                for config in configs:
                    self._counts_of(config.scorer_id).queued += 1
                accepted = True
                if self._thread is None:
                    start = self._thread = threading.Thread(
                        target=self._thread_main, name=f"{self.name}-worker", daemon=True
                    )
            then = self._reporter()
        if start is not None:
            self._start_worker(start)
        if then is not None:
            then()
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
                then = self._reporter()
            if then is not None:
                then()
        except Exception:
            _log.exception("livescore: drop() failed")

    # -- accounting (callers hold self._lock) --------------------------------------------

    def _counts_of(self, scorer_id: str) -> _Counts:
        counts = self._counts.get(scorer_id)
        if counts is None:  # a decision made by another dispatcher's scorers
            counts = self._counts[scorer_id] = _Counts()
        return counts

    def _count_sampled(self, scorer_id: str) -> None:
        self._counts_of(scorer_id).sampled += 1
        key = (scorer_id, None)
        self._pending[key] = self._pending.get(key, 0) + 1

    def _count_drop(self, scorer_id: str, reason: str) -> None:
        counts = self._counts_of(scorer_id)
        counts.dropped += 1
        counts.dropped_by_reason[reason] = counts.dropped_by_reason.get(reason, 0) + 1
        key = (scorer_id, reason)
        self._pending[key] = self._pending.get(key, 0) + 1

    def _drop_job(self, job: _Job, reason: str) -> None:
        """Drop every unfinished pair of ``job``."""
        for i, config in enumerate(job.configs):
            if job.done[i]:
                continue
            job.done[i] = True
            counts = self._counts_of(config.scorer_id)
            if job.taken:
                counts.in_flight -= 1
            else:
                counts.queued -= 1
            self._count_drop(config.scorer_id, reason)
            self._complete(job)

    def _complete(self, job: _Job) -> None:
        job.remaining -= 1
        if job.remaining == 0:
            self._outstanding.pop(job.seq, None)
            if self._flush_waiters:
                self._cond.notify_all()

    def _reporter(self) -> Callable[[], object] | None:
        """Who reports the metric deltas just counted: what to call once the lock is released.

        The worker reports them when it next looks at its queue (waking it if it sleeps).
        With no worker to do it, or once shut down (when the agent's speed no longer
        matters and the worker may be gone for good), the caller reports them itself.
        """
        if self._thread is None or self._closed:
            return self._report_metrics
        if self._waiting and self._loop is not None and self._wake is not None:
            self._waiting = False
            return functools.partial(_wake, self._loop, self._wake)
        return None  # the worker is busy and reports at its next loop iteration

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
            for (scorer_id, reason), count in pending.items():
                # One failed call costs its own deltas, not the others'; a broken emitter
                # costs a log line and a count, never a run.
                try:
                    if reason is None:
                        self.emitter.record_sampled(scorer_id, count)
                    else:
                        self.emitter.record_dropped(scorer_id, reason, count)
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

    def _start_worker(self, thread: threading.Thread) -> None:
        try:
            thread.start()
        except RuntimeError:  # e.g. "can't create new thread at interpreter shutdown"
            _log.exception("livescore: cannot start the scoring worker; queued runs dropped")
            with self._lock:
                if self._thread is thread:
                    self._thread = None
                while self._queue:
                    self._drop_job(self._queue.popleft(), "no_worker")
            self._report_metrics()  # no worker will

    def _thread_main(self) -> None:
        ident = threading.get_ident()
        _add_worker_thread(ident)
        try:
            anyio.run(self._worker_main, backend="asyncio")
        except BaseException:
            _log.exception("livescore: the scoring worker stopped")
        finally:
            _remove_worker_thread(ident)
            with self._lock:
                # Normally nothing is left; after a crash, what was accepted is dropped.
                reason = "shutdown" if self._stopping else "worker_error"
                for job in list(self._outstanding.values()):
                    self._drop_job(job, reason)
                self._queue.clear()
                self._loop = self._wake = self._cancel = None
                self._worker_ident = None
                if self._thread is threading.current_thread():
                    self._thread = None
                self._cond.notify_all()
            self._report_metrics()  # the last deltas of this worker, and its drops

    async def _worker_main(self) -> None:
        wake = asyncio.Event()
        admission = anyio.Semaphore(self.max_judge_concurrency)
        limiters: dict[str, anyio.CapacityLimiter] = {}
        async with anyio.create_task_group() as tg:
            with self._lock:
                self._loop = asyncio.get_running_loop()
                self._wake = wake
                self._worker_ident = threading.get_ident()
                self._cancel = tg.cancel_scope.cancel
                if self._abort:
                    tg.cancel_scope.cancel()
            while True:
                wake.clear()
                job, stop = self._take()
                # After _take, not before: a delta counted once it marked the worker as
                # waiting wakes it, and every earlier one is reported here.
                self._report_metrics()
                if job is None:
                    if stop:
                        break
                    await wake.wait()
                    continue
                for i, config in enumerate(job.configs):
                    try:
                        await admission.acquire()
                    except BaseException:
                        # Cancelled (shutdown) before these pairs started.
                        self._drop_pairs(job, range(i, len(job.configs)), self._cancel_reason())
                        raise
                    limiter = limiters.get(config.scorer_id)
                    if limiter is None:
                        limiter = anyio.CapacityLimiter(config.max_concurrency)
                        limiters[config.scorer_id] = limiter
                    tg.start_soon(self._score_pair, job, i, limiter, admission)

    def _cancel_reason(self) -> str:
        return "shutdown" if self._stopping else "worker_error"

    def _take(self) -> tuple[_Job | None, bool]:
        with self._lock:
            if self._queue:
                job = self._queue.popleft()
                job.taken = True
                for i, config in enumerate(job.configs):
                    if not job.done[i]:
                        counts = self._counts_of(config.scorer_id)
                        counts.queued -= 1
                        counts.in_flight += 1
                return job, False
            if self._stopping:
                return None, True
            self._waiting = True
            return None, False

    def _drop_pairs(self, job: _Job, indices: Iterable[int], reason: str) -> None:
        # Runs on the worker; its deltas are reported at the next loop iteration or exit.
        with self._lock:
            for i in indices:
                if not job.done[i]:
                    job.done[i] = True
                    config = job.configs[i]
                    counts = self._counts_of(config.scorer_id)
                    if job.taken:
                        counts.in_flight -= 1
                    else:
                        counts.queued -= 1
                    self._count_drop(config.scorer_id, reason)
                    self._complete(job)

    async def _score_pair(
        self,
        job: _Job,
        index: int,
        limiter: anyio.CapacityLimiter,
        admission: anyio.Semaphore,
    ) -> None:
        config = job.configs[index]
        token = _SCORING.set(True)
        result: ScoreResult | None = None
        start_ns: int | None = None
        try:
            async with limiter:
                start_ns = time.time_ns()
                started = time.perf_counter()
                try:
                    # The timeout covers the score, not the wait for a concurrency slot.
                    with anyio.fail_after(config.timeout):
                        result = await config.scorer.run(job.run)
                        if time.perf_counter() - started > config.timeout:
                            # A synchronous step can overrun without ever reaching a
                            # checkpoint where fail_after could fire.
                            raise TimeoutError
                except ScorerRunError as exc:
                    result = exc.result
                except TimeoutError:
                    result = _failure(
                        job.run,
                        config,
                        "timeout",
                        f"scorer {config.scorer_id!r} took longer than {config.timeout:g} s",
                        time.perf_counter() - started,
                    )
                except Exception as exc:
                    result = _failure(
                        job.run,
                        config,
                        type(exc).__name__,
                        str(exc) or type(exc).__name__,
                        time.perf_counter() - started,
                    )
        finally:
            admission.release()
            _SCORING.reset(token)
            if result is None:  # cancelled (shutdown, or the worker failed) before a result
                self._drop_pairs(job, (index,), self._cancel_reason())
        assert result is not None  # every path without a result raised above
        self._finish(job, index, config, result, start_ns)

    def _finish(
        self,
        job: _Job,
        index: int,
        config: ScorerConfig,
        result: ScoreResult,
        start_ns: int | None,
    ) -> None:
        with self._lock:
            if job.done[index]:  # shutdown gave up on it and counted it as dropped
                return
            job.done[index] = True
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
        try:
            self.emitter.emit(
                job.run,
                result,
                sample_rate=config.rate,
                source="live",
                scorer_version=config.scorer.version,
                start_time_ns=start_ns,
            )
        except Exception:
            self._emit_failed()
        finally:
            # Completion (what flush waits for) comes after the emission.
            with self._lock:
                self._complete(job)

    # -- lifecycle -----------------------------------------------------------------------

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every run accepted so far is scored and emitted.

        Runs submitted while waiting are not waited for. Call it from a thread that may
        block (not from inside a scorer; that returns ``False`` at once). The counts still
        waiting for the worker to report them reach the emitter before it returns, so its
        metrics then agree with :meth:`stats`.

        Args:
            timeout: Seconds to wait at most; ``None`` waits as long as it takes.

        Returns:
            ``True`` when all that work is done, ``False`` on timeout.
        """
        if threading.get_ident() == self._worker_ident:
            return False  # the worker cannot wait for itself
        deadline = None if timeout is None else time.monotonic() + max(timeout, 0.0)
        done = self._wait_done(deadline)
        # Report here: the worker may be asleep, busy for a while, or gone.
        return self._report_metrics(_left(deadline)) and done

    def _wait_done(self, deadline: float | None) -> bool:
        with self._cond:
            target = self._seq
            self._flush_waiters += 1
            try:
                while True:
                    first = next(iter(self._outstanding), None)
                    if first is None or first > target:
                        return True
                    if deadline is None:
                        self._cond.wait()
                        continue
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return False
                    self._cond.wait(left)
            finally:
                self._flush_waiters -= 1

    async def aflush(self, timeout: float | None = None) -> bool:  # noqa: ASYNC109
        """:meth:`flush` for async code: waits in a thread, not on the event loop."""
        return await anyio.to_thread.run_sync(self.flush, timeout)

    def shutdown(self, timeout: float | None = None) -> None:
        """Stop accepting runs, finish what was accepted within ``timeout``, stop the worker.

        Work still unfinished at the deadline is cancelled and counted as dropped with
        reason ``"shutdown"``; later submissions are counted the same way and do nothing.
        OpenTelemetry providers belong to the application and are not flushed here; an
        emitter's own ``flush(timeout)`` hook is called. Safe to call more than once.

        Args:
            timeout: Seconds to wait for queued and running scores; ``None`` waits.
        """
        try:
            self._shutdown(timeout)
        except Exception:
            _log.exception("livescore: shutdown failed")

    def _shutdown(self, timeout: float | None) -> None:
        deadline = None if timeout is None else time.monotonic() + max(timeout, 0.0)
        with self._lock:
            self._closed = True
        if threading.get_ident() == self._worker_ident:
            return  # called from a scorer: stop accepting, the rest is up to the app
        done = self.flush(timeout)
        with self._lock:
            self._stopping = True
            if not done:
                self._abort = True
                while self._queue:
                    self._drop_job(self._queue.popleft(), "shutdown")
            loop, wake, cancel = self._loop, self._wake, self._cancel
            thread = self._thread
        if loop is not None and wake is not None:
            try:
                loop.call_soon_threadsafe(wake.set)
                if not done and cancel is not None:
                    loop.call_soon_threadsafe(cancel)
            except RuntimeError:  # the loop already closed
                pass
        if thread is not None and thread is not threading.current_thread():
            join = None
            if deadline is not None:
                join = max(deadline - time.monotonic(), 0.0) + _CANCEL_GRACE_S
            thread.join(join)
            if thread.is_alive():
                # A scorer blocks the worker's loop in synchronous code: give up on it.
                _log.warning("livescore: the scoring worker did not stop; dropping its work")
                with self._lock:
                    for job in list(self._outstanding.values()):
                        self._drop_job(job, "shutdown")
        # The last counts reach the emitter before its own flush hook sends them on.
        self._report_metrics(_left(deadline))
        hook = getattr(self.emitter, "flush", None)
        if callable(hook):
            try:
                hook(_left(deadline))
            except Exception:
                self._emit_failed()

    @property
    def closed(self) -> bool:
        """Whether :meth:`shutdown` was called (submissions are then counted no-ops)."""
        return self._closed

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
        return _total(per_scorer, emit_errors)

    def _queue_depth(self) -> list[tuple[int, dict[str, str]]]:
        return [(len(self._queue), {A.LIVESCORE_DISPATCHER: self.name})]

    def _after_fork_in_child(self) -> None:
        self._reset_state()


def _failure(
    run: Run, config: ScorerConfig, error_type: str, message: str, duration_s: float
) -> ScoreResult:
    judge = config.scorer.judge
    return ScoreResult(
        run_id=run.run_id,
        scorer_id=config.scorer_id,
        status="failed",
        error=message,
        error_type=error_type,
        duration_s=duration_s,
        judge_model=judge.model if judge is not None else None,
    )


def _left(deadline: float | None) -> float | None:
    return None if deadline is None else max(deadline - time.monotonic(), 0.0)


def _wake(loop: asyncio.AbstractEventLoop, event: asyncio.Event) -> None:
    # RuntimeError: the loop closed under us, so the worker is exiting anyway.
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(event.set)


def _check_int(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, not {value}")


# Every dispatcher, held weakly: reset in forked children, shut down at exit.
_DISPATCHERS: weakref.WeakSet[LiveDispatcher] = weakref.WeakSet()
_AT_EXIT: weakref.WeakSet[LiveDispatcher] = weakref.WeakSet()


def _shutdown_at_exit() -> None:
    for dispatcher in list(_AT_EXIT):
        dispatcher.shutdown(dispatcher.shutdown_timeout)


def _after_fork_in_child() -> None:
    _reset_guard_after_fork()
    for dispatcher in list(_DISPATCHERS):
        dispatcher._after_fork_in_child()


def _register_exit_hook() -> None:
    # threading's exit hooks run before atexit's, and atexit runs last-registered first: an
    # SDK TracerProvider created after `import livescore` would otherwise be shut down before
    # the final scores reach it. concurrent.futures uses the same hook for the same reason.
    register = getattr(threading, "_register_atexit", None)
    if register is not None:
        try:
            register(_shutdown_at_exit)
            return
        except RuntimeError:  # imported while the interpreter is already shutting down
            return
    atexit.register(_shutdown_at_exit)


_register_exit_hook()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
