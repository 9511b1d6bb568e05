"""Fitting a :class:`~livescore.scoring.Calibration` on labelled items: ``fit_calibration``.

Per scorer and judge model, the labelled items it scored are split in two halves exactly as
``livescore eval --label`` splits them (:func:`~livescore.evals.split_threshold`: by a
CRC-32 of the item ids). On the first half the threshold with the best balanced accuracy is
chosen and, where the score takes more than two values, the label's probability is fitted
as a monotone function of the score (isotonic regression, by pool-adjacent-violators); the
second half, which the fit never saw, gives the figures the file keeps.

Isotonic rather than Platt: a judge's score is not a log-odds (a share of claims, a token
probability pushed up by the prompt), and isotonic regression assumes only that a higher
score never means a lower probability of the defect. It is a few lines with no dependency
(livescore ships without numpy or scikit-learn), and it is the map scikit-learn's
``IsotonicRegression`` would give, interpolated linearly between its steps.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from livescore.evals._quality import BinaryQuality, split_halves, split_threshold
from livescore.scoring import (
    Calibration,
    CalibrationEntry,
    CalibrationError,
    CalibrationSpec,
    DefectWhen,
    Scorer,
)

if TYPE_CHECKING:
    from livescore.evals._result import EvalResult

__all__ = ("calibrate_scorers", "fit_calibration", "isotonic_fit")


def isotonic_fit(
    scores: Sequence[float], labels: Sequence[int | bool]
) -> tuple[tuple[float, float], ...]:
    """The non-decreasing fit of ``labels`` (0/1) on ``scores``, as ``(score, value)`` points.

    Pool-adjacent-violators: items sorted by score (equal scores pooled), neighbouring
    blocks merged while an earlier block's mean exceeds a later one's. Each block gives a
    point at its lowest and at its highest score, with its mean; interpolate between points.

    Example:
        >>> isotonic_fit([0.1, 0.2, 0.3, 0.4], [0, 1, 0, 1])
        ((0.1, 0.0), (0.2, 0.5), (0.3, 0.5), (0.4, 1.0))
    """
    if len(scores) != len(labels):
        raise ValueError(f"{len(scores)} scores but {len(labels)} labels")
    # Blocks of [sum of labels, count, lowest score, highest score], in score order.
    blocks: list[list[float]] = []
    for score, label in sorted(zip(scores, (float(bool(y)) for y in labels), strict=True)):
        if blocks and blocks[-1][3] == score:
            blocks[-1][0] += label
            blocks[-1][1] += 1
        else:
            blocks.append([label, 1.0, score, score])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            last = blocks.pop()
            blocks[-1][0] += last[0]
            blocks[-1][1] += last[1]
            blocks[-1][3] = last[3]
    points: list[tuple[float, float]] = []
    for total, count, low, high in blocks:
        points.append((low, total / count))
        if high != low:
            points.append((high, total / count))
    return tuple(points)


def fit_calibration(
    result: EvalResult,
    labels: Sequence[int | bool | None],
    *,
    label: str,
    scorers: Sequence[str] | None = None,
    higher_is_better: Mapping[str, bool] | None = None,
) -> Calibration:
    """Fit each scorer's threshold (and probability map) on half the labelled items.

    Args:
        result: What :func:`~livescore.evals.run_evals` returned on the labelled data.
        labels: Each item's 0/1 label, by item index (``None``: not labelled); a
            :class:`~livescore.evals.Dataset`'s ``labels_for(label)``.
        label: The label's name (the 0/1 field), the calibrated label of a defect.
        scorers: The scorer ids to calibrate; default: every scorer of ``result``.
        higher_is_better: Each scorer's direction: where higher is better (faithfulness) a
            low score predicts the defect. A prebuilt scorer's id needs none; others
            default to higher is better.

    Returns:
        One entry per scorer and judge model that could be fitted: at least one labelled
        item of each class in each half. Scorers left out are absent.

    Raises:
        CalibrationError: No scorer could be fitted (one line saying why).

    Example:
        >>> from livescore import create_scorer
        >>> from livescore.evals import run_evals_sync
        >>> length = create_scorer(id="length", description="Characters",
        ...     generate_score=lambda ctx: float(len(ctx.output_text)))
        >>> data = [{"id": str(i), "input": "q", "output": "x" * (i % 10)} for i in range(40)]
        >>> long = [int(i % 10 >= 6) for i in range(40)]
        >>> calibration = fit_calibration(run_evals_sync(data, [length]), long, label="long",
        ...                               higher_is_better={"length": False})
        >>> entry = calibration.entries[0]
        >>> entry.threshold, entry.defect_when, entry.held_out["accuracy"]
        (5.5, 'high', 1.0)
    """
    from livescore.evals._compare import _directions
    from livescore.evals._result import labelled_items

    wanted = list(scorers) if scorers is not None else list(result.scores)
    directions = _directions(wanted, higher_is_better or {})
    entries: list[CalibrationEntry] = []
    reasons: list[str] = []
    for sid in wanted:
        groups: dict[str | None, list[tuple[int, float, str]]] = {}
        for item in labelled_items(result):
            scored = item.scores.get(sid)
            if item.index >= len(labels):
                continue
            y = labels[item.index]
            if scored is None or scored.score is None or y is None:
                continue
            groups.setdefault(scored.judge_model, []).append((int(bool(y)), scored.score, item.key))
        if not groups:
            reasons.append(f"{sid}: no labelled item was scored")
            continue
        for judge_model, rows in groups.items():
            defect_when: DefectWhen = "low" if directions[sid] else "high"
            entry = _fit_one(sid, judge_model, rows, defect_when)
            if entry is None:
                reasons.append(
                    f"{sid}: {len(rows)} labelled item(s) leave a half without one of the "
                    "classes (label more items of each)"
                )
            else:
                entries.append(entry)
    if not entries:
        raise CalibrationError("nothing to calibrate: " + "; ".join(reasons))
    created = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    return Calibration(label=label, entries=tuple(entries), created=created)


def _fit_one(
    scorer_id: str,
    judge_model: str | None,
    rows: Sequence[tuple[int, float, str]],
    defect_when: DefectWhen,
) -> CalibrationEntry | None:
    labels = [r[0] for r in rows]
    # Ranked so that a higher value predicts the defect, whichever the scorer's direction.
    sign = 1.0 if defect_when == "high" else -1.0
    ranked = [sign * r[1] for r in rows]
    fit, rest = split_halves(len(rows), [r[2] for r in rows])
    if any(len({labels[i] for i in half}) < 2 for half in (fit, rest)):
        return None
    split = split_threshold(labels, ranked, keys=[r[2] for r in rows], default=sign * 0.5)
    assert split is not None  # both halves hold both classes
    threshold = sign * split.threshold
    fit_scores = [ranked[i] for i in fit]
    points: tuple[tuple[float, float], ...] = ()
    if len(set(fit_scores)) > 2:
        fitted = isotonic_fit(fit_scores, [labels[i] for i in fit])
        # Back to the score's own scale, ascending.
        points = tuple(sorted((sign * x, p) for x, p in fitted))
    entry = CalibrationEntry(
        scorer_id=scorer_id,
        judge_model=judge_model,
        threshold=threshold,
        defect_when=defect_when,
        probability_map=points,
        fitted_on=len(fit),
    )
    held_labels = [labels[i] for i in rest]
    held_scores = [rows[i][1] for i in rest]
    figures = _figures(split.held_out)
    if points:
        probabilities = [entry.probability(s) or 0.0 for s in held_scores]
        base_rate = sum(labels[i] for i in fit) / len(fit)
        figures["brier"] = _brier(probabilities, held_labels)
        figures["brier_base_rate"] = _brier([base_rate] * len(rest), held_labels)
    return dataclasses.replace(entry, held_out=figures)


def _figures(q: BinaryQuality) -> dict[str, float | int | None]:
    return {
        "n": q.n,
        "positives": q.positives,
        "accuracy": q.accuracy,
        "balanced_accuracy": q.balanced_accuracy,
        "precision": q.precision,
        "recall": q.recall,
        "f1": q.f1,
        "auroc": q.auroc,
        "kappa": q.kappa,
    }


def _brier(probabilities: Sequence[float], labels: Sequence[int]) -> float:
    return sum((p - y) ** 2 for p, y in zip(probabilities, labels, strict=True)) / len(labels)


def calibrate_scorers(
    scorers: Sequence[Scorer], calibration: CalibrationSpec
) -> tuple[list[Scorer], list[str]]:
    """Each scorer ``calibration`` has an entry for, calibrated with it; the others as they
    are (what ``run_evals(calibration=...)`` scores with).

    A scorer the calibration does not name keeps its own labels: a list mixes code and
    judge scorers, and a calibration fitted on one label calibrates the judge scorers
    measured against it.

    Args:
        scorers: The scorers.
        calibration: A :class:`~livescore.scoring.Calibration` or the path of its file.

    Returns:
        The scorers, calibrated where the calibration names them, and the ids of those it
        does not name.

    Raises:
        CalibrationError: The file cannot be read, an entry was fitted for another judge
            model, or the calibration names none of the scorers.

    Example:
        >>> from livescore import create_scorer
        >>> from livescore.scoring import Calibration, CalibrationEntry
        >>> calibration = Calibration("long", (
        ...     CalibrationEntry("length", None, 10.0, "high"),), created="")
        >>> length = create_scorer(id="length", description="Characters",
        ...     generate_score=lambda ctx: float(len(ctx.output_text)))
        >>> calibrated, left = calibrate_scorers([length], calibration)
        >>> calibrated[0].run_sync({"input": "hi", "output": "a long answer"}).label, left
        ('long', [])
    """
    loaded = calibration if isinstance(calibration, Calibration) else Calibration.load(calibration)
    named = {entry.scorer_id for entry in loaded.entries}
    out = [s.with_calibration(loaded) if s.id in named else s for s in scorers]
    left = [s.id for s in scorers if s.id not in named]
    if scorers and len(left) == len(scorers):
        raise CalibrationError(
            f"it calibrates {', '.join(sorted(named))}, none of the scorers here "
            f"({', '.join(left)})"
        )
    return out, left
