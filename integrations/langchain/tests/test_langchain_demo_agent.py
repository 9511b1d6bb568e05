"""The demo's LangChain agent (``livescore_langchain._demo_agent``), found by entry point."""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from opentelemetry.sdk.trace import TracerProvider

from livescore.demo import DemoConfigError, DemoSetup
from livescore.demo._runtime import DEMO_AGENTS_GROUP, load_demo_agent
from livescore.demo._scenario import QUESTIONS, UNSUPPORTED_CLAIM
from livescore.scorers import create_keyword_coverage_scorer
from livescore_langchain._demo_agent import ScriptedDemoModel, build_agent, start_demo_agent


def _ask(question: str) -> list[Any]:
    out = build_agent().invoke({"messages": [{"role": "user", "content": question}]})
    return list(out["messages"])


def test_the_entry_point_names_this_agent() -> None:
    names = {ep.name: ep.value for ep in entry_points(group=DEMO_AGENTS_GROUP)}
    assert names["langchain"] == "livescore_langchain._demo_agent:start_demo_agent"
    assert load_demo_agent("langchain") is start_demo_agent


def test_the_scripted_model_calls_the_tools_and_answers_from_them() -> None:
    flagged = next(q for q in QUESTIONS if q.adds_unsupported_claim)
    messages = _ask(flagged.text)
    tool_text = next(m.content for m in messages if isinstance(m, ToolMessage))
    assert "Germany" in tool_text
    assert messages[-1].content.endswith(UNSUPPORTED_CLAIM)
    first = ScriptedDemoModel().invoke("Tell me about security")
    assert first.tool_calls[0]["args"] == {"query": "Tell me about security"}


def test_the_demo_agent_scores_live_and_reports_its_tool_calls() -> None:
    agent = start_demo_agent(
        DemoSetup(scorers=[create_keyword_coverage_scorer()], tracer_provider=TracerProvider())
    )
    try:
        reply = agent.ask("Where is my order PX-1042?")
        assert agent.flush(10)
    finally:
        agent.shutdown(10)
    assert "Berlin" in reply.answer
    [(args, result)] = reply.tool_calls.values()
    assert args == {"order_id": "PX-1042"}
    assert "Berlin" in str(result)
    stats = agent.stats()
    assert (stats.sampled, stats.scored) == (1, 1)
    assert agent.description.startswith("scripted")


def test_a_bad_agent_model_is_a_configuration_error() -> None:
    with pytest.raises(DemoConfigError, match="'openai/<model>'"):
        start_demo_agent(DemoSetup(scorers=[], tracer_provider=TracerProvider(), agent_model="x"))
