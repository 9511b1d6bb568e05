"""Work handed to anyio's worker threads, and the threads joined when their loop ends.

``anyio.to_thread.run_sync`` runs a function in a worker thread of the calling event loop;
once the loop ends, anyio tells those threads to stop but does not wait for them. A thread
still leaving holds what its last call held, and one abandoned on cancel holds it until its
call returns. The live dispatcher's worker thread owns its loop: it runs the loop inside
:meth:`ThreadRecord.recording` and joins what it recorded afterwards, so once ``shutdown()``
has joined the worker no thread that ran its work is left. A call cancelled before its
thread took it never runs, so that thread is never recorded and may still be leaving,
holding the call: the waits the dispatcher hands over hold their owner through
:func:`weakly`.

Every hand-off to a thread in livescore goes through :func:`run_in_thread`. Outside a
recording it is ``anyio.to_thread.run_sync`` itself.
"""

from __future__ import annotations

import contextlib
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import TypeVar

import anyio
import anyio.to_thread

__all__ = ("ThreadRecord", "run_in_thread", "weakly")

T = TypeVar("T")

_RECORD: ContextVar[ThreadRecord | None] = ContextVar("livescore_thread_record", default=None)


class ThreadRecord:
    """The worker threads that ran calls of :func:`run_in_thread` inside :meth:`recording`.

    Example:
        >>> record = ThreadRecord()
        >>> async def main():
        ...     return await run_in_thread(threading.current_thread)
        >>> with record.recording():
        ...     ran_in = anyio.run(main)
        >>> record.join(5)
        True
        >>> ran_in is not threading.current_thread(), ran_in.is_alive()
        (True, False)
    """

    def __init__(self) -> None:
        self._threads: set[threading.Thread] = set()

    @contextlib.contextmanager
    def recording(self) -> Iterator[None]:
        """Record the threads of the calls made in this context (an event loop started in
        it copies the context into every task)."""
        token = _RECORD.set(self)
        try:
            yield
        finally:
            _RECORD.reset(token)

    def _run(self, fn: Callable[..., T], *args: object) -> T:
        self._threads.add(threading.current_thread())  # set.add is atomic under the GIL
        return fn(*args)

    def join(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for every recorded thread to end.

        Call it once the loop ended (anyio then stops its threads). Returns whether they
        all did; a thread still running an abandoned call is left to finish on its own.
        """
        deadline = time.monotonic() + max(timeout, 0.0)
        for thread in list(self._threads):
            thread.join(max(deadline - time.monotonic(), 0.0))
        return not any(thread.is_alive() for thread in self._threads)


async def run_in_thread(
    fn: Callable[..., T],
    *args: object,
    abandon_on_cancel: bool = False,
    limiter: anyio.CapacityLimiter | None = None,
) -> T:
    """``anyio.to_thread.run_sync(fn, *args, ...)``, the thread recorded where a
    :class:`ThreadRecord` records."""
    record = _RECORD.get()
    if record is None:
        return await anyio.to_thread.run_sync(
            fn, *args, abandon_on_cancel=abandon_on_cancel, limiter=limiter
        )
    return await anyio.to_thread.run_sync(
        record._run, fn, *args, abandon_on_cancel=abandon_on_cancel, limiter=limiter
    )


def weakly(owner: object, method: str) -> Callable[[int], None]:
    """A call of ``owner``'s ``method`` (read at each call) through a weak reference to
    ``owner``: waiting in a thread's queue it keeps nothing alive. Once ``owner`` is gone the
    call does nothing.

    Example:
        >>> class Owner:
        ...     def wait(self, generation):
        ...         print("waited", generation)
        >>> owner = Owner()
        >>> wait = weakly(owner, "wait")
        >>> wait(1)
        waited 1
        >>> del owner
        >>> wait(2)
    """
    ref = weakref.ref(owner)

    def call(generation: int) -> None:
        target = ref()
        if target is not None:
            getattr(target, method)(generation)

    return call
