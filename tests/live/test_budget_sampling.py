"""Sampling that follows a budget: it aims at a number of scores or a judge spend per window,
adjusts its rate to the traffic, stays deterministic by trace id within an adjustment
interval, and every score carries the rate that sampled it."""

from __future__ import annotations

from typing import Any

import pytest
from _live_support import FakeEmitter, constant_scorer, make_run

from livescore import ScoreResult
from livescore.judges import JudgeUsage
from livescore.live import BudgetSampling, LiveDispatcher, ScorerConfig, ScoringJob
from livescore.live._sampling import decide, sample_fraction


class Clock:
    """A test double of the wall clock: seconds that move only when told."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self.now = start - start % 3600  # the top of an hour

    def __call__(self) -> float:
        return self.now


def traffic(config: ScorerConfig, clock: Clock, per_second: int, seconds: int) -> list[float]:
    """Offer ``per_second`` runs a second for ``seconds``; the rate of each sampled one."""
    rates: list[float] = []
    for n in range(seconds * per_second):
        clock.now += 1 / per_second
        decision = decide((config,), f"{n:032x}")
        if decision.scorers:
            rate = decision.rate_of(0)
            assert rate is not None
            rates.append(rate)
    return rates


def test_a_score_target_is_met_whatever_the_traffic() -> None:
    for per_second in (20, 200):
        clock = Clock()
        config = ScorerConfig(
            constant_scorer(), BudgetSampling(scores=600, per="minute", clock=clock)
        )
        rates = traffic(config, clock, per_second, 60)
        # 600 a minute whether the traffic is 1,200 or 12,000 runs a minute.
        assert 540 <= len(rates) <= 600, (per_second, len(rates))
        # The rate followed the traffic: about 10 a second of what arrived.
        assert rates[-1] == pytest.approx(10 / per_second, rel=0.3)


def test_the_next_window_starts_afresh() -> None:
    clock = Clock()
    config = ScorerConfig(constant_scorer(), BudgetSampling(scores=100, per="minute", clock=clock))
    first = traffic(config, clock, 50, 60)
    second = traffic(config, clock, 50, 60)
    assert 90 <= len(first) <= 100
    assert 90 <= len(second) <= 100


def test_a_spend_target_counts_each_score_at_its_recent_cost() -> None:
    clock = Clock()
    config = ScorerConfig(
        constant_scorer(),
        BudgetSampling(usd=1.0, per="minute", expected_cost=0.02, clock=clock),
    )
    spent = 0.0
    n = 0
    for _ in range(60):
        for _ in range(50):
            clock.now += 0.02
            decision = decide((config,), f"{n:032x}")
            n += 1
            if decision.scorers:
                # Each score really costs 0.005: the rate learns it and samples more.
                result = ScoreResult(
                    run_id="r", scorer_id="constant", usage=JudgeUsage(cost_usd=0.005)
                )
                config.record_score(result)
                spent += 0.005
    assert 0.85 <= spent <= 1.0, spent


def test_within_an_interval_the_decision_is_the_trace_ids_alone() -> None:
    clock = Clock()
    spec = BudgetSampling(scores=1000, per="hour", steps=60, clock=clock)
    first = ScorerConfig(constant_scorer("a"), spec)
    second = ScorerConfig(constant_scorer("b"), spec)
    traffic(first, clock, 5, 120)  # two intervals of traffic: the rate has adjusted
    traffic(second, clock, 5, 120)
    clock.now += 60 - clock.now % 60  # the start of a fresh interval
    keys = [f"{n:032x}" for n in range(100_000, 100_040)]
    picked_a = [bool(decide((first,), k).scorers) for k in keys]
    picked_b = [bool(decide((second,), k).scorers) for k in keys]
    rate = first.current_rate()
    assert rate is not None
    assert 0 < rate < 1
    # The same runs for both scorers at that rate: a trace's fraction under the rate.
    assert picked_a == [sample_fraction(k) < rate for k in keys]
    assert picked_a == picked_b


def test_every_score_carries_the_rate_that_sampled_it() -> None:
    clock = Clock()
    emitter = FakeEmitter()
    config = ScorerConfig(constant_scorer(), BudgetSampling(scores=60, per="minute", clock=clock))
    dispatcher = LiveDispatcher([config], emitter=emitter, register_atexit=False)
    applied: dict[str, float] = {}
    for i in range(600):
        clock.now += 0.1
        run = make_run(i)
        decision = dispatcher.sample(run.trace_id)
        if decision.scorers:
            rate = decision.rate_of(0)
            assert rate is not None
            applied[run.run_id] = rate
            assert dispatcher.submit(run, decision)
    assert dispatcher.flush(timeout=30)
    dispatcher.shutdown(timeout=5)
    carried = {run.run_id: kwargs["sample_rate"] for run, _, kwargs in emitter.results}
    assert carried == applied
    assert len(set(carried.values())) > 1  # the rate was adjusted on the way
    assert 50 <= len(carried) <= 60
    # The rate travels in the job a fleet worker gets, too.
    config_job = ScoringJob(make_run(0), (config,), None, (0.25,))
    assert config_job.to_dict()["scorers"][0]["sample_rate"] == 0.25


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({}, "scores=N or usd=X"),
        ({"scores": 5, "usd": 1}, "one of them"),
        ({"scores": 5, "per": "week"}, "per must be"),
        ({"usd": -1}, "positive number of dollars"),
        ({"usd": float("inf")}, "positive number of dollars"),
        ({"usd": True}, "positive number of dollars"),
        ({"usd": 1, "expected_cost": True}, "positive number of dollars"),
        ({"usd": 1, "expected_cost": float("nan")}, "positive number of dollars"),
    ],
)
def test_bad_budget_sampling_is_rejected_clearly(options: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        ScorerConfig(constant_scorer(), BudgetSampling(**options))


def test_budget_sampling_has_one_spelling() -> None:
    # A dict is not a sampling: BudgetSampling(...) is the one way to write it.
    with pytest.raises(TypeError, match=r"rate between 0 and 1 \(sampling=0.1\)"):
        ScorerConfig(constant_scorer(), {"type": "budget", "scores": 5})  # type: ignore[arg-type]
