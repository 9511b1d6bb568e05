"""From ended spans to submitted runs, off the caller's thread: the span processor's and the
OTLP receiver's shared back end.

Callers hand spans over with :meth:`SpanPipeline.put_span` (one SDK span, from a span
processor's ``on_end``; :meth:`SpanPipeline.put_log` takes one SDK log record) or
:meth:`SpanPipeline.offer` (decoded records, from a receiver: spans, and the log events
that hold message content where an instrumentation writes it to log records): all are
O(1), never block and never raise. Spans and log events travel through one queue, in the
order they came, so a span's log records reach the assembler before the root span that
finishes its trace. The queue and its thread are livescore's background worker
(``livescore._background``; the pipeline is its consumer): the thread converts them,
feeds the :class:`~livescore.traces.TraceAssembler`, and hands each finished run to the
dispatcher.
"""

from __future__ import annotations

import logging
import math
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from livescore._background import BackgroundWorker, Consumer
from livescore.live import Dispatcher, sample_turn
from livescore.runs import Run
from livescore.traces import (
    AssemblyLimits,
    AssemblyStats,
    LogEvent,
    SpanRecord,
    TraceAssembler,
    from_log_record,
    from_readable_span,
)

__all__ = ("PipelineStats", "SpanPipeline", "dispatcher_backlog")

_log = logging.getLogger("livescore.collect")

# A woken worker waits this long for more spans before it works: one wake-up (a GIL
# hand-off on the agent's thread) per batch of spans instead of per span.
_LINGER_S = 0.005
# Queue items the worker takes per pass: spans that never stop coming (threads emitting
# flat out) still get assembled, and a shutdown's deadline is looked at between passes.
_MAX_BATCH = 2_048
# What a shutdown waits past its deadline for the worker to give up (to finish the pass it
# is on); once the worker counts what it gives up, the shutdown waits for that to end.
_ABANDON_S = 1.0
# The scope the score spans are emitted under: they come back through the same provider
# and are not part of any agent's run.
_OWN_SCOPE = "livescore"


def dispatcher_backlog(dispatcher: Any) -> Callable[[], bool] | None:
    """A ``backlog`` for :class:`SpanPipeline`: whether ``dispatcher``'s queue is nearly
    full (90 % of ``max_queue`` for some scorer); ``None`` for a dispatcher that says no
    such thing (a broker's)."""
    max_queue = getattr(dispatcher, "max_queue", None)
    if not isinstance(max_queue, int) or not hasattr(dispatcher, "stats"):
        return None

    def backlogged() -> bool:
        stats = dispatcher.stats()
        queued = max((s.queued for s in stats.by_scorer.values()), default=0)
        return bool(queued >= max_queue * 0.9)

    return backlogged


@dataclass(frozen=True, slots=True)
class PipelineStats:
    """What a :class:`SpanPipeline` did with the spans it was given.

    Attributes:
        spans_queued: Spans (and log events) waiting for the worker now.
        spans_refused: Spans (and log events) refused because the queue was full (never
            assembled).
        spans_dropped_at_shutdown: Spans (and log events) a shutdown let go: ending after
            it began, or still queued when its timeout passed (never assembled). A run
            whose root span is among them counts as dropped (``"shutdown"``) on the
            dispatcher, as do the runs of the traces it still held then.
        own_spans: livescore's own score spans, seen and ignored.
        runs_waiting: Assembled runs waiting for the dispatcher's room.
        runs_submitted: Runs handed to the dispatcher (sampled by at least one scorer).
        runs_not_sampled: Runs no scorer sampled.
        runs_failed_dropped: Runs that ended in an error, dropped (``score_failed_runs``
            off).
        assembly: The assembler's counts (spans held, traces finished and evicted…).
        logs_dropped: SDK log records given to :meth:`SpanPipeline.put_log` that belong to
            no span or name no event (plain log lines), or livescore's own score events:
            dropped.
    """

    spans_queued: int = 0
    spans_refused: int = 0
    spans_dropped_at_shutdown: int = 0
    own_spans: int = 0
    runs_waiting: int = 0
    runs_submitted: int = 0
    runs_not_sampled: int = 0
    runs_failed_dropped: int = 0
    assembly: AssemblyStats = field(default_factory=AssemblyStats)
    logs_dropped: int = 0


class _Marker:
    """A flush request travelling through the queue behind the spans before it: the worker
    numbers it, the pipeline finishes it once it handled them, and the flush waits for that."""

    __slots__ = ("deadline", "drain", "seq")

    def __init__(self, drain: bool, deadline: float | None) -> None:
        self.seq = 0
        self.drain = drain
        self.deadline = deadline  # a drain hands waiting runs over until then


_TICK: Any = object()
"""The batch item of a pass with nothing queued: open traces and waiting runs are due."""


class _Serve(Consumer[Any]):
    """The pipeline as the background worker's consumer (private: not the pipeline's API)."""

    role = "span pipeline"

    def __init__(self, pipeline: SpanPipeline) -> None:
        self._p = pipeline

    def take_locked(self, queue: deque[Any], now: float, urgent: bool) -> list[Any]:
        return self._p._take_locked(queue, now)

    def wait_locked(self, now: float) -> float | None:
        due = self._p._next_pass
        return None if due == math.inf else max(due - now, 0.0)

    def handle(self, batch: list[Any]) -> None:
        self._p._handle(batch)

    def dropped_locked(self, items: list[Any], reason: str) -> None:
        # Counted outside the lock (report() or a close-out): counting a root asks the
        # dispatcher for its sampling.
        self._p._left.extend(items)

    def report(self) -> None:
        if self._p._left:
            self._p._count_left()

    def thread_stopped(self) -> None:
        self._p._close_out(gave_up=self._p._worker.aborted)

    def after_fork(self) -> None:
        self._p._reset()


class SpanPipeline:
    """A bounded queue of ended spans and the thread that turns them into scored runs.

    The queue and its thread are livescore's one background worker
    (``livescore._background``); spans go on it without a lock, and the pipeline bounds it
    by spans, bytes and traces itself.

    Args:
        sink: Where finished runs go (a :class:`~livescore.live.LiveDispatcher`).
        limits: What the assembler may hold.
        finish_on_root: Finish a trace when its root span arrives (in process), else when
            it has been quiet for ``limits.quiet_period`` (a receiver).
        max_queued_spans: Spans that may wait for the worker; past it new spans are
            refused and counted.
        score_failed_runs: Submit runs whose span ended in an error (``Run.error`` set);
            by default they are dropped with reason ``"run_error"``.
        name: Names the worker thread.
        backlog: Asked whether the runs' consumer is (nearly) full; while it says so,
            assembled runs wait here (up to ``max_waiting_runs``) instead of being dropped
            by it, and :meth:`has_room` is ``False`` (a receiver answers 429). Without it,
            every run is submitted at once (the dispatcher counts what it cannot queue).
        max_waiting_runs: Assembled runs that may wait for the consumer's room.
        on_finish: Told about every finished trace's spans, on the pipeline's thread
            (``livescore collect --explain``).
    """

    def __init__(
        self,
        sink: Dispatcher,
        limits: AssemblyLimits,
        *,
        finish_on_root: bool,
        max_queued_spans: int = 100_000,
        score_failed_runs: bool = False,
        name: str = "livescore-spans",
        backlog: Callable[[], bool] | None = None,
        max_waiting_runs: int = 10_000,
        on_finish: Callable[[Sequence[SpanRecord]], None] | None = None,
    ) -> None:
        if isinstance(max_queued_spans, bool) or not isinstance(max_queued_spans, int):
            raise TypeError(f"max_queued_spans must be an int, not {max_queued_spans!r}")
        if max_queued_spans < 1:
            raise ValueError(f"max_queued_spans must be at least 1, not {max_queued_spans}")
        self.sink = sink
        self._conversations = bool(getattr(sink, "scores_conversations", False))
        self.score_failed_runs = score_failed_runs
        self.max_queued_spans = max_queued_spans
        self.name = name
        self._limits = limits
        self._finish_on_root = finish_on_root
        self._on_finish = on_finish
        self._max_bytes = limits.max_bytes
        self._max_traces = limits.max_traces
        self._backlog = backlog
        self.max_waiting_runs = max_waiting_runs
        self._said_full = False
        self._stopped = False
        # Set once what was left was counted (the worker's thread stopped): a span queued
        # after that (a caller that was already past the stopped check) is counted by its
        # caller, so nothing queued is ever left uncounted.
        self._closed_out = False
        self._serve = _Serve(self)
        # Items: an SDK span, a log event, a list of SpanRecord (offer()), or a _Marker.
        # Spans are appended without a lock (worker.append); max_items bounds nothing here
        # (the markers are put unbounded), the pipeline counts spans, bytes and traces.
        self._worker: BackgroundWorker[Any] = BackgroundWorker(
            name, self._serve, max_items=max_queued_spans, linger=_LINGER_S
        )
        self._append = self._worker.append  # bound once: on_end is the hot path
        self._reset()

    def _reset(self) -> None:
        # At construction and in a forked child (the worker emptied its queue there): the
        # parent's spans, traces and counts stay the parent's.
        self._queue: deque[Any] = self._worker.queue
        self._lock = threading.Lock()  # counters written by callers (after the worker's)
        self._queued = 0  # spans in the queue's batches (offer()); guarded by _lock
        self._batches = 0  # the batches themselves (queue items that are lists)
        self._bytes = 0  # their estimated size
        self._pending_traces = 0  # trace ids of the queued batches (at most new traces)
        self._left: list[Any] = []  # dropped by the worker, to be counted (outside its lock)
        self._refused = 0
        self._dropped_at_shutdown = 0
        # Traces whose run was counted dropped at shutdown (its root refused or abandoned):
        # the spans of theirs still held are evicted, not assembled into a second, partial
        # run. Bounded like the open traces; past it a root is still counted.
        self._dropped_traces: set[str] = set()
        self._abandoning = threading.Event()  # the worker counts what it gives up
        self._own = 0
        self._submitted = 0
        self._not_sampled = 0
        self._failed_dropped = 0
        self._logs_dropped = 0
        self._assembler = TraceAssembler(
            self._limits,
            finish_on_root=self._finish_on_root,
            keep_trace=self._keep_trace,
            on_evict=self._on_evict,
            on_finish=self._on_finish,
            # A receiver answered 200 for every span it holds: the oldest trace is finished
            # early for room, never evicted (in process, a trace waits for its root).
            finish_early=not self._finish_on_root,
        )
        self._assembly = AssemblyStats()
        self._backlogged = False
        self._ready: deque[Run] = deque()  # assembled, waiting for the dispatcher's room
        self._next_pass = math.inf  # when open traces or waiting runs are due a pass

    # -- the callers' side (any thread; O(1), never raises) -----------------------------------

    def put_span(self, span: Any) -> None:
        """Queue one SDK span (a ``ReadableSpan``); refused and counted when full."""
        try:
            # len() of a deque is O(1) and safe from any thread; the queue holds one item
            # per span here (a receiver's batches go through offer()).
            if self._stopped:
                self.refuse_span(span)  # its run counts as dropped ("shutdown")
                return
            if len(self._queue) + self._queued >= self.max_queued_spans:
                self._refuse(1)
                return
            self._append(span)
            if self._closed_out:  # shutdown ended between the check and the append
                self._count_queued()
        except Exception:
            _log.debug("livescore: put_span failed", exc_info=True)

    def refuse_span(self, span: Any) -> None:
        """Count one SDK span as dropped at shutdown without queueing it (a span processor
        shutting down: what ends after that is not waited for). A root span that is a run
        counts its sampled run as dropped (``"shutdown"``): every run ends counted."""
        with self._lock:
            self._dropped_at_shutdown += 1
        try:
            # Only a root is worth reading here (on the agent's thread, while shutting
            # down): a child ending late belongs to a run assembled from its root.
            parent = getattr(span, "parent", None)
            if parent is None or getattr(parent, "is_remote", False):
                record = from_readable_span(span)
                if record is not None:
                    self._drop_runs_of([record])
        except Exception:
            _log.debug("livescore: refuse_span failed", exc_info=True)

    def _drop_runs_of(self, spans: Sequence[SpanRecord]) -> None:
        """Count the sampled runs whose root spans these are as dropped (``"shutdown"``), and
        remember their traces so that what is held of them is evicted, not assembled."""
        for span in spans:
            # The test an eviction makes (a span of a convention livescore reads), not an
            # assembly: this runs where time is short (an agent's thread, a late worker).
            if not TraceAssembler.looks_like_agent(span):
                continue
            trace_id = span.trace_id
            with self._lock:
                if trace_id in self._dropped_traces:
                    continue
                if len(self._dropped_traces) < self._max_traces:
                    self._dropped_traces.add(trace_id)
            decision = self.sink.sample(trace_id)
            if decision.sampled:
                self.sink.drop(decision, "shutdown")

    def put_log(self, record: Any) -> None:
        """Queue one SDK log record (a ``LogData`` / ``ReadWriteLogRecord``) as a log event
        of its span; one that names no span or no event is counted and dropped."""
        try:
            scope = getattr(record, "instrumentation_scope", None)
            decoded = from_log_record(record)
            if not decoded.events or (scope is not None and scope.name == _OWN_SCOPE):
                with self._lock:
                    self._logs_dropped += 1
                return
            if self._stopped:
                with self._lock:
                    self._dropped_at_shutdown += 1
                return
            if len(self._queue) + self._queued >= self.max_queued_spans:
                self._refuse(1)
                return
            self._append(decoded.events[0])
            if self._closed_out:  # shutdown ended between the check and the append
                self._count_queued()
        except Exception:
            _log.debug("livescore: put_log failed", exc_info=True)

    def offer(self, records: Sequence[SpanRecord | LogEvent]) -> bool:
        """Queue decoded spans and log events; ``False`` (nothing queued, all counted as
        refused) when the queue cannot take them all."""
        count = len(records)
        size = sum(r.size for r in records)
        traces = len({r.trace_id for r in records})
        with self._lock:
            full = len(self._queue) + self._queued + count > self.max_queued_spans
            # What the open traces hold (as of the worker's last batch) plus this batch: past
            # the cap, refusing it (the client retries) beats evicting a trace for it.
            full = full or self._assembly.bytes_held + self._bytes + size > self._max_bytes
            full = full or len(self._ready) >= self.max_waiting_runs
            # Likewise the open traces: past the limit the oldest would go (finished early);
            # refused, its spans come again once the traces held have gone quiet.
            open_traces = self._assembly.traces_open + self._pending_traces + traces
            full = full or open_traces > self._max_traces
            if self._stopped or full or self._backlogged:
                self._refused += count
                self._say_full()
                return False
            self._bytes += size
            self._pending_traces += traces
            self._queued += count
            self._batches += 1
        self._append(list(records))
        if self._closed_out:  # shutdown ended meanwhile: what it queued is counted here
            self._count_queued()
        return True

    def has_room(self, count: int = 1) -> bool:
        """Whether ``count`` more spans would be queued now (and memory is not full)."""
        if self._stopped or len(self._queue) + self._queued + count > self.max_queued_spans:
            return False
        if self._backlogged or len(self._ready) >= self.max_waiting_runs:
            return False
        if self._assembly.traces_open + self._pending_traces >= self._max_traces:
            return False
        return self._assembly.bytes_held < self._assembler.limits.max_bytes

    def _refuse(self, count: int) -> None:
        with self._lock:
            self._refused += count
            self._say_full()

    def _say_full(self) -> None:
        if not self._said_full:
            self._said_full = True
            _log.warning(
                "livescore: the span queue is full (%d spans); spans are refused and counted "
                "(logged once; see stats().spans_refused)",
                self.max_queued_spans,
            )

    # -- control ------------------------------------------------------------------------------

    def flush(self, timeout: float | None = None, *, drain: bool = False) -> bool:
        """Wait until the spans queued so far are assembled and their runs submitted.

        Args:
            timeout: Seconds to wait at most.
            drain: Also finish every open trace now (what is held is all there will be).
        """
        if self._stopped:
            return True  # nothing more will be assembled
        worker = self._worker
        if not worker.running and not drain:
            return True
        deadline = None if timeout is None else time.monotonic() + timeout
        with worker.lock:
            worker.put_locked(_Marker(drain, deadline), bounded=False)
        worker.start_pending()
        # False on the worker's own thread: it cannot wait for itself.
        return worker.flush(timeout)

    def shutdown(self, timeout: float | None = None) -> bool:
        """Finish every open trace, submit its runs, stop the worker. ``False`` when that did
        not end within ``timeout``: the worker then gives up, and what it had not assembled
        is counted (``spans_dropped_at_shutdown``; the runs as dropped, ``"shutdown"``)."""
        drained = True

        def drain(left: float | None) -> bool:
            nonlocal drained
            if not self._stopped:
                drained = self.flush(left, drain=True)
            with self._lock:
                self._stopped = True
            return drained

        # Past the deadline the worker gives up (it takes no more batches) and gets
        # _ABANDON_S more to finish the pass it is on; its thread then counts what it gave up.
        worker = self._worker
        worker.shutdown(timeout, grace=_ABANDON_S, flush=drain)
        if self._abandoning.is_set():
            # It has begun counting: that is waited for (livescore's own bounded work), so
            # the counts are final when shutdown returns.
            worker.join()
        if not worker.running:
            # What callers queued after the worker's last look (they were past the stopped
            # check when it was set), and what the shutdown took off the queue, is counted.
            self._close_out(gave_up=False)
        return drained

    def report_metrics(self, meter_provider: Any = None) -> None:
        """Count the partial traces (``assembly.traces_partial``: a span's parent never
        arrived) on the ``livescore.collect.partial_traces`` counter of ``meter_provider``
        (the global one by default), read at each collection. The pipeline is held weakly.
        """
        from opentelemetry import metrics

        from livescore._version import __version__
        from livescore.otel import attributes as A

        ref = weakref.ref(self)

        def observe(options: metrics.CallbackOptions) -> Iterator[metrics.Observation]:
            pipeline = ref()
            if pipeline is not None:
                yield metrics.Observation(pipeline.stats().assembly.traces_partial)

        meter = metrics.get_meter(
            A.INSTRUMENTATION_SCOPE, __version__, meter_provider=meter_provider
        )
        meter.create_observable_counter(
            A.METRIC_PARTIAL_TRACES,
            callbacks=[observe],
            unit="{trace}",
            description="Traces finished with a span whose parent never arrived (spans split "
            "between receivers)",
        )

    def stats(self) -> PipelineStats:
        """A snapshot of the counts."""
        with self._lock:
            return PipelineStats(
                spans_queued=len(self._queue) - self._batches + self._queued,
                spans_refused=self._refused,
                spans_dropped_at_shutdown=self._dropped_at_shutdown,
                own_spans=self._own,
                runs_waiting=len(self._ready),
                runs_submitted=self._submitted,
                runs_not_sampled=self._not_sampled,
                runs_failed_dropped=self._failed_dropped,
                assembly=self._assembly.copy(),
                logs_dropped=self._logs_dropped,
            )

    # -- the worker's thread ------------------------------------------------------------------

    def _take_locked(self, queue: deque[Any], now: float) -> list[Any]:
        """The next batch (under the worker's lock): up to _MAX_BATCH queued items, ending at
        a flush marker (what was queued before it is all it waits for); a tick when nothing
        is queued and open traces or waiting runs are due."""
        if not queue:
            return [_TICK] if now >= self._next_pass else []
        batch: list[Any] = []
        while queue and len(batch) < _MAX_BATCH:
            item = queue.popleft()
            batch.append(item)
            if isinstance(item, _Marker):
                break
        self._unqueue([item for item in batch if isinstance(item, list)])
        return batch

    def _unqueue(self, batches: list[list[SpanRecord]]) -> None:
        """Take offer()'s batches, off the queue now, out of what it counts as queued."""
        if batches:
            with self._lock:
                for records in batches:
                    self._queued -= len(records)
                    self._batches -= 1
                    self._bytes -= sum(r.size for r in records)
                    self._pending_traces -= len({r.trace_id for r in records})

    def _handle(self, batch: list[Any]) -> None:
        """One pass: convert the batch's spans, feed the assembler, hand the runs over, and
        finish the flush marker that ends it."""
        assembler = self._assembler
        markers: list[_Marker] = []
        records: list[SpanRecord | LogEvent] = []
        own = 0
        for item in batch:
            if item is _TICK:
                continue
            if isinstance(item, _Marker):
                markers.append(item)
            elif isinstance(item, list):
                records.extend(item)
            elif isinstance(item, LogEvent):  # put_log's
                records.append(item)
            else:
                scope = getattr(item, "instrumentation_scope", None)
                if scope is not None and scope.name == _OWN_SCOPE:
                    own += 1
                    continue
                record = from_readable_span(item)
                if record is not None:
                    records.append(record)
        if own:
            with self._lock:
                self._own += own
        now = time.monotonic()
        runs = assembler.add(records, now) if records else []
        runs.extend(assembler.collect(now))
        drains = [m for m in markers if m.drain]
        try:
            if markers:  # a flush waits for runs whose root ended, not for their grace
                runs.extend(assembler.finish_rooted())
            if drains:
                with self._lock:
                    dropped = [t for t in self._dropped_traces if assembler.holds(t)]
                for trace_id in dropped:  # counted already, when its root was refused
                    assembler.evict(trace_id, "shutdown")
                runs.extend(assembler.drain())
            self._ready.extend(runs)
            if drains:
                self._drain_ready(drains[0].deadline)
            else:
                self._release(force=self._backlog is None)
            with self._lock:
                self._assembly = assembler.stats()
        except Exception:
            # A bug here costs this batch (logged), never the thread: spans keep coming.
            _log.exception("livescore: the span pipeline failed on a batch")
        deadline = assembler.next_deadline()
        wait = 1.0 if deadline is None else max(deadline - time.monotonic(), 0.0)
        if self._ready:  # runs waiting for the dispatcher: look again soon
            wait = min(wait, 0.02)
        self._next_pass = time.monotonic() + min(wait, 1.0)
        if markers:
            worker = self._worker
            with worker.lock:
                for marker in markers:
                    worker.finish_locked(marker)

    def _close_out(self, *, gave_up: bool) -> None:
        """The worker's thread stopped (shutdown, ``gave_up`` past its deadline, or a
        failure), or a shutdown closes out after it: count what is left instead of
        assembling it (the queue's spans, the open traces, the runs waiting for the
        dispatcher), so that every run still ends counted."""
        if gave_up:
            self._abandoning.set()
        with self._lock:
            self._stopped = True
        self._closed_out = True  # from now on a caller counts the span it queued
        abandoned = self._count_queued()
        try:
            assembler = self._assembler
            for trace_id in assembler.open_traces():
                assembler.evict(trace_id, "shutdown")
            while self._ready:
                run = self._ready.popleft()
                decision = sample_turn(self.sink, run.trace_id, run.conversation_id)
                if decision.sampled:
                    self.sink.drop(decision, "shutdown")
            with self._lock:
                self._assembly = assembler.stats()
        except Exception:
            _log.exception("livescore: the span pipeline failed to count what it gave up")
        if abandoned and gave_up:
            _log.warning(
                "livescore: the span pipeline's shutdown ran out of time; %d span(s) not "
                "assembled, their runs counted as dropped (see stats())",
                abandoned,
            )

    def _count_left(self) -> int:
        """Count what the worker dropped (given up by a shutdown, left by a thread that
        stopped or could not start); returns how many spans."""
        with self._worker.lock:
            left, self._left = self._left, []
        return self._count_dropped(left)

    def _count_queued(self) -> int:
        """Count every queued span, and what the worker dropped, as dropped at shutdown (the
        runs whose roots they are as dropped, ``"shutdown"``); returns how many."""
        queue = self._queue
        items: list[Any] = []
        while queue:  # one pop at a time: callers may append meanwhile
            try:
                items.append(queue.popleft())
            except IndexError:
                break
        return self._count_dropped(items) + self._count_left()

    def _count_dropped(self, items: list[Any]) -> int:
        roots: list[SpanRecord] = []
        abandoned = 0
        batches = [item for item in items if isinstance(item, list)]
        self._unqueue(batches)
        for item in items:
            if item is _TICK or isinstance(item, _Marker):
                continue  # a flush is woken by the worker
            if isinstance(item, list):
                abandoned += len(item)
                roots.extend(r for r in item if isinstance(r, SpanRecord) and r.is_root)
                continue
            abandoned += 1
            if isinstance(item, LogEvent):
                continue
            parent = getattr(item, "parent", None)
            if parent is None or getattr(parent, "is_remote", False):
                record = from_readable_span(item)
                if record is not None:
                    roots.append(record)
        if not abandoned:
            return 0
        with self._lock:
            self._dropped_at_shutdown += abandoned
        try:
            self._drop_runs_of(roots)
        except Exception:
            _log.exception("livescore: the span pipeline failed to count what it gave up")
        return abandoned

    def _release(self, *, force: bool) -> None:
        """Submit the assembled runs while the dispatcher has room (all of them when
        ``force``); the rest wait here, bounded, and the receiver answers 429 meanwhile."""
        ready = self._ready
        submitted = 0
        # Past max_waiting_runs the oldest go on at once: the dispatcher counts what it
        # cannot queue (in process nothing answers 429, so nothing else bounds the wait).
        while len(ready) > self.max_waiting_runs:
            self._submit(ready.popleft())
        while ready:
            # Asking for the dispatcher's counts costs a lock and a snapshot: not per run.
            if not force and submitted % 32 == 0 and self._check_backlog():
                break
            self._submit(ready.popleft())
            submitted += 1
        self._check_backlog()

    def _drain_ready(self, deadline: float | None) -> None:
        """At shutdown: hand every waiting run over as the dispatcher makes room, until
        ``deadline``; then the rest at once (the dispatcher counts what it cannot take)."""
        while self._ready and (deadline is None or time.monotonic() < deadline):
            self._release(force=self._backlog is None)
            if self._ready:
                time.sleep(0.01)
        self._release(force=True)

    def _check_backlog(self) -> bool:
        if self._backlog is None:
            return False
        try:
            self._backlogged = bool(self._backlog())
        except Exception:
            self._backlogged = False
        return self._backlogged

    def _keep_trace(self, trace_id: str) -> bool:
        # Whether a trace is a turn of a sampled conversation is known only once it is
        # assembled (its spans carry the conversation id): with conversation scorers, keep it.
        return self.sink.sample(trace_id).sampled or self._conversations

    def _on_evict(self, trace_id: str, reason: str, looked_like_agent: bool) -> None:
        with self._lock:
            if trace_id in self._dropped_traces:
                return  # its run is counted already
        if looked_like_agent:
            decision = self.sink.sample(trace_id)
            if decision.sampled:
                # What a shutdown let go is dropped for it, as its queued spans are.
                self.sink.drop(decision, "shutdown" if reason == "shutdown" else "evicted")

    def _submit(self, run: Run) -> None:
        try:
            decision = sample_turn(self.sink, run.trace_id, run.conversation_id)
            if not decision.sampled:
                with self._lock:
                    self._not_sampled += 1
                return
            if run.error is not None and not self.score_failed_runs:
                self.sink.drop(decision, "run_error")
                with self._lock:
                    self._failed_dropped += 1
                return
            self.sink.submit(run, decision)
            with self._lock:
                self._submitted += 1
        except Exception:
            _log.exception("livescore: could not hand a run to the dispatcher")
