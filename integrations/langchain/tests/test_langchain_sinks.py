"""LiveScoringHandler(sinks=...): each score of a LangChain run also reaches the sinks."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest
from _lc_support import QUESTION, weather_agent
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from livescore.live import LiveDispatcher
from livescore.scorers import create_keyword_coverage_scorer
from livescore.sinks import BatchingSink, DeliveryResult, ScoreRecord
from livescore_langchain import LiveScoringHandler


class CollectingSink(BatchingSink[ScoreRecord]):
    """A test double: delivers records into a list."""

    name = "collecting"

    def __init__(self) -> None:
        super().__init__(flush_interval=60)
        self.delivered: list[ScoreRecord] = []

    def prepare(self, record: ScoreRecord) -> ScoreRecord:
        return record

    def deliver(self, batch: Sequence[ScoreRecord]) -> DeliveryResult | None:
        self.delivered.extend(batch)
        return None


def test_each_score_of_an_agent_run_reaches_the_sink_on_the_runs_span(
    make_handler: Callable[..., LiveScoringHandler], exporter: InMemorySpanExporter
) -> None:
    sink = CollectingSink()
    handler = make_handler([create_keyword_coverage_scorer()], name="weather", sinks=[sink])
    weather_agent().invoke(QUESTION, config={"callbacks": [handler]})
    handler.shutdown(10)  # flushes the emitter, then the sink
    (record,) = sink.delivered
    (run_span,) = [s for s in exporter.get_finished_spans() if s.name == "invoke_agent weather"]
    (score_span,) = [s for s in exporter.get_finished_spans() if s.name.startswith("evaluation")]
    assert record.result.scorer_id == "keyword-coverage"
    assert record.parent is not None
    assert record.parent.span_id == format(run_span.context.span_id, "016x")
    assert score_span.parent is not None
    assert score_span.parent.span_id == run_span.context.span_id
    assert sink.stats().sent == 1
    sink.shutdown(5)


def test_sinks_go_to_the_dispatcher_the_handler_creates_not_beside_yours() -> None:
    sink = CollectingSink()
    dispatcher = LiveDispatcher([create_keyword_coverage_scorer()], register_atexit=False)
    with pytest.raises(ValueError, match="pass the sinks to that dispatcher"):
        LiveScoringHandler(dispatcher=dispatcher, sinks=[sink])
    dispatcher.shutdown(5)
    sink.shutdown(5)
