"""run_evals(max_cost=...), estimate_cost and stop_when_judge_unreachable, as a notebook user
calls them: an estimate from a spread sample, a refusal above the cap, a run stopped by the
spend (keeping what it scored), and a run that ends when its judge cannot be reached."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from _evals_support import judged_scorer

from livescore.evals import CostEstimate, EvalResult, estimate_cost, run_evals_sync
from livescore.judges import JudgeConfigError, OpenAIJudge
from livescore.testing import OpenAITestServer

PRICES = {"test-judge": (2.0, 8.0)}  # USD per million input / output tokens
DATA = [{"id": str(i), "input": "q", "output": f"answer {i}"} for i in range(30)]


def _verdict(body: dict[str, Any]) -> dict[str, Any]:
    return {"score": 0.5}


def _cost_per_item(server: OpenAITestServer) -> float:
    result = run_evals_sync(DATA[:3], [judged_scorer(server.judge("test-judge", prices=PRICES))])
    assert result.usage.cost_usd is not None
    return result.usage.cost_usd / 3


def _capped(items_paid: float, **options: Any) -> tuple[EvalResult, float, int]:
    """A run of DATA with ``max_cost`` worth ``items_paid`` items; the result, the cost of
    one item and the judge calls of the run."""
    with OpenAITestServer(responder=_verdict) as server:
        per_item = _cost_per_item(server)
        judge = server.judge("test-judge", prices=PRICES)
        result = run_evals_sync(
            DATA, [judged_scorer(judge)], max_cost=items_paid * per_item, **options
        )
        calls = len(server.requests) - 3  # less the three items of _cost_per_item
    return result, per_item, calls


def test_estimate_cost_scores_a_spread_sample_and_extrapolates() -> None:
    with OpenAITestServer(responder=_verdict) as server:
        per_item = _cost_per_item(server)
        scorer = judged_scorer(server.judge("test-judge", prices=PRICES))
        seen: list[int] = []
        sample = anyio.run(
            lambda: estimate_cost(
                DATA, [scorer], items=5, on_item_complete=lambda i: seen.append(i.index)
            )
        )
    assert sorted(seen) == [0, 6, 12, 18, 24]  # every sixth item: the data's whole range
    assert [item.index for item in sample.items] == [0, 6, 12, 18, 24]
    estimate = sample.estimate
    assert estimate is not None
    assert (estimate.sample, estimate.total) == (5, 30)
    assert estimate.calls_per_item == 1.0
    assert estimate.cost == pytest.approx(30 * per_item)
    assert estimate.cost_low is not None
    assert estimate.cost_low <= estimate.cost


def test_a_cap_below_the_estimate_scores_only_the_sample() -> None:
    estimates: list[CostEstimate] = []
    result, per_item, calls = _capped(10, estimate_items=5, on_estimate=estimates.append)
    assert result.stopped == "estimate_over_max_cost"
    assert result.item_count == 5
    assert result.estimate is not None
    assert estimates == [result.estimate]
    assert result.estimate.cost == pytest.approx(30 * per_item)
    assert "is above max_cost" in result.stop_reason
    assert calls == 5  # the sample only


def test_a_cap_stops_feeding_once_spent_and_keeps_what_was_scored() -> None:
    result, per_item, _ = _capped(4.5, estimate_items=0)
    assert result.stopped == "max_cost"
    assert 4 <= result.item_count < len(DATA)
    assert result.stop_reason.startswith("the judge spend reached max_cost")
    assert f"after {result.item_count} of 30 item(s)" in result.stop_reason
    assert result.usage.cost_usd is not None
    # The budget's bound: never more than the cap by more than one score.
    assert result.usage.cost_usd <= 5.5 * per_item
    assert result.estimate is None


def test_a_cap_the_data_fits_in_scores_every_item() -> None:
    result, _, calls = _capped(100, concurrency=4)
    assert result.stopped is None
    assert result.stop_reason == ""
    assert result.item_count == 30
    assert [item.index for item in result.items] == list(range(30))
    assert result.estimate is not None
    assert result.estimate.sample == 20
    assert calls == 30  # the sample's items are not scored twice


def test_a_cap_needs_a_judge_with_a_price() -> None:
    judge = OpenAIJudge("no-such-priced-model", base_url="http://127.0.0.1:1/v1", api_key="k")
    with pytest.raises(JudgeConfigError):
        run_evals_sync(DATA, [judged_scorer(judge)], max_cost=1.0)


def test_an_unreachable_judge_ends_the_run_with_what_was_scored() -> None:
    judge = OpenAIJudge(
        "test-judge",
        base_url="http://127.0.0.1:1/v1",
        api_key="k",
        max_retries=0,
        timeout=2.0,
        circuit_failures=1,
    )
    result = run_evals_sync(DATA, [judged_scorer(judge)], stop_when_judge_unreachable=True)
    assert result.stopped == "judge_unreachable"
    assert "is unreachable" in result.stop_reason
    assert 1 <= result.item_count < len(DATA)
    assert result.scores["judged"].failed == result.item_count
