"""The handler's scores as gen_ai.evaluation.result events (emit=, logger_provider=)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from _lc_support import (
    QUESTION,
    Recorded,
    hex_span_id,
    hex_trace_id,
    recording_scorer,
    spans_named,
    weather_agent,
)
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from livescore.live import LiveDispatcher
from livescore_langchain import LiveScoringHandler

MakeHandler = Callable[..., LiveScoringHandler]


@pytest.fixture
def logs() -> Iterator[tuple[LoggerProvider, InMemoryLogRecordExporter]]:
    exporter = InMemoryLogRecordExporter()
    provider = LoggerProvider()
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


def test_each_score_is_an_event_parented_to_the_agent_span(
    make_handler: MakeHandler,
    exporter: InMemorySpanExporter,
    logs: tuple[LoggerProvider, InMemoryLogRecordExporter],
) -> None:
    provider, log_exporter = logs
    handler = make_handler(
        [recording_scorer(Recorded()), recording_scorer(Recorded(), "second", 0.5)],
        name="weather-agent",
        logger_provider=provider,
    )
    weather_agent().invoke(QUESTION, config={"callbacks": [handler]})
    assert handler.flush(timeout=10)

    (agent,) = spans_named(exporter.get_finished_spans(), "invoke_agent")
    records = [r.log_record for r in log_exporter.get_finished_logs()]
    assert sorted(r.attributes["gen_ai.evaluation.name"] for r in records) == [
        "recorder",
        "second",
    ]
    for record in records:
        assert record.event_name == "gen_ai.evaluation.result"
        assert format(record.trace_id, "032x") == hex_trace_id(agent)
        assert format(record.span_id, "016x") == hex_span_id(agent)
    values = {r.attributes["gen_ai.evaluation.name"]: r.attributes for r in records}
    assert values["second"]["gen_ai.evaluation.score.value"] == 0.5


def test_emit_spans_sends_no_event_and_emit_events_no_evaluation_span(
    make_handler: MakeHandler,
    exporter: InMemorySpanExporter,
    logs: tuple[LoggerProvider, InMemoryLogRecordExporter],
) -> None:
    provider, log_exporter = logs
    spans_only = make_handler(
        [recording_scorer(Recorded())], logger_provider=provider, emit=("spans",)
    )
    weather_agent().invoke(QUESTION, config={"callbacks": [spans_only]})
    assert spans_only.flush(timeout=10)
    assert log_exporter.get_finished_logs() == ()
    assert len(spans_named(exporter.get_finished_spans(), "evaluation")) == 1

    exporter.clear()
    events_only = make_handler(
        [recording_scorer(Recorded())], logger_provider=provider, emit="events"
    )
    weather_agent().invoke(QUESTION, config={"callbacks": [events_only]})
    assert events_only.flush(timeout=10)
    assert len(log_exporter.get_finished_logs()) == 1
    assert spans_named(exporter.get_finished_spans(), "evaluation") == []
    assert len(spans_named(exporter.get_finished_spans(), "invoke_agent")) == 1


def test_emit_with_a_dispatcher_of_your_own_is_refused(make_handler: MakeHandler) -> None:
    dispatcher = LiveDispatcher([recording_scorer(Recorded())], register_atexit=False)
    try:
        with pytest.raises(ValueError, match=r"emit= configures the dispatcher"):
            LiveScoringHandler(dispatcher=dispatcher, emit="events")
    finally:
        dispatcher.shutdown()
