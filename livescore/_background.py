"""One background worker that owns its loop: what the dispatcher, the sinks, the fleet's
export thread and the span pipeline are built on.

A :class:`BackgroundWorker` holds a bounded queue, the daemon thread that serves it (with an
anyio event loop on it when its consumer asks for one), and the flush, shutdown, fork and
exit rules, written once (as OpenTelemetry's ``BatchProcessor`` is for its processors). What
the work *is* belongs to a :class:`Consumer`: it says which queued items make a batch now
(:meth:`Consumer.take_locked`), handles a batch, and is told what was dropped.

- :meth:`~BackgroundWorker.put_locked` is O(1) and never blocks. A full queue refuses the
  new item (``"drop_new"``: :meth:`~BackgroundWorker.admits_locked` says so first) or evicts
  the oldest queued one (``"drop_oldest"``: the consumer is told it was dropped,
  ``"queue_full"``). "Full" counts the items waiting to be taken, or every unfinished one
  (``bound="unfinished"``: a sink's records waiting for a retry too).
  :meth:`~BackgroundWorker.append` queues an item without the lock and without a number
  (the span pipeline's, from an SDK's ``on_end``): its consumer bounds and counts those
  itself, and a flush waits for a numbered item queued behind them.
- The serve loop, the same for every consumer: take a batch (under the lock), report (the
  consumer's counts, outside the lock), handle the batch, or park until a put, a flush, the
  consumer's next due time or a stop. A put wakes a parked thread only when it starts a
  batch (the first item) or fills one (``wake_at`` items): a busy producer does not pay a
  thread wake-up per item. Woken, the thread may linger (``linger`` seconds) for more items
  to share the wake-up. An event-loop consumer gets the batches as an async iterator (it
  parks in a thread of the loop, so the loop keeps running its tasks meanwhile).
- :meth:`~BackgroundWorker.flush` waits until every item put before it is finished (the
  consumer says when, :meth:`~BackgroundWorker.finish_locked`), and makes the thread start
  on them at once. Where no thread could start (interpreter exit) and the worker drains
  ``inline``, the flushing thread runs the same take and handle itself.
- :meth:`~BackgroundWorker.shutdown` refuses new items, flushes within its timeout, then
  stops the thread; past the timeout it aborts (the queued items are given up, the thread
  stops taking and cancels what its loop runs) and waits ``grace`` seconds more for the
  thread to return. What never finished is dropped (``"shutdown"``) and the consumer told.
- Fork: in a forked child every worker starts empty, with a fresh lock and no thread (the
  parent's items stay the parent's), and its consumer's :meth:`Consumer.after_fork` resets
  what the consumer keeps. ``os.register_at_fork`` is called in this module only;
  :func:`call_after_fork` adds other resets.
- Exit: one ``atexit`` hook runs the exit stages (:func:`add_exit_stage`: the live
  dispatchers' shutdown, then the sinks') one after the other within one deadline,
  ``LIVESCORE_EXIT_TIMEOUT`` seconds after the hook starts (5 by default; the environment
  variable is read when the process exits). A stage that finds no time left counts what it
  holds as dropped (``shutdown``). The hook is registered again, as the newest ``atexit``
  handler, whenever a worker's thread starts: ``atexit`` runs the newest first, so it runs
  before the exit hooks of OpenTelemetry SDK providers created before that, and the last
  scores and counts still reach them.
"""

from __future__ import annotations

import atexit
import logging
import math
import os
import threading
import time
import weakref
from collections import deque
from collections.abc import AsyncIterator, Callable, Sized
from typing import Any, Generic, Literal, Protocol, TypeVar

__all__ = (
    "DEFAULT_EXIT_TIMEOUT",
    "EXIT_TIMEOUT_ENV",
    "BackgroundWorker",
    "Consumer",
    "Overflow",
    "add_exit_stage",
    "call_after_fork",
    "exit_timeout",
    "fit_to_deadline",
)

_log = logging.getLogger("livescore")

Overflow = Literal["drop_new", "drop_oldest"]
"""What a full queue does: refuse the new item, or evict the oldest queued one for it."""

EXIT_TIMEOUT_ENV = "LIVESCORE_EXIT_TIMEOUT"
"""The environment variable that sets the process's exit deadline, in seconds."""

DEFAULT_EXIT_TIMEOUT = 5.0
"""The exit deadline when ``LIVESCORE_EXIT_TIMEOUT`` is not set."""


class Queued(Protocol):
    """An item of a :class:`BackgroundWorker`: the worker numbers it (oldest lowest)."""

    seq: int


ItemT = TypeVar("ItemT", bound=Queued)


class Consumer(Generic[ItemT]):
    """What a :class:`BackgroundWorker` serves: it takes batches, handles them, is told what
    was dropped. Methods named ``*_locked`` run under the worker's lock.

    The defaults take every queued item as one batch, with nothing due later. A consumer
    finishes each item it handled (:meth:`BackgroundWorker.finish_locked`); one that keeps
    items for later (a retry) says when they are due (:meth:`wait_locked`) and that it
    still has work (:meth:`busy_locked`).
    """

    event_loop: bool = False
    """Whether the worker's thread runs an anyio event loop for :meth:`serve`."""

    role: str = "background thread"
    """What the thread is called in the log line of its failure."""

    def take_locked(self, queue: deque[ItemT], now: float, urgent: bool) -> list[ItemT]:
        """The batch to handle now, taken from ``queue`` (empty: nothing yet).

        ``urgent``: a flush waits for the queued items, or the worker stops.
        """
        batch = list(queue)
        queue.clear()
        return batch

    def wait_locked(self, now: float) -> float | None:
        """Seconds until something the consumer keeps is due (``None``: until woken)."""
        return None

    def busy_locked(self) -> bool:
        """Whether work beyond the queue keeps a stopping worker serving (retries)."""
        return False

    def handle(self, batch: list[ItemT]) -> None:
        """Handle one batch (on the worker's thread, outside the lock). Every consumer
        defines it, or :meth:`serve` for an event-loop consumer."""
        raise NotImplementedError(f"{type(self).__name__} defines neither handle() nor serve()")

    async def serve(self, batches: AsyncIterator[list[ItemT]]) -> None:
        """An event-loop consumer's body: handle the batches until they end."""
        async for batch in batches:
            self.handle(batch)

    def dropped_locked(self, items: list[ItemT], reason: str) -> None:
        """``items`` will never be handled: evicted (``"queue_full"``), given up by a
        shutdown (``"shutdown"``), or left by a thread that failed (``"worker_error"``) or
        could not start (``"no_worker"``)."""

    def report(self) -> None:
        """Hand on what was counted (metrics), between batches, outside the lock."""

    def thread_started(self) -> None:
        """The worker's thread starts serving (on that thread)."""

    def thread_stopped(self) -> None:
        """The worker's thread stops serving (on that thread, before it drops leftovers)."""

    def after_fork(self) -> None:
        """In a forked child, after the worker was emptied: reset what the consumer keeps."""


class BackgroundWorker(Generic[ItemT]):
    """A bounded queue, the daemon thread that serves it for a :class:`Consumer`, and its
    flush and shutdown.

    The consumer's accounting lives beside the queue, under ``lock``; methods named
    ``*_locked`` expect the caller to hold it. The consumer is held weakly (it usually holds
    the worker): once it is gone the thread ends.

    Args:
        name: The thread's name.
        consumer: What the thread serves.
        max_items: How many items make the queue full.
        bound: What counts towards ``max_items``: the items waiting to be taken
            (``"queued"``), or every unfinished one (``"unfinished"``).
        overflow: What a full queue does (``"drop_oldest"`` needs ``bound="queued"``).
        wake_at: A put wakes the parked thread when the queue then holds one item or at
            least this many (1: every put).
        linger: Seconds a woken thread waits for more items before it starts on them.
        inline: Where no thread could start, :meth:`flush` takes and handles the batches
            on the calling thread. Without it, the next put tries to start a thread again.
        keep_on_thread_end: A thread that ends (or fails) leaves the unfinished items for
            the next one (a sink's retries); by default they are dropped with it.
        grace: Seconds an event loop's helper threads get to leave once it ended.

    Example:
        >>> from dataclasses import dataclass
        >>> @dataclass
        ... class Item:
        ...     text: str
        ...     seq: int = 0
        >>> handled = []
        >>> class Collector(Consumer[Item]):
        ...     def handle(self, batch):
        ...         handled.extend(item.text for item in batch)
        ...         with worker.lock:
        ...             for item in batch:
        ...                 worker.finish_locked(item)
        >>> collector = Collector()
        >>> worker = BackgroundWorker("example", collector, max_items=10)
        >>> with worker.lock:
        ...     worker.put_locked(Item("a"))
        >>> worker.start_pending()
        True
        >>> worker.flush(5), handled
        (True, ['a'])
        >>> worker.shutdown(5, grace=1)
        []
    """

    def __init__(
        self,
        name: str,
        consumer: Consumer[ItemT],
        *,
        max_items: int,
        bound: Literal["queued", "unfinished"] = "queued",
        overflow: Overflow = "drop_new",
        wake_at: int = 1,
        linger: float = 0.0,
        inline: bool = False,
        keep_on_thread_end: bool = False,
        grace: float = 2.0,
    ) -> None:
        self.name = name
        self.max_items = max_items
        self.overflow: Overflow = overflow
        # Weakly: the consumer holds this worker, and threads that wait on it (the loop's
        # helpers, slow to leave after a shutdown on a loaded machine) would otherwise keep
        # the consumer alive through it.
        self._consumer = weakref.ref(consumer)
        self._count_unfinished = bound == "unfinished"
        self._wake_at = wake_at
        self._linger = linger
        self._inline = inline
        self._keep = keep_on_thread_end
        self._grace = grace
        self._closed = False  # survives a fork: a worker shut down stays shut down
        self._generation = 0
        self._reset()
        _WORKERS.add(self)

    def _reset(self) -> None:
        # At construction and in a forked child, whose copy of the lock may be held by a
        # thread that does not exist there.
        self.lock = threading.Lock()
        self._wake = threading.Condition(self.lock)  # the thread may have work
        self._done = threading.Condition(self.lock)  # an item finished, or the thread ended
        self._abort = threading.Condition(self.lock)  # shutdown gave up: cancel the work
        self.queue: deque[ItemT] = deque()
        """Items not yet taken, oldest first."""
        self._given_up: list[ItemT] = []  # taken off the queue by an abort, not yet dropped
        self._unfinished: dict[int, ItemT] = {}  # put and not finished, in put order
        # What max_items bounds (a plain len() on the hot path).
        self._bounded: Sized = self._unfinished if self._count_unfinished else self.queue
        self._seq = 0
        self._flush_upto = 0  # items up to this number are wanted now
        self._flush_waiters = 0
        self._thread: threading.Thread | None = None
        # The thread that ended and may still be returning: shutdown joins it, so no
        # thread of the worker outlives shutdown.
        self._ending: threading.Thread | None = None
        self._unstarted: threading.Thread | None = None  # made by a put, started after it
        self._no_thread = False  # none could start: flush works inline
        self._idle = False  # the thread sleeps until someone clears this
        self._lingering = False
        self._stopping = False
        self._aborted = False
        self._generation += 1

    def _after_fork(self) -> None:
        self._reset()
        consumer = self._consumer()
        if consumer is not None:
            consumer.after_fork()

    # -- state ------------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` (or :meth:`shutdown`) was called: the producer refuses."""
        return self._closed

    @property
    def stopping(self) -> bool:
        """Whether the thread returns once it has nothing left to do."""
        return self._stopping

    @property
    def aborted(self) -> bool:
        """Whether shutdown gave up on unfinished work."""
        return self._aborted

    @property
    def running(self) -> bool:
        """Whether a thread serves the queue (or is about to start)."""
        return self._thread is not None

    @property
    def unfinished(self) -> int:
        """How many items were put and are not finished (queued, taken, or retrying)."""
        return len(self._unfinished)

    def is_unfinished_locked(self, item: ItemT) -> bool:
        """Whether ``item`` was put and is not finished (nor given up by shutdown)."""
        return self._unfinished.get(item.seq) is item

    # -- the producer's side ----------------------------------------------------------------

    def admits_locked(self) -> bool:
        """Whether a put now keeps its item (``False``: full, and new items are refused)."""
        if len(self._bounded) < self.max_items:
            return True
        return self.overflow == "drop_oldest" and bool(self.queue)

    def put_locked(self, item: ItemT, *, bounded: bool = True) -> None:
        """Queue ``item`` (after :meth:`admits_locked`). O(1).

        A full ``"drop_oldest"`` queue evicts its oldest item for it, and tells the
        consumer (``"queue_full"``). Call :meth:`start_pending` once the lock is released.
        ``bounded=False`` queues a small control item behind the others even when the
        queue is full (it evicts nothing).
        """
        if bounded and len(self._bounded) >= self.max_items and self.queue:
            evicted = self.queue.popleft()
            self._unfinished.pop(evicted.seq, None)
            consumer = self._consumer()
            if consumer is not None:
                consumer.dropped_locked([evicted], "queue_full")
        self._seq += 1
        item.seq = self._seq
        self.queue.append(item)
        self._unfinished[item.seq] = item
        if self._thread is None:
            self._make_thread_locked()
        elif self._idle and (len(self.queue) == 1 or len(self.queue) >= self._wake_at):
            self._idle = False
            self._wake.notify()

    def append(self, item: Any) -> None:
        """Queue ``item`` without the lock and without a number: O(1), for a producer that
        must not wait (an SDK's ``on_end``) and a consumer that bounds and counts its queue
        itself (``max_items`` does not apply).

        A :meth:`flush` does not wait for such an item by itself: a numbered item put after
        it (:meth:`put_locked`), which the consumer finishes once it handled what came
        before, does. Given up or left behind, it is dropped like the others (the
        consumer's :meth:`Consumer.dropped_locked` is told). A closed worker starts no
        thread for it.
        """
        self.queue.append(item)  # atomic: a deque's appends and pops need no lock
        if self._idle:
            # The serve loop marks itself idle before it looks at an empty queue, so an
            # item appended after that look always finds the mark, and wakes it.
            with self.lock:
                self.wake_locked()
        elif self._thread is None and not self._closed:
            with self.lock:
                if self._thread is None:
                    self._make_thread_locked()
            self.start_pending()

    def _make_thread_locked(self) -> None:
        # Made under the lock, started outside it (start_pending).
        if not self._no_thread:
            self._thread = self._unstarted = threading.Thread(
                target=_serve,
                args=(weakref.ref(self), self._generation),
                name=self.name,
                daemon=True,
            )

    def track_locked(self, item: ItemT) -> None:
        """Count ``item`` as unfinished without queueing it: work the consumer made itself
        (finished, given up and dropped like any other). A :meth:`flush` that started
        earlier does not wait for it."""
        self._seq += 1
        item.seq = self._seq
        self._unfinished[item.seq] = item

    def start_pending(self) -> bool:
        """Start the thread a put made (outside the lock). ``False``: it could not start.

        Costs one attribute read when there is none (every put but the first).
        """
        if self._unstarted is None:
            return True
        with self.lock:
            thread, self._unstarted = self._unstarted, None
        if thread is None:
            return True  # another put started it
        _register_exit_hook()
        try:
            thread.start()
        except RuntimeError:  # "can't create new thread at interpreter shutdown"
            with self.lock:
                if self._thread is thread:
                    self._thread = None
                    self._no_thread = self._inline
                    if not self._inline:
                        # What it would have taken is dropped; the next put tries again.
                        self._drop_locked(self._take_all_locked(), "no_worker")
                self._done.notify_all()
            consumer = self._consumer()
            if consumer is not None:
                _log.error("livescore: cannot start the %s (%s)", consumer.role, self.name)
                consumer.report()  # no thread will
            return False
        return True

    def wake_locked(self) -> None:
        """Wake the thread if it sleeps: the consumer has news for it (counts to report)."""
        if self._idle:
            self._idle = False
            self._wake.notify()

    def close(self) -> None:
        """Refuse new items from now on (the producer checks :attr:`closed` before a put)."""
        with self.lock:
            self._closed = True

    def finish_locked(self, item: ItemT) -> bool:
        """``item`` is done. ``False`` when it was not unfinished (shutdown gave it up)."""
        if self._unfinished.pop(item.seq, None) is None:
            return False
        if self._flush_waiters:
            self._done.notify_all()
        return True

    def urgent_locked(self) -> bool:
        """Whether work should start now rather than fill a batch: a flush waits for it, or
        the worker is stopping."""
        if self._stopping:
            return True
        oldest = next(iter(self._unfinished), None)
        return oldest is not None and oldest <= self._flush_upto

    # -- the serve loop (the worker's thread) -----------------------------------------------

    def _poll(self, generation: int) -> tuple[list[ItemT], bool]:
        """One look at the work: ``(batch, False)``; ``([], True)``: stop; ``([], False)``:
        park (the thread is marked idle, so a put from now on wakes it)."""
        consumer = self._consumer()
        if consumer is None:
            return [], True
        with self.lock:
            if generation != self._generation or self._aborted:
                return [], True
            # An empty queue is marked idle before the look, not after: an item appended
            # without the lock (:meth:`append`) once the look is done finds the mark and
            # wakes the thread. A busy one is not: its producers never wait for the lock
            # while a large batch is taken.
            self._idle = not self.queue
            batch = consumer.take_locked(self.queue, time.monotonic(), self.urgent_locked())
            if batch:
                self._idle = False
                return batch, False
            if self._stopping and not self.queue and not consumer.busy_locked():
                self._idle = False
                return [], True
            self._idle = True
            return [], False

    def park(self, generation: int) -> None:
        """Wait, after a look found nothing, until woken or the consumer's next due time."""
        consumer = self._consumer()
        if consumer is None:
            return
        with self.lock:
            timeout = consumer.wait_locked(time.monotonic())
            del consumer  # held by nothing while waiting
            self.park_locked(generation, timeout)

    def park_locked(self, generation: int, timeout: float | None = None) -> None:
        """Sleep (marked idle) until woken or ``timeout``; then maybe linger.

        Woken by a put, the thread lingers ``linger`` seconds for more items, unless the
        work is urgent (a flush waits, or the worker stops).
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._idle and generation == self._generation:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                break
            self._wake.wait(left)
        self._idle = False
        if self._linger and generation == self._generation and not self.urgent_locked():
            self._lingering = True
            try:
                self._wake.wait(self._linger)
            finally:
                self._lingering = False

    def wait_for_abort(self, generation: int) -> None:
        """Block until shutdown gives up on unfinished work, or this generation retires."""
        with self.lock:
            while not self._aborted and generation == self._generation:
                self._abort.wait()

    def _serve_here(self, consumer: Consumer[ItemT], generation: int) -> None:
        """The serve loop of a consumer without an event loop."""
        while True:
            batch, stop = self._poll(generation)
            consumer.report()
            if batch:
                consumer.handle(batch)
            elif stop:
                return
            else:
                self.park(generation)

    async def _serve_on_loop(self, generation: int) -> None:
        """The serve loop of an event-loop consumer: the batches as an async iterator, and a
        task that cancels the consumer's work when shutdown gives up."""
        import anyio

        from livescore._threads import run_in_thread, weakly

        # The two threads that wait on the worker's behalf (for work, for an abort) get a
        # limiter of their own: busy synchronous work never keeps them from waiting.
        waits = anyio.CapacityLimiter(2)

        async def cancel_on_abort(scope: anyio.CancelScope) -> None:
            await run_in_thread(
                weakly(self, "wait_for_abort"), generation, abandon_on_cancel=True, limiter=waits
            )
            scope.cancel()

        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(cancel_on_abort, tg.cancel_scope)
                consumer = self._consumer()
                if consumer is not None:
                    batches = _Batches(weakref.ref(self), generation, waits)
                    await consumer.serve(batches)
                del consumer
                tg.cancel_scope.cancel()  # done: stop waiting for an abort
        finally:
            with self.lock:
                self._retire_locked(generation)

    def _retire_locked(self, generation: int) -> None:
        # The thread of ``generation`` is about to return: release what waits for it.
        if generation == self._generation:
            self._generation += 1
        self._idle = False
        self._wake.notify_all()
        self._abort.notify_all()

    def _thread_main(self, generation: int) -> None:
        consumer = self._consumer()
        if consumer is None:
            return
        try:
            consumer.thread_started()
            if consumer.event_loop:
                import anyio

                from livescore._threads import ThreadRecord

                threads = ThreadRecord()
                try:
                    # Other threads reach the loop only through conditions that threads of
                    # its own wait on, never by calling into it: a put never waits for a
                    # busy loop.
                    with threads.recording():
                        anyio.run(self._serve_on_loop, generation, backend="asyncio")
                finally:
                    # The loop's threads leave once it ended (their waits were released):
                    # joined, none outlives shutdown(). After an abort one may run a
                    # blocking call: it is not waited for.
                    threads.join(0.0 if self._aborted else self._grace)
            else:
                self._serve_here(consumer, generation)
        except BaseException:
            _log.exception("livescore: the %s stopped (%s)", consumer.role, self.name)
        finally:
            try:
                consumer.thread_stopped()
            except Exception:
                _log.exception("livescore: %r could not stop cleanly", self.name)
            with self.lock:
                self._retire_locked(generation)
                if not self._keep:
                    # Normally nothing is left; after a crash, what was accepted is dropped.
                    reason = "shutdown" if self._stopping else "worker_error"
                    self._drop_locked(self._take_all_locked(), reason)
                if self._thread is threading.current_thread():
                    self._ending, self._thread = self._thread, None
                self._done.notify_all()
            consumer.report()  # the last counts of this thread, and its drops

    # -- flush and shutdown -----------------------------------------------------------------

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the thread to return (one that is ending too); ``True`` once none runs."""
        with self.lock:
            thread = self._thread or self._ending
        if thread is None or thread.ident is None or thread is threading.current_thread():
            return thread is None or thread.ident is None
        thread.join(timeout)
        return not thread.is_alive()

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every item put so far is finished.

        Returns:
            ``True`` once they are; ``False`` on timeout, or when called from the worker's
            own thread (it cannot wait for itself).
        """
        deadline = None if timeout is None else time.monotonic() + max(timeout, 0.0)
        if threading.current_thread() is self._thread:
            return False
        with self.lock:
            target = self._seq
            if not self._pending_locked(target):
                return True
            self._flush_upto = max(self._flush_upto, target)
            if self._idle or self._lingering:
                self._idle = False
                self._wake.notify()
            self._flush_waiters += 1
            try:
                while self._pending_locked(target):
                    if self._thread is None and self._no_thread:
                        break  # none could start: work here
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        return False
                    self._done.wait(left)
                else:
                    return True
            finally:
                self._flush_waiters -= 1
        return self._drain_here(target, deadline)

    def _drain_here(self, target: int, deadline: float | None) -> bool:
        """Take and handle the batches on the calling thread, up to item ``target``."""
        while True:
            consumer = self._consumer()
            if consumer is None:
                return False
            with self.lock:
                if not self._pending_locked(target):
                    return True
                now = time.monotonic()
                batch = consumer.take_locked(self.queue, now, True)
                wait = consumer.wait_locked(now) if not batch else 0.0
            if batch:
                consumer.handle(batch)
                consumer.report()
                continue
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            time.sleep(min(x for x in (wait, left, 0.5) if x is not None))

    def _pending_locked(self, target: int) -> bool:
        oldest = next(iter(self._unfinished), None)
        return oldest is not None and oldest <= target

    def _pop_queue_locked(self) -> list[ItemT]:
        # One pop at a time, never clear(): an item appended without the lock meanwhile is
        # either popped here or left queued, never lost.
        queue, items = self.queue, []
        while queue:
            items.append(queue.popleft())
        return items

    def _take_all_locked(self) -> list[ItemT]:
        unfinished = self._unfinished
        queued = self._given_up + self._pop_queue_locked()
        self._given_up = []
        items = list(unfinished.values())
        # The unnumbered items (:meth:`append`) too, after the numbered ones.
        items.extend(i for i in queued if unfinished.get(getattr(i, "seq", 0)) is not i)
        unfinished.clear()
        self._done.notify_all()
        return items

    def _drop_locked(self, items: list[ItemT], reason: str) -> None:
        consumer = self._consumer()
        if items and consumer is not None:
            consumer.dropped_locked(items, reason)

    def shutdown(
        self,
        timeout: float | None,
        *,
        grace: float,
        flush: Callable[[float | None], bool] | None = None,
    ) -> list[ItemT]:
        """Refuse new items, finish the rest within ``timeout``, stop the thread.

        ``flush`` is the consumer's own (it reports its counts too), :meth:`flush` by
        default. When it does not finish in time, the worker aborts: the queued items are
        given up, the thread stops taking items and cancels what its loop runs; it gets
        ``grace`` seconds past the deadline to return.

        Returns:
            The items still unfinished, oldest first: the consumer was told they were
            dropped (``"shutdown"``).
        """
        deadline = None if timeout is None else time.monotonic() + max(timeout, 0.0)
        self.close()
        done = (flush or self.flush)(timeout)
        with self.lock:
            self._stopping = True
            if not done:
                self._aborted = True
                # Given up: they stay unfinished until dropped below.
                self._given_up.extend(self._pop_queue_locked())
            self._idle = False
            self._wake.notify_all()
            self._abort.notify_all()
            thread = self._thread or self._ending
        started = thread is not None and thread.ident is not None
        if started and thread is not threading.current_thread():
            assert thread is not None
            thread.join(None if deadline is None else max(deadline - time.monotonic(), 0) + grace)
        with self.lock:
            left = self._take_all_locked()
            self._drop_locked(left, "shutdown")
            return left


class _Batches(Generic[ItemT]):
    """The batches of an event-loop consumer, as an async iterator on the worker's loop.

    With nothing to take it parks in a thread of the loop, so a put only notifies a
    condition (it never waits for the loop). It holds the worker weakly, and the thread
    parked holds only the worker (which holds its consumer weakly): a thread that leaves
    late after a shutdown keeps nothing alive.
    """

    def __init__(
        self, worker: weakref.ref[BackgroundWorker[ItemT]], generation: int, limiter: Any
    ) -> None:
        self._worker = worker
        self._generation = generation
        self._limiter = limiter

    def __aiter__(self) -> _Batches[ItemT]:
        return self

    async def __anext__(self) -> list[ItemT]:
        from livescore._threads import run_in_thread, weakly

        while True:
            worker = self._worker()
            if worker is None:
                raise StopAsyncIteration
            batch, stop = worker._poll(self._generation)
            consumer = worker._consumer()
            if consumer is not None:
                # After the look, not before: what was counted once it marked the thread
                # idle wakes it, and every earlier count is reported here.
                consumer.report()
            del consumer
            if batch:
                return batch
            if stop:
                raise StopAsyncIteration
            park = weakly(worker, "park")
            del worker
            await run_in_thread(
                park, self._generation, abandon_on_cancel=True, limiter=self._limiter
            )


def _serve(ref: weakref.ref[BackgroundWorker[Any]], generation: int) -> None:
    worker = ref()
    if worker is not None:
        worker._thread_main(generation)


# -- every worker of the process: fork and exit ----------------------------------------------

_WORKERS: weakref.WeakSet[BackgroundWorker[Any]] = weakref.WeakSet()
_FORK_HOOKS: list[Callable[[], None]] = []
_STAGES: list[tuple[int, Callable[[float], None]]] = []
_EXIT_LOCK = threading.Lock()


def call_after_fork(hook: Callable[[], None]) -> None:
    """Call ``hook()`` in every forked child, before the workers reset (module-level state)."""
    _FORK_HOOKS.append(hook)


def _after_fork_in_child() -> None:
    for hook in list(_FORK_HOOKS):
        try:
            hook()
        except Exception:
            _log.exception("livescore: a reset after fork failed")
    for worker in list(_WORKERS):
        try:
            worker._after_fork()
        except Exception:
            _log.exception("livescore: %r could not reset after fork", worker.name)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def add_exit_stage(order: int, stage: Callable[[float], None]) -> None:
    """At exit, call ``stage(deadline)`` after every stage of a lower ``order``.

    ``deadline`` is the exit deadline on the ``time.monotonic()`` clock, shared by all.
    """
    with _EXIT_LOCK:
        _STAGES.append((order, stage))
        _STAGES.sort(key=lambda s: s[0])


def exit_timeout() -> float:
    """The exit deadline in seconds: ``LIVESCORE_EXIT_TIMEOUT``, else 5.

    Example:
        >>> import os
        >>> os.environ["LIVESCORE_EXIT_TIMEOUT"] = "2.5"
        >>> exit_timeout()
        2.5
        >>> del os.environ["LIVESCORE_EXIT_TIMEOUT"]
        >>> exit_timeout()
        5.0
    """
    raw = os.environ.get(EXIT_TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_EXIT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        _log.warning(
            "livescore: %s=%r is not a number of seconds >= 0; using %s",
            EXIT_TIMEOUT_ENV,
            raw,
            DEFAULT_EXIT_TIMEOUT,
        )
        return DEFAULT_EXIT_TIMEOUT
    return value


def fit_to_deadline(deadline: float, timeout: float, grace: float) -> tuple[float, float]:
    """A component's ``(timeout, grace)`` cut to end by ``deadline`` (monotonic) at the latest.

    Example:
        >>> import time
        >>> timeout, grace = fit_to_deadline(time.monotonic() + 5, 10.0, 2.0)
        >>> round(timeout), grace
        (5, 0.0)
    """
    left = max(deadline - time.monotonic(), 0.0)
    cut = min(timeout, left)
    return cut, min(grace, left - cut)


def _register_exit_hook() -> None:
    # Newest first: see the module docstring for why this place in the atexit order.
    with _EXIT_LOCK:
        atexit.unregister(_run_exit_stages)
        atexit.register(_run_exit_stages)


def _run_exit_stages() -> None:
    deadline = time.monotonic() + exit_timeout()
    for _, stage in list(_STAGES):
        try:
            stage(deadline)
        except Exception:
            _log.exception("livescore: an exit-time shutdown failed")
