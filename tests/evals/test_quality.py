"""Judge-quality figures: AUROC by rank statistic, and thresholded classification."""

from __future__ import annotations

import itertools

import pytest

from livescore.evals._quality import auroc, binary_quality


def _auroc_by_pairs(labels: list[int], scores: list[float]) -> float:
    """The definition, pair by pair: P(positive outscores negative), ties count 1/2."""
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p, n in itertools.product(pos, neg))
    return wins / (len(pos) * len(neg))


def test_auroc_hand_checked_examples() -> None:
    # Perfect ranking, reversed ranking, and a case worked out by hand:
    # positives 0.35 and 0.8 against negatives 0.1 and 0.4: 0.35 beats 0.1 only, 0.8 beats
    # both: 3 wins of 4 pairs.
    assert auroc([0, 0, 1, 1], [0.1, 0.2, 0.8, 0.9]) == 1.0
    assert auroc([1, 1, 0, 0], [0.1, 0.2, 0.8, 0.9]) == 0.0
    assert auroc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]) == 0.75


def test_auroc_counts_ties_as_half() -> None:
    # Scores 0, 0.5, 0.5, 1 with labels 0, 0, 1, 1: the tied pair counts 1/2 → 3.5 / 4.
    assert auroc([0, 0, 1, 1], [0.0, 0.5, 0.5, 1.0]) == 0.875
    assert auroc([0, 1], [0.3, 0.3]) == 0.5


def test_auroc_matches_the_pairwise_definition() -> None:
    labels = [0, 1, 1, 0, 1, 0, 0, 1, 1, 0]
    scores = [0.2, 0.9, 0.4, 0.4, 0.4, 0.0, 0.7, 0.7, 1.0, 0.1]
    assert auroc(labels, scores) == pytest.approx(_auroc_by_pairs(labels, scores))


def test_auroc_is_undefined_with_one_class() -> None:
    assert auroc([1, 1], [0.1, 0.2]) is None
    assert auroc([], []) is None
    with pytest.raises(ValueError, match="2 labels but 1 scores"):
        auroc([0, 1], [0.5])


def test_binary_quality_at_threshold() -> None:
    q = binary_quality([0, 0, 1, 1], [0.0, 0.5, 0.5, 1.0], threshold=0.5)
    # predicted positive: 0.5, 0.5, 1.0 → tp 2, fp 1, tn 1, fn 0
    assert (q.true_positives, q.false_positives, q.true_negatives, q.false_negatives) == (
        2,
        1,
        1,
        0,
    )
    assert q.accuracy == 0.75
    assert q.precision == pytest.approx(2 / 3)
    assert q.recall == 1.0
    assert q.f1 == pytest.approx(0.8)
    assert q.auroc == 0.875
    assert (q.n, q.positives) == (4, 2)


def test_binary_quality_undefined_parts() -> None:
    none_predicted = binary_quality([0, 1], [0.1, 0.2], threshold=0.9)
    assert none_predicted.precision is None
    assert none_predicted.f1 is None
    assert none_predicted.recall == 0.0
    all_wrong = binary_quality([0, 1], [0.9, 0.1], threshold=0.5)
    assert all_wrong.f1 == 0.0
    assert binary_quality([], [], threshold=0.5).accuracy is None
