"""Which span a run's scores hang under: the span current at the run's start, else the
processor's own ``invoke_agent`` span with ``execute_tool`` children."""

from __future__ import annotations

from collections.abc import Callable

import anyio
import pytest
from _sdk_support import (
    ANSWER,
    QUESTION,
    Recorded,
    ScriptedModels,
    SpySink,
    hex_span_id,
    hex_trace_id,
    parent_span_id,
    recording_scorer,
    spans_named,
    weather_agent,
    weather_turns,
)
from agents import Agent, Runner
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from livescore.otel import attributes as attrs
from livescore.testing import OpenAITestServer, Reply
from livescore_openai_agents import LiveScoringProcessor

MakeProcessor = Callable[..., LiveScoringProcessor]

pytestmark = pytest.mark.anyio


async def test_with_no_span_current_the_processor_opens_the_run_span(
    make_processor: MakeProcessor,
    model_server: OpenAITestServer,
    models: ScriptedModels,
    exporter: InMemorySpanExporter,
) -> None:
    recorded = Recorded()
    processor = make_processor([recording_scorer(recorded)])
    model_server.enqueue(*weather_turns())

    await Runner.run(weather_agent(models), QUESTION)

    assert await anyio.to_thread.run_sync(processor.flush, 10)
    spans = exporter.get_finished_spans()
    (agent,) = spans_named(spans, "invoke_agent")
    assert agent.name == "invoke_agent weather-agent"  # named after the run's first agent
    assert agent.attributes is not None
    assert agent.attributes[attrs.GEN_AI_AGENT_NAME] == "weather-agent"
    assert agent.attributes[attrs.GEN_AI_OPERATION_NAME] == "invoke_agent"
    assert agent.parent is None
    assert agent.status.status_code != StatusCode.ERROR
    (tool,) = spans_named(spans, "execute_tool")
    assert tool.name == "execute_tool get_weather"
    assert tool.attributes is not None
    assert tool.attributes[attrs.GEN_AI_TOOL_CALL_ID] == "call_w1"
    assert parent_span_id(tool) == hex_span_id(agent)
    (evaluation,) = spans_named(spans, "evaluation")
    assert parent_span_id(evaluation) == hex_span_id(agent)
    assert hex_trace_id(evaluation) == hex_trace_id(agent)
    (run,) = recorded.runs()
    assert (run.trace_id, run.span_id) == (hex_trace_id(agent), hex_span_id(agent))
    assert run.steps[1].span_id == hex_span_id(tool)


async def test_the_sampling_key_is_the_run_spans_trace_id(
    make_processor: MakeProcessor,
    model_server: OpenAITestServer,
    models: ScriptedModels,
    exporter: InMemorySpanExporter,
) -> None:
    sink = SpySink()
    make_processor(dispatcher=sink)
    model_server.enqueue(*weather_turns())

    await Runner.run(weather_agent(models), QUESTION)

    (agent,) = spans_named(exporter.get_finished_spans(), "invoke_agent")
    assert sink.keys == [hex_trace_id(agent)]


async def test_a_span_current_at_the_start_is_the_runs_span(
    make_processor: MakeProcessor,
    model_server: OpenAITestServer,
    models: ScriptedModels,
    exporter: InMemorySpanExporter,
    tracer_provider: TracerProvider,
) -> None:
    recorded = Recorded()
    processor = make_processor([recording_scorer(recorded)])
    model_server.enqueue(*weather_turns())

    with tracer_provider.get_tracer("app").start_as_current_span("POST /chat") as request:
        await Runner.run(weather_agent(models), QUESTION)

    assert await anyio.to_thread.run_sync(processor.flush, 10)
    spans = exporter.get_finished_spans()
    assert spans_named(spans, "invoke_agent") == []  # the request span already represents it
    assert spans_named(spans, "execute_tool") == []
    (evaluation,) = spans_named(spans, "evaluation")
    request_id = format(request.get_span_context().span_id, "016x")
    assert parent_span_id(evaluation) == request_id
    (run,) = recorded.runs()
    assert run.span_id == request_id


async def test_emit_run_spans_always_nests_its_span_under_the_current_one(
    make_processor: MakeProcessor,
    model_server: OpenAITestServer,
    models: ScriptedModels,
    exporter: InMemorySpanExporter,
    tracer_provider: TracerProvider,
) -> None:
    processor = make_processor([recording_scorer(Recorded())], emit_run_spans="always")
    model_server.enqueue(*weather_turns())

    with tracer_provider.get_tracer("app").start_as_current_span("POST /chat") as request:
        await Runner.run(weather_agent(models), QUESTION)

    assert await anyio.to_thread.run_sync(processor.flush, 10)
    spans = exporter.get_finished_spans()
    (agent,) = spans_named(spans, "invoke_agent")
    assert parent_span_id(agent) == format(request.get_span_context().span_id, "016x")
    (evaluation,) = spans_named(spans, "evaluation")
    assert parent_span_id(evaluation) == hex_span_id(agent)


async def test_emit_run_spans_never_opens_no_span(
    make_processor: MakeProcessor,
    model_server: OpenAITestServer,
    models: ScriptedModels,
    exporter: InMemorySpanExporter,
) -> None:
    sink = SpySink()
    make_processor(dispatcher=sink, emit_run_spans="never")
    model_server.enqueue(*weather_turns())

    await Runner.run(weather_agent(models), QUESTION)

    assert exporter.get_finished_spans() == ()
    (run,) = sink.runs
    assert (run.trace_id, run.span_id) == (None, None)
    assert sink.keys == [run.metadata["sdk_trace_id"]]  # sampled by the SDK's trace id


async def test_a_name_names_the_run_span_from_the_start(
    make_processor: MakeProcessor,
    model_server: OpenAITestServer,
    models: ScriptedModels,
    exporter: InMemorySpanExporter,
) -> None:
    sink = SpySink()
    make_processor(dispatcher=sink, name="support-bot")
    triage = Agent(
        name="triage", instructions="Route.", handoffs=[weather_agent(models)], model=models()
    )
    model_server.enqueue(
        Reply.tool_calls(("transfer_to_weather_agent", {}), ids=["call_h"]),
        *weather_turns(),
    )

    await Runner.run(triage, QUESTION)

    (agent,) = spans_named(exporter.get_finished_spans(), "invoke_agent")
    assert agent.name == "invoke_agent support-bot"
    (run,) = sink.runs
    assert run.name == "support-bot"
    assert run.output == ANSWER


async def test_a_failed_run_marks_its_span_and_content_capture_governs_the_message(
    make_processor: MakeProcessor,
    model_server: OpenAITestServer,
    models: ScriptedModels,
    exporter: InMemorySpanExporter,
) -> None:
    make_processor(dispatcher=SpySink(), capture_content="none")
    model_server.enqueue(Reply.server_error())

    with pytest.raises(Exception, match="500"):
        await Runner.run(weather_agent(models), QUESTION)

    (agent,) = spans_named(exporter.get_finished_spans(), "invoke_agent")
    assert agent.status.status_code == StatusCode.ERROR
    assert agent.attributes is not None
    assert agent.attributes[attrs.ERROR_TYPE] == "run_error"
    assert agent.status.description == "run_error"  # no user text with capture "none"


async def test_a_tool_cancelled_with_its_run_ends_its_span(
    make_processor: MakeProcessor,
    model_server: OpenAITestServer,
    models: ScriptedModels,
    exporter: InMemorySpanExporter,
) -> None:
    from agents import function_tool

    make_processor(dispatcher=SpySink())
    started = anyio.Event()

    @function_tool
    async def slow_lookup(city: str) -> str:
        """A lookup that takes its time."""
        started.set()
        await anyio.sleep(30)
        return "never"

    model_server.enqueue(Reply.tool_calls(("slow_lookup", {"city": "Paris"}), ids=["c_slow"]))
    async with anyio.create_task_group() as tg:
        tg.start_soon(Runner.run, weather_agent(models, tools=[slow_lookup]), QUESTION)
        await started.wait()
        tg.cancel_scope.cancel()

    spans = exporter.get_finished_spans()
    (tool,) = spans_named(spans, "execute_tool")
    (agent,) = spans_named(spans, "invoke_agent")
    for span in (tool, agent):
        assert span.status.status_code == StatusCode.ERROR
        assert span.status.description is not None
        assert "cancelled" in span.status.description
