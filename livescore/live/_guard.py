"""Whether the current code runs inside a live scorer (so integrations ignore judge calls)."""

from __future__ import annotations

import threading
from contextvars import ContextVar

__all__ = (
    "add_worker_thread",
    "is_scoring",
    "remove_worker_thread",
    "reset_after_fork",
    "scoring_context",
)

_SCORING: ContextVar[bool] = ContextVar("livescore_scoring", default=False)

# Every thread that runs a dispatcher's worker loop. Synchronous callbacks that a framework
# runs on that thread outside the scoring task's context (a LangChain judge model's
# handlers, say) are judge work too.
_WORKER_THREADS: set[int] = set()
_WORKER_THREADS_LOCK = threading.Lock()


def is_scoring() -> bool:
    """``True`` while code runs inside a live scorer on the dispatcher's worker.

    Integrations call it in their callbacks to ignore the judge's own model calls (a judge
    that is itself a LangChain chat model would otherwise be captured and scored). It is
    also ``True`` in the worker threads that run a scorer's synchronous steps.

    Example:
        >>> is_scoring()
        False
    """
    return _SCORING.get() or threading.get_ident() in _WORKER_THREADS


def scoring_context() -> ContextVar[bool]:
    """The context variable behind :func:`is_scoring` (set ``True`` in scoring tasks)."""
    return _SCORING


def add_worker_thread(ident: int) -> None:
    """Mark a thread as a dispatcher's worker (its callbacks count as scoring)."""
    with _WORKER_THREADS_LOCK:
        _WORKER_THREADS.add(ident)


def remove_worker_thread(ident: int) -> None:
    """Forget a worker thread that ended."""
    with _WORKER_THREADS_LOCK:
        _WORKER_THREADS.discard(ident)


def reset_after_fork() -> None:
    """In a forked child: the parent's worker threads do not exist (an ident may be reused)."""
    global _WORKER_THREADS_LOCK
    _WORKER_THREADS_LOCK = threading.Lock()
    _WORKER_THREADS.clear()
