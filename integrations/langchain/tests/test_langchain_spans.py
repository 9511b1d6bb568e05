"""Which span represents a run, and where the evaluation spans land (real OTel SDK)."""

from __future__ import annotations

import asyncio
import importlib.metadata
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from _lc_support import (
    ANSWER,
    QUESTION,
    Recorded,
    SpySink,
    broken_forecast,
    hex_span_id,
    hex_trace_id,
    parent_span_id,
    recording_scorer,
    spans_named,
    weather_agent,
    weather_call,
)
from langchain.agents import create_agent
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

import livescore_langchain
import livescore_langchain._version
from livescore.otel import attributes as attrs
from livescore_langchain import LiveScoringHandler
from livescore_langchain.testing import ScriptedChatModel

MakeHandler = Callable[..., LiveScoringHandler]


def test_scores_are_children_of_the_agent_span_livescore_opens(
    make_handler: MakeHandler, exporter: InMemorySpanExporter
) -> None:
    recorded = Recorded()
    handler = make_handler([recording_scorer(recorded)], name="weather-agent")

    weather_agent().invoke(QUESTION, config={"callbacks": [handler]})

    assert handler.flush(timeout=10)
    spans = exporter.get_finished_spans()
    (agent,) = spans_named(spans, "invoke_agent")
    (tool,) = spans_named(spans, "execute_tool")
    (evaluation,) = spans_named(spans, "evaluation")
    assert agent.name == "invoke_agent weather-agent"
    assert agent.parent is None
    assert agent.attributes is not None
    assert agent.attributes[attrs.GEN_AI_OPERATION_NAME] == "invoke_agent"
    assert agent.attributes[attrs.GEN_AI_AGENT_NAME] == "weather-agent"
    assert agent.status.status_code == StatusCode.UNSET
    assert tool.name == "execute_tool get_weather"
    assert tool.attributes is not None
    assert tool.attributes[attrs.GEN_AI_OPERATION_NAME] == "execute_tool"
    assert tool.attributes[attrs.GEN_AI_TOOL_NAME] == "get_weather"
    assert tool.attributes[attrs.GEN_AI_TOOL_CALL_ID] == "call_1"
    assert parent_span_id(tool) == hex_span_id(agent)
    assert hex_trace_id(evaluation) == hex_trace_id(agent)
    assert parent_span_id(evaluation) == hex_span_id(agent)
    assert evaluation.attributes is not None
    assert evaluation.attributes[attrs.GEN_AI_EVALUATION_NAME] == "recorder"
    assert evaluation.attributes[attrs.GEN_AI_EVALUATION_SCORE_VALUE] == 1.0
    (run,) = recorded.runs()
    assert (run.trace_id, run.span_id) == (hex_trace_id(agent), hex_span_id(agent))
    assert run.steps[1].span_id == hex_span_id(tool)


def test_the_span_current_at_start_is_the_runs_span_in_auto_mode(
    make_handler: MakeHandler, exporter: InMemorySpanExporter, tracer_provider: TracerProvider
) -> None:
    handler = make_handler([recording_scorer(Recorded())])
    tracer = tracer_provider.get_tracer("app")

    with tracer.start_as_current_span("POST /chat") as request:
        weather_agent().invoke(QUESTION, config={"callbacks": [handler]})
        request_ctx = request.get_span_context()

    assert handler.flush(timeout=10)
    spans = exporter.get_finished_spans()
    assert spans_named(spans, "invoke_agent") == []
    assert spans_named(spans, "execute_tool") == []
    (evaluation,) = spans_named(spans, "evaluation")
    assert evaluation.parent is not None
    assert evaluation.parent.span_id == request_ctx.span_id
    assert hex_trace_id(evaluation) == format(request_ctx.trace_id, "032x")


def test_always_mode_opens_the_agent_span_under_the_current_span(
    make_handler: MakeHandler, exporter: InMemorySpanExporter, tracer_provider: TracerProvider
) -> None:
    handler = make_handler([recording_scorer(Recorded())], emit_run_spans="always")

    with tracer_provider.get_tracer("app").start_as_current_span("POST /chat") as request:
        weather_agent().invoke(QUESTION, config={"callbacks": [handler]})

    assert handler.flush(timeout=10)
    spans = exporter.get_finished_spans()
    (agent,) = spans_named(spans, "invoke_agent")
    (evaluation,) = spans_named(spans, "evaluation")
    assert agent.parent is not None
    assert agent.parent.span_id == request.get_span_context().span_id
    assert parent_span_id(evaluation) == hex_span_id(agent)


def test_never_mode_opens_no_span(
    make_handler: MakeHandler, exporter: InMemorySpanExporter
) -> None:
    recorded = Recorded()
    handler = make_handler([recording_scorer(recorded)], emit_run_spans="never")

    weather_agent().invoke(QUESTION, config={"callbacks": [handler]})

    assert handler.flush(timeout=10)
    spans = exporter.get_finished_spans()
    assert [s.name for s in spans] == ["evaluation recorder"]
    (run,) = recorded.runs()
    assert run.trace_id is None


def test_sampling_key_is_the_trace_id_of_the_runs_span(
    exporter: InMemorySpanExporter, tracer_provider: TracerProvider
) -> None:
    sink = SpySink()
    handler = LiveScoringHandler(dispatcher=sink, tracer_provider=tracer_provider)

    weather_agent().invoke(QUESTION, config={"callbacks": [handler]})

    (agent,) = spans_named(exporter.get_finished_spans(), "invoke_agent")
    assert sink.keys == [hex_trace_id(agent)]


def test_an_unsampled_run_still_gets_its_agent_span(
    exporter: InMemorySpanExporter, tracer_provider: TracerProvider
) -> None:
    handler = LiveScoringHandler(dispatcher=SpySink(sampled=False), tracer_provider=tracer_provider)

    weather_agent().invoke(QUESTION, config={"callbacks": [handler]})

    names = sorted(s.name for s in exporter.get_finished_spans())
    assert names == ["execute_tool get_weather", "invoke_agent LangGraph"]


def test_a_failing_run_marks_its_spans_as_errors(
    exporter: InMemorySpanExporter, tracer_provider: TracerProvider
) -> None:
    handler = LiveScoringHandler(dispatcher=SpySink(), tracer_provider=tracer_provider)
    model = ScriptedChatModel(responses=[weather_call("c1", "broken_forecast"), ANSWER])

    with pytest.raises(ValueError, match="forecast service down"):
        create_agent(model, tools=[broken_forecast]).invoke(
            QUESTION, config={"callbacks": [handler]}
        )

    spans = exporter.get_finished_spans()
    (agent,) = spans_named(spans, "invoke_agent")
    (tool,) = spans_named(spans, "execute_tool")
    for span in (agent, tool):
        assert span.status.status_code == StatusCode.ERROR
        assert span.attributes is not None
        assert span.attributes[attrs.ERROR_TYPE] == "ValueError"


@pytest.mark.anyio
async def test_a_cancelled_run_ends_its_spans(
    exporter: InMemorySpanExporter, tracer_provider: TracerProvider
) -> None:
    sink = SpySink()
    handler = LiveScoringHandler(dispatcher=sink, tracer_provider=tracer_provider)
    task = asyncio.ensure_future(
        weather_agent(delay=30.0).ainvoke(QUESTION, config={"callbacks": [handler]})
    )
    assert await asyncio.to_thread(sink.started.wait, 10)  # the run has started

    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    (agent,) = spans_named(exporter.get_finished_spans(), "invoke_agent")
    assert agent.status.status_code == StatusCode.ERROR
    assert agent.attributes is not None
    assert agent.attributes[attrs.ERROR_TYPE] == "CancelledError"
    assert [reason for _, reason in sink.dropped] == ["run_error"]


@pytest.mark.anyio
async def test_async_runs_nest_scores_under_their_own_agent_spans(
    make_handler: MakeHandler, exporter: InMemorySpanExporter
) -> None:
    recorded = Recorded()
    handler = make_handler([recording_scorer(recorded)])

    async def one() -> Any:
        return await weather_agent().ainvoke(QUESTION, config={"callbacks": [handler]})

    results = await asyncio.gather(one(), one(), one())

    assert all(r["messages"][-1].content == ANSWER for r in results)
    assert await asyncio.to_thread(handler.flush, 10)
    spans = exporter.get_finished_spans()
    agents = {hex_span_id(s): s for s in spans_named(spans, "invoke_agent")}
    evaluations = spans_named(spans, "evaluation")
    assert len(agents) == 3
    assert sorted(parent_span_id(e) or "" for e in evaluations) == sorted(agents)
    for evaluation in evaluations:
        assert hex_trace_id(evaluation) == hex_trace_id(agents[parent_span_id(evaluation) or ""])
    for agent in agents.values():  # each run's tool span sits under its own agent span
        tools = [
            s for s in spans_named(spans, "execute_tool") if parent_span_id(s) == hex_span_id(agent)
        ]
        assert len(tools) == 1


def test_an_evicted_run_ends_its_agent_span_as_evicted(
    exporter: InMemorySpanExporter, tracer_provider: TracerProvider
) -> None:
    sink = SpySink()
    handler = LiveScoringHandler(dispatcher=sink, tracer_provider=tracer_provider, max_open_runs=1)

    handler.on_chain_start({}, {"messages": []}, run_id=uuid.uuid4(), name="stuck")
    handler.on_chain_start({}, {"messages": []}, run_id=uuid.uuid4(), name="next")

    (agent,) = exporter.get_finished_spans()
    assert agent.name == "invoke_agent stuck"
    assert agent.status.status_code == StatusCode.ERROR
    assert agent.attributes is not None
    assert agent.attributes[attrs.ERROR_TYPE] == "evicted"
    assert [reason for _, reason in sink.dropped] == ["evicted"]


def test_the_handlers_spans_carry_the_installed_version(
    exporter: InMemorySpanExporter, tracer_provider: TracerProvider
) -> None:
    handler = LiveScoringHandler(dispatcher=SpySink(), tracer_provider=tracer_provider)

    weather_agent().invoke(QUESTION, config={"callbacks": [handler]})

    spans = exporter.get_finished_spans()
    assert {s.name for s in spans} == {"invoke_agent LangGraph", "execute_tool get_weather"}
    # Read once from the distribution's metadata, never written in the code.
    installed = importlib.metadata.version(livescore_langchain._version.DISTRIBUTION)
    assert livescore_langchain.__version__ == installed
    for span in spans:
        assert span.instrumentation_scope is not None
        assert (span.instrumentation_scope.name, span.instrumentation_scope.version) == (
            "livescore_langchain",
            installed,
        )
