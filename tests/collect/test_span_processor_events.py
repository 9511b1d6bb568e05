"""LiveScoringSpanProcessor's scores as gen_ai.evaluation.result events: parented to the
agent's own span, naming the response that answered."""

from __future__ import annotations

import sys
from pathlib import Path

from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from livescore.collect import LiveScoringSpanProcessor
from livescore.scorers import create_keyword_coverage_scorer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "traces"))
from _trace_support import genai_tool_run


def test_a_traced_agent_run_gets_one_event_on_its_agent_span() -> None:
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    logs = InMemoryLogRecordExporter()
    logger_provider = LoggerProvider()
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    processor = LiveScoringSpanProcessor(
        scorers=[create_keyword_coverage_scorer()],
        tracer_provider=provider,
        logger_provider=logger_provider,
        emit="events",
    )
    provider.add_span_processor(processor)
    genai_tool_run(provider, question="Weather in Lyon?", answer="Lyon weather: sunny.")
    assert processor.flush(10)
    processor.shutdown()
    (agent,) = [s for s in spans.get_finished_spans() if s.name == "invoke_agent weather"]
    assert not [s for s in spans.get_finished_spans() if s.name.startswith("evaluation ")]
    (record,) = [r.log_record for r in logs.get_finished_logs()]
    assert record.event_name == "gen_ai.evaluation.result"
    assert agent.context is not None
    assert (record.trace_id, record.span_id) == (agent.context.trace_id, agent.context.span_id)
    assert record.attributes["gen_ai.evaluation.name"] == "keyword-coverage"
    assert record.attributes["gen_ai.response.id"] == "chatcmpl-answers"
    provider.shutdown()
    logger_provider.shutdown()
