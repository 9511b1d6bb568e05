"""The seam between the demo and an agent runtime: each integration registers a demo agent.

An integration registers a factory under the entry point group ``livescore.demo_agents``,
named after its runtime::

    [project.entry-points."livescore.demo_agents"]
    langchain = "livescore_langchain._demo_agent:start_demo_agent"

``livescore demo --runtime NAME`` loads it lazily; the factory gets a :class:`DemoSetup`
(scorers, tracer provider, the agent's model) and returns a :class:`DemoAgent` that runs the
scenario's agent with live scoring attached.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, Protocol

from livescore._errors import DemoConfigError
from livescore._version import install_hint
from livescore.demo._scenario import SCENARIO, DemoScenario

if TYPE_CHECKING:
    from livescore._emit import EmitSignal
    from livescore.live import DispatchStats
    from livescore.scoring import Scorer
    from livescore.sinks import ScoreSink

__all__ = (
    "DEMO_AGENTS_GROUP",
    "DemoAgent",
    "DemoAgentFactory",
    "DemoReply",
    "DemoSetup",
    "demo_runtimes",
    "load_demo_agent",
)

DEMO_AGENTS_GROUP = "livescore.demo_agents"
"""The entry point group where integrations register their demo agent."""

# The extra that installs each runtime's integration (for the message when it is missing).
_EXTRAS = {"langchain": "langchain", "openai-agents": "openai-agents"}


@dataclass(frozen=True, slots=True)
class DemoSetup:
    """What a runtime's demo agent gets.

    Attributes:
        scorers: The live scorers to attach.
        tracer_provider: The OpenTelemetry SDK tracer provider the demo reads spans from.
        agent_model: ``"openai/<model>"`` for a real chat model on the OpenAI-compatible
            endpoint of ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``; ``None`` for the scripted
            model (:meth:`DemoScenario.scripted_turn
            <livescore.demo.DemoScenario.scripted_turn>`).
        scenario: The agent to build: its name, instructions, tools, and the questions
            the scripted model knows how to answer.
        sinks: Dashboards each score also goes to (``--phoenix``, ``--langfuse``): pass
            them to the live scoring the agent attaches (``sinks=``).
        logger_provider: Where the scores' ``gen_ai.evaluation.result`` events go (an SDK
            logger provider exporting to ``--otlp-endpoint``); ``None`` for the global one.
            Pass it to the live scoring the agent attaches (``logger_provider=``).
        emit: What each score becomes (``("spans", "events")`` or ``("spans",)``): pass it
            to the live scoring the agent attaches (``emit=``).
    """

    scorers: Sequence[Scorer]
    tracer_provider: Any
    agent_model: str | None = None
    scenario: DemoScenario = SCENARIO
    sinks: Sequence[ScoreSink] = ()
    logger_provider: Any = None
    emit: tuple[EmitSignal, ...] = ("spans", "events")


@dataclass(slots=True)
class DemoReply:
    """One answered question.

    Attributes:
        answer: The agent's final answer.
        tool_calls: By tool call id: the call's arguments and its result (the trace view
            joins them to the exported ``execute_tool`` spans, which carry no content).
    """

    answer: str
    tool_calls: dict[str, tuple[Any, Any]] = field(default_factory=dict)


class DemoAgent(Protocol):
    """The scenario's agent on one runtime, with live scoring attached."""

    @property
    def description(self) -> str:
        """What plays the agent's model (shown in the demo's header)."""
        ...

    def ask(self, question: str) -> DemoReply:
        """Run the agent on ``question``; its run is scored live, off the agent's path."""
        ...

    def flush(self, timeout: float) -> bool:
        """Wait until the scores of finished runs are exported; ``False`` on timeout."""
        ...

    def shutdown(self, timeout: float) -> None:
        """Finish scoring and stop."""
        ...

    def stats(self) -> DispatchStats:
        """The live dispatcher's counts (sampled, scored, failed, skipped, dropped)."""
        ...


DemoAgentFactory = Callable[[DemoSetup], DemoAgent]
"""``start_demo_agent(setup) -> DemoAgent``; raises :class:`DemoConfigError` for a bad
setup (an agent model it cannot build)."""


def demo_runtimes() -> list[str]:
    """The runtimes whose demo agent is installed (``["langchain"]`` with
    ``livescore-langchain``)."""
    return sorted({ep.name for ep in entry_points(group=DEMO_AGENTS_GROUP)})


def load_demo_agent(runtime: str) -> DemoAgentFactory:
    """The demo agent factory an integration registered for ``runtime``.

    Raises:
        DemoConfigError: No installed integration registers it; the message says what to
            install.
    """
    found = [ep for ep in entry_points(group=DEMO_AGENTS_GROUP) if ep.name == runtime]
    if not found:
        extra = _EXTRAS.get(runtime)
        hint = (
            install_hint(extra)
            if extra
            else f"installed runtimes: {', '.join(demo_runtimes()) or 'none'}"
        )
        raise DemoConfigError(
            f"the demo needs livescore's {runtime} integration for its agent: {hint}"
        )
    try:
        factory: DemoAgentFactory = found[0].load()
    except ImportError as exc:
        raise DemoConfigError(
            f"the {runtime} demo agent cannot be loaded ({exc}); reinstall it with "
            f"{install_hint(_EXTRAS.get(runtime, runtime))}"
        ) from exc
    return factory
