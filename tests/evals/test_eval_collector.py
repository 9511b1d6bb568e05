"""EvalCollector and run_evals(keep_items=False): running totals that give the same
aggregates as the items they let go of, whatever order the items finish in."""

from __future__ import annotations

import random

from _evals_support import length_scorer

from livescore import create_scorer
from livescore.evals import EvalCollector, EvalResult, ItemResult, run_evals_sync
from livescore.scoring import NotScorable, ScoreResult, StepContext


def _picky(ctx: StepContext) -> float:
    text = ctx.output_text
    if text.startswith("skip"):
        raise NotScorable(f"not scorable: {text[:6]}")
    if text.startswith("boom"):
        raise RuntimeError("the scorer broke")
    return len(text) / 40


DATA = [
    {"id": str(i), "input": "q", "output": ("skip-a", "skip-b", "boom", "ok " * i)[i % 4]}
    for i in range(24)
] + [{"id": "no-input", "output": "x"}]


def test_totals_only_give_the_aggregates_of_every_item_kept() -> None:
    picky = create_scorer(id="picky", description="length, or not", generate_score=_picky)
    kept = run_evals_sync(DATA, [length_scorer(), picky], concurrency=4)
    totals = run_evals_sync(DATA, [length_scorer(), picky], concurrency=4, keep_items=False)
    assert totals.items == []
    assert totals.item_count == kept.item_count == len(DATA)
    assert len(kept.items) == len(DATA)
    assert {sid: agg.to_dict() for sid, agg in totals.scores.items()} == {
        sid: agg.to_dict() for sid, agg in kept.scores.items()
    }
    assert totals.item_failures == kept.item_failures
    assert [f.index for f in totals.item_failures] == [24]
    assert totals.to_dict()["items"] == len(DATA)
    assert totals.usage == kept.usage


def test_the_order_items_finish_in_does_not_change_the_result() -> None:
    items = []
    for i in range(40):
        status = ("scored", "skipped", "failed")[i % 3]
        score = ScoreResult(
            f"r{i}",
            "s",
            status=status,
            score=i / 40 if status == "scored" else None,
            reason=f"reason {i % 2}" if status == "skipped" else None,
            error="broke" if status == "failed" else None,
        )
        items.append(ItemResult(index=i, scores={"s": score}))
    in_order = EvalResult.from_items(["s"], items)
    shuffled = list(items)
    random.Random(7).shuffle(shuffled)
    collector = EvalCollector(["s"], keep_items=False)
    for item in shuffled:
        collector.add(item)
    result = collector.result(duration_s=1.5)
    assert result.scores["s"].to_dict() == in_order.scores["s"].to_dict()
    assert list(result.scores["s"].skip_reasons) == ["reason 1", "reason 0"]
    assert [f.index for f in result.scores["s"].failures] == list(range(2, 40, 3))
    assert (result.item_count, result.items, result.duration_s) == (40, [], 1.5)
