"""The run spans integrations open: ``invoke_agent`` with ``execute_tool`` children."""

from __future__ import annotations

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from livescore.otel import (
    attributes,
    current_span,
    end_span,
    span_ids,
    start_agent_span,
    start_tool_span,
)


def _provider() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def test_agent_and_tool_spans_nest_and_are_never_made_current() -> None:
    provider, exporter = _provider()
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span("request") as request:
        agent = start_agent_span(tracer, "support", current_span())
        tool = start_tool_span(tracer, "search_docs", "call_1", agent)
        assert current_span() is request  # starting them changed nothing current
        end_span(tool, None)
        end_span(agent, None)
    spans = {s.name: s for s in exporter.get_finished_spans()}
    agent_span, tool_span = spans["invoke_agent support"], spans["execute_tool search_docs"]
    assert agent_span.parent is not None
    assert agent_span.parent.span_id == request.get_span_context().span_id
    assert tool_span.parent is not None
    assert tool_span.parent.span_id == agent.get_span_context().span_id
    assert dict(agent_span.attributes or {}) == {
        attributes.GEN_AI_OPERATION_NAME: "invoke_agent",
        attributes.GEN_AI_AGENT_NAME: "support",
    }
    assert (tool_span.attributes or {})[attributes.GEN_AI_TOOL_CALL_ID] == "call_1"
    trace_id, span_id, flags = span_ids(agent)
    assert trace_id == format(agent.get_span_context().trace_id, "032x")
    assert span_id == format(agent.get_span_context().span_id, "016x")
    assert flags == int(agent.get_span_context().trace_flags)
    assert flags & 1  # sampled


def test_a_failed_span_carries_the_error_as_content_capture_allows() -> None:
    provider, exporter = _provider()
    tracer = provider.get_tracer("test")
    secret = "the user's address is 1 Main St " * 100
    end_span(start_agent_span(tracer, "full", None), secret, error_type="tool_error")
    end_span(start_agent_span(tracer, "none", None), secret, capture="none")
    end_span(start_agent_span(tracer, "cut", None), ValueError(secret), capture="truncated")
    spans = {s.name.split()[-1]: s for s in exporter.get_finished_spans()}
    assert spans["full"].status.status_code == StatusCode.ERROR
    assert spans["full"].status.description == secret
    assert (spans["full"].attributes or {})[attributes.ERROR_TYPE] == "tool_error"
    assert spans["none"].status.description == "error"
    assert (spans["cut"].attributes or {})[attributes.ERROR_TYPE] == "ValueError"
    description = spans["cut"].status.description or ""
    assert len(description) == 1000
    assert description.endswith("…")


def test_outside_any_span_there_is_no_current_span_and_no_ids() -> None:
    assert current_span() is None
    assert span_ids(None) == (None, None, 1)
