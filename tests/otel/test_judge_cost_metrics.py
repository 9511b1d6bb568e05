"""Judge cost in OpenTelemetry: ``livescore.judge.cost_usd`` on each score span, the
``livescore.judge.cost`` counter by scorer and judge model, and budget skips counted by
reason, through the real SDK."""

from __future__ import annotations

import pytest
from _otel_support import InMemoryOTel

from livescore import Run, ScoreResult
from livescore.judges import JudgeUsage
from livescore.otel import OTelEmitter
from livescore.otel import attributes as A


def _priced(run_id: str, scorer: str, model: str, cost: float) -> ScoreResult:
    return ScoreResult(
        run_id=run_id,
        scorer_id=scorer,
        score=1.0,
        judge_model=model,
        usage=JudgeUsage(calls=1, input_tokens=100, output_tokens=5, cost_usd=cost),
        attributes={A.LIVESCORE_JUDGE_COST: cost},
    )


def test_costs_reach_spans_and_the_cost_counter(otel: InMemoryOTel) -> None:
    emitter = OTelEmitter(tracer_provider=otel.tracer_provider, meter_provider=otel.meter_provider)
    results = [
        _priced("r1", "hallucination", "gpt-4o-mini", 0.0012),
        _priced("r2", "hallucination", "gpt-4o-mini", 0.0008),
        _priced("r3", "hallucination", "gpt-4o", 0.02),
        _priced("r4", "toxicity", "gpt-4o-mini", 0.0005),
    ]
    for result in results:
        emitter.emit(Run(run_id=result.run_id), result, sample_rate=0.5)
    spans = {dict(s.attributes or {})[A.LIVESCORE_RUN_ID]: s for s in otel.eval_spans()}
    assert {k: dict(s.attributes or {})[A.LIVESCORE_JUDGE_COST] for k, s in spans.items()} == {
        "r1": 0.0012,
        "r2": 0.0008,
        "r3": 0.02,
        "r4": 0.0005,
    }
    costs = otel.counts(A.METRIC_JUDGE_COST, A.LIVESCORE_SCORER_ID, A.LIVESCORE_JUDGE_MODEL)
    assert costs == {
        ("hallucination", "gpt-4o-mini"): pytest.approx(0.002),
        ("hallucination", "gpt-4o"): pytest.approx(0.02),
        ("toxicity", "gpt-4o-mini"): pytest.approx(0.0005),
    }


def test_a_budget_skip_counts_as_skipped_with_its_reason(otel: InMemoryOTel) -> None:
    emitter = OTelEmitter(tracer_provider=otel.tracer_provider, meter_provider=otel.meter_provider)
    skipped = ScoreResult(
        run_id="r1",
        scorer_id="hallucination",
        status="skipped",
        reason="judge budget 'judge' ($1 per day) is exhausted",
        judge_model="gpt-4o-mini",
        attributes={A.LIVESCORE_JUDGE_BUDGET: "judge", A.LIVESCORE_JUDGE_BUDGET_EXHAUSTED: True},
    )
    plain_skip = ScoreResult(run_id="r2", scorer_id="hallucination", status="skipped")
    emitter.emit(Run(run_id="r1"), skipped, sample_rate=1.0)
    emitter.emit(Run(run_id="r2"), plain_skip, sample_rate=1.0)
    runs = otel.counts(A.METRIC_RUNS, A.LIVESCORE_STATUS, A.LIVESCORE_REASON)
    assert runs == {("skipped", "budget_exhausted"): 1, ("skipped", None): 1}
    span = next(s for s in otel.eval_spans() if (s.attributes or {})[A.LIVESCORE_RUN_ID] == "r1")
    attributes = dict(span.attributes or {})
    assert attributes[A.LIVESCORE_JUDGE_BUDGET_EXHAUSTED] is True
    assert "exhausted" in str(attributes[A.LIVESCORE_SKIP_REASON])
    # Nothing was spent: no cost counted.
    assert otel.points(A.METRIC_JUDGE_COST) == []
