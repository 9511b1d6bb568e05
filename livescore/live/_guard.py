"""Whether the current code runs inside a live scorer (so integrations ignore judge calls)."""

from __future__ import annotations

import threading
from contextvars import ContextVar

__all__ = ("is_scoring", "scoring_context")

_SCORING: ContextVar[bool] = ContextVar("livescore_scoring", default=False)

# Every thread that runs a dispatcher's worker loop. Synchronous callbacks that a framework
# runs on that thread outside the scoring task's context (a LangChain judge model's
# handlers, say) are judge work too.
_WORKER_THREADS: set[int] = set()
_WORKER_THREADS_LOCK = threading.Lock()


def is_scoring() -> bool:
    """``True`` while code runs inside a live scorer on the dispatcher's worker.

    Integrations call it in their callbacks to ignore the judge's own model calls (a judge
    that is itself a LangChain chat model would otherwise be captured and scored).

    Example:
        >>> is_scoring()
        False
    """
    return _SCORING.get() or threading.get_ident() in _WORKER_THREADS


def scoring_context() -> ContextVar[bool]:
    """The context variable behind :func:`is_scoring` (set ``True`` in scoring tasks)."""
    return _SCORING


def _add_worker_thread(ident: int) -> None:
    with _WORKER_THREADS_LOCK:
        _WORKER_THREADS.add(ident)


def _remove_worker_thread(ident: int) -> None:
    with _WORKER_THREADS_LOCK:
        _WORKER_THREADS.discard(ident)


def _reset_after_fork() -> None:
    # The parent's worker threads do not exist in a child; a new thread may reuse an ident.
    global _WORKER_THREADS_LOCK
    _WORKER_THREADS_LOCK = threading.Lock()
    _WORKER_THREADS.clear()
