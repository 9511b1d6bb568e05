"""Per-scorer aggregates and histograms."""

from __future__ import annotations

import json

from livescore import Run, ScoreResult
from livescore.evals import EvalResult, ItemResult, ScoreAggregate
from livescore.evals._result import histogram
from livescore.judges import JudgeUsage


def test_histogram_bins_on_the_unit_range() -> None:
    bins = histogram([0.0, 0.1, 0.3, 0.99, 1.0])
    assert len(bins) == 10
    assert (bins[0].lower, bins[-1].upper) == (0.0, 1.0)
    # 0.3 / 0.1 is 2.9999999999999996 in floating point; it still lands in the 0.3 bin.
    assert [b.count for b in bins] == [1, 1, 0, 1, 0, 0, 0, 0, 0, 2]


def test_histogram_widens_for_scores_outside_the_unit_range() -> None:
    bins = histogram([0.0, 5.0, 10.0], bins=2)
    assert [(b.lower, b.upper, b.count) for b in bins] == [(0.0, 5.0, 1), (5.0, 10.0, 2)]
    assert histogram([]) == []


def test_aggregate_counts_every_status() -> None:
    results = [
        (0, ScoreResult("r0", "s", score=0.2, label="low", usage=JudgeUsage(calls=3))),
        (1, ScoreResult("r1", "s", score=0.6, label="high", usage=JudgeUsage(calls=3))),
        (2, ScoreResult("r2", "s", status="skipped", reason="no context")),
        (
            3,
            ScoreResult(
                "r3",
                "s",
                status="failed",
                error="boom",
                error_type="timeout",
                failed_step="analyze",
                usage=JudgeUsage(calls=2),
            ),
        ),
    ]
    agg = ScoreAggregate.from_results("s", results)
    assert agg.mean == 0.4
    assert (agg.scored, agg.failed, agg.skipped, agg.attempted) == (2, 1, 1, 4)
    assert agg.distribution.labels == {"high": 1, "low": 1}
    assert agg.skip_reasons == {"no context": 1}
    assert [(f.index, f.error_type, f.step) for f in agg.failures] == [(3, "timeout", "analyze")]
    assert agg.usage.calls == 8
    json.dumps(agg.to_dict())  # JSON-safe


def test_item_to_dict_is_json_safe_and_reads_texts() -> None:
    run = Run(
        input=[{"role": "user", "content": "hi"}],
        output=[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
    )
    item = ItemResult(index=0, input=run.input, output=run.output, run=run)
    assert (item.input_text, item.output_text) == ("hi", "hello")
    data = item.to_dict(include_run=True)
    assert data["output_text"] == "hello"  # the output is a message list: its text too
    assert data["run_id"] == run.run_id
    assert "run" not in data  # the run's input and output are the item's: not twice
    json.dumps(data)
    assert EvalResult().to_dict()["items"] == 0
