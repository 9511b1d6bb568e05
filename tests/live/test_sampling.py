"""Sampling: deterministic by key, correlated across scorers, at the configured rate."""

from __future__ import annotations

import math
from typing import Any

import pytest
from _live_support import constant_scorer

from livescore import Run
from livescore.live import LiveDispatcher, SamplingDecision, ScorerConfig
from livescore.live._sampling import sample_fraction

KEYS = [f"{i:032x}" for i in range(20_000)]  # trace-id shaped, fixed: the test cannot flake


def picked(d: LiveDispatcher, scorer_id: str) -> set[str]:
    return {key for key in KEYS if any(c.scorer_id == scorer_id for c in d.sample(key).scorers)}


def test_fraction_is_deterministic_and_in_unit_interval() -> None:
    fractions = [sample_fraction(k) for k in KEYS[:1000]]
    assert fractions == [sample_fraction(k) for k in KEYS[:1000]]
    assert all(0.0 <= f < 1.0 for f in fractions)
    assert len(set(fractions)) == 1000


def test_same_key_same_decision_across_dispatchers() -> None:
    a = LiveDispatcher([ScorerConfig(constant_scorer(), 0.3)], register_atexit=False)
    b = LiveDispatcher([ScorerConfig(constant_scorer(), 0.3)], register_atexit=False)
    assert picked(a, "constant") == picked(b, "constant")


@pytest.mark.parametrize("rate", [0.01, 0.1, 0.5, 0.9])
def test_rate_holds_statistically(rate: float) -> None:
    d = LiveDispatcher([ScorerConfig(constant_scorer(), rate)], register_atexit=False)
    n = len(picked(d, "constant"))
    expected = rate * len(KEYS)
    sd = math.sqrt(len(KEYS) * rate * (1 - rate))
    assert abs(n - expected) < 5 * sd


def test_scorers_at_the_same_rate_score_the_same_runs_and_lower_rates_a_subset() -> None:
    d = LiveDispatcher(
        [
            ScorerConfig(constant_scorer("a"), 0.3),
            ScorerConfig(constant_scorer("b"), 0.3, salt=""),
            ScorerConfig(constant_scorer("c"), 0.1),
        ],
        register_atexit=False,
    )
    a, b, c = picked(d, "a"), picked(d, "b"), picked(d, "c")
    assert a == b
    assert c < a
    assert len(c) > 0


def test_a_salted_scorer_samples_independently_at_its_rate() -> None:
    d = LiveDispatcher(
        [
            ScorerConfig(constant_scorer("a"), 0.5),
            ScorerConfig(constant_scorer("b"), 0.5, salt="b"),
            ScorerConfig(constant_scorer("c"), 0.5, salt="b"),
        ],
        register_atexit=False,
    )
    a, b, c = picked(d, "a"), picked(d, "b"), picked(d, "c")
    assert b == c  # the same salt: correlated with each other
    # Independent of the unsalted scorer: the overlap is about a quarter of the keys, not half.
    n = len(KEYS)
    sd = math.sqrt(n * 0.25 * 0.75)
    assert abs(len(a & b) - n * 0.25) < 5 * sd
    assert abs(len(b) - n * 0.5) < 5 * math.sqrt(n * 0.25)


def test_salt_must_be_a_string() -> None:
    with pytest.raises(TypeError, match="salt must be a string"):
        ScorerConfig(constant_scorer(), 0.5, salt=3)  # type: ignore[arg-type]


def test_rates_zero_and_one_are_never_and_always() -> None:
    d = LiveDispatcher(
        [ScorerConfig(constant_scorer("never"), 0), ScorerConfig(constant_scorer("always"), 1)],
        register_atexit=False,
    )
    assert picked(d, "never") == set()
    assert picked(d, "always") == set(KEYS)


def test_sample_is_pure() -> None:
    d = LiveDispatcher([constant_scorer()], register_atexit=False)
    decision = d.sample(KEYS[0])
    assert isinstance(decision, SamplingDecision)
    assert decision.key == KEYS[0]
    assert decision.sampled
    assert decision.fraction == sample_fraction(KEYS[0])
    assert d.stats().sampled == 0


def test_missing_key_samples_at_random_but_at_the_rate() -> None:
    d = LiveDispatcher([ScorerConfig(constant_scorer(), 1.0)], register_atexit=False)
    decision = d.sample(None)
    assert decision.key is None
    assert decision.sampled
    fractions = {d.sample(None).fraction for _ in range(20)}
    assert len(fractions) == 20


def test_predicate_is_deferred_to_submit() -> None:
    def predicate(run: Run) -> bool:
        return True

    config = ScorerConfig(constant_scorer(), sampling=predicate)
    assert config.rate is None
    assert config.rate is None
    d = LiveDispatcher([config], register_atexit=False)
    decision = d.sample("k")
    assert decision.scorers == ()
    assert decision.deferred == (config,)
    assert decision.sampled


@pytest.mark.parametrize(
    ("sampling", "error", "match"),
    [
        (1.5, ValueError, "between 0 and 1"),
        (-0.1, ValueError, "between 0 and 1"),
        (float("nan"), ValueError, "between 0 and 1"),
        ({"type": "ratio", "rate": 0.5}, TypeError, r"rate between 0 and 1 \(sampling=0.1\)"),
        (True, TypeError, "rate between 0 and 1"),
        ("0.5", TypeError, "rate between 0 and 1"),
    ],
)
def test_bad_sampling_is_rejected_clearly(sampling: Any, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        ScorerConfig(constant_scorer(), sampling=sampling)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"timeout": 0}, ValueError, "timeout must be positive"),
        ({"timeout": float("nan")}, ValueError, "timeout must be positive"),
        ({"timeout": "5"}, TypeError, "timeout"),
        ({"max_concurrency": 0}, ValueError, "max_concurrency"),
        ({"max_concurrency": 2.0}, TypeError, "max_concurrency"),
    ],
)
def test_bad_limits_are_rejected(kwargs: dict[str, Any], error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        ScorerConfig(constant_scorer(), **kwargs)


def test_config_needs_a_scorer() -> None:
    with pytest.raises(TypeError, match="Scorer"):
        ScorerConfig("hallucination")  # type: ignore[arg-type]


def test_a_rate_is_kept_and_shown() -> None:
    b = ScorerConfig(constant_scorer(), 0.25)
    assert b.rate == 0.25
    assert repr(b) == "ScorerConfig('constant', sampling=0.25)"
