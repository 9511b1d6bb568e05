"""``livescore demo``: watch an agent being scored live, in the terminal.

The scenario lives here: Parcelly, a fictional parcel-locker service, its help-centre pages
and orders, the questions, the tools (``search_docs``, ``get_order_status``), a scripted
model that plays the agent's model without an LLM, and the trace view that shows each run's
exported spans (the ``invoke_agent`` span, its ``execute_tool`` children and the
``evaluation`` spans with score, label and reason; :func:`render_scored_run` draws the
same view from a run and its scores, for ``livescore collect --console``). The agent
itself belongs to a runtime integration, registered under the ``livescore.demo_agents``
entry point group (``livescore-langchain`` registers ``langchain``), and is loaded only
when the demo runs: a :data:`DemoAgentFactory` that gets a :class:`DemoSetup` (the
scorers, the tracer provider, the :data:`SCENARIO`) and returns a :class:`DemoAgent`.

Example:
    >>> from livescore.demo import DemoOptions, run_demo
    >>> run_demo(DemoOptions(questions=["Where is my order PX-1042?"]))  # doctest: +SKIP
    0
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from livescore._errors import DemoConfigError
from livescore.demo._demo import DemoOptions, run_demo
from livescore.demo._local_judge import LocalJudgeServer
from livescore.demo._runtime import DemoAgent, DemoAgentFactory, DemoReply, DemoSetup
from livescore.demo._scenario import SCENARIO, DemoQuestion, DemoScenario, ToolOutput, ToolRequest

__all__ = (
    "SCENARIO",
    "DemoAgent",
    "DemoAgentFactory",
    "DemoConfigError",
    "DemoOptions",
    "DemoQuestion",
    "DemoReply",
    "DemoScenario",
    "DemoSetup",
    "LocalJudgeServer",
    "ToolOutput",
    "ToolRequest",
    "render_scored_run",
    "run_demo",
)

if TYPE_CHECKING:
    from livescore.demo._view import render_scored_run

# The trace view needs rich: loaded when first drawn, so importing the demo's names stays
# light.
_LAZY = {"render_scored_run": "livescore.demo._view"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'livescore.demo' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
