"""Attach a handler to every LangChain run in the process, without ``callbacks=``."""

from __future__ import annotations

import os
import threading
from contextvars import ContextVar
from typing import Any, cast

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.tracers.context import register_configure_hook

__all__ = ("instrument", "instrumented_handler", "uninstrument")


class _HandlerSlot:
    """What LangChain's configure hook reads (it only ever calls ``.get()``).

    A plain ``ContextVar`` set once would not reach threads started later (each starts
    with an empty context before Python 3.14), such as a server's worker threads; this slot
    gives every thread the process-wide handler.
    """

    def __init__(self) -> None:
        self.handler: BaseCallbackHandler | None = None

    def get(self) -> BaseCallbackHandler | None:
        return self.handler


_SLOT = _HandlerSlot()
_REGISTERED = False
_LOCK = threading.Lock()


def _reset_after_fork() -> None:
    # A parent's thread inside instrument() at the fork does not exist in the child.
    global _LOCK
    _LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


def instrument(handler: BaseCallbackHandler) -> None:
    """Give every LangChain run in this process ``handler``, without ``callbacks=``.

    The handler is added once per run (not twice when a run also passes it in
    ``callbacks``), and is inherited by child runs. Calling it again replaces the handler.

    Example:
        >>> from livescore.scorers import create_keyword_coverage_scorer
        >>> from livescore_langchain import LiveScoringHandler
        >>> handler = LiveScoringHandler(scorers=[create_keyword_coverage_scorer()])
        >>> instrument(handler)
        >>> # agent.invoke(...) is now scored
        >>> uninstrument()
        >>> handler.shutdown()
    """
    global _REGISTERED
    if not isinstance(handler, BaseCallbackHandler):
        raise TypeError(f"instrument needs a LangChain callback handler, not {handler!r}")
    with _LOCK:
        if not _REGISTERED:
            # LangChain keeps hooks forever: register the slot once, then swap its content.
            register_configure_hook(cast("ContextVar[Any]", _SLOT), inheritable=True)
            _REGISTERED = True
        _SLOT.handler = handler


def uninstrument() -> None:
    """Stop adding the handler given to :func:`instrument` (runs in flight keep it)."""
    with _LOCK:
        _SLOT.handler = None


def instrumented_handler() -> BaseCallbackHandler | None:
    """The handler :func:`instrument` attached, or ``None``."""
    return _SLOT.handler
