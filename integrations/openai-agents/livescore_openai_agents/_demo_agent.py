"""The demo agent on the OpenAI Agents SDK, scored live (`livescore demo` on this runtime).

The same scenario as every runtime's demo (:mod:`livescore.demo.scenario`): Parcelly's
support agent with ``search_docs`` and ``get_order_status`` over the same documents, the
same questions, the same answers. The agent is a real ``agents.Agent`` run by the real
``Runner`` on the SDK's ``OpenAIChatCompletionsModel``. With no model configured, that
model talks to an :class:`~livescore.testing.OpenAITestServer` on 127.0.0.1 whose replies
are the scenario's scripted turns: it really calls the tools and answers from what they
returned (one answer with a claim no document supports).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any

from agents import (
    Agent,
    OpenAIChatCompletionsModel,
    Runner,
    ToolCallItem,
    ToolCallOutputItem,
    function_tool,
    set_trace_processors,
)
from anyio.from_thread import start_blocking_portal
from openai import AsyncOpenAI

from livescore.demo import scenario
from livescore.testing import OpenAITestServer, Reply
from livescore_openai_agents._capture import text_of, tool_arguments
from livescore_openai_agents._processor import LiveScoringProcessor

if TYPE_CHECKING:
    from opentelemetry.trace import TracerProvider

    from livescore.live import DispatchStats, ScorerConfig
    from livescore.scoring import Scorer

__all__ = ("DemoAgent", "DemoTurn", "build_demo_agent", "scripted_model_turn")


@function_tool(name_override="search_docs")
def _search_docs(query: str) -> str:
    """Search Parcelly's help centre; returns the best matching pages."""
    return scenario.search_docs(query)


@function_tool(name_override="get_order_status")
def _get_order_status(order_id: str) -> str:
    """Look up a Parcelly order by its id (like PX-1042): status, locker, deadlines."""
    # JSON text: what the model reads (the SDK would show it a dict's Python repr).
    return json.dumps(scenario.get_order_status(order_id))


def scripted_model_turn(body: dict[str, Any]) -> Reply:
    """The scripted model, as an OpenAITestServer responder for chat completions.

    Its first turn in a run asks for the tool the question needs; once it has the tool's
    result it answers from it (:func:`livescore.demo.scenario.scripted_answer`).

    Example:
        >>> reply = scripted_model_turn({"messages": [{"role": "user", "content": "PX-1042?"}]})
        >>> reply.calls[0][1:]
        ('get_order_status', '{"order_id": "PX-1042"}')
    """
    messages: Sequence[Any] = body.get("messages") or []
    start = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=0)
    question = text_of(messages[start].get("content")) if messages else ""
    results = [text_of(m.get("content")) for m in messages[start + 1 :] if m.get("role") == "tool"]
    if not results:
        name, args = scenario.scripted_tool_call(question)
        return Reply.tool_calls((name, args), ids=[f"call_{uuid.uuid4().hex[:12]}"])
    return Reply.text(scenario.scripted_answer(question, results))


@dataclass(frozen=True, slots=True)
class DemoTurn:
    """What one question got: the answer and, per tool call id, its arguments and result.

    Attributes:
        answer: The agent's final answer.
        tool_calls: ``call id → (args, result)``, for the demo's trace view.
    """

    answer: str
    tool_calls: dict[str, tuple[Any, Any]] = field(default_factory=dict)


class DemoAgent:
    """The demo's Agents SDK agent with live scoring attached; a context manager.

    It registers its :class:`LiveScoringProcessor` as the SDK's only trace processor while
    it is open (the demo exports nothing to OpenAI) and removes it on :meth:`close`.

    Args:
        scorers: The scorers for the processor's dispatcher.
        tracer_provider: Where the run, tool and score spans go.
        meter_provider: For the dispatcher's metrics.
        agent_model: A chat model name on the OpenAI-compatible endpoint of
            ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``; the scripted model when ``None``.

    Attributes:
        description: What plays the agent's model, in words.
        processor: The live-scoring processor (``flush``, ``stats``).
    """

    def __init__(
        self,
        scorers: Sequence[Scorer | ScorerConfig],
        *,
        tracer_provider: TracerProvider | None = None,
        meter_provider: Any = None,
        agent_model: str | None = None,
    ) -> None:
        self._server: OpenAITestServer | None = None
        if agent_model is None:
            self._server = OpenAITestServer(responder=scripted_model_turn).start()
            client = AsyncOpenAI(base_url=self._server.base_url, api_key="scripted")
            model_name = "scripted-demo-model"
            self.description = (
                "scripted (no LLM configured): it calls the tools and answers from them"
            )
        else:
            client = AsyncOpenAI()  # OPENAI_BASE_URL / OPENAI_API_KEY
            model_name = agent_model
            self.description = f"{agent_model} (OpenAI-compatible, Agents SDK)"
        self._client = client
        self.agent: Agent[Any] = Agent(
            name=scenario.AGENT_NAME,
            instructions=scenario.SYSTEM_PROMPT,
            tools=[_search_docs, _get_order_status],
            model=OpenAIChatCompletionsModel(model_name, client),
        )
        self.processor = LiveScoringProcessor(
            scorers=scorers,
            name=scenario.AGENT_NAME,
            tracer_provider=tracer_provider,
            meter_provider=meter_provider,
        )
        set_trace_processors([self.processor])
        # One event loop for the demo's life, on its own thread: the model client's
        # connections belong to it (Runner.run_sync would shut a loop's async generators
        # down after every run, and the next run's HTTP calls would warn about it).
        self._portal_cm = start_blocking_portal()
        self._portal = self._portal_cm.__enter__()
        self._closed = False

    def ask(self, question: str) -> DemoTurn:
        """Run the agent on ``question`` and wait for its answer; scoring happens off its path."""
        result = self._portal.call(Runner.run, self.agent, question)
        args: dict[str, Any] = {}
        outputs: dict[str, Any] = {}
        for item in result.new_items:
            raw: Any = item.raw_item
            if isinstance(item, ToolCallItem):
                call_id = getattr(raw, "call_id", None)
                if call_id is not None:
                    args[call_id] = tool_arguments(getattr(raw, "arguments", None))
            elif isinstance(item, ToolCallOutputItem) and isinstance(raw, dict):
                outputs[str(raw.get("call_id"))] = item.output
        calls = {call_id: (value, outputs.get(call_id)) for call_id, value in args.items()}
        return DemoTurn(str(result.final_output), calls)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every run so far is scored; ``False`` on timeout."""
        return self.processor.flush(timeout)

    def stats(self) -> DispatchStats:
        """The dispatcher's counters: sampled, scored, failed, skipped, dropped runs."""
        return self.processor.stats()

    def close(self, timeout: float | None = None) -> None:
        """Stop scoring (within ``timeout``), unregister the processor, stop the model."""
        if self._closed:
            return
        self._closed = True
        self.processor.shutdown(timeout)
        set_trace_processors([])
        try:
            self._portal.call(self._client.close)
        finally:
            self._portal_cm.__exit__(None, None, None)
        if self._server is not None:
            self._server.close()

    def __enter__(self) -> DemoAgent:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def build_demo_agent(
    scorers: Sequence[Scorer | ScorerConfig],
    *,
    tracer_provider: TracerProvider | None = None,
    meter_provider: Any = None,
    agent_model: str | None = None,
) -> DemoAgent:
    """The demo agent on the OpenAI Agents SDK, scored live by ``scorers``.

    What ``livescore demo --runtime openai-agents`` runs: open it, :meth:`DemoAgent.ask`
    each question, :meth:`DemoAgent.flush` to wait for the scores, render the spans from
    ``tracer_provider``'s exporter, then :meth:`DemoAgent.close`.

    Example:
        >>> from livescore.scorers import create_keyword_coverage_scorer
        >>> with build_demo_agent([create_keyword_coverage_scorer()]) as demo:
        ...     turn = demo.ask("Where is my order PX-1042, and until when can I pick it up?")
        ...     demo.flush(timeout=10)
        True
        >>> "until Friday 18:00" in turn.answer
        True
    """
    return DemoAgent(
        scorers,
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        agent_model=agent_model,
    )
