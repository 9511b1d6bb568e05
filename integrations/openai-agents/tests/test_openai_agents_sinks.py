"""LiveScoringProcessor(sinks=..., broker=...): the keywords every integration shares."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import anyio
import pytest
from _sdk_support import QUESTION, ScriptedModels, run_agent, weather_agent, weather_turns
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from livescore.live import LiveDispatcher
from livescore.scorers import create_keyword_coverage_scorer
from livescore.sinks import BatchingSink, DeliveryResult, ScoreRecord
from livescore.testing import OpenAITestServer
from livescore_openai_agents import LiveScoringProcessor

pytestmark = pytest.mark.anyio


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


async def test_each_score_of_an_sdk_run_reaches_the_sink_on_the_runs_span(
    make_processor: Callable[..., LiveScoringProcessor],
    model_server: OpenAITestServer,
    models: ScriptedModels,
    exporter: InMemorySpanExporter,
) -> None:
    sink = CollectingSink()
    processor = make_processor([create_keyword_coverage_scorer()], sinks=[sink])
    model_server.enqueue(*weather_turns())

    await run_agent(weather_agent(models), QUESTION, "run", models)
    await anyio.to_thread.run_sync(processor.shutdown, 10)  # spans first, then the sink

    (record,) = sink.delivered
    spans = exporter.get_finished_spans()
    (run_span,) = [s for s in spans if s.name.startswith("invoke_agent")]
    (score_span,) = [s for s in spans if s.name.startswith("evaluation")]
    assert record.result.scorer_id == "keyword-coverage"
    assert record.parent is not None
    assert record.parent.span_id == format(run_span.context.span_id, "016x")
    assert score_span.parent is not None
    assert score_span.parent.span_id == run_span.context.span_id
    sink.shutdown(5)


@pytest.mark.parametrize("keyword", ["sinks", "broker"])
def test_sinks_and_broker_configure_the_dispatcher_the_processor_creates(keyword: str) -> None:
    dispatcher = LiveDispatcher([create_keyword_coverage_scorer()], register_atexit=False)
    value: object = [CollectingSink()] if keyword == "sinks" else "redis://127.0.0.1:6379/0"
    with pytest.raises(ValueError, match=f"pass the {keyword} to that dispatcher"):
        LiveScoringProcessor(dispatcher=dispatcher, **{keyword: value})  # type: ignore[arg-type]
    dispatcher.shutdown(5)
