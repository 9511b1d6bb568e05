"""With OpenInference's LangChain instrumentation on, scores nest under its agent span."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator

import pytest
from _lc_support import (
    QUESTION,
    Recorded,
    hex_span_id,
    hex_trace_id,
    parent_span_id,
    recording_scorer,
    spans_named,
    weather_agent,
)
from openinference.instrumentation.langchain import LangChainInstrumentor
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from livescore_langchain import LiveScoringHandler, instrument

MakeHandler = Callable[..., LiveScoringHandler]


@pytest.fixture
def openinference(tracer_provider: TracerProvider) -> Iterator[LangChainInstrumentor]:
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=tracer_provider)
    yield instrumentor
    instrumentor.uninstrument()


def _root_agent_span(spans: tuple[ReadableSpan, ...]) -> ReadableSpan:
    (root,) = [s for s in spans if s.name == "LangGraph" and s.parent is None]
    return root


@pytest.mark.usefixtures("openinference")
def test_scores_nest_under_openinferences_agent_span(
    make_handler: MakeHandler, exporter: InMemorySpanExporter
) -> None:
    recorded = Recorded()
    handler = make_handler([recording_scorer(recorded)])

    weather_agent().invoke(QUESTION, config={"callbacks": [handler]})

    assert handler.flush(timeout=10)
    spans = exporter.get_finished_spans()
    root = _root_agent_span(spans)
    (evaluation,) = spans_named(spans, "evaluation")
    assert spans_named(spans, "invoke_agent") == []  # no second span for the same run
    assert hex_trace_id(evaluation) == hex_trace_id(root)
    assert parent_span_id(evaluation) == hex_span_id(root)
    (run,) = recorded.runs()
    assert run.span_id == hex_span_id(root)


@pytest.mark.anyio
@pytest.mark.usefixtures("openinference")
async def test_async_runs_find_the_span_openinference_starts_after_the_handler(
    make_handler: MakeHandler, exporter: InMemorySpanExporter
) -> None:
    # OpenInference's tracer is not run inline: on ainvoke it starts its span after the
    # handler's root start, so the handler looks it up again at root end.
    handler = make_handler([recording_scorer(Recorded())])

    await weather_agent().ainvoke(QUESTION, config={"callbacks": [handler]})

    assert await asyncio.to_thread(handler.flush, 10)
    spans = exporter.get_finished_spans()
    root = _root_agent_span(spans)
    (evaluation,) = spans_named(spans, "evaluation")
    assert parent_span_id(evaluation) == hex_span_id(root)


@pytest.mark.usefixtures("openinference")
def test_a_globally_instrumented_handler_also_nests_under_openinference(
    make_handler: MakeHandler, exporter: InMemorySpanExporter
) -> None:
    handler = make_handler([recording_scorer(Recorded())])
    instrument(handler)

    weather_agent().invoke(QUESTION)

    assert handler.flush(timeout=10)
    spans = exporter.get_finished_spans()
    (evaluation,) = spans_named(spans, "evaluation")
    assert parent_span_id(evaluation) == hex_span_id(_root_agent_span(spans))


@pytest.mark.anyio
@pytest.mark.usefixtures("openinference")
async def test_under_a_request_span_scores_still_nest_under_openinferences_span(
    make_handler: MakeHandler, exporter: InMemorySpanExporter, tracer_provider: TracerProvider
) -> None:
    handler = make_handler([recording_scorer(Recorded())])

    with tracer_provider.get_tracer("app").start_as_current_span("POST /chat") as request:
        await weather_agent().ainvoke(QUESTION, config={"callbacks": [handler]})

    assert await asyncio.to_thread(handler.flush, 10)
    spans = exporter.get_finished_spans()
    (root,) = [s for s in spans if s.name == "LangGraph"]
    assert root.parent is not None
    assert root.parent.span_id == request.get_span_context().span_id
    (evaluation,) = spans_named(spans, "evaluation")
    assert parent_span_id(evaluation) == hex_span_id(root)
