"""The accounting invariant over a long mixed run: nothing sampled is ever unaccounted for.

300 runs of a real agent (some of which fail), three scorers at a 50 % sampling rate, a judge
that fails in many ways, scorers that skip and raise, and a queue small enough to overflow.
Every sampled (run, scorer) pair must end as exactly one of scored, failed, skipped or
dropped, and the counts must agree three ways: ``stats()``, the exported evaluation spans
and the ``livescore.runs`` metric.
"""

from __future__ import annotations

import random
import threading
import zlib
from collections import Counter
from typing import Any

import pytest
from _reliability_support import (
    ANSWER,
    FAST_JUDGE,
    MakeHandler,
    attributes,
    broken_forecast,
    evaluation_spans,
    get_weather,
    grounded_reply,
    metric_points,
    question,
    tool_call,
    tool_contexts,
)
from langchain.agents import create_agent
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from livescore import NotScorable, StepContext, create_scorer
from livescore.live import LiveDispatcher, ScorerConfig
from livescore.otel import OTelEmitter
from livescore.otel import attributes as A
from livescore.scorers import create_hallucination_scorer, create_keyword_coverage_scorer
from livescore.testing import OpenAITestServer, Reply, ReplyLike
from livescore_langchain.testing import ScriptedChatModel

RUNS = 300
SCORERS = ("hallucination", "moody", "keyword-coverage")


def _moody(ctx: StepContext) -> float:
    # Decided by the run id, so each outcome shows up about a third of the time.
    bucket = zlib.crc32(ctx.run.run_id.encode()) % 3
    if bucket == 0:
        raise NotScorable("nothing to judge in this run")
    if bucket == 1:
        raise ValueError("the scorer's own bug")
    return 1.0


@pytest.mark.slow
def test_every_sampled_pair_is_counted_once_and_stats_spans_and_metrics_agree(
    make_handler: MakeHandler,
    tracer_provider: TracerProvider,
    meter_provider: MeterProvider,
    exporter: InMemorySpanExporter,
    metric_reader: InMemoryMetricReader,
) -> None:
    rng = random.Random(5)
    faults = [
        Reply.server_error(),
        Reply.rate_limited(),
        Reply.drop(),
        Reply.broken_body(),
        Reply.text("{not json"),
        Reply.empty(),
    ]

    # The judge answers nothing until the agent has finished its first runs, so the small
    # queue overflows however fast or slow this machine is; then a fault on about a third of
    # requests.
    opened = threading.Event()

    def responder(body: dict[str, Any]) -> ReplyLike:
        opened.wait(timeout=30)
        return Reply.delay(
            0.01, rng.choice(faults) if rng.random() < 0.35 else grounded_reply(body)
        )

    with OpenAITestServer(responder=responder) as server:
        hallucination = create_hallucination_scorer(
            model=server.judge(**{**FAST_JUDGE, "max_retries": 0}),
            get_context=tool_contexts,
            judge_mode="one_call",
        )
        moody = create_scorer(
            id="moody", description="scores, skips or raises", generate_score=_moody
        )
        dispatcher = LiveDispatcher(
            [
                ScorerConfig(hallucination, sampling=0.5, max_concurrency=2),
                ScorerConfig(moody, sampling=0.5, max_concurrency=1),
                ScorerConfig(create_keyword_coverage_scorer(), sampling=0.5, max_concurrency=1),
            ],
            emitter=OTelEmitter(tracer_provider=tracer_provider, meter_provider=meter_provider),
            max_queue=10,
            max_judge_concurrency=4,
            register_atexit=False,
        )
        handler = make_handler(dispatcher=dispatcher)
        plan = [rng.random() < 0.05 for _ in range(RUNS)]  # about 5 % of runs fail
        good_turns: list[Any] = []
        for i in range(RUNS):
            good_turns += [tool_call(call_id=f"w{i}", city="Paris"), ANSWER]
        good: Any = create_agent(ScriptedChatModel(responses=good_turns), tools=[get_weather])
        failing: Any = create_agent(
            ScriptedChatModel(
                responses=[
                    tool_call("broken_forecast", call_id=f"b{i}", city="Paris") for i in range(RUNS)
                ]
            ),
            tools=[broken_forecast],
        )
        errors = 0
        for i, fails in enumerate(plan):
            if i == RUNS // 5:
                opened.set()
            agent = failing if fails else good
            try:
                agent.invoke(question(), config={"callbacks": [handler]})
            except ValueError:
                errors += 1

        opened.set()
        assert handler.flush(timeout=60)
        handler.shutdown(timeout=5)
    assert errors == sum(plan) > 0

    stats = handler.stats()
    spans = evaluation_spans(exporter.get_finished_spans())
    span_counts = Counter(
        (attributes(s)[A.LIVESCORE_SCORER_ID], attributes(s)[A.LIVESCORE_STATUS]) for s in spans
    )
    span_errors = Counter(
        attributes(s)[A.ERROR_TYPE] for s in spans if A.ERROR_TYPE in attributes(s)
    )
    metric_counts: Counter[tuple[str, str]] = Counter()
    metric_errors: Counter[str] = Counter()
    metric_drops: Counter[str] = Counter()
    for point_attrs, value in metric_points(metric_reader, "livescore.runs"):
        key = (point_attrs[A.LIVESCORE_SCORER_ID], point_attrs[A.LIVESCORE_STATUS])
        metric_counts[key] += int(value)
        if A.ERROR_TYPE in point_attrs:
            metric_errors[point_attrs[A.ERROR_TYPE]] += int(value)
        if A.LIVESCORE_REASON in point_attrs:
            metric_drops[point_attrs[A.LIVESCORE_REASON]] += int(value)

    # The invariant, per scorer and in total.
    assert stats.queued == stats.in_flight == 0
    assert stats.sampled == stats.scored + stats.failed + stats.skipped + stats.dropped
    for scorer_id in SCORERS:
        per = stats.by_scorer[scorer_id]
        assert per.sampled == per.scored + per.failed + per.skipped + per.dropped
        # Same rate, same trace ids: every scorer sampled the same runs.
        assert per.sampled == stats.by_scorer[SCORERS[0]].sampled
        # Each end state matches the spans (one per scored/failed/skipped pair, none per
        # drop) and the metric.
        for status in ("scored", "failed", "skipped"):
            assert span_counts[(scorer_id, status)] == getattr(per, status), (scorer_id, status)
            assert metric_counts[(scorer_id, status)] == getattr(per, status), (scorer_id, status)
        assert metric_counts[(scorer_id, "sampled")] == per.sampled
        assert metric_counts[(scorer_id, "dropped")] == per.dropped
    assert sum(span_counts.values()) == stats.scored + stats.failed + stats.skipped
    assert span_errors == metric_errors == Counter(stats.failed_by_type)
    assert metric_drops == Counter(stats.dropped_by_reason)

    # The run really was mixed: a sample of about half, and every end state and cause seen.
    assert 0.3 * RUNS < stats.by_scorer["moody"].sampled < 0.7 * RUNS
    assert min(stats.scored, stats.failed, stats.skipped, stats.dropped) > 0
    assert {"queue_full", "run_error"} <= set(stats.dropped_by_reason)
    assert stats.by_scorer["hallucination"].failed > 0
    assert stats.by_scorer["moody"].skipped > 0
    assert stats.emit_errors == 0
