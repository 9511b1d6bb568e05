"""Process exit: the exit-time shutdown of dispatchers, and the opt-in SIGTERM handler.

What each way out of a process does to live scores (the in-process executor):

========================================  ===================================================
exit path                                  scores queued or in flight
========================================  ===================================================
``main`` returns, ``sys.exit()``, an       finished by the exit hook within the exit
uncaught exception                         deadline, the rest counted as dropped
                                           (``shutdown``); the emitter is flushed, then the
                                           sinks deliver, within the same deadline
SIGTERM, with :func:`install_sigterm_      finished within its ``timeout``, the rest counted
handler`                                   as dropped; emitter flushed; then the previous
                                           handler (the default: the process ends by SIGTERM)
SIGTERM with Python's default handler      lost, uncounted: the process ends at once (and so
(how containers stop)                      do spans still buffered in the SDK)
SIGKILL, ``os._exit()``, a crash of the    lost, uncounted
interpreter
========================================  ===================================================

The exit deadline: when ``main`` returns, livescore's exit hook has
``LIVESCORE_EXIT_TIMEOUT`` seconds in all (5 by default; the environment variable is read
at exit). The dispatchers shut down first (each within its ``shutdown_timeout`` too, if
that is shorter): they finish their queued and running scores and flush their emitter,
which exports the score spans and hands the scores to any sinks. Then the sinks deliver
what they hold. Each step gets what the steps before it left; past the deadline, what is
left is counted as dropped (``shutdown``), and the process goes on to exit (a stalled judge
or dashboard holds it no longer than that).

The broker hand-off (an executor that publishes jobs to a queue) is the durable answer:
a job in the broker outlives the agent's process.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
import weakref
from collections.abc import Callable
from types import FrameType
from typing import Any, Protocol

from livescore._background import add_exit_stage, call_after_fork
from livescore.live._guard import reset_after_fork

__all__ = ("install_sigterm_handler", "track", "tracked")

_log = logging.getLogger("livescore.live")

# Seconds past the SIGTERM deadline left for the emitter to export what was scored.
_EXPORT_GRACE_S = 1.0


class _Stoppable(Protocol):
    def flush(self, timeout: float | None = None) -> bool: ...

    def flush_emitter(self, timeout: float | None = None) -> bool: ...

    def shutdown(self, timeout: float | None = None) -> None: ...

    def _exit_shutdown(self, deadline: float) -> None: ...


# Every dispatcher, held weakly: flushed on SIGTERM; and those that asked for it, shut down
# at exit. (A forked child's reset is the dispatcher's queue's: livescore._background.)
_DISPATCHERS: weakref.WeakSet[Any] = weakref.WeakSet()
_AT_EXIT: weakref.WeakSet[Any] = weakref.WeakSet()


def track(dispatcher: _Stoppable, *, at_exit: bool) -> None:
    """Remember a dispatcher (weakly): for SIGTERM, and for exit when asked."""
    _DISPATCHERS.add(dispatcher)
    if at_exit:
        _AT_EXIT.add(dispatcher)


def tracked() -> list[_Stoppable]:
    """The live dispatchers of this process."""
    return list(_DISPATCHERS)


def _shutdown_at_exit(deadline: float) -> None:
    # The first exit stage: the sinks' (the next) deliver what these last scores produce.
    for dispatcher in list(_AT_EXIT):
        dispatcher._exit_shutdown(deadline)


add_exit_stage(0, _shutdown_at_exit)
call_after_fork(reset_after_fork)  # the parent's worker threads do not exist in a child


SignalHandler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None


class _SigtermHandler:
    """Flush every dispatcher within the deadline, then do what SIGTERM did before."""

    def __init__(self, timeout: float, previous: SignalHandler) -> None:
        self.timeout = timeout
        self.previous = previous

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        previous = self.previous
        ending = previous in (signal.SIG_DFL, None)
        # The work runs on a thread of its own: this handler runs on the main thread
        # between two bytecodes, possibly while that thread holds a dispatcher's lock.
        # The join bounds the wait even then.
        worker = threading.Thread(
            target=_flush_all, args=(self.timeout, ending), name="livescore-sigterm", daemon=True
        )
        worker.start()
        worker.join(self.timeout + _EXPORT_GRACE_S)
        if previous is signal.SIG_IGN:
            return
        if callable(previous):
            previous(signum, frame)
            return
        # Python's default: end the process by the signal, as it would have without us.
        signal.signal(signum, signal.SIG_DFL)
        signal.raise_signal(signum)


def _flush_all(timeout: float, ending: bool) -> None:
    deadline = time.monotonic() + timeout
    for dispatcher in tracked():
        left = max(deadline - time.monotonic(), 0.0)
        try:
            if ending:
                # The process ends next: count what cannot finish, and export everything.
                dispatcher.shutdown(left)
            else:
                # Another handler decides what happens next: keep the dispatcher usable.
                dispatcher.flush(left)
                dispatcher.flush_emitter(max(deadline - time.monotonic(), 0.0) + _EXPORT_GRACE_S)
        except Exception:
            _log.exception("livescore: flushing on SIGTERM failed")


def install_sigterm_handler(timeout: float = 5.0) -> None:
    """On SIGTERM, finish live scores within ``timeout`` seconds, then carry on as before.

    Containers and process managers stop a process with SIGTERM, and Python's default
    handling ends it at once: scores in the queue or in flight are lost with no count (and
    so are spans the OpenTelemetry SDK still buffers). With this handler, SIGTERM first
    gives every :class:`~livescore.live.LiveDispatcher` in the process up to ``timeout``
    seconds (one deadline for all) and its emitter up to one second more to export, then
    runs the handler that was installed before:

    - Python's default: the dispatchers are shut down (what did not finish is counted as
      dropped, ``shutdown``, and exported), and the process ends by SIGTERM as it would
      have (exit status 143, or ``-15`` from ``subprocess``).
    - your own handler (a server's graceful shutdown): the dispatchers are flushed and
      stay usable, then your handler is called with the same arguments.
    - ``SIG_IGN``: the dispatchers are flushed and the signal is ignored, as before.

    Call it once, from the main thread (Python only lets the main thread set signal
    handlers), after any other SIGTERM handler you install. Calling it again updates the
    timeout. See :mod:`livescore.live` for what each exit path loses.

    Args:
        timeout: Seconds the dispatchers get to finish scoring, in total.

    Raises:
        ValueError: ``timeout`` is negative, or this is not the main thread.

    Example:
        >>> import signal
        >>> from livescore.live import install_sigterm_handler
        >>> before = signal.getsignal(signal.SIGTERM)
        >>> install_sigterm_handler(timeout=5)
        >>> signal.signal(signal.SIGTERM, before) is not before  # (restored for the doctest)
        True
    """
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout >= 0:
        raise ValueError(f"timeout must be a number of seconds >= 0, not {timeout!r}")
    if threading.current_thread() is not threading.main_thread():
        raise ValueError("install_sigterm_handler must be called from the main thread")
    current = signal.getsignal(signal.SIGTERM)
    if isinstance(current, _SigtermHandler):
        current.timeout = float(timeout)
        return
    signal.signal(signal.SIGTERM, _SigtermHandler(float(timeout), current))
