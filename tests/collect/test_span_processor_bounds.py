"""The span processor's promises: on_end never raises, its queue and its memory are
bounded, and what it cannot keep is counted."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import TracerProvider

from livescore.collect import LiveScoringSpanProcessor
from livescore.live import DispatchStats, LiveDispatcher, SamplingDecision
from livescore.runs import Run
from livescore.scorers import create_keyword_coverage_scorer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "traces"))
from _trace_support import genai_tool_run


def test_on_end_never_raises_whatever_it_is_given() -> None:
    processor = LiveScoringSpanProcessor(scorers=[create_keyword_coverage_scorer()])
    for junk in (None, object(), 42, "span"):
        processor.on_end(junk)
    assert processor.flush(10)
    processor.shutdown()
    assert processor.stats().sampled == 0


class BlockingSinkDouble:
    """A test double of a Dispatcher whose sample() blocks until released."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def sample(self, key: str | None) -> SamplingDecision:
        self.entered.set()
        self.release.wait(30)
        return SamplingDecision(key=key, scorers=())

    def submit(self, run: Run, decision: SamplingDecision | None = None) -> bool:
        return False

    def drop(self, decision: SamplingDecision, reason: str) -> None:
        return None

    def flush(self, timeout: float | None = None) -> bool:
        return True

    def shutdown(self, timeout: float | None = None) -> None:
        return None

    def stats(self) -> DispatchStats:
        return DispatchStats()


def finished_spans(runs: int) -> list[Any]:
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    for _ in range(runs):
        genai_tool_run(provider, question="q?", answer="a.")
    return list(exporter.get_finished_spans())


def test_a_full_queue_refuses_spans_and_counts_them() -> None:
    sink = BlockingSinkDouble()
    processor = LiveScoringSpanProcessor(dispatcher=sink, max_queued_spans=8)
    spans = finished_spans(5)  # 20 spans
    processor.on_end(spans[0])
    assert sink.entered.wait(10)  # the processor's thread is busy with the first span
    for span in spans[1:]:
        processor.on_end(span)  # 8 fit in the queue; the other 11 are refused
    assert processor.trace_stats().spans_refused == 11
    sink.release.set()
    assert processor.flush(10)
    processor.shutdown()
    stats = processor.trace_stats()
    assert stats.spans_queued == 0
    assert stats.assembly.spans_received == 9


def test_an_evicted_trace_counts_its_sampled_run_as_dropped() -> None:
    provider = TracerProvider()
    dispatcher = LiveDispatcher([create_keyword_coverage_scorer()], register_atexit=False)
    processor = LiveScoringSpanProcessor(dispatcher=dispatcher, max_spans_per_trace=2)
    provider.add_span_processor(processor)
    genai_tool_run(provider, question="Weather in Lyon?", answer="Sunny in Lyon.")  # 4 spans
    assert processor.flush(10)
    assert processor.trace_stats().assembly.traces_evicted == {"max_spans_per_trace": 1}
    assert dispatcher.stats().dropped_by_reason == {"evicted": 1}
    processor.shutdown()
    dispatcher.shutdown()
    provider.shutdown()
