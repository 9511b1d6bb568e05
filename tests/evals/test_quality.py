"""Judge-quality figures: AUROC by rank statistic, thresholded classification, Cohen's κ and
the threshold chosen on one half of the items and judged on the other."""

from __future__ import annotations

import itertools

import pytest

from livescore.evals import binary_quality, cohen_kappa, split_threshold
from livescore.evals._quality import auroc


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


def test_cohen_kappa_hand_checked() -> None:
    # 6 pairs, 4 agree: observed 2/3; both raters say 1 half the time: chance 1/2.
    # κ = (2/3 - 1/2) / (1 - 1/2) = 1/3.
    assert cohen_kappa([1, 1, 0, 0, 1, 0], [1, 0, 0, 0, 1, 1]) == pytest.approx(1 / 3)
    assert cohen_kappa([1, 0, 1, 0], [1, 0, 1, 0]) == 1.0
    assert cohen_kappa([1, 0, 1, 0], [0, 1, 0, 1]) == -1.0
    # Always predicting the majority class agrees often and means nothing: κ 0.
    assert cohen_kappa([1, 0, 0, 0], [0, 0, 0, 0]) == 0.0
    assert cohen_kappa([1, 1], [1, 1]) is None  # chance agreement is already total


def test_binary_quality_carries_kappa_base_rate_and_the_confusion_matrix() -> None:
    labels = [1, 1, 1, 0, 0, 0, 0, 0]
    scores = [0.9, 0.8, 0.2, 0.7, 0.1, 0.1, 0.3, 0.4]
    q = binary_quality(labels, scores, threshold=0.5)
    assert (q.true_positives, q.false_positives, q.false_negatives, q.true_negatives) == (
        2,
        1,
        1,
        4,
    )
    assert q.base_rate == 3 / 8
    assert q.balanced_accuracy == pytest.approx((2 / 3 + 4 / 5) / 2)
    predictions = [int(x >= 0.5) for x in scores]
    assert q.kappa == pytest.approx(cohen_kappa(labels, predictions))
    assert q.confusion() == "TP 2 · FP 1 · FN 1 · TN 4"


def test_split_threshold_is_chosen_on_one_half_and_reported_on_the_other() -> None:
    keys = [f"item-{i}" for i in range(40)]
    labels = [i % 2 for i in range(40)]
    # Hallucinated items score 0.6-0.8, faithful ones 0.3-0.5: the best cut is near 0.55,
    # not the default 0.5, which calls the faithful 0.5s hallucinated.
    scores = [0.6 + 0.1 * (i % 3) if i % 2 else 0.3 + 0.1 * (i % 3) for i in range(40)]
    split = split_threshold(labels, scores, keys=keys)
    assert split is not None
    assert 0.5 < split.threshold < 0.6
    assert split.chosen_on.n == 20
    assert split.held_out.n == 20
    assert split.held_out.accuracy == 1.0
    # The same split on every call, and the keys decide it, not the order of the items.
    again = split_threshold(labels[::-1], scores[::-1], keys=keys[::-1])
    assert again is not None
    assert (again.threshold, again.held_out) == (split.threshold, split.held_out)


def test_split_threshold_is_judged_on_items_it_was_not_chosen_on() -> None:
    # Scores that carry no signal: the chosen half can be fitted, the other half shows it.
    keys = [f"k{i}" for i in range(200)]
    labels = [(i * 7919) % 2 for i in range(200)]
    scores = [((i * 104729) % 1000) / 1000 for i in range(200)]
    split = split_threshold(labels, scores, keys=keys)
    assert split is not None
    assert split.chosen_on.balanced_accuracy is not None
    assert split.held_out.balanced_accuracy is not None
    assert split.chosen_on.balanced_accuracy > split.held_out.balanced_accuracy


def test_split_threshold_needs_both_classes_in_each_half() -> None:
    assert split_threshold([1, 1, 1, 1], [0.1, 0.2, 0.3, 0.4]) is None
    with pytest.raises(ValueError, match="2 labels but 3 scores"):
        split_threshold([0, 1], [0.1, 0.2, 0.3])
