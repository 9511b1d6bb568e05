"""How ``run_evals`` runs a target: plain callables here, agent frameworks through adapters.

An integration (``livescore-langchain``, …) registers a *target adapter* under the entry
point group ``livescore.targets``::

    [project.entry-points."livescore.targets"]
    langchain = "livescore_langchain._eval_target:adapt_target"

An adapter is a function ``adapt_target(target) -> AgentTarget | None``: it returns a ready
:class:`AgentTarget` for objects of its framework and ``None`` for anything else. Adapters
are looked up lazily, the first time a target that is not a plain function is given, so
``import livescore`` never imports an integration or its framework.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Protocol, runtime_checkable

from livescore._threads import run_in_thread
from livescore._version import install_hint
from livescore.runs import Run

__all__ = (
    "TARGETS_GROUP",
    "AgentTarget",
    "TargetAdapter",
    "register_target_adapter",
    "resolve_target",
)

logger = logging.getLogger("livescore.evals")

TARGETS_GROUP = "livescore.targets"
"""The entry point group where integrations register their ``run_evals`` target adapter."""


@runtime_checkable
class AgentTarget(Protocol):
    """One agent, ready to answer dataset inputs for ``run_evals``.

    Attributes:
        name: The agent's name (the ``invoke_agent {name}`` span of each item).
    """

    name: str

    async def __call__(self, value: Any) -> Run | Any:
        """Answer one input: a :class:`~livescore.Run` (tool calls included) or the output."""
        ...


TargetAdapter = Callable[[Any], AgentTarget | None]
"""``adapt_target(target) -> AgentTarget | None``: ``None`` when the target is not its kind."""

# Packages whose objects need an integration, and the extra that installs it: used only to
# say what to install when no adapter claims such an object.
_INTEGRATIONS = {
    "langchain": "langchain",
    "langchain_core": "langchain",
    "langgraph": "langchain",
    "agents": "openai-agents",
}

_registered: list[TargetAdapter] = []
_discovered: list[TargetAdapter] | None = None


def register_target_adapter(adapter: TargetAdapter) -> TargetAdapter:
    """Register an adapter in this process (the entry point group does it for packages).

    Adapters registered here are asked before the discovered ones, newest first.

    Example:
        >>> class EchoAgent:  # doctest: +SKIP
        ...     name = "echo"
        ...     async def __call__(self, value): return value
        >>> register_target_adapter(  # doctest: +SKIP
        ...     lambda target: EchoAgent() if isinstance(target, MyBot) else None
        ... )
    """
    _registered.insert(0, adapter)
    return adapter


def _discover() -> list[TargetAdapter]:
    global _discovered
    if _discovered is None:
        found: list[TargetAdapter] = []
        for ep in entry_points(group=TARGETS_GROUP):
            try:
                found.append(ep.load())
            except Exception as exc:  # a broken plugin must not break every evaluation
                logger.warning("cannot load the run_evals target adapter %r: %s", ep.name, exc)
        _discovered = found
    return _discovered


@dataclass(slots=True)
class _CallableTarget:
    fn: Callable[[Any], Any]
    name: str

    async def __call__(self, value: Any) -> Any:
        if _is_async_callable(self.fn):
            return await self.fn(value)
        # A sync target runs in a worker thread so `concurrency` items overlap; anyio copies
        # the context, so spans the target opens still nest under the item's span. A
        # cancelled evaluation (Ctrl-C, a timeout around it) does not wait for a call
        # blocked in the target: the thread is left to finish alone, its answer unused.
        result = await run_in_thread(self.fn, value, abandon_on_cancel=True)
        if inspect.isawaitable(result):
            result = await result
        return result


def _is_async_callable(fn: Any) -> bool:
    while isinstance(fn, functools.partial):
        fn = fn.func
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - an object with an async __call__
    )


def _is_plain_function(target: Any) -> bool:
    return inspect.isroutine(target) or isinstance(target, functools.partial)


def _packages_of(target: Any) -> list[str]:
    return [cls.__module__.partition(".")[0] for cls in type(target).__mro__]


def resolve_target(target: Any) -> AgentTarget:
    """What ``run_evals`` calls for each item's input.

    A plain function (sync or async) is called as it is; any other object is offered to the
    registered adapters (LangChain runnables and agents with ``livescore-langchain``), and
    a callable object no adapter claims is called as it is.

    Raises:
        TypeError: No adapter claims the object and it is not callable; the message names
            the package to install when the object comes from a framework livescore knows.

    Example:
        >>> resolve_target(str.upper).name
        'upper'
    """
    if not _is_plain_function(target):
        for adapter in (*_registered, *_discover()):
            adapted = adapter(target)
            if adapted is not None:
                return adapted
        framework = next((p for p in _packages_of(target) if p in _INTEGRATIONS), None)
        if framework is not None:
            extra = _INTEGRATIONS[framework]
            raise TypeError(
                f"this target is a {type(target).__name__} from {framework!r}; running it "
                f"needs livescore's integration for it: {install_hint(extra)}"
            )
    if callable(target):
        name = getattr(target, "__name__", None) or type(target).__name__
        return _CallableTarget(target, str(name))
    raise TypeError(
        "target must be a callable (input) -> output or an agent an installed integration "
        f"can run (a LangChain Runnable with livescore-langchain), not {type(target).__name__}"
    )
