"""The base of dashboard sinks: a bounded queue, batches on a daemon thread, retries.

Like OpenTelemetry's ``BatchSpanProcessor``: :meth:`BatchingSink.send` only appends to a
bounded queue (a full queue drops and counts), and one daemon thread per sink turns records
into payloads, delivers them in batches and retries what may succeed later with exponential
backoff until a deadline. Every record given to a sink ends as exactly one of ``sent``,
``failed`` (with a reason), ``dropped`` (queue full, shut down) or ``skipped`` (the sink has
nothing to say about it, with a reason); :meth:`BatchingSink.stats` and the
``livescore.sink.records`` counter say how many of each.

The sink is a consumer of the background worker the live dispatcher is built on too
(``livescore._background``: the queue, its thread and serve loop, the fork rule, the exit
hook). At interpreter exit the sinks deliver after the dispatchers,
within the same deadline: ``LIVESCORE_EXIT_TIMEOUT`` seconds in all (5 by default), or a
sink's ``shutdown_timeout`` if that ends first; what is still undelivered then is counted
as dropped (``shutdown``).
"""

from __future__ import annotations

import abc
import contextlib
import heapq
import logging
import random
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from livescore._background import BackgroundWorker, Consumer, add_exit_stage, fit_to_deadline
from livescore._errors import ResponseDeadline, RetryLater, SkipRecord, UnreadableResponse
from livescore.otel import attributes as A
from livescore.sinks._base import ScoreRecord

__all__ = (
    "BatchingSink",
    "DeliveryResult",
    "SinkStats",
    "deliver_one_by_one",
)

_log = logging.getLogger("livescore.sinks")

ItemT = TypeVar("ItemT")

SENT, FAILED, DROPPED, SKIPPED = "sent", "failed", "dropped", "skipped"

# Seconds a shutdown waits, past its deadline, for a delivery in progress to return.
_JOIN_GRACE_S = 1.0


@dataclass(frozen=True, slots=True)
class DeliveryResult:
    """What :meth:`BatchingSink.deliver` says about a batch; unnamed records were sent.

    Attributes:
        retry: Positions in the batch to try again later, with the reason (counted as
            failed with that reason once the retry deadline passes).
        failed: Positions that failed for good, with the reason.
        retry_after: The least wait before the retry, in seconds (a server's
            ``Retry-After``).
        detail: What the dashboard said (an error body), for the log line of a failure.

    Example:
        >>> DeliveryResult(retry={1: "span_not_found"}).retry
        {1: 'span_not_found'}
    """

    retry: Mapping[int, str] = field(default_factory=dict)
    failed: Mapping[int, str] = field(default_factory=dict)
    retry_after: float | None = None
    detail: str | None = None


@dataclass(frozen=True, slots=True)
class SinkStats:
    """A snapshot of what became of the records a sink was given.

    ``sent + failed + dropped + skipped + pending`` is every record given to ``send``.

    Attributes:
        sent: Delivered (the dashboard accepted them).
        failed: Given up on: a permanent error, or retried until the deadline.
        dropped: Never tried: the queue was full, or the sink was shut down.
        skipped: Nothing to deliver (no span to annotate, a failed score…).
        pending: Queued, waiting for a retry, or being delivered.
        failed_by_reason: ``failed`` by reason (``"span_not_found"``, ``"http_401"``…).
        dropped_by_reason: ``dropped`` by reason (``"queue_full"``, ``"shutdown"``).
        skipped_by_reason: ``skipped`` by reason (``"no_span"``, ``"unscored"``…).
    """

    sent: int = 0
    failed: int = 0
    dropped: int = 0
    skipped: int = 0
    pending: int = 0
    failed_by_reason: Mapping[str, int] = field(default_factory=dict)
    dropped_by_reason: Mapping[str, int] = field(default_factory=dict)
    skipped_by_reason: Mapping[str, int] = field(default_factory=dict)


@contextlib.contextmanager
def request_errors(http: Any, masked: Callable[[BaseException], str | None]) -> Iterator[None]:
    """Turn a request that timed out, found no server or got an answer it cannot read into
    :class:`RetryLater` (``http``: the httpx module of the client; ``masked``: the error's
    text without secrets)."""
    try:
        yield
    except (http.TimeoutException, ResponseDeadline) as exc:
        raise RetryLater("timeout", detail=masked(exc)) from exc
    except http.TransportError as exc:
        raise RetryLater("connection_error", detail=masked(exc)) from exc
    except UnreadableResponse as exc:  # a body it cannot decode bounded
        raise RetryLater("invalid_response", detail=masked(exc)) from exc


def refused_batch(
    status: int | None,
    batch: Sequence[ItemT],
    detail: str,
    resend: Callable[[Sequence[ItemT]], DeliveryResult | None],
    retry_after: float | None = None,
) -> DeliveryResult:
    """What an error status means for a batch: try again later (none, 429, 5xx), send its
    items one by one (a 400 or 422 for several: a dashboard refuses a whole batch for one
    bad item), or else each item failed."""
    if status is None or status == 429 or status >= 500:
        raise RetryLater(f"http_{status}", retry_after=retry_after, detail=detail)
    if status in (400, 422) and len(batch) > 1:
        return deliver_one_by_one(resend, batch)
    return DeliveryResult(failed=dict.fromkeys(range(len(batch)), f"http_{status}"), detail=detail)


def deliver_one_by_one(
    deliver: Callable[[Sequence[ItemT]], DeliveryResult | None], batch: Sequence[ItemT]
) -> DeliveryResult:
    """Deliver each item of ``batch`` alone and merge the answers.

    For a batch the dashboard refused as a whole for a reason that may be one item's (a 400
    or 422 for a value it rejects): the others still go, and only the bad one fails.

    Example:
        >>> def deliver(items):
        ...     if items[0] < 0:
        ...         return DeliveryResult(failed={0: "http_422"})
        >>> deliver_one_by_one(deliver, [1, -1, 2]).failed
        {1: 'http_422'}
    """
    retry: dict[int, str] = {}
    failed: dict[int, str] = {}
    detail: str | None = None
    retry_after: float | None = None
    for index, item in enumerate(batch):
        try:
            answer = deliver([item])
        except RetryLater as later:
            retry[index] = later.reason
            detail = later.detail or detail
            retry_after = later.retry_after
            continue
        except Exception as exc:
            failed[index] = type(exc).__name__
            continue
        if answer is None:
            continue
        if 0 in answer.retry:
            retry[index] = answer.retry[0]
            retry_after = answer.retry_after
        elif 0 in answer.failed:
            failed[index] = answer.failed[0]
        detail = answer.detail or detail
    return DeliveryResult(retry=retry, failed=failed, retry_after=retry_after, detail=detail)


class _Entry:
    """One record on its way: queued, being delivered, or waiting for a retry."""

    __slots__ = ("attempts", "due", "enqueued", "first_try", "item", "prepared", "record", "seq")

    def __init__(self, record: ScoreRecord, enqueued: float) -> None:
        self.seq = 0  # numbered by the queue
        self.record = record
        self.enqueued = enqueued
        self.item: Any = None
        self.prepared = False
        self.attempts = 0
        self.first_try = 0.0
        self.due = 0.0

    def __lt__(self, other: _Entry) -> bool:  # heap ties (equal due times) go by age
        return self.seq < other.seq


class BatchingSink(abc.ABC, Generic[ItemT]):
    """A :class:`~livescore.sinks.ScoreSink` that delivers in batches on a thread of its own.

    Subclasses say how a record becomes a payload (:meth:`prepare`) and how a batch of
    payloads is delivered (:meth:`deliver`); this class does the rest:

    - :meth:`send` is O(1) and never blocks or raises: it appends to a bounded queue. A full
      queue drops the record (``dropped``, reason ``"queue_full"``).
    - A daemon thread, started on the first :meth:`send`, delivers up to ``max_batch``
      records at a time: when a batch is full, when the oldest record has waited
      ``flush_interval`` seconds, or at once during :meth:`flush`.
    - What :meth:`deliver` asks to retry is tried again with exponential backoff
      (``initial_backoff`` doubling up to ``max_backoff``, with jitter) until
      ``retry_deadline`` seconds after its first try, then counted as failed. A
      :meth:`flush` gives each waiting record one try at once (it often follows the
      export of the spans the records refer to).
    - Outcomes are counted (:meth:`stats`) and reported from the thread as the
      ``livescore.sink.records`` counter (meter ``livescore``), by ``livescore.sink``,
      ``livescore.sink.outcome`` and ``livescore.reason``. The first failure and the first
      drop of each reason are logged as warnings (logger ``livescore.sinks``), later ones
      at debug level.
    - Fork safety: a forked child starts with an empty queue and starts its own thread on
      its first :meth:`send`; the parent's records stay the parent's.
    - Process exit: the records still pending are delivered (after the global
      OpenTelemetry tracer provider is flushed, so the spans the scores refer to arrive
      first) within what the process's exit deadline leaves, ``LIVESCORE_EXIT_TIMEOUT``
      seconds (5) shared with the live dispatchers, which shut down first (their last
      scores still reach the sink), or within ``shutdown_timeout`` if that ends first; the
      rest is counted as dropped. The exit hook runs before the shutdown of OpenTelemetry
      providers created before the sink's thread started (its counts still reach them).

    Args:
        name: The sink's name in logs and metrics; the class's ``name`` by default.
        max_queue: Records held at most (queued, being delivered or waiting for a retry).
        max_batch: Records per delivery at most.
        flush_interval: Seconds a record may wait for its batch to fill.
        retry_deadline: Seconds after its first try past which a record is not retried.
        initial_backoff: Seconds before the first retry; doubled for each further one.
        max_backoff: The longest wait between two tries.
        shutdown_timeout: Seconds the exit-time shutdown may take at most (the exit
            deadline may leave less).
        meter_provider: Where the counter goes; the global meter provider by default.

    Example:
        >>> class PrintSink(BatchingSink[str]):
        ...     name = "print"
        ...     def prepare(self, record):
        ...         return f"{record.result.scorer_id}={record.result.score}"
        ...     def deliver(self, batch):
        ...         print(*batch)
        >>> from livescore import Run, ScoreResult
        >>> sink = PrintSink()
        >>> sink.send(ScoreRecord(Run(run_id="r1"), ScoreResult("r1", "demo", score=0.5),
        ...                       None, 1.0, "eval", None))
        >>> sink.flush(5)
        demo=0.5
        True
        >>> sink.stats().sent
        1
        >>> sink.shutdown()
    """

    name: str = "sink"

    def __init__(
        self,
        *,
        name: str | None = None,
        max_queue: int = 10_000,
        max_batch: int = 100,
        flush_interval: float = 1.0,
        retry_deadline: float = 60.0,
        initial_backoff: float = 0.5,
        max_backoff: float = 5.0,
        shutdown_timeout: float = 5.0,
        meter_provider: Any = None,
    ) -> None:
        _check_count("max_queue", max_queue)
        _check_count("max_batch", max_batch)
        _check_seconds("flush_interval", flush_interval)
        _check_seconds("retry_deadline", retry_deadline)
        _check_seconds("initial_backoff", initial_backoff)
        _check_seconds("max_backoff", max_backoff)
        _check_seconds("shutdown_timeout", shutdown_timeout)
        if name is not None:
            if not isinstance(name, str) or not name:
                raise ValueError("name must be a non-empty string")
            self.name = name
        self.max_queue = max_queue
        self.max_batch = max_batch
        self.flush_interval = float(flush_interval)
        self.retry_deadline = float(retry_deadline)
        self.initial_backoff = float(initial_backoff)
        self.max_backoff = float(max_backoff)
        self.shutdown_timeout = float(shutdown_timeout)
        self._meter_provider = meter_provider
        self._counter: Any = None
        # Every record without an outcome is in the queue (waiting, being delivered, or
        # waiting for a retry), so max_queue bounds them all. A parked thread wakes for a
        # first record (to time its batch) and for a full batch; other sends never wake it.
        self._consumer = _SinkConsumer(self)
        self._q: BackgroundWorker[_Entry] = BackgroundWorker(
            f"livescore-sink-{self.name}",
            self._consumer,
            max_items=max_queue,
            bound="unfinished",
            wake_at=max_batch,
            inline=True,  # at exit, with no thread to start, a flush delivers itself
            keep_on_thread_end=True,  # a thread that failed leaves its retries to the next
        )
        self._reset_state()
        _track(self)

    def _reset_state(self) -> None:
        # At construction and in a forked child, after the queue was emptied there (the
        # parent's lock may be held by a thread that does not exist; its records are its).
        self._lock = self._q.lock  # guards the counts below and the queue
        self._retrying: list[tuple[float, _Entry]] = []  # a heap by due time
        self._tally: dict[tuple[str, str], int] = {}
        self._unreported: dict[tuple[str, str], int] = {}
        self._report_lock = threading.Lock()
        self._logged: set[tuple[str, str]] = set()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"

    # -- what a subclass provides -----------------------------------------------------------

    @abc.abstractmethod
    def prepare(self, record: ScoreRecord) -> ItemT:
        """Turn a record into what :meth:`deliver` sends (on the sink's thread).

        Raise :class:`SkipRecord` when there is nothing to send for it; any other exception
        counts the record as failed (``"prepare_error"``).
        """

    @abc.abstractmethod
    def deliver(self, batch: Sequence[ItemT]) -> DeliveryResult | None:
        """Send one batch (on the sink's thread); ``None`` means all of it was accepted.

        Return a :class:`DeliveryResult` naming what to retry and what failed, or raise
        :class:`RetryLater` when the whole batch may succeed later. Any other exception
        counts the whole batch as failed, with the exception's type as the reason.
        """

    def close(self) -> None:
        """Release what the sink holds (an HTTP client); called once by :meth:`shutdown`."""

    def after_fork_in_child(self) -> None:
        """Called in a forked child after the queue was emptied: drop inherited connections."""

    # -- the ScoreSink protocol -------------------------------------------------------------

    def send(self, record: ScoreRecord) -> None:
        """Queue one finished score for delivery. O(1); never blocks, never raises."""
        try:
            q = self._q
            with self._lock:
                if q.closed:
                    self._count_locked(DROPPED, "shutdown")
                    return
                if not q.admits_locked():
                    self._count_locked(DROPPED, "queue_full")
                    return
                q.put_locked(_Entry(record, time.monotonic()))
            if not q.start_pending():
                _log.debug("livescore: sink %r has no thread; flush() delivers", self.name)
        except Exception:
            _log.exception("livescore: sink %r could not queue a score", self.name)

    def flush(self, timeout: float | None = None) -> bool:
        """Deliver every record sent so far, retries included, within ``timeout`` seconds.

        Records that end as failed count as done. Never raises.

        Returns:
            ``True`` when every such record has its outcome, ``False`` on timeout.
        """
        try:
            return self._flush(timeout)
        except Exception:
            _log.exception("livescore: sink %r could not flush", self.name)
            return False

    def shutdown(self, timeout: float | None = None) -> None:
        """Flush within ``timeout``, then stop; what is left is counted as dropped.

        Later :meth:`send` calls count their record as dropped (``"shutdown"``). Safe to
        call more than once. Never raises.
        """
        try:
            self._shutdown(timeout)
        except Exception:
            _log.exception("livescore: sink %r could not shut down", self.name)

    # -- reading ----------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """Whether :meth:`shutdown` was called."""
        return self._q.closed

    def stats(self) -> SinkStats:
        """What became of the records given to :meth:`send` so far."""
        with self._lock:
            tally = dict(self._tally)
            pending = self._q.unfinished
        by: dict[str, dict[str, int]] = {FAILED: {}, DROPPED: {}, SKIPPED: {}, SENT: {}}
        for (outcome, reason), count in tally.items():
            by[outcome][reason] = by[outcome].get(reason, 0) + count
        return SinkStats(
            sent=sum(by[SENT].values()),
            failed=sum(by[FAILED].values()),
            dropped=sum(by[DROPPED].values()),
            skipped=sum(by[SKIPPED].values()),
            pending=pending,
            failed_by_reason=by[FAILED],
            dropped_by_reason=by[DROPPED],
            skipped_by_reason=by[SKIPPED],
        )

    # -- the worker -------------------------------------------------------------------------

    def _take_locked(self, now: float, urgent: bool) -> list[_Entry]:
        batch: list[_Entry] = []
        retrying = self._retrying
        while retrying and retrying[0][0] <= now and len(batch) < self.max_batch:
            batch.append(heapq.heappop(retrying)[1])
        queue = self._q.queue
        if queue and (
            batch
            or len(queue) >= self.max_batch
            or now - queue[0].enqueued >= self.flush_interval
            or urgent
        ):
            while queue and len(batch) < self.max_batch:
                batch.append(queue.popleft())
        return batch

    def _wait_locked(self, now: float) -> float | None:
        """Seconds until something is due (``None``: until woken)."""
        due: list[float] = []
        if self._q.queue:
            due.append(self._q.queue[0].enqueued + self.flush_interval)
        if self._retrying:
            due.append(self._retrying[0][0])
        return max(min(due) - now, 0.0) if due else None

    def _process(self, batch: list[_Entry]) -> None:
        now = time.monotonic()
        ready: list[_Entry] = []
        for entry in batch:
            if not entry.prepared:
                try:
                    entry.item = self.prepare(entry.record)
                except SkipRecord as skip:
                    self._finish(entry, SKIPPED, skip.reason)
                    continue
                except Exception:
                    self._log_first(FAILED, "prepare_error", exc_info=True)
                    self._finish(entry, FAILED, "prepare_error")
                    continue
                entry.prepared = True
                entry.first_try = now
            ready.append(entry)
        if not ready:
            return
        try:
            result = self.deliver([e.item for e in ready]) or DeliveryResult()
        except RetryLater as later:
            result = DeliveryResult(
                retry=dict.fromkeys(range(len(ready)), later.reason),
                retry_after=later.retry_after,
                detail=later.detail,
            )
        except Exception as exc:
            reason = type(exc).__name__
            self._log_first(FAILED, reason, exc_info=True)
            result = DeliveryResult(failed=dict.fromkeys(range(len(ready)), reason))
        now = time.monotonic()
        # One jitter per batch: what failed together is retried together.
        jitter = random.uniform(0.8, 1.2)
        for index, entry in enumerate(ready):
            if index in result.failed:
                self._finish(entry, FAILED, result.failed[index], result.detail)
            elif index in result.retry:
                self._schedule_retry(entry, result, index, now, jitter)
            else:
                self._finish(entry, SENT, "")

    def _schedule_retry(
        self, entry: _Entry, result: DeliveryResult, index: int, now: float, jitter: float
    ) -> None:
        entry.attempts += 1
        give_up_at = entry.first_try + self.retry_deadline
        if now >= give_up_at:
            self._finish(entry, FAILED, result.retry[index], result.detail)
            return
        wait = min(self.max_backoff, self.initial_backoff * 2 ** (entry.attempts - 1)) * jitter
        if result.retry_after is not None:
            wait = max(wait, result.retry_after)
        # The last try happens at the deadline, not after it.
        entry.due = min(now + wait, give_up_at)
        with self._lock:
            if self._q.is_unfinished_locked(entry):
                heapq.heappush(self._retrying, (entry.due, entry))

    def _finish(self, entry: _Entry, outcome: str, reason: str, detail: str | None = None) -> None:
        if outcome == FAILED:
            # Logged before the entry is finished: a flush() that returns has every failure
            # it waited for said already (not said a moment later, on this thread).
            with self._lock:
                if not self._q.is_unfinished_locked(entry):
                    return  # a shutdown already counted it as dropped
            self._log_first(FAILED, reason, detail=detail)
        with self._lock:
            if not self._q.finish_locked(entry):
                return  # a shutdown counted it as dropped meanwhile
            self._count_locked(outcome, reason)

    # -- counting ---------------------------------------------------------------------------

    def _count_locked(self, outcome: str, reason: str) -> None:
        key = (outcome, reason)
        self._tally[key] = self._tally.get(key, 0) + 1
        self._unreported[key] = self._unreported.get(key, 0) + 1

    def _log_first(
        self, outcome: str, reason: str, *, detail: str | None = None, exc_info: bool = False
    ) -> None:
        key = (outcome, reason)
        with self._lock:
            first = key not in self._logged
            self._logged.add(key)
        level = logging.WARNING if first else logging.DEBUG
        _log.log(
            level,
            "livescore: sink %r: a score %s (%s)%s%s",
            self.name,
            "could not be delivered" if outcome == FAILED else "was dropped",
            reason,
            f": {detail}" if detail else "",
            "; later ones for this reason are logged at debug level" if first else "",
            exc_info=exc_info,
        )

    def _report_metrics(self) -> None:
        """Hand the counted outcomes to the ``livescore.sink.records`` counter."""
        with self._report_lock:
            with self._lock:
                if not self._unreported:
                    return
                pending, self._unreported = self._unreported, {}
            for outcome, reason in pending:
                if outcome == DROPPED:  # logged here, never on the thread that sent it
                    self._log_first(DROPPED, reason)
            try:
                counter = self._get_counter()
                for (outcome, reason), count in pending.items():
                    attributes = {A.LIVESCORE_SINK: self.name, A.LIVESCORE_SINK_OUTCOME: outcome}
                    if reason:
                        attributes[A.LIVESCORE_REASON] = reason
                    counter.add(count, attributes)
            except Exception:
                _log.exception("livescore: sink %r could not record its metrics", self.name)

    def _get_counter(self) -> Any:
        if self._counter is None:
            from opentelemetry import metrics

            from livescore._version import __version__

            meter = metrics.get_meter(
                A.INSTRUMENTATION_SCOPE, __version__, meter_provider=self._meter_provider
            )
            self._counter = meter.create_counter(
                A.METRIC_SINK_RECORDS,
                unit="{score}",
                description="Scores given to a dashboard sink, by outcome: sent, failed, "
                "dropped, skipped",
            )
        return self._counter

    # -- flush and shutdown -----------------------------------------------------------------

    def _flush(self, timeout: float | None) -> bool:
        with self._lock:
            if self._retrying:
                # A flush often follows the export of the spans the waiting records refer
                # to: each gets one try now, then its backoff goes on.
                now = time.monotonic()
                self._retrying = [(min(due, now), entry) for due, entry in self._retrying]
                heapq.heapify(self._retrying)
        # False at once from deliver() itself: the worker cannot wait for itself. Without a
        # thread (none could start), the flush delivers here.
        done = self._q.flush(timeout)
        self._report_metrics()
        return done

    def _shutdown(self, timeout: float | None, grace: float = _JOIN_GRACE_S) -> None:
        if self._q.stopping:
            return  # shut down already
        # The worker tells the consumer what it gave up (counted as dropped).
        leftovers = self._q.shutdown(timeout, flush=self._flush, grace=grace)
        if leftovers:
            _log.warning(
                "livescore: sink %r shut down with %d score(s) undelivered (counted as dropped)",
                self.name,
                len(leftovers),
            )
        try:
            self.close()
        except Exception:
            _log.exception("livescore: sink %r could not close", self.name)
        self._report_metrics()

    def _after_fork(self) -> None:
        # The queue is empty in the child already; the counts and retries go too.
        self._reset_state()
        try:
            self.after_fork_in_child()
        except Exception:
            _log.exception("livescore: sink %r could not reset after fork", self.name)

    def _exit_shutdown(self, deadline: float) -> None:
        """The exit-time shutdown: within ``shutdown_timeout`` and the exit ``deadline``."""
        try:
            self._shutdown(*fit_to_deadline(deadline, self.shutdown_timeout, _JOIN_GRACE_S))
        except Exception:
            _log.exception("livescore: sink %r could not shut down", self.name)


class _SinkConsumer(Consumer[_Entry]):
    """What the sink's background worker serves: due batches of records, delivered."""

    def __init__(self, sink: BatchingSink[Any]) -> None:
        self._sink = sink

    def take_locked(self, queue: deque[_Entry], now: float, urgent: bool) -> list[_Entry]:
        return self._sink._take_locked(now, urgent)

    def wait_locked(self, now: float) -> float | None:
        return self._sink._wait_locked(now)

    def busy_locked(self) -> bool:
        return bool(self._sink._retrying)

    def handle(self, batch: list[_Entry]) -> None:
        self._sink._process(batch)

    def dropped_locked(self, items: list[_Entry], reason: str) -> None:
        sink = self._sink
        if sink._retrying:
            gone = {id(entry) for entry in items}
            sink._retrying = [(due, e) for due, e in sink._retrying if id(e) not in gone]
            heapq.heapify(sink._retrying)
        for _ in items:
            sink._count_locked(DROPPED, reason)

    def report(self) -> None:
        self._sink._report_metrics()

    def after_fork(self) -> None:
        self._sink._after_fork()


# -- every sink of the process: the exit-time shutdown ---------------------------------------

_SINKS: weakref.WeakSet[BatchingSink[Any]] = weakref.WeakSet()


def _track(sink: BatchingSink[Any]) -> None:
    _SINKS.add(sink)


def _shutdown_sinks_at_exit(deadline: float) -> None:
    # The second exit stage, after the dispatchers' (their last scores come here).
    sinks = [s for s in list(_SINKS) if not s.closed]
    if not sinks:
        return
    if any(s.stats().pending for s in sinks):
        timeout = max(s.shutdown_timeout for s in sinks)
        _flush_global_tracer_provider(fit_to_deadline(deadline, timeout, 0.0)[0])
    for sink in sinks:
        sink._exit_shutdown(deadline)


add_exit_stage(1, _shutdown_sinks_at_exit)


def _flush_global_tracer_provider(timeout: float) -> None:
    # The scores name spans that may still sit in the application's span processor; a
    # dashboard that checks the span exists (Phoenix) needs those spans first.
    try:
        from opentelemetry import trace

        provider = trace.get_tracer_provider()
        force_flush = getattr(provider, "force_flush", None)
        if callable(force_flush):
            force_flush(int(timeout * 1000))
    except Exception:
        _log.debug("livescore: could not flush the tracer provider at exit", exc_info=True)


def _check_count(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, not {value}")


def check_request_timeout(timeout: Any) -> float:
    """A sink's ``timeout`` argument, checked: a positive number of seconds."""
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")
    return float(timeout)


def _check_seconds(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
        raise ValueError(f"{name} must be a number of seconds >= 0, not {value!r}")
