"""Scores against 0/1 labels: :meth:`EvalResult.label_quality
<livescore.evals.EvalResult.label_quality>`, the judge-quality rows of ``livescore eval``."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from livescore.evals._quality import binary_quality, split_threshold
from livescore.evals._report import QualityRow
from livescore.evals._result import labelled_items

if TYPE_CHECKING:
    from livescore.evals._result import EvalResult, LabelledItem

__all__ = ("LabelQuality", "label_quality")


@dataclass(frozen=True, slots=True)
class LabelQuality:
    """The scorers measured against one 0/1 label.

    Attributes:
        label: The label's name.
        rows: One row per scorer measured (threshold figures, and a threshold chosen on half
            the items with its figures on the other half), then the length-only baseline;
            empty when no item is labelled.
        notes: One line per scorer that scored no labelled item.
    """

    label: str
    rows: list[QualityRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def label_quality(
    result: EvalResult,
    labels: Sequence[int | None],
    *,
    label: str,
    scorers: Mapping[str, bool],
    threshold: float = 0.5,
) -> LabelQuality:
    """See :meth:`EvalResult.label_quality <livescore.evals.EvalResult.label_quality>`."""
    quality = LabelQuality(label)
    labelled = [
        it
        for it in labelled_items(result)
        if it.index < len(labels) and labels[it.index] is not None
    ]
    if not labelled:
        return quality
    for sid, higher_is_better in scorers.items():
        row = _row(labelled, labels, sid, higher_is_better, label, threshold)
        if row is None:
            quality.notes.append(
                f"{sid}: no item labelled '{label}' was scored, so no quality figures"
            )
        else:
            quality.rows.append(row)
    if quality.rows:
        # HaluEval's hallucinated answers are longer: a judge must beat output length alone.
        truth = [int(labels[it.index] or 0) for it in labelled]
        lengths = [float(it.output_chars) for it in labelled]
        median = sorted(lengths)[len(lengths) // 2]
        quality.rows.append(
            QualityRow(
                name="length-only baseline",
                quality=binary_quality(truth, lengths, threshold=median),
                coverage=f"predicts {label} when output ≥ {median:.0f} chars (median)",
                label=label,
                rule=f"output ≥ {median:.0f} chars",
            )
        )
    return quality


def _row(
    labelled: Sequence[LabelledItem],
    labels: Sequence[int | None],
    sid: str,
    flip: bool,
    label: str,
    threshold: float,
) -> QualityRow | None:
    pairs = [
        (int(labels[it.index] or 0), it.scores[sid], it)
        for it in labelled
        if sid in it.scores and it.scores[sid].score is not None
    ]
    if not pairs:
        return None
    truth = [p[0] for p in pairs]
    scores = [float(p[1].score or 0.0) for p in pairs]
    calls = sum(p[1].usage.calls for p in pairs)
    tokens = sum(p[1].usage.total_tokens for p in pairs)
    if flip:
        # A high score is good: the defect is predicted by a low one. Ranking by the
        # negated score makes "at or below the threshold" the positive prediction.
        quality = binary_quality(truth, [-x for x in scores], threshold=-threshold)
        quality = dataclasses.replace(quality, threshold=threshold)
    else:
        quality = binary_quality(truth, scores, threshold=threshold)
    ranked = [-x for x in scores] if flip else scores
    keys = [it.key for _, _, it in pairs]
    split = split_threshold(truth, ranked, keys=keys, default=-threshold if flip else threshold)
    if split is not None and flip:
        split = dataclasses.replace(split, threshold=-split.threshold)
    return QualityRow(
        name=sid,
        quality=quality,
        calls_per_item=calls / len(pairs),
        tokens_per_item=tokens / len(pairs),
        coverage=f"{len(pairs)}/{len(labelled)} labelled items scored",
        label=label,
        rule=f"score {'≤' if flip else '≥'} {threshold:g}",
        split=split,
    )
