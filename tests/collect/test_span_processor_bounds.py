"""The span processor's promises: on_end never raises, its queue and its memory are
bounded, and what it cannot keep is counted."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import set_span_in_context

from livescore._background import BackgroundWorker
from livescore.collect import LiveScoringSpanProcessor, SpanPipeline
from livescore.live import DispatchStats, LiveDispatcher, SamplingDecision
from livescore.runs import Run
from livescore.scorers import create_keyword_coverage_scorer
from livescore.traces import AssemblyLimits

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "traces"))
from _trace_support import genai_tool_run
from forking import in_forked_child


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

    def sample(self, key: str | None, conversation_id: str | None = None) -> SamplingDecision:
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


def _agent_run(tracer: Any, n: int) -> None:
    """One whole run: an agent span with its input and output."""
    with tracer.start_as_current_span("invoke_agent") as span:
        span.set_attribute("gen_ai.operation.name", "invoke_agent")
        span.set_attribute("gen_ai.input.messages", f'[{{"role": "user", "content": "q{n}?"}}]')
        span.set_attribute(
            "gen_ai.output.messages", '[{"role": "assistant", "content": "It is sunny."}]'
        )


def test_a_burst_larger_than_the_dispatcher_s_queue_is_scored_not_dropped() -> None:
    # 16 threads end 4,000 runs at once against a dispatcher queue of 1,000 and an instant
    # scorer: the runs past the queue wait in the processor while it scores.
    processor = LiveScoringSpanProcessor(scorers=[create_keyword_coverage_scorer()])
    provider = TracerProvider()
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("burst")
    threads = [
        threading.Thread(target=lambda i=i: [_agent_run(tracer, i * 250 + n) for n in range(250)])
        for i in range(16)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert processor.flush(120)
    stats = processor.stats()
    provider.shutdown()
    assert stats.sampled == 4_000
    assert stats.dropped == 0, stats.dropped_by_reason
    assert stats.scored + stats.skipped == 4_000


def test_a_child_that_ends_after_its_root_is_part_of_the_run() -> None:
    # A grace no loaded machine outlasts between two statements; the flush ends it.
    processor = LiveScoringSpanProcessor(
        scorers=[create_keyword_coverage_scorer()], late_span_grace=60
    )
    provider = TracerProvider()
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("late")
    root = tracer.start_span("invoke_agent")
    root.set_attribute("gen_ai.operation.name", "invoke_agent")
    root.set_attribute("gen_ai.input.messages", '[{"role": "user", "content": "Weather?"}]')
    root.set_attribute("gen_ai.output.messages", '[{"role": "assistant", "content": "Sunny."}]')
    tool = tracer.start_span("execute_tool get_weather", context=set_span_in_context(root))
    tool.set_attribute("gen_ai.operation.name", "execute_tool")
    tool.set_attribute("gen_ai.tool.name", "get_weather")
    root.end()
    tool.end()  # after its root: work the agent started and did not await
    assert processor.flush(10)
    provider.shutdown()
    assembly = processor.trace_stats().assembly
    assert (assembly.runs_assembled, assembly.spans_finished) == (1, 2)
    assert assembly.spans_dropped == {}  # not "late"


def _wait_for(condition: Any, timeout: float = 20.0) -> bool:
    """Whether ``condition()`` came true within ``timeout`` (looked at every 20 ms)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_runs_ending_while_shutdown_runs_are_each_counted() -> None:
    # Eight threads keep ending runs before, during and after the shutdown: it returns, and
    # every run they ended is scored, failed, skipped or dropped (those ending after it
    # began as "shutdown"), none missing.
    processor = LiveScoringSpanProcessor(scorers=[create_keyword_coverage_scorer()])
    provider = TracerProvider()
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("emitting")
    stop = threading.Event()
    emitted = [0] * 8

    def emit(index: int) -> None:
        while not stop.is_set():
            _agent_run(tracer, emitted[index])
            emitted[index] += 1
            time.sleep(0.001)  # an agent between runs

    threads = [threading.Thread(target=emit, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    assert _wait_for(lambda: min(emitted) >= 20)
    shutting = threading.Thread(target=processor.shutdown)
    shutting.start()
    shutting.join(30)  # it keeps to 10 s (and 1 s to count what it gave up)
    assert not shutting.is_alive()
    after = list(emitted)
    assert _wait_for(lambda: all(now > then for now, then in zip(emitted, after, strict=True)))
    stop.set()
    for thread in threads:
        thread.join(20)
    total = sum(emitted)
    assert _wait_for(lambda: processor.stats().sampled == total), (processor.stats(), total)
    stats = processor.stats()
    assert stats.scored + stats.failed + stats.skipped + stats.dropped == total
    assert stats.dropped_by_reason.get("shutdown", 0) >= 8  # at least one per thread after it
    assert processor.trace_stats().spans_dropped_at_shutdown >= 8
    provider.shutdown()


class FirstSampleBlocksDouble:
    """A test double of a Dispatcher: a real LiveDispatcher whose first sample() blocks until
    released (the pipeline's thread held up past a shutdown's deadline)."""

    def __init__(self) -> None:
        self.inner = LiveDispatcher([create_keyword_coverage_scorer()], register_atexit=False)
        self.entered = threading.Event()
        self.release = threading.Event()
        self.submitted = 0

    def sample(self, key: str | None, conversation_id: str | None = None) -> SamplingDecision:
        if not self.entered.is_set():
            self.entered.set()
            self.release.wait(30)
        return self.inner.sample(key, conversation_id)

    def submit(self, run: Run, decision: SamplingDecision | None = None) -> bool:
        self.submitted += 1
        return self.inner.submit(run, decision)

    def drop(self, decision: SamplingDecision, reason: str) -> None:
        self.inner.drop(decision, reason)


def test_spans_still_queued_when_a_shutdown_gives_up_are_counted() -> None:
    sink = FirstSampleBlocksDouble()
    pipeline = SpanPipeline(
        sink,  # type: ignore[arg-type]
        AssemblyLimits(late_span_grace=60),
        finish_on_root=True,
    )
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    for n in range(11):  # eleven one-span runs
        _agent_run(provider.get_tracer("queued"), n)
    runs = exporter.get_finished_spans()
    pipeline.put_span(runs[0])
    assert sink.entered.wait(10)  # the pipeline's thread is held on the first run
    for span in runs[1:]:
        pipeline.put_span(span)
    assert not pipeline.shutdown(0.2)  # gives up: the thread is still held
    sink.release.set()
    # Let go, the thread counts what it gave up instead of assembling it: the ten queued
    # runs and the one it held, each dropped ("shutdown"), none handed over.
    assert _wait_for(lambda: sink.inner.stats().dropped == 11), sink.inner.stats()
    assert sink.inner.stats().dropped_by_reason == {"shutdown": 11}
    assert sink.submitted == 0
    assert pipeline.stats().spans_dropped_at_shutdown == 10
    sink.inner.shutdown()


class HeldQueueing:
    """An emitter's ``on_end`` preempted between the pipeline's stopped check and queueing
    its span: held as it calls the background worker's ``append``, until released."""

    def __init__(self, on_end: Any) -> None:
        self.on_end = on_end
        self.entered = threading.Event()
        self.release = threading.Event()

    def __call__(self, span: Any) -> None:
        def hold(frame: Any, event: str, arg: Any) -> None:
            if event == "call" and frame.f_code is BackgroundWorker.append.__code__:
                self.entered.set()
                self.release.wait(30)

        sys.settrace(hold)  # this thread only
        try:
            self.on_end(span)
        finally:
            sys.settrace(None)


def test_a_span_queued_as_shutdown_ends_is_counted_before_its_on_end_returns() -> None:
    # An emitter past the stopped check when the shutdown began queues its span after the
    # pipeline's thread took its last look: it was left in the queue, its run never counted.
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    _agent_run(provider.get_tracer("late"), 0)
    (root,) = exporter.get_finished_spans()
    processor = LiveScoringSpanProcessor(scorers=[create_keyword_coverage_scorer()])
    held = HeldQueueing(processor.on_end)
    emitter = threading.Thread(target=held, args=(root,))
    emitter.start()
    assert held.entered.wait(10)  # past the check, not queued yet
    processor.shutdown()
    held.release.set()
    emitter.join(10)
    assert not emitter.is_alive()
    stats = processor.stats()  # as its on_end returned: the run is counted
    assert stats.sampled == 1
    assert stats.dropped_by_reason == {"shutdown": 1}
    assert processor.trace_stats().spans_dropped_at_shutdown == 1
    provider.shutdown()


class SampleThenDropHeldDouble(FirstSampleBlocksDouble):
    """A test double of a Dispatcher whose first sample() and first drop() each block until
    released: the pipeline's thread held past a shutdown's deadline, then slow to count
    what it gives up."""

    def __init__(self) -> None:
        super().__init__()
        self.dropping = threading.Event()
        self.release_drop = threading.Event()

    def drop(self, decision: SamplingDecision, reason: str) -> None:
        if not self.dropping.is_set():
            self.dropping.set()
            self.release_drop.wait(30)
        self.inner.drop(decision, reason)


def test_a_shutdown_that_gives_up_returns_with_every_run_counted() -> None:
    sink = SampleThenDropHeldDouble()
    pipeline = SpanPipeline(
        sink,  # type: ignore[arg-type]
        AssemblyLimits(late_span_grace=60),
        finish_on_root=True,
    )
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    for n in range(11):  # eleven one-span runs
        _agent_run(provider.get_tracer("queued"), n)
    runs = exporter.get_finished_spans()
    pipeline.put_span(runs[0])
    assert sink.entered.wait(10)  # the pipeline's thread is held on the first run
    for span in runs[1:]:
        pipeline.put_span(span)
    seen: list[DispatchStats] = []

    def shut() -> None:
        pipeline.shutdown(0.0)
        seen.append(sink.inner.stats())  # what a caller reads as shutdown returns

    shutter = threading.Thread(target=shut)
    shutter.start()
    # The shutdown gave up at once (timeout 0): the queued spans were taken off the queue.
    assert _wait_for(lambda: pipeline.stats().spans_queued == 0)
    sink.release.set()  # the thread goes on past the deadline: it gives up and counts
    assert sink.dropping.wait(10)  # counting, held on its first drop
    shutter.join(3)  # a shutdown that does not wait for the counting returns meanwhile
    sink.release_drop.set()
    shutter.join(30)
    assert not shutter.is_alive()
    assert seen[0].dropped_by_reason == {"shutdown": 11}
    assert sink.submitted == 0
    sink.inner.shutdown()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork (POSIX)")
def test_a_forked_child_s_processor_starts_empty_and_assembles_its_own_runs() -> None:
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("fork")
    _agent_run(tracer, 0)
    _agent_run(tracer, 1)
    parent_run, child_run = exporter.get_finished_spans()
    exporter.clear()
    root = tracer.start_span("invoke_agent")  # ends after the fork: its trace stays open
    with tracer.start_as_current_span("chat", context=set_span_in_context(root)):
        pass
    (open_child,) = exporter.get_finished_spans()
    processor = LiveScoringSpanProcessor(scorers=[create_keyword_coverage_scorer()])
    processor.on_end(parent_run)
    processor.on_end(open_child)
    assert processor.flush(10)  # the parent's thread runs; one trace held open

    def child() -> dict[str, Any]:
        held = processor.trace_stats()
        processor.on_end(child_run)  # the child's own thread assembles it
        flushed = processor.flush(10)
        stats = processor.trace_stats()
        return {
            "held": [held.runs_submitted, held.assembly.traces_open],
            "flushed": flushed,
            "submitted": stats.runs_submitted,
            "sampled": processor.stats().sampled,
        }

    report = in_forked_child(child)
    # The parent's spans, traces and counts stay the parent's.
    assert report == {"held": [0, 0], "flushed": True, "submitted": 1, "sampled": 1}
    assert processor.trace_stats().assembly.traces_open == 1
    assert processor.trace_stats().runs_submitted == 1
    processor.shutdown()
    provider.shutdown()
