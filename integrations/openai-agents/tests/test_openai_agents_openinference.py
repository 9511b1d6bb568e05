"""With OpenInference's Agents SDK instrumentation on, scores nest under its span for the run.

OpenInference turns each SDK span into an OTel span and makes it current while it runs; its
processor and livescore's run in the order they were registered, so both orders are tested.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import anyio
import pytest
from _sdk_support import (
    QUESTION,
    Recorded,
    ScriptedModels,
    hex_span_id,
    hex_trace_id,
    parent_span_id,
    recording_scorer,
    spans_named,
    weather_agent,
    weather_turns,
)
from agents import Runner, add_trace_processor
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from livescore.testing import OpenAITestServer
from livescore_openai_agents import LiveScoringProcessor

MakeProcessor = Callable[..., LiveScoringProcessor]

pytestmark = pytest.mark.anyio


@pytest.fixture
def instrumentor() -> Iterator[OpenAIAgentsInstrumentor]:
    instrumentor = OpenAIAgentsInstrumentor()
    yield instrumentor
    if instrumentor.is_instrumented_by_opentelemetry:
        instrumentor.uninstrument()


def _openinference_run_span(spans: Sequence[ReadableSpan]) -> ReadableSpan:
    """OpenInference's span for the Runner.run: the task span under its trace's root span."""
    (root,) = [s for s in spans if s.parent is None]  # the trace's AGENT span
    (task,) = [s for s in spans if parent_span_id(s) == hex_span_id(root)]
    return task


@pytest.mark.parametrize("order", ["openinference first", "livescore first"])
async def test_scores_nest_under_openinferences_span_for_the_run(
    make_processor: MakeProcessor,
    model_server: OpenAITestServer,
    models: ScriptedModels,
    exporter: InMemorySpanExporter,
    tracer_provider: TracerProvider,
    instrumentor: OpenAIAgentsInstrumentor,
    order: str,
) -> None:
    recorded = Recorded()
    processor = make_processor([recording_scorer(recorded)], register=False)
    if order == "openinference first":
        instrumentor.instrument(tracer_provider=tracer_provider)  # replaces all processors
        add_trace_processor(processor)
    else:
        add_trace_processor(processor)
        instrumentor.instrument(tracer_provider=tracer_provider, exclusive_processor=False)
    model_server.enqueue(*weather_turns())

    await Runner.run(weather_agent(models), QUESTION)

    assert await anyio.to_thread.run_sync(processor.flush, 10)
    spans = exporter.get_finished_spans()
    assert spans_named(spans, "invoke_agent") == []  # no second span for the same run
    assert spans_named(spans, "execute_tool") == []
    run_span = _openinference_run_span(spans)
    assert run_span.instrumentation_scope is not None
    assert run_span.instrumentation_scope.name.startswith("openinference")
    (evaluation,) = spans_named(spans, "evaluation")
    assert parent_span_id(evaluation) == hex_span_id(run_span)
    assert hex_trace_id(evaluation) == hex_trace_id(run_span)
    (run,) = recorded.runs()
    assert run.span_id == hex_span_id(run_span)
    assert run.output is not None  # OpenInference changes where scores go, not what is read
    assert processor.callback_errors == 0


async def test_under_a_request_span_scores_still_nest_under_openinferences_span(
    make_processor: MakeProcessor,
    model_server: OpenAITestServer,
    models: ScriptedModels,
    exporter: InMemorySpanExporter,
    tracer_provider: TracerProvider,
    instrumentor: OpenAIAgentsInstrumentor,
) -> None:
    processor = make_processor([recording_scorer(Recorded())], register=False)
    add_trace_processor(processor)
    instrumentor.instrument(tracer_provider=tracer_provider, exclusive_processor=False)
    model_server.enqueue(*weather_turns())

    with tracer_provider.get_tracer("app").start_as_current_span("POST /chat") as request:
        await Runner.run(weather_agent(models), QUESTION)

    assert await anyio.to_thread.run_sync(processor.flush, 10)
    spans = exporter.get_finished_spans()
    request_id = format(request.get_span_context().span_id, "016x")
    (workflow,) = [s for s in spans if parent_span_id(s) == request_id]  # OpenInference's root
    (task,) = [s for s in spans if parent_span_id(s) == hex_span_id(workflow)]
    (evaluation,) = spans_named(spans, "evaluation")
    assert parent_span_id(evaluation) == hex_span_id(task)
