"""SinkEmitter: the evaluation span stays primary; every finished score also reaches each sink."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from livescore import Run, ScoreResult
from livescore.live import LiveDispatcher
from livescore.otel import OTelEmitter
from livescore.runs import TraceParent
from livescore.scorers import create_keyword_coverage_scorer
from livescore.sinks import ScoreRecord, ScoreSink, with_sinks
from livescore.sinks._base import SinkEmitter


class RecordingSink:
    """A test double: keeps what it is sent."""

    name = "recording"

    def __init__(self) -> None:
        self.records: list[ScoreRecord] = []
        self.flushed = 0

    def send(self, record: ScoreRecord) -> None:
        self.records.append(record)

    def flush(self, timeout: float | None = None) -> bool:
        self.flushed += 1
        return True

    def shutdown(self, timeout: float | None = None) -> None:
        self.flush(timeout)


class BrokenSink(RecordingSink):
    """A test double whose every call raises."""

    name = "broken"

    def send(self, record: ScoreRecord) -> None:
        raise RuntimeError("sink down")

    def flush(self, timeout: float | None = None) -> bool:
        raise RuntimeError("sink down")


@pytest.fixture
def spans() -> Iterator[tuple[InMemorySpanExporter, TracerProvider]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield exporter, provider
    provider.shutdown()


def test_with_sinks_wraps_only_when_there_are_sinks() -> None:
    base = OTelEmitter()
    assert with_sinks(base, []) is base
    wrapped = with_sinks(base, [RecordingSink()])
    assert isinstance(wrapped, SinkEmitter)
    assert wrapped.emitter is base
    assert isinstance(RecordingSink(), ScoreSink)


def test_a_sink_without_the_protocol_is_refused_at_construction() -> None:
    with pytest.raises(TypeError, match="send, flush and shutdown"):
        SinkEmitter(OTelEmitter(), [object()])  # type: ignore[list-item]


def test_every_score_reaches_the_span_and_each_sink_even_when_one_sink_raises(
    spans: tuple[InMemorySpanExporter, TracerProvider],
) -> None:
    exporter, provider = spans
    good = RecordingSink()
    emitter = with_sinks(OTelEmitter(tracer_provider=provider), [BrokenSink(), good])
    run = Run(
        input="q",
        output="a",
        run_id="r1",
        trace_id="4bf92f3577b34da6a3ce929d0e0e4736",
        span_id="00f067aa0ba902b7",
    )
    result = ScoreResult(run_id="r1", scorer_id="demo", score=0.5)

    emitter.emit(run, result, sample_rate=0.25, scorer_version="2")

    assert [s.name for s in exporter.get_finished_spans()] == ["evaluation demo"]
    (record,) = good.records
    assert record.result is result
    assert record.sample_rate == 0.25
    assert record.scorer_version == "2"
    assert record.parent == TraceParent.parse(
        "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    )
    assert emitter.flush(1) is False  # the broken sink's flush failed and says so
    assert good.flushed == 1


def test_a_live_dispatcher_feeds_sinks_through_its_emitter() -> None:
    sink = RecordingSink()
    dispatcher = LiveDispatcher(
        [create_keyword_coverage_scorer()],
        emitter=with_sinks(OTelEmitter(), [sink]),
        register_atexit=False,
    )
    try:
        dispatcher.submit(Run(input="Rust ownership", output="Ownership in Rust", run_id="r2"))
        assert dispatcher.flush(timeout=10)
    finally:
        dispatcher.shutdown(5)
    assert [(r.run.run_id, r.result.scorer_id, r.source) for r in sink.records] == [
        ("r2", "keyword-coverage", "live")
    ]


def test_live_dispatcher_takes_sinks_as_a_keyword() -> None:
    sink = RecordingSink()
    dispatcher = LiveDispatcher(
        [create_keyword_coverage_scorer()], sinks=[sink], register_atexit=False
    )
    assert isinstance(dispatcher.emitter, SinkEmitter)
    assert dispatcher.emitter.sinks == (sink,)
    try:
        dispatcher.submit(Run(input="Rust ownership", output="Ownership in Rust", run_id="r3"))
        assert dispatcher.flush(timeout=10)
    finally:
        dispatcher.shutdown(5)
    assert [r.run.run_id for r in sink.records] == ["r3"]
    assert sink.flushed == 1  # shutdown flushed it (after the emitter), never shut it down
    with pytest.raises(TypeError, match="list of sinks"):
        LiveDispatcher([create_keyword_coverage_scorer()], sinks=sink, register_atexit=False)  # type: ignore[arg-type]


def test_run_evals_sends_each_score_to_its_sinks_and_flushes_them(
    spans: tuple[InMemorySpanExporter, TracerProvider],
) -> None:
    from livescore import run_evals_sync

    exporter, provider = spans
    sink = RecordingSink()
    result = run_evals_sync(
        [{"input": "Rust ownership", "output": "Ownership in Rust", "id": "item-1"}],
        [create_keyword_coverage_scorer()],
        tracer_provider=provider,
        sinks=[sink],
    )
    assert result.scores["keyword-coverage"].scored == 1
    (record,) = sink.records
    (item_span,) = [s for s in exporter.get_finished_spans() if s.name == "eval_item"]
    assert record.source == "eval"
    assert record.parent is not None
    assert record.parent.span_id == format(item_span.context.span_id, "016x")
    assert sink.flushed == 1  # before run_evals returned
