"""A LangChain agent scored on the fleet: ``LiveScoringHandler(scorers=..., broker=...)``."""

from __future__ import annotations

import pytest
from fleet_support import Fleet, wait_for

pytest.importorskip("livescore_langchain")

from langchain.agents import create_agent
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)

from livescore.fleet import BrokerExecutor
from livescore.scorers import create_keyword_coverage_scorer


def test_the_handler_hands_runs_to_the_fleet(fleet: Fleet) -> None:
    from livescore_langchain import LiveScoringHandler
    from livescore_langchain.testing import ScriptedChatModel

    fleet.start_worker("--scorer-concurrency", "4")
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    handler = LiveScoringHandler(
        scorers=[create_keyword_coverage_scorer()],
        broker=fleet.url,
        tracer_provider=provider,
        name="weather",
    )
    assert isinstance(handler.dispatcher.executor, BrokerExecutor)  # type: ignore[attr-defined]
    agent = create_agent(ScriptedChatModel(responses=["Paris weather: sunny."]), tools=[])
    agent.invoke(
        {"messages": [{"role": "user", "content": "Paris weather"}]},
        config={"callbacks": [handler]},
    )
    assert handler.flush(timeout=30)
    assert handler.stats().handed_off == 1
    (agent_span,) = [s for s in exporter.get_finished_spans() if s.name.startswith("invoke_agent")]
    context = agent_span.get_span_context()
    assert context is not None
    wait_for(lambda: len(fleet.score_spans()) >= 1, 30, "the score span")
    (score,) = fleet.score_spans()
    # Scored on the worker, yet a child of the agent's span in the agent's trace.
    assert score.trace_id == format(context.trace_id, "032x")
    assert score.parent_span_id == format(context.span_id, "016x")
    handler.shutdown()
    provider.shutdown()
