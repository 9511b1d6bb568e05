"""``run_evals`` target adapter: LangChain runnables and ``create_agent`` agents.

Registered under the entry point group ``livescore.targets`` (see this distribution's
``pyproject.toml``), so ``run_evals(target=agent)`` runs an agent through
:func:`~livescore_langchain.acapture_run` and scores the run it recorded, tool calls and
results included, exactly as live scoring would, without the core importing LangChain.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from livescore.runs import Run

__all__ = ("LangChainTarget", "adapt_target")


@dataclass(slots=True)
class LangChainTarget:
    """A LangChain runnable as a ``run_evals`` target (a :class:`livescore.evals.AgentTarget`).

    Attributes:
        runnable: The runnable or agent.
        name: Its name (``create_agent(name=...)``), else its type's name.
    """

    runnable: Any
    name: str

    async def __call__(self, value: Any) -> Run:
        """Run the runnable on ``value`` and return the run the handler recorded."""
        from livescore_langchain._capture import acapture_run

        _, run = await acapture_run(self.runnable, agent_input(self.runnable, value))
        return run


def adapt_target(target: object) -> LangChainTarget | None:
    """A :class:`LangChainTarget` for a LangChain ``Runnable``; ``None`` for anything else.

    LangChain is not imported here: an object can only be a ``Runnable`` if LangChain is
    already loaded.

    Example:
        >>> adapt_target(len) is None
        True
    """
    core = sys.modules.get("langchain_core.runnables")
    if core is None or not isinstance(target, core.Runnable):
        return None
    name = getattr(target, "name", None) or type(target).__name__
    return LangChainTarget(target, str(name))


def agent_input(runnable: Any, value: Any) -> Any:
    """A plain-text input becomes one user message for runnables that take ``messages``.

    ``create_agent`` agents take ``{"messages": [...]}``; a dataset usually holds the
    question as text. Other inputs (and other runnables) pass through unchanged.

    Example:
        >>> agent_input(object(), {"messages": []})
        {'messages': []}
    """
    if not isinstance(value, str):
        return value
    try:
        schema = runnable.get_input_jsonschema()
    except Exception:  # not every runnable can describe its input
        return value
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    if isinstance(properties, Mapping) and "messages" in properties:
        return {"messages": [{"role": "user", "content": value}]}
    return value
