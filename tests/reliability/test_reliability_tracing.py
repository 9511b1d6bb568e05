"""Scores and the traces they belong to: trace samplers, spans current at submit, trace ids.

A trace sampler that drops the run's trace (its scores must not vanish after the judge was
paid), trace ids in any case, and a run without ids (scored in a trace of its own).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from _reliability_support import (
    MakeHandler,
    attributes,
    evaluation_spans,
    question,
    weather_agent,
)
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

from livescore import Run, StepContext, create_scorer
from livescore.live import LiveDispatcher, ScorerConfig
from livescore.otel import OTelEmitter
from livescore.otel import attributes as A

RUNS = 40


@pytest.fixture
def sampled_half() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    """An SDK provider that samples half the traces, as production setups do."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(sampler=ParentBased(TraceIdRatioBased(0.5)))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


def _counting_scorer(calls: list[str]) -> Any:
    def score(ctx: StepContext) -> float:
        calls.append(ctx.run.run_id)  # stands in for a paid judge call
        return 1.0

    return create_scorer(id="paid", description="counts its calls", generate_score=score)


def _agent_for(runs: int) -> Any:
    from _reliability_support import ANSWER, tool_call

    turns: list[Any] = []
    for i in range(runs):
        turns += [tool_call(call_id=f"call_{i}", city="Paris"), ANSWER]
    return weather_agent(turns=turns)


def test_runs_whose_trace_is_not_sampled_are_dropped_before_any_judge_call(
    make_handler: MakeHandler, sampled_half: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    # Before: 40 runs were all scored (and the judge paid), but only the sampled half of
    # the score spans reached the exporter; the rest vanished in the SDK.
    provider, exporter = sampled_half
    calls: list[str] = []
    handler = make_handler([_counting_scorer(calls)], tracer_provider=provider)
    agent = _agent_for(RUNS)
    for _ in range(RUNS):
        agent.invoke(question(), config={"callbacks": [handler]})
    assert handler.flush(timeout=30)

    spans = exporter.get_finished_spans()
    run_spans = [s for s in spans if s.name.startswith("invoke_agent")]
    stats = handler.stats()
    assert 0 < len(run_spans) < RUNS  # the sampler kept some traces, not all
    assert stats.sampled == RUNS
    assert stats.scored == len(run_spans) == len(calls)
    assert stats.dropped_by_reason == {"trace_not_sampled": RUNS - len(run_spans)}
    # Every score that was paid for is exported, under its run's span.
    scores = evaluation_spans(spans, "paid")
    assert len(scores) == stats.scored
    run_span_ids = {s.context.span_id for s in run_spans}
    assert {s.parent.span_id for s in scores if s.parent is not None} == run_span_ids


def test_score_unsampled_traces_scores_them_as_roots_linked_to_the_run(
    make_handler: MakeHandler, sampled_half: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, exporter = sampled_half
    calls: list[str] = []
    dispatcher = LiveDispatcher(
        [_counting_scorer(calls)],
        emitter=OTelEmitter(tracer_provider=provider),
        score_unsampled_traces=True,
        register_atexit=False,
    )
    handler = make_handler(dispatcher=dispatcher, tracer_provider=provider)
    agent = _agent_for(RUNS)
    for _ in range(RUNS):
        agent.invoke(question(), config={"callbacks": [handler]})
    assert handler.flush(timeout=30)

    stats = handler.stats()
    assert (stats.sampled, stats.scored, len(calls)) == (RUNS, RUNS, RUNS)
    spans = exporter.get_finished_spans()
    sampled_runs = {s.context.trace_id for s in spans if s.name.startswith("invoke_agent")}
    scores = evaluation_spans(spans, "paid")
    # (About half of the unsampled runs' roots pass the ratio sampler: none at all would
    # happen once in a million test runs.)
    assert any(s.parent is None for s in scores)
    for span in scores:
        if span.context.trace_id in sampled_runs:
            assert span.parent is not None  # in its run's trace, under the run's span
            continue
        # A run whose trace was dropped: its score is a root of its own (which the ratio
        # sampler kept), linked to the run's span and naming the run's trace.
        assert span.parent is None
        (link,) = span.links
        assert attributes(span)[A.LIVESCORE_RUN_TRACE_ID] == f"{link.context.trace_id:032x}"
        assert link.context.trace_id not in sampled_runs


def test_a_run_without_ids_nests_under_the_span_current_at_submit(
    tracer_provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    # Before: it started a trace of its own, nowhere near the run.
    tracer = tracer_provider.get_tracer("my-agent")
    scorer = create_scorer(id="s", description="x", generate_score=lambda ctx: 1.0)
    with LiveDispatcher(
        [scorer], emitter=OTelEmitter(tracer_provider=tracer_provider), register_atexit=False
    ) as dispatcher:
        with tracer.start_as_current_span("my hand-written agent") as agent_span:
            assert dispatcher.submit(Run(input="q", output="a", run_id="plain"))
        dispatcher.submit(Run(input="q", output="a", run_id="no-span"))  # nothing current
        assert dispatcher.flush(timeout=20)
    spans = exporter.get_finished_spans()
    by_run = {attributes(s)[A.LIVESCORE_RUN_ID]: s for s in evaluation_spans(spans)}
    under = by_run["plain"]
    assert under.parent is not None
    assert under.parent.span_id == agent_span.get_span_context().span_id
    assert under.context.trace_id == agent_span.get_span_context().trace_id
    assert by_run["no-span"].parent is None


def test_a_span_current_at_submit_that_is_not_sampled_drops_the_run(
    sampled_half: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    provider, _ = sampled_half
    tracer = provider.get_tracer("my-agent")
    calls: list[str] = []
    with LiveDispatcher(
        [_counting_scorer(calls)],
        emitter=OTelEmitter(tracer_provider=provider),
        register_atexit=False,
    ) as dispatcher:
        unsampled = 0
        for i in range(20):
            with tracer.start_as_current_span("agent") as span:
                unsampled += not span.get_span_context().trace_flags.sampled
                dispatcher.submit(Run(input="q", output="a", run_id=f"r{i}"))
        assert dispatcher.flush(timeout=20)
        stats = dispatcher.stats()
    assert 0 < unsampled < 20
    assert stats.dropped_by_reason == {"trace_not_sampled": unsampled}
    assert len(calls) == 20 - unsampled


def test_a_trace_id_samples_and_parents_the_same_whatever_its_case(
    tracer_provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    # Before: "4BF9…" and "4bf9…" sampled differently for direct dispatcher users.
    scorer = create_scorer(id="s", description="x", generate_score=lambda ctx: 1.0)
    lower = [f"{(i * 0x9E3779B97F4A7C15) % (1 << 128):032x}" for i in range(1, 201)]
    with LiveDispatcher(
        [ScorerConfig(scorer, sampling=0.5)],
        emitter=OTelEmitter(tracer_provider=tracer_provider),
        register_atexit=False,
    ) as dispatcher:
        picked_lower = [dispatcher.sample(t).sampled for t in lower]
        picked_upper = [dispatcher.sample(t.upper()).sampled for t in lower]
        picked_hex = [dispatcher.sample(f"0x{t}").sampled for t in lower]
        assert picked_lower == picked_upper == picked_hex
        assert 0 < sum(picked_lower) < len(lower)
        sampled_id = lower[picked_lower.index(True)]
        submitted = [
            dispatcher.submit(
                Run(input="q", output="a", trace_id=t.upper(), span_id="00F067AA0BA902B7")
            )
            for t in lower
        ]
        assert submitted == picked_lower
        assert dispatcher.flush(timeout=20)
    (span, *_) = [
        s
        for s in evaluation_spans(exporter.get_finished_spans())
        if s.context.trace_id == int(sampled_id, 16)
    ]
    assert span.parent is not None
    assert span.parent.span_id == 0x00F067AA0BA902B7
