"""Ctrl-C that always stops a command promptly and never interrupts writing its outputs; and
SIGTERM or Ctrl-C as a graceful stop for the long-running commands
(:func:`stopping_on_signals`)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from types import FrameType
from typing import Any, Generic, TypeVar

import anyio

__all__ = ("CANCEL_GRACE_S", "BackgroundRun", "Interrupts", "stopping_on_signals")

T = TypeVar("T")

CANCEL_GRACE_S = 2.0
"""Seconds the main thread waits for cancelled work to wind down before going on without it
(a second Ctrl-C goes on at once)."""

_POLL_S = 0.05


class Interrupts:
    """Counts Ctrl-C presses while the ``with`` block runs, instead of raising.

    A ``KeyboardInterrupt`` could land between two states (an item scored but not recorded,
    a report half written), and asyncio's cancellation cannot reach a target blocked in
    synchronous code: so the work runs in a :class:`BackgroundRun`, and the main thread
    only waits, counts presses, and cancels it.

    Installed only in the main thread (the only one that receives signals); elsewhere it
    counts nothing and changes nothing. The previous handler comes back at exit.

    Example:
        >>> with Interrupts() as interrupts:
        ...     interrupts.count
        0
    """

    def __init__(self) -> None:
        self.count = 0
        self._previous: Any = None
        self._installed = False

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        # Only an integer increment: a handler that took a lock could deadlock with the
        # code it interrupted holding that same lock.
        self.count += 1

    def __enter__(self) -> Interrupts:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
            self._installed = True
        return self

    def __exit__(self, *exc: object) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)
            self._installed = False


@contextlib.contextmanager
def stopping_on_signals() -> Iterator[threading.Event]:
    """An event that SIGTERM or Ctrl-C sets while the ``with`` block runs; the previous
    handlers come back at its end."""
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class BackgroundRun(Generic[T]):
    """``main()`` on its own event loop in a daemon thread, cancellable from any thread.

    Args:
        main: The async work; what it returns is :attr:`result`.
        name: The thread's name.

    Attributes:
        result: What ``main`` returned (``None`` until it did, or when it was cancelled).
        error: What ``main`` raised, if anything (re-raised by :meth:`outcome`).
        cancelled: Whether :meth:`cancel` was called.

    Example:
        >>> async def work():
        ...     return 42
        >>> run = BackgroundRun(work).start()
        >>> with Interrupts() as presses:
        ...     run.wait(presses)
        True
        >>> run.outcome()
        42
    """

    def __init__(self, main: Callable[[], Awaitable[T]], *, name: str = "livescore-run") -> None:
        self._main = main
        self._lock = threading.Lock()
        self._scope: anyio.CancelScope | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._done = threading.Event()
        self.result: T | None = None
        self.error: BaseException | None = None
        self.cancelled = False
        # A daemon thread: the threads it starts (anyio's workers running a sync target)
        # are daemons too, so work stuck past a cancellation never keeps the process alive.
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> BackgroundRun[T]:
        """Start the thread; returns ``self``."""
        self._thread.start()
        return self

    @property
    def done(self) -> bool:
        """Whether ``main`` has returned, raised, or been cancelled to its end."""
        return self._done.is_set()

    def cancel(self) -> None:
        """Cancel ``main`` (safe from any thread, before or after it started)."""
        with self._lock:
            self.cancelled = True
            scope, loop = self._scope, self._loop
        if scope is not None and loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop has already closed
                loop.call_soon_threadsafe(scope.cancel)

    def wait(
        self, interrupts: Interrupts, *, timeout: float | None = None, presses: int = 0
    ) -> bool:
        """Wait until ``main`` is done, Ctrl-C was pressed more than ``presses`` times, or
        ``timeout`` seconds passed; returns whether it is done."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._done.wait(_POLL_S):
            if interrupts.count > presses:
                return False
            if deadline is not None and time.monotonic() >= deadline:
                return False
        return True

    def outcome(self) -> T | None:
        """:attr:`result`, or what ``main`` raised (re-raised here, in the caller's thread)."""
        if self.error is not None:
            raise self.error
        return self.result

    def _run(self) -> None:
        try:
            self.result = anyio.run(self._guarded)
        except BaseException as exc:  # handed to the waiting thread, raised there
            self.error = exc
        finally:
            self._done.set()

    async def _guarded(self) -> T | None:
        with anyio.CancelScope() as scope:
            with self._lock:
                self._scope = scope
                self._loop = asyncio.get_running_loop()
                if self.cancelled:  # cancelled before the loop was up
                    scope.cancel()
            return await self._main()
        return None
