"""Judge-quality figures on labelled data: accuracy, precision, recall, F1 and AUROC.

Used by ``livescore eval`` on the hallucination data (``hallucinated`` 0/1 labels): the
positive class is "hallucinated", a score at or above the threshold predicts it, and AUROC
measures how well the score ranks hallucinated answers above faithful ones whatever the
threshold. AUROC is the Mann-Whitney rank statistic (ties count one half), so no
scikit-learn is needed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ("BinaryQuality", "auroc", "binary_quality")


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
