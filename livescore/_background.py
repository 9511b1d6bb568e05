"""One bounded queue and one background thread: what the dispatcher and every sink are built on.

The live dispatcher hands scoring jobs, and every dashboard sink hands score records, from
the caller's thread to a daemon thread of its own. :class:`BackgroundQueue` is that
hand-off, written once (as OpenTelemetry's ``BatchProcessor`` is for its processors); its
owner keeps its own accounting under the queue's lock and writes what the thread does:

- :meth:`~BackgroundQueue.put_locked` is O(1) and never blocks. A full queue refuses the
  new item (``"drop_new"``) or evicts the oldest queued one (``"drop_oldest"``); the owner
  counts either as dropped. "Full" counts the items waiting to be taken, or every
  unfinished one (``bound="unfinished"``: a sink's records waiting for a retry too).
- One daemon thread serves the queue, started by the first item (and by the next item after
  it ended). While it has nothing to do it sleeps, and a put wakes it only when it sleeps
  and the put starts a batch (the first item) or fills one (``wake_at`` items): a busy
  producer does not pay a thread wake-up per item. Woken, it may linger (``linger``
  seconds) for more items to share the wake-up.
- :meth:`~BackgroundQueue.flush` waits until every item put before it is finished (the
  owner says when, :meth:`~BackgroundQueue.finish_locked`), and makes the thread start on
  them at once (:meth:`~BackgroundQueue.urgent_locked`). Where no thread could start
  (interpreter exit), the owner's ``inline`` drain does the work on the caller's thread.
- :meth:`~BackgroundQueue.shutdown` refuses new items, flushes within its timeout, then
  stops the thread; past the timeout it aborts (the queued items are given up, the thread
  is told to cancel what it runs) and waits ``grace`` seconds more for the thread to
  return. What never finished is handed back, for the owner to count as dropped.
- Fork: in a forked child every queue starts empty, with a fresh lock and no thread (the
  parent's items stay the parent's), and its owner's ``on_fork`` resets what the owner
  keeps. ``os.register_at_fork`` is called in this module only; :func:`call_after_fork`
  adds other resets.
- Exit: one ``atexit`` hook runs the exit stages (:func:`add_exit_stage`: the live
  dispatchers' shutdown, then the sinks') one after the other within one deadline,
  ``LIVESCORE_EXIT_TIMEOUT`` seconds after the hook starts (5 by default; the environment
  variable is read when the process exits). A stage that finds no time left counts what it
  holds as dropped (``shutdown``). The hook is registered again, as the newest ``atexit``
  handler, whenever a queue's thread starts: ``atexit`` runs the newest first, so it runs
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
import types
import weakref
from collections import deque
from collections.abc import Callable, Sized
from typing import Any, Generic, Literal, Protocol, TypeVar

__all__ = (
    "DEFAULT_EXIT_TIMEOUT",
    "EXIT_TIMEOUT_ENV",
    "BackgroundQueue",
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
    """An item of a :class:`BackgroundQueue`: the queue numbers it (oldest lowest)."""

    seq: int


ItemT = TypeVar("ItemT", bound=Queued)
ResultT = TypeVar("ResultT")


class BackgroundQueue(Generic[ItemT]):
    """A bounded queue, the daemon thread that serves it, and its flush and shutdown.

    The owner's accounting lives beside the queue, under ``lock``; methods named
    ``*_locked`` expect the caller to hold it. ``serve(generation)`` is the thread's body:
    it takes items from ``queue`` (under the lock), calls :meth:`idle_locked` then
    :meth:`park_locked` when there are none, :meth:`finish_locked` for each item done, and
    returns once :attr:`stopping` and it has nothing left (or at once once :attr:`aborted`).

    Args:
        name: The thread's name.
        serve: The thread's body, called with the queue's generation (which changes when a
            thread retires and in a forked child: a thread of an older one stops).
        max_items: How many items make the queue full.
        bound: What counts towards ``max_items``: the items waiting to be taken
            (``"queued"``), or every unfinished one (``"unfinished"``).
        overflow: What a full queue does (``"drop_oldest"`` needs ``bound="queued"``).
        wake_at: A put wakes the sleeping thread when the queue then holds one item or at
            least this many (1: every put).
        linger: Seconds a woken thread waits for more items before it starts on them.
        inline: ``inline(seq, deadline)`` does the work on the calling thread, up to item
            ``seq``, where no thread could start; ``flush`` then calls it. Without it, the
            next put tries to start a thread again.
        on_fork: Called in a forked child after the queue was emptied.

    Example:
        >>> from dataclasses import dataclass
        >>> @dataclass
        ... class Item:
        ...     text: str
        ...     seq: int = 0
        >>> served = []
        >>> def serve(generation):
        ...     with q.lock:
        ...         while not (q.stopping and not q.queue):
        ...             if q.queue:
        ...                 item = q.queue.popleft()
        ...                 served.append(item.text)
        ...                 q.finish_locked(item)
        ...             else:
        ...                 q.idle_locked()
        ...                 q.park_locked(generation)
        >>> q = BackgroundQueue("example", serve, max_items=10)
        >>> with q.lock:
        ...     q.put_locked(Item("a"))
        >>> q.start_pending()
        True
        >>> q.flush(5), served
        (True, ['a'])
        >>> q.shutdown(5, flush=q.flush, grace=1)
        []
    """

    def __init__(
        self,
        name: str,
        serve: Callable[[int], None],
        *,
        max_items: int,
        bound: Literal["queued", "unfinished"] = "queued",
        overflow: Overflow = "drop_new",
        wake_at: int = 1,
        linger: float = 0.0,
        inline: Callable[[int, float | None], bool] | None = None,
        on_fork: Callable[[], None] | None = None,
    ) -> None:
        self.name = name
        self.max_items = max_items
        self.overflow: Overflow = overflow
        # The owner's methods, held weakly: the owner holds this queue, and threads that
        # wait on it (the owner's helpers, slow to leave after a shutdown on a loaded
        # machine) would otherwise keep the owner alive through it.
        self._serve = _weak_method(serve, None)
        self._count_unfinished = bound == "unfinished"
        self._wake_at = wake_at
        self._linger = linger
        self._inline = None if inline is None else _weak_method(inline, True)
        self._on_fork = None if on_fork is None else _weak_method(on_fork, None)
        self._closed = False  # survives a fork: a queue shut down stays shut down
        self._generation = 0
        self._reset()
        _QUEUES.add(self)

    def _reset(self) -> None:
        # At construction and in a forked child, whose copy of the lock may be held by a
        # thread that does not exist there.
        self.lock = threading.Lock()
        self._wake = threading.Condition(self.lock)  # the thread may have work
        self._done = threading.Condition(self.lock)  # an item finished, or the thread ended
        self._abort = threading.Condition(self.lock)  # shutdown gave up: cancel the work
        self.queue: deque[ItemT] = deque()
        """Items not yet taken, oldest first (the thread pops them, holding the lock)."""
        self._unfinished: dict[int, ItemT] = {}  # put and not finished, in put order
        # What max_items bounds (a plain len() on the hot path).
        self._bounded: Sized = self._unfinished if self._count_unfinished else self.queue
        self._seq = 0
        self._flush_upto = 0  # items up to this number are wanted now
        self._flush_waiters = 0
        self._thread: threading.Thread | None = None
        # The thread that said it ended (thread_ended_locked) and may still be returning:
        # shutdown joins it, so no thread of the queue outlives shutdown.
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
        if self._on_fork is not None:
            self._on_fork()

    # -- state ------------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` (or :meth:`shutdown`) was called: the owner refuses puts."""
        return self._closed

    @property
    def stopping(self) -> bool:
        """Whether the thread should return once it has nothing left to do."""
        return self._stopping

    @property
    def aborted(self) -> bool:
        """Whether shutdown gave up on unfinished work: the thread should return now."""
        return self._aborted

    @property
    def generation(self) -> int:
        """The current thread generation (see ``serve``)."""
        return self._generation

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

    def oldest_unfinished_locked(self) -> int | None:
        """The number of the oldest unfinished item (``None``: none)."""
        return next(iter(self._unfinished), None)

    # -- the producer's side ----------------------------------------------------------------

    def admits_locked(self) -> bool:
        """Whether a put now keeps its item (``False``: full, and new items are refused)."""
        if len(self._bounded) < self.max_items:
            return True
        return self.overflow == "drop_oldest" and bool(self.queue)

    def put_locked(self, item: ItemT, *, bounded: bool = True) -> ItemT | None:
        """Queue ``item`` (after :meth:`admits_locked`); returns the item it evicted, if any.

        O(1). Call :meth:`start_pending` once the lock is released. ``bounded=False`` queues
        a small control item behind the others even when the queue is full (it evicts
        nothing).
        """
        full = bounded and len(self._bounded) >= self.max_items
        evicted = self.queue.popleft() if full else None
        self._seq += 1
        item.seq = self._seq
        self.queue.append(item)
        self._unfinished[item.seq] = item
        if self._thread is None:
            if not self._no_thread:
                self._thread = self._unstarted = threading.Thread(
                    target=self._serve, args=(self._generation,), name=self.name, daemon=True
                )
        elif self._idle and (len(self.queue) == 1 or len(self.queue) >= self._wake_at):
            self._idle = False
            self._wake.notify()
        return evicted

    def track_locked(self, item: ItemT) -> None:
        """Count ``item`` as unfinished without queueing it: work the thread made itself.

        The thread hands such an item to its work at once (no put, no bound); it is
        finished with :meth:`finish_locked`, and given back by shutdown and
        :meth:`discard_locked` like any other. A :meth:`flush` that started earlier does
        not wait for it.
        """
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
                    self._no_thread = self._inline is not None
                self._done.notify_all()
            return False
        return True

    def wake_locked(self) -> None:
        """Wake the thread if it sleeps: the owner has news for it (counts to report)."""
        if self._idle:
            self._idle = False
            self._wake.notify()

    def close(self) -> None:
        """Refuse new items from now on (the owner checks :attr:`closed` before a put)."""
        with self.lock:
            self._closed = True

    # -- the thread's side ------------------------------------------------------------------

    def idle_locked(self) -> None:
        """The thread found nothing to do: the next put, flush or stop wakes it."""
        self._idle = True

    def park_locked(self, generation: int, timeout: float | None = None) -> None:
        """Sleep (after :meth:`idle_locked`) until woken or ``timeout``; then maybe linger.

        Woken by a put, the thread lingers ``linger`` seconds for more items, unless the
        work is urgent (a flush waits, or the queue stops).
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

    def urgent_locked(self) -> bool:
        """Whether work should start now rather than fill a batch: a flush waits for it, or
        the queue is stopping."""
        if self._stopping:
            return True
        oldest = next(iter(self._unfinished), None)
        return oldest is not None and oldest <= self._flush_upto

    def wait_for_abort(self, generation: int) -> None:
        """Block until shutdown gives up on unfinished work, or this generation retires."""
        with self.lock:
            while not self._aborted and generation == self._generation:
                self._abort.wait()

    def finish_locked(self, item: ItemT) -> bool:
        """``item`` is done. ``False`` when it was not unfinished (shutdown gave it up)."""
        if self._unfinished.pop(item.seq, None) is None:
            return False
        if self._flush_waiters:
            self._done.notify_all()
        return True

    def discard_locked(self) -> list[ItemT]:
        """Forget every unfinished item, queued or taken; returns them, oldest first."""
        items = list(self._unfinished.values())
        self._unfinished.clear()
        self.queue.clear()
        self._done.notify_all()
        return items

    def retire_locked(self, generation: int) -> None:
        """The thread of ``generation`` is about to return: release whatever waits for it
        (threads it parked, :meth:`wait_for_abort`)."""
        if generation == self._generation:
            self._generation += 1
        self._idle = False
        self._wake.notify_all()
        self._abort.notify_all()

    def thread_ended_locked(self) -> None:
        """The thread's last act on the queue (it may still be returning: shutdown joins
        it): the next put starts a new one."""
        if self._thread is threading.current_thread():
            self._ending, self._thread = self._thread, None
        self._done.notify_all()

    # -- flush and shutdown -----------------------------------------------------------------

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every item put so far is finished.

        Returns:
            ``True`` once they are; ``False`` on timeout, or when called from the queue's
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
                    if self._thread is None and self._inline is not None:
                        break  # no thread (it ended, or none could start): work here
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        return False
                    self._done.wait(left)
                else:
                    return True
            finally:
                self._flush_waiters -= 1
        assert self._inline is not None
        return self._inline(target, deadline)

    def _pending_locked(self, target: int) -> bool:
        oldest = next(iter(self._unfinished), None)
        return oldest is not None and oldest <= target

    def shutdown(
        self, timeout: float | None, *, flush: Callable[[float | None], bool], grace: float
    ) -> list[ItemT]:
        """Refuse new items, finish the rest within ``timeout``, stop the thread.

        ``flush`` is the owner's (it reports its counts too; :meth:`flush` itself will
        do). When it does not finish in time, the queue aborts: the queued items are given
        up, and the thread is told to stop taking items and to cancel what it runs; it
        gets ``grace`` seconds past the deadline to return.

        Returns:
            The items still unfinished, oldest first, removed from the queue: the owner
            counts them as dropped.
        """
        deadline = None if timeout is None else time.monotonic() + max(timeout, 0.0)
        self.close()
        done = flush(timeout)
        with self.lock:
            self._stopping = True
            if not done:
                self._aborted = True
                self.queue.clear()  # given up: they stay unfinished until discarded
            self._idle = False
            self._wake.notify_all()
            self._abort.notify_all()
            thread = self._thread or self._ending
        started = thread is not None and thread.ident is not None
        if started and thread is not threading.current_thread():
            assert thread is not None
            thread.join(None if deadline is None else max(deadline - time.monotonic(), 0) + grace)
        with self.lock:
            return self.discard_locked()


def _weak_method(fn: Callable[..., ResultT], gone: ResultT) -> Callable[..., ResultT]:
    """``fn``, through a weak reference when it is a bound method (``gone`` once its object
    is); any other callable as it is.

    Example:
        >>> class Owner:
        ...     def serve(self, generation):
        ...         return f"served {generation}"
        >>> owner = Owner()
        >>> serve = _weak_method(owner.serve, "gone")
        >>> serve(1)
        'served 1'
        >>> del owner
        >>> serve(2)
        'gone'
    """
    if not isinstance(fn, types.MethodType):
        return fn
    ref = weakref.WeakMethod(fn)

    def call(*args: Any) -> ResultT:
        method = ref()
        return gone if method is None else method(*args)

    return call


# -- every queue of the process: fork and exit ----------------------------------------------

_QUEUES: weakref.WeakSet[BackgroundQueue[Any]] = weakref.WeakSet()
_FORK_HOOKS: list[Callable[[], None]] = []
_STAGES: list[tuple[int, Callable[[float], None]]] = []
_EXIT_LOCK = threading.Lock()


def call_after_fork(hook: Callable[[], None]) -> None:
    """Call ``hook()`` in every forked child, before the queues reset (module-level state)."""
    _FORK_HOOKS.append(hook)


def _after_fork_in_child() -> None:
    for hook in list(_FORK_HOOKS):
        try:
            hook()
        except Exception:
            _log.exception("livescore: a reset after fork failed")
    for queue in list(_QUEUES):
        try:
            queue._after_fork()
        except Exception:
            _log.exception("livescore: %r could not reset after fork", queue.name)


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
