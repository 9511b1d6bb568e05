"""The demo's agent on LangChain: ``create_agent`` with the scenario's two tools.

Registered under the entry point group ``livescore.demo_agents`` as ``langchain``, so
``livescore demo`` loads it only when it runs. The chat model is a real OpenAI-compatible
one when the demo names one (``langchain-openai``), else :class:`ScriptedDemoModel`, which
plays the model's part with the scenario's scripted model
(:meth:`~livescore.demo.DemoScenario.scripted_turn`): it really calls the tools and
answers from what they returned.
"""

from __future__ import annotations

import dataclasses
import os
import uuid
from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import BaseTool, tool

from livescore.demo import (
    SCENARIO,
    DemoConfigError,
    DemoQuestion,
    DemoReply,
    DemoScenario,
    DemoSetup,
    ToolOutput,
    ToolRequest,
)
from livescore.live import DispatchStats
from livescore_langchain._handler import LiveScoringHandler

__all__ = ("LangChainDemoAgent", "ScriptedDemoModel", "build_agent", "start_demo_agent")

TOOLS: tuple[BaseTool, ...] = tuple(tool(function) for function in SCENARIO.tools)
"""The scenario's tools as LangChain tools."""


class ScriptedDemoModel(BaseChatModel):
    """Plays the chat model's part without an LLM (the scenario's scripted model).

    Example:
        >>> model = ScriptedDemoModel()
        >>> model.invoke("Which countries does Parcelly deliver to?").tool_calls[0]["args"]
        {'query': 'countries'}
    """

    questions: tuple[DemoQuestion, ...] = SCENARIO.questions
    model_name: str = "scripted-demo-model"

    @property
    def _llm_type(self) -> str:
        return "scripted-demo-model"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedDemoModel:  # type: ignore[override]
        # create_agent binds the tools; this model knows its two tools already.
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._turn(messages))])

    def _turn(self, messages: list[BaseMessage]) -> AIMessage:
        start = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=0)
        question = str(messages[start].content) if messages else ""
        outputs = [
            ToolOutput(
                m.content if isinstance(m.content, str) else str(m.content),
                failed=m.status == "error",
            )
            for m in messages[start + 1 :]
            if isinstance(m, ToolMessage)
        ]
        scenario = dataclasses.replace(SCENARIO, questions=self.questions)
        turn = scenario.scripted_turn(question, outputs)
        if isinstance(turn, ToolRequest):
            call = {"name": turn.name, "args": turn.args, "id": f"call_{uuid.uuid4().hex[:12]}"}
            return AIMessage(content="", tool_calls=[call])
        return AIMessage(content=turn)


def build_agent(model: BaseChatModel | None = None, scenario: DemoScenario = SCENARIO) -> Any:
    """The demo agent: ``create_agent`` with ``search_docs`` and ``get_order_status``.

    Args:
        model: The chat model; :class:`ScriptedDemoModel` by default.
        scenario: The agent's name, instructions and tools.

    Example:
        >>> agent = build_agent()
        >>> out = agent.invoke({"messages": [{"role": "user", "content": "Where is PX-1042?"}]})
        >>> "Berlin" in out["messages"][-1].content
        True
    """
    try:
        from langchain.agents import create_agent
    except ImportError as exc:
        raise DemoConfigError(
            "the LangChain demo agent needs langchain's create_agent: pip install langchain"
        ) from exc
    return create_agent(
        model if model is not None else ScriptedDemoModel(questions=scenario.questions),
        tools=[tool(function) for function in scenario.tools],
        system_prompt=scenario.system_prompt,
        name=scenario.agent_name,
    )


def _chat_model(spec: str | None) -> tuple[BaseChatModel | None, str]:
    if not spec:
        return None, "scripted (no LLM configured): it calls the tools and answers from them"
    provider, _, name = spec.strip().partition("/")
    if provider.lower() != "openai" or not name.strip():
        raise DemoConfigError(f"--agent-model must look like 'openai/<model>', not {spec!r}")
    try:
        from langchain_openai import ChatOpenAI
    except ImportError as exc:
        raise DemoConfigError(
            "--agent-model needs LangChain's OpenAI chat model: pip install langchain-openai"
        ) from exc
    base_url = os.environ.get("OPENAI_BASE_URL")
    api_key = os.environ.get("OPENAI_API_KEY") or ("local" if base_url else None)
    if api_key is None:
        raise DemoConfigError(
            "--agent-model needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local server)"
        )
    model = ChatOpenAI(model=name.strip(), base_url=base_url, api_key=api_key, temperature=0)  # type: ignore[arg-type]
    return model, f"{name.strip()} (OpenAI-compatible)"


def _tool_calls_of(messages: Sequence[Any]) -> dict[str, tuple[Any, Any]]:
    calls: dict[str, tuple[Any, Any]] = {}
    for message in messages:
        for call in getattr(message, "tool_calls", None) or ():
            calls[str(call.get("id"))] = (call.get("args"), None)
    for message in messages:
        call_id = getattr(message, "tool_call_id", None)
        if call_id is not None:
            args = calls.get(str(call_id), (None, None))[0]
            calls[str(call_id)] = (args, getattr(message, "content", None))
    return calls


def _final_answer(messages: Sequence[Any]) -> str:
    for message in reversed(messages):
        if getattr(message, "type", None) == "ai" and not getattr(message, "tool_calls", None):
            content = message.content
            return content if isinstance(content, str) else str(content)
    return ""


class LangChainDemoAgent:
    """The demo agent with a :class:`~livescore_langchain.LiveScoringHandler` attached
    (a :class:`livescore.demo.DemoAgent`)."""

    def __init__(self, setup: DemoSetup) -> None:
        model, self.description = _chat_model(setup.agent_model)
        if model is None:
            model = ScriptedDemoModel(questions=setup.scenario.questions)
        self._agent = build_agent(model, setup.scenario)
        self._handler = LiveScoringHandler(
            scorers=list(setup.scorers),
            tracer_provider=setup.tracer_provider,
            name=setup.scenario.agent_name,
            sinks=list(setup.sinks),
            logger_provider=setup.logger_provider,
            emit=setup.emit,
        )

    def ask(self, question: str) -> DemoReply:
        """Run the agent on ``question`` with live scoring attached."""
        output = self._agent.invoke(
            {"messages": [{"role": "user", "content": question}]},
            config={"callbacks": [self._handler]},
        )
        messages = output.get("messages", []) if isinstance(output, dict) else []
        return DemoReply(answer=_final_answer(messages), tool_calls=_tool_calls_of(messages))

    def flush(self, timeout: float) -> bool:
        """Wait for the scores of finished runs."""
        return self._handler.flush(timeout=timeout)

    def shutdown(self, timeout: float) -> None:
        """Finish scoring and stop the handler."""
        self._handler.shutdown(timeout=timeout)

    def stats(self) -> DispatchStats:
        """The handler's dispatcher counts."""
        stats: DispatchStats = self._handler.stats()
        return stats


def start_demo_agent(setup: DemoSetup) -> LangChainDemoAgent:
    """The ``livescore.demo_agents`` entry point: the demo agent on LangChain."""
    return LangChainDemoAgent(setup)
