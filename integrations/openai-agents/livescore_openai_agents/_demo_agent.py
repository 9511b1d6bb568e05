"""The demo's agent on the OpenAI Agents SDK (``livescore demo --runtime openai-agents``).

Registered under the entry point group ``livescore.demo_agents`` as ``openai-agents``, so
``livescore demo`` loads it only when it runs. The same scenario as every runtime
(:mod:`livescore.demo`): Parcelly's support agent with ``search_docs`` and
``get_order_status``, the same questions and answers. The agent is a real ``agents.Agent``
run by the real ``Runner`` on the SDK's ``OpenAIChatCompletionsModel``; with no model
configured, that model talks to an :class:`~livescore.testing.OpenAITestServer` on
127.0.0.1 whose replies are the scenario's scripted model
(:meth:`~livescore.demo.DemoScenario.scripted_turn`): it really calls the tools and answers
from what they returned.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Sequence
from typing import Any

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

from livescore.demo import (
    SCENARIO,
    DemoConfigError,
    DemoReply,
    DemoScenario,
    DemoSetup,
    ToolOutput,
    ToolRequest,
)
from livescore.live import DispatchStats
from livescore.testing import OpenAITestServer, Reply
from livescore_openai_agents._capture import text_of, tool_arguments
from livescore_openai_agents._processor import LiveScoringProcessor

__all__ = ("OpenAIAgentsDemoAgent", "scripted_model_reply", "start_demo_agent")


_TOOLS = {function.__name__: function for function in SCENARIO.tools}


@function_tool(name_override="search_docs")
def _search_docs(query: str) -> str:
    """Search Parcelly's help centre; returns the best matching pages."""
    return str(_TOOLS["search_docs"](query))


@function_tool(name_override="get_order_status")
def _get_order_status(order_id: str) -> str:
    """Look up a Parcelly order by its id (like PX-1042): status, locker, deadlines."""
    # JSON text: what the model reads (the SDK would show it a dict's Python repr).
    return json.dumps(_TOOLS["get_order_status"](order_id))


def scripted_model_reply(body: dict[str, Any], scenario: DemoScenario = SCENARIO) -> Reply:
    """The scripted model as an :class:`~livescore.testing.OpenAITestServer` responder: the
    scenario's next turn for a chat-completions request.

    Example:
        >>> reply = scripted_model_reply({"messages": [{"role": "user", "content": "PX-1042?"}]})
        >>> reply.calls[0][1:]
        ('get_order_status', '{"order_id": "PX-1042"}')
    """
    messages: Sequence[Any] = body.get("messages") or []
    start = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=0)
    question = text_of(messages[start].get("content")) if messages else ""
    outputs = [
        ToolOutput(text_of(m.get("content")))
        for m in messages[start + 1 :]
        if m.get("role") == "tool"
    ]
    turn = scenario.scripted_turn(question, outputs)
    if isinstance(turn, ToolRequest):
        return Reply.tool_calls((turn.name, turn.args), ids=[f"call_{uuid.uuid4().hex[:12]}"])
    return Reply.text(turn)


def _model_name(spec: str) -> str:
    provider, _, name = spec.strip().partition("/")
    if provider.lower() != "openai" or not name.strip():
        raise DemoConfigError(f"--agent-model must look like 'openai/<model>', not {spec!r}")
    if not (os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL")):
        raise DemoConfigError(
            "--agent-model needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local server)"
        )
    return name.strip()


class OpenAIAgentsDemoAgent:
    """The demo agent with a :class:`~livescore_openai_agents.LiveScoringProcessor` attached
    (a :class:`livescore.demo.DemoAgent`).

    While it runs, its processor is the SDK's only trace processor (the demo exports nothing
    to OpenAI); :meth:`shutdown` removes it. Its runs share one event loop on a thread of
    their own, as in a server (the model client's connections belong to that loop).
    """

    def __init__(self, setup: DemoSetup) -> None:
        self._server: OpenAITestServer | None = None
        if setup.agent_model:
            name = _model_name(setup.agent_model)
            base_url = os.environ.get("OPENAI_BASE_URL")
            api_key = os.environ.get("OPENAI_API_KEY") or "local"
            client = AsyncOpenAI(base_url=base_url, api_key=api_key)
            self.description = f"{name} (OpenAI-compatible, on the Agents SDK)"
        else:
            scenario = setup.scenario
            self._server = OpenAITestServer(
                responder=lambda body: scripted_model_reply(body, scenario)
            ).start()
            client = AsyncOpenAI(base_url=self._server.base_url, api_key="scripted")
            name = "scripted-demo-model"
            self.description = (
                "scripted (no LLM configured): it calls the tools and answers from them, "
                "over the Agents SDK's Chat Completions model"
            )
        self._client = client
        self._agent: Agent[Any] = Agent(
            name=setup.scenario.agent_name,
            instructions=setup.scenario.system_prompt,
            tools=[_search_docs, _get_order_status],
            model=OpenAIChatCompletionsModel(name, client),
        )
        self._processor = LiveScoringProcessor(
            scorers=list(setup.scorers),
            tracer_provider=setup.tracer_provider,
            name=setup.scenario.agent_name,
            sinks=list(setup.sinks),
            logger_provider=setup.logger_provider,
            emit=setup.emit,
        )
        set_trace_processors([self._processor])
        self._portal_cm = start_blocking_portal()
        self._portal = self._portal_cm.__enter__()
        self._closed = False

    def ask(self, question: str) -> DemoReply:
        """Run the agent on ``question`` with live scoring attached."""
        result = self._portal.call(Runner.run, self._agent, question)
        args: dict[str, Any] = {}
        outputs: dict[str, Any] = {}
        for item in result.new_items:
            raw: Any = item.raw_item
            if isinstance(item, ToolCallItem):
                call_id = getattr(raw, "call_id", None)
                if call_id is not None:
                    args[str(call_id)] = tool_arguments(getattr(raw, "arguments", None))
            elif isinstance(item, ToolCallOutputItem) and isinstance(raw, dict):
                outputs[str(raw.get("call_id"))] = item.output
        calls = {call_id: (value, outputs.get(call_id)) for call_id, value in args.items()}
        return DemoReply(answer=str(result.final_output), tool_calls=calls)

    def flush(self, timeout: float) -> bool:
        """Wait for the scores of finished runs."""
        return self._processor.flush(timeout)

    def shutdown(self, timeout: float) -> None:
        """Finish scoring, unregister the processor, stop the model and the loop."""
        if self._closed:
            return
        self._closed = True
        self._processor.shutdown(timeout)
        set_trace_processors([])
        try:
            self._portal.call(self._client.close)
        finally:
            self._portal_cm.__exit__(None, None, None)
            if self._server is not None:
                self._server.close()

    def stats(self) -> DispatchStats:
        """The processor's dispatcher counts."""
        return self._processor.stats()


def start_demo_agent(setup: DemoSetup) -> OpenAIAgentsDemoAgent:
    """The ``livescore.demo_agents`` entry point: the demo agent on the OpenAI Agents SDK.

    Example:
        >>> from livescore.scorers import create_keyword_coverage_scorer
        >>> demo = start_demo_agent(DemoSetup([create_keyword_coverage_scorer()], None))
        >>> reply = demo.ask("Where is my order PX-1042, and until when can I pick it up?")
        >>> "until Friday 18:00" in reply.answer, demo.flush(10)
        (True, True)
        >>> demo.shutdown(10)
    """
    return OpenAIAgentsDemoAgent(setup)
