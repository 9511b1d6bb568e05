"""pydantic-ai with its own OpenTelemetry instrumentation, scored by the span processor."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from _collect_support import CLAIM, eval_spans, faithfulness, faithfulness_replies, judge_saw
from _compat import record_compat
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from livescore.collect import LiveScoringSpanProcessor
from livescore.testing import OpenAITestServer
from livescore.traces import assemble_runs, from_readable_span

pydantic_ai = pytest.importorskip("pydantic_ai")
from importlib.metadata import version  # noqa: E402

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.capabilities import Instrumentation  # noqa: E402
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart  # noqa: E402
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402
from pydantic_ai.models.instrumented import InstrumentationSettings  # noqa: E402

# The version the dev extra pins: a release that changes its spans fails here first.
PYDANTIC_AI = "2.78.0"


def test_the_pinned_version_is_installed() -> None:
    assert version("pydantic-ai-slim") == PYDANTIC_AI


def scripted_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """A test double of the model: asks for the weather tool, then answers from its result."""
    if len(messages) == 1:
        return ModelResponse(
            parts=[ToolCallPart("get_weather", {"city": "Lyon"}, tool_call_id="c1")]
        )
    return ModelResponse(parts=[TextPart(CLAIM)])


def run_agent(agent: Agent, question: str) -> object:
    """Run the agent on an event loop that is closed afterwards (``run_sync`` leaves its
    loop open as the thread's current one)."""
    return asyncio.run(agent.run(question)).output


def weather_agent(
    provider: TracerProvider, *, include_content: bool = True, fail: bool = False
) -> Agent:
    settings = InstrumentationSettings(tracer_provider=provider, include_content=include_content)
    agent = Agent(
        FunctionModel(scripted_model),
        name="weather",
        capabilities=[Instrumentation(settings=settings)],
    )

    @agent.tool_plain
    def get_weather(city: str) -> str:
        if fail:
            raise RuntimeError("the weather service is down")
        return f"sunny in {city}, 24 °C"

    return agent


@pytest.fixture
def traced() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


def test_a_tool_using_run_is_scored_under_its_invoke_agent_span(traced) -> None:
    provider, exporter = traced
    with OpenAITestServer(faithfulness_replies()) as judge:
        processor = LiveScoringSpanProcessor(
            scorers=[faithfulness(judge)], tracer_provider=provider
        )
        provider.add_span_processor(processor)
        assert run_agent(weather_agent(provider), "What is the weather in Lyon?") == CLAIM
        assert processor.flush(30)
        processor.shutdown()
        assert judge_saw(judge, "sunny in Lyon, 24 °C")  # the tool's result is the context
    spans = exporter.get_finished_spans()
    agent_span = next(s for s in spans if s.name == "invoke_agent weather")
    [score] = eval_spans(list(spans))
    assert score.parent is not None
    assert score.parent.span_id == agent_span.context.span_id
    assert score.context.trace_id == agent_span.context.trace_id
    assert score.attributes["gen_ai.evaluation.name"] == "faithfulness"
    assert score.attributes["gen_ai.evaluation.score.value"] == 1.0
    stats = processor.trace_stats()
    assert (stats.runs_submitted, stats.assembly.runs_assembled) == (1, 1)
    assert stats.own_spans >= 1  # its own score span came back through the provider
    [assembled] = assemble_runs(from_readable_span(s) for s in spans if s is not score)
    assert assembled.run.input == [{"role": "user", "content": "What is the weather in Lyon?"}]
    assert assembled.run.output == CLAIM
    assert assembled.run.conversation_id is not None
    record_compat(
        "pydantic-ai (its own instrumentation)",
        f"pydantic-ai-slim {PYDANTIC_AI}",
        assembled,
        "`Instrumentation(settings=InstrumentationSettings(include_content=True))` "
        "(the default) on the agent",
    )


def test_content_capture_off_skips_the_run_with_that_reason(traced) -> None:
    provider, exporter = traced
    with OpenAITestServer() as judge:
        processor = LiveScoringSpanProcessor(
            scorers=[faithfulness(judge)], tracer_provider=provider
        )
        provider.add_span_processor(processor)
        run_agent(weather_agent(provider, include_content=False), "What is the weather in Lyon?")
        assert processor.flush(30)
        processor.shutdown()
        assert judge.requests == []  # no judge call is paid for a run without text
    stats = processor.stats()
    assert (stats.sampled, stats.skipped) == (1, 1)
    [score] = eval_spans(list(exporter.get_finished_spans()))
    assert "content" in score.attributes["livescore.skip_reason"]


def test_a_run_that_raised_is_dropped_as_run_error(traced) -> None:
    provider, _ = traced
    with OpenAITestServer() as judge:
        processor = LiveScoringSpanProcessor(
            scorers=[faithfulness(judge)], tracer_provider=provider
        )
        provider.add_span_processor(processor)
        agent = weather_agent(provider, fail=True)
        with pytest.raises(RuntimeError, match="down"):
            run_agent(agent, "What is the weather in Lyon?")
        assert processor.flush(30)
        processor.shutdown()
    assert processor.stats().dropped_by_reason == {"run_error": 1}
