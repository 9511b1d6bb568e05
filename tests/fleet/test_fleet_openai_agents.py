"""An OpenAI Agents SDK agent scored on the fleet: ``LiveScoringProcessor(broker=...)``."""

from __future__ import annotations

import pytest
from fleet_support import Fleet, wait_for

pytest.importorskip("livescore_openai_agents")

from agents import Agent, OpenAIChatCompletionsModel, Runner, set_trace_processors
from openai import AsyncOpenAI
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from livescore.fleet import BrokerExecutor
from livescore.scorers import create_keyword_coverage_scorer
from livescore.testing import OpenAITestServer, Reply


@pytest.mark.anyio
async def test_the_processor_hands_runs_to_the_fleet(fleet: Fleet) -> None:
    from livescore_openai_agents import LiveScoringProcessor

    fleet.start_worker("--scorer-concurrency", "4")
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    processor = LiveScoringProcessor(
        scorers=[create_keyword_coverage_scorer()],
        broker=fleet.url,
        tracer_provider=provider,
        name="weather",
    )
    assert isinstance(processor.dispatcher.executor, BrokerExecutor)  # type: ignore[attr-defined]
    set_trace_processors([processor])
    try:
        with OpenAITestServer() as model_server:
            model_server.enqueue(Reply.text("Paris weather: sunny."))
            client = AsyncOpenAI(base_url=model_server.base_url, api_key="test", max_retries=0)
            agent = Agent(name="weather", model=OpenAIChatCompletionsModel("scripted", client))
            result = await Runner.run(agent, "Paris weather")
            await client.close()
        assert result.final_output == "Paris weather: sunny."
        assert processor.flush(timeout=30)
        assert processor.stats().handed_off == 1
        (agent_span,) = [
            s for s in exporter.get_finished_spans() if s.name.startswith("invoke_agent")
        ]
        context = agent_span.get_span_context()
        assert context is not None
        wait_for(lambda: len(fleet.score_spans()) >= 1, 30, "the score span")
        (score,) = fleet.score_spans()
        # Scored on the worker, yet a child of the agent's span in the agent's trace.
        assert score.trace_id == format(context.trace_id, "032x")
        assert score.parent_span_id == format(context.span_id, "016x")
    finally:
        set_trace_processors([])
        processor.shutdown()
        provider.shutdown()
