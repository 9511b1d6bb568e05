"""Judge-quality figures on labelled data: accuracy, precision, recall, F1, AUROC, Cohen's κ.

Used by ``livescore eval`` on the hallucination data (``hallucinated`` 0/1 labels): the
positive class is "hallucinated", a score at or above the threshold predicts it, and AUROC
measures how well the score ranks hallucinated answers above faithful ones whatever the
threshold. AUROC is the Mann-Whitney rank statistic (ties count one half), so no
scikit-learn is needed. Cohen's κ is the agreement with the labels beyond what the base
rate alone gives (0: no better than chance, 1: perfect).

:func:`split_threshold` calibrates: it picks the threshold on one half of the labelled
items and reports the figures it gives on the other half, so the threshold a team adopts
is judged on items it was not chosen on.
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = (
    "BinaryQuality",
    "SplitThreshold",
    "auroc",
    "binary_quality",
    "cohen_kappa",
    "split_threshold",
)


def auroc(labels: Sequence[int | bool], scores: Sequence[float]) -> float | None:
    """Area under the ROC curve of ``scores`` for the positive ``labels``.

    The probability that a random positive scores higher than a random negative, ties
    counting one half. ``None`` when either class is absent (the area is undefined).

    Example:
        >>> auroc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
        0.75
    """
    if len(labels) != len(scores):
        raise ValueError(f"{len(labels)} labels but {len(scores)} scores")
    positives = sum(1 for label in labels if label)
    negatives = len(labels) - positives
    if positives == 0 or negatives == 0:
        return None
    # Average ranks over ties (1-based), then U = rank sum of positives - P(P+1)/2.
    order = sorted(range(len(scores)), key=lambda i: scores[i])
    ranks = [0.0] * len(scores)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and scores[order[end + 1]] == scores[order[start]]:
            end += 1
        average = (start + end) / 2 + 1
        for k in range(start, end + 1):
            ranks[order[k]] = average
        start = end + 1
    rank_sum = sum(rank for rank, label in zip(ranks, labels, strict=True) if label)
    u = rank_sum - positives * (positives + 1) / 2
    return u / (positives * negatives)


@dataclass(frozen=True, slots=True)
class BinaryQuality:
    """How well thresholded scores predict binary labels (positive = label 1).

    Attributes:
        n: Pairs compared.
        positives: Pairs labelled positive.
        threshold: A score at or above it predicts positive.
        accuracy: Share of correct predictions.
        precision: Of the predicted positives, the share that are positive (``None`` if no
            prediction was positive).
        recall: Of the positives, the share predicted positive (``None`` without positives).
        f1: Harmonic mean of precision and recall (``None`` when either is undefined; 0 when
            both are 0).
        auroc: See :func:`auroc`.
        true_positives: Positives predicted positive.
        false_positives: Negatives predicted positive.
        true_negatives: Negatives predicted negative.
        false_negatives: Positives predicted negative.
    """

    n: int
    positives: int
    threshold: float
    accuracy: float | None
    precision: float | None
    recall: float | None
    f1: float | None
    auroc: float | None
    true_positives: int
    false_positives: int
    true_negatives: int
    false_negatives: int

    @property
    def base_rate(self) -> float | None:
        """The share of pairs labelled positive (``None`` without pairs)."""
        return self.positives / self.n if self.n else None

    @property
    def balanced_accuracy(self) -> float | None:
        """The mean of recall and specificity (``None`` without both classes)."""
        negatives = self.n - self.positives
        if not self.positives or not negatives:
            return None
        return (self.true_positives / self.positives + self.true_negatives / negatives) / 2

    @property
    def kappa(self) -> float | None:
        """Cohen's κ between the predictions and the labels (see :func:`cohen_kappa`)."""
        return _kappa(
            self.true_positives, self.false_positives, self.true_negatives, self.false_negatives
        )

    def confusion(self) -> str:
        """The confusion matrix in one line.

        Example:
            >>> binary_quality([1, 0, 1, 0], [0.9, 0.2, 0.4, 0.6], threshold=0.5).confusion()
            'TP 1 · FP 1 · FN 1 · TN 1'
        """
        return (
            f"TP {self.true_positives} · FP {self.false_positives} · "
            f"FN {self.false_negatives} · TN {self.true_negatives}"
        )


def _kappa(tp: int, fp: int, tn: int, fn: int) -> float | None:
    n = tp + fp + tn + fn
    if not n:
        return None
    observed = (tp + tn) / n
    expected = ((tp + fp) * (tp + fn) + (tn + fn) * (tn + fp)) / (n * n)
    if expected >= 1:
        return None  # one class only, predicted and labelled: agreement by construction
    return (observed - expected) / (1 - expected)


def cohen_kappa(labels: Sequence[int | bool], predictions: Sequence[int | bool]) -> float | None:
    """Cohen's κ of two binary ratings: (observed − chance agreement) / (1 − chance).

    ``None`` when chance agreement is already total (both raters give one class only).

    Example:
        >>> round(cohen_kappa([1, 1, 0, 0, 1, 0], [1, 0, 0, 0, 1, 1]), 3)
        0.333
    """
    if len(labels) != len(predictions):
        raise ValueError(f"{len(labels)} labels but {len(predictions)} predictions")
    pairs = list(zip((bool(x) for x in labels), (bool(x) for x in predictions), strict=True))
    tp = sum(1 for y, p in pairs if y and p)
    fp = sum(1 for y, p in pairs if not y and p)
    tn = sum(1 for y, p in pairs if not y and not p)
    return _kappa(tp, fp, tn, len(pairs) - tp - fp - tn)


def binary_quality(
    labels: Sequence[int | bool], scores: Sequence[float], *, threshold: float
) -> BinaryQuality:
    """Accuracy, precision, recall, F1 (at ``threshold``) and AUROC of ``scores``.

    Example:
        >>> q = binary_quality([1, 0, 1, 0], [0.9, 0.2, 0.4, 0.6], threshold=0.5)
        >>> q.accuracy, q.precision, q.recall
        (0.5, 0.5, 0.5)
    """
    if len(labels) != len(scores):
        raise ValueError(f"{len(labels)} labels but {len(scores)} scores")
    tp = fp = tn = fn = 0
    for label, score in zip(labels, scores, strict=True):
        predicted = score >= threshold
        if label and predicted:
            tp += 1
        elif label:
            fn += 1
        elif predicted:
            fp += 1
        else:
            tn += 1
    n = len(labels)
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    if precision is None or recall is None:
        f1 = None
    elif precision + recall == 0:
        f1 = 0.0
    else:
        f1 = 2 * precision * recall / (precision + recall)
    return BinaryQuality(
        n=n,
        positives=tp + fn,
        threshold=threshold,
        accuracy=(tp + tn) / n if n else None,
        precision=precision,
        recall=recall,
        f1=f1,
        auroc=auroc(labels, scores),
        true_positives=tp,
        false_positives=fp,
        true_negatives=tn,
        false_negatives=fn,
    )


@dataclass(frozen=True, slots=True)
class SplitThreshold:
    """A threshold chosen on one half of the labelled items, judged on the other half.

    Attributes:
        threshold: The threshold that gave the best balanced accuracy on the first half.
        chosen_on: The figures on the first half, at that threshold.
        held_out: The figures on the second half, at that threshold: what to expect.
    """

    threshold: float
    chosen_on: BinaryQuality
    held_out: BinaryQuality


def split_halves(n: int, keys: Sequence[str] | None = None) -> tuple[list[int], list[int]]:
    """The positions of the two halves :func:`split_threshold` uses: ordered by a CRC-32 of
    ``keys`` (the positions when not given), the first ``n // 2`` and the rest."""
    names = list(keys) if keys is not None else [str(i) for i in range(n)]
    if len(names) != n:
        raise ValueError(f"{n} labels but {len(names)} keys")
    order = sorted(range(n), key=lambda i: (zlib.crc32(names[i].encode()), i))
    return order[: n // 2], order[n // 2 :]


def split_threshold(
    labels: Sequence[int | bool],
    scores: Sequence[float],
    *,
    keys: Sequence[str] | None = None,
    default: float = 0.5,
) -> SplitThreshold | None:
    """Choose a threshold on one half of the items, report it on the other half.

    The split is deterministic: the items are ordered by a CRC-32 of their ``keys`` (item
    ids; their positions when not given) and cut in two, so the same data splits the same
    way on every run and machine. On the first half the threshold with the best balanced
    accuracy wins (ties: the one nearest ``default``), among the midpoints between
    consecutive distinct scores; the second half gets that threshold as it is.

    Returns:
        ``None`` when either half lacks a class (nothing to choose or judge with).

    Example:
        >>> split = split_threshold([0, 1] * 10, [0.2, 0.6] * 10)
        >>> split.threshold, split.held_out.accuracy
        (0.4, 1.0)
    """
    if len(labels) != len(scores):
        raise ValueError(f"{len(labels)} labels but {len(scores)} scores")
    fit, rest = split_halves(len(labels), keys)

    def both_classes(part: list[int]) -> bool:
        return len({bool(labels[i]) for i in part}) == 2

    if not both_classes(fit) or not both_classes(rest):
        return None
    fit_labels = [labels[i] for i in fit]
    fit_scores = [float(scores[i]) for i in fit]
    distinct = sorted(set(fit_scores))
    candidates = [(a + b) / 2 for a, b in itertools.pairwise(distinct)]
    candidates += [distinct[0], distinct[-1] + 1.0]  # everything positive / nothing

    def merit(threshold: float) -> tuple[float, float]:
        q = binary_quality(fit_labels, fit_scores, threshold=threshold)
        return (q.balanced_accuracy or 0.0, -abs(threshold - default))

    best = max(candidates, key=merit)
    return SplitThreshold(
        threshold=best,
        chosen_on=binary_quality(fit_labels, fit_scores, threshold=best),
        held_out=binary_quality(
            [labels[i] for i in rest], [float(scores[i]) for i in rest], threshold=best
        ),
    )
