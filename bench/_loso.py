"""Leave-one-set-out choice of a judge prompt, from per-item cells (no judge needed).

For each labelled set in turn, the candidate prompt and its threshold are chosen on the
*other* sets and reported on the one left out, so no figure in a row was used to make the
choice it reports. A candidate's merit on the sets it is chosen on is the mean, over those
sets, of its AUROC (how well its scores rank hallucinated above grounded items, whatever the
threshold) and of its held-out balanced accuracy (a threshold chosen on half of a set's items,
judged on the other half): accuracy at a fixed threshold alone never decides. Candidates
within :data:`TIE` of the best merit are tied, and the one with fewer judge tokens per item
wins. The threshold shipped with the chosen candidate is the one with the best balanced
accuracy on the pooled items of the sets it was chosen on.

A cell is a list of items ``{"id", "label" (1 = hallucinated), "score" (None: not scored),
"tokens"}``, keyed by ``(set, candidate)``.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Mapping, Sequence
from statistics import fmean
from typing import Any

from livescore.evals import binary_quality, split_threshold
from livescore.evals._quality import auroc

__all__ = ("TIE", "choose", "fit_threshold", "loso_table", "set_figures")

# Two candidates whose merits differ by less than this are tied (60 items a set: one item
# moves a balanced accuracy by about 0.017, so a smaller gap says nothing).
TIE = 0.01

Cell = Sequence[Mapping[str, Any]]


def _scored(cell: Cell) -> tuple[list[int], list[float], list[str]]:
    rows = [it for it in cell if it.get("score") is not None]
    return (
        [int(it["label"]) for it in rows],
        [float(it["score"]) for it in rows],
        [str(it["id"]) for it in rows],
    )


def fit_threshold(labels: Sequence[int], scores: Sequence[float], default: float = 0.5) -> float:
    """The threshold with the best balanced accuracy on these items (a score at or above it
    predicts hallucinated), among the midpoints between consecutive distinct scores; ties:
    the one nearest ``default``."""
    distinct = sorted(set(scores))
    if not distinct:
        return default
    candidates = [(a + b) / 2 for a, b in itertools.pairwise(distinct)]
    candidates += [distinct[0], distinct[-1] + 1.0]

    def merit(threshold: float) -> tuple[float, float]:
        quality = binary_quality(labels, scores, threshold=threshold)
        return (quality.balanced_accuracy or 0.0, -abs(threshold - default))

    return max(candidates, key=merit)


def set_figures(cell: Cell, threshold: float = 0.5) -> dict[str, Any]:
    """One candidate on one set: AUROC, balanced accuracy and F1 at ``threshold``, the
    held-out balanced accuracy (threshold chosen on half the items), tokens per item."""
    labels, scores, keys = _scored(cell)
    at = binary_quality(labels, scores, threshold=threshold)
    split = split_threshold(labels, scores, keys=keys, default=threshold)
    return {
        "n": len(cell),
        "scored": len(labels),
        "auroc": auroc(labels, scores),
        "threshold": threshold,
        "balanced_accuracy": at.balanced_accuracy,
        "f1": at.f1,
        "split_half_balanced_accuracy": (
            None if split is None else split.held_out.balanced_accuracy
        ),
        "tokens_per_item": fmean(int(it.get("tokens") or 0) for it in cell) if cell else None,
    }


def _merit(figures: Sequence[Mapping[str, Any]]) -> float | None:
    parts = [f[key] for f in figures for key in ("auroc", "split_half_balanced_accuracy")]
    if any(p is None for p in parts):
        return None
    return fmean(float(p) for p in parts)


def choose(
    cells: Mapping[tuple[str, str], Cell], sets: Sequence[str], candidates: Sequence[str]
) -> dict[str, Any] | None:
    """The candidate chosen on ``sets`` (each candidate needs a cell on every one of them),
    its threshold, and every candidate's merit; ``None`` when no candidate has them all."""
    merits: dict[str, dict[str, Any]] = {}
    for candidate in candidates:
        if not sets or any((s, candidate) not in cells for s in sets):
            continue
        per_set = [set_figures(cells[s, candidate]) for s in sets]
        merit = _merit(per_set)
        if merit is None:
            continue
        merits[candidate] = {
            "merit": merit,
            "mean_auroc": fmean(float(f["auroc"]) for f in per_set),
            "mean_split_half_balanced_accuracy": fmean(
                float(f["split_half_balanced_accuracy"]) for f in per_set
            ),
            "tokens_per_item": fmean(float(f["tokens_per_item"] or 0.0) for f in per_set),
        }
    if not merits:
        return None
    best = max(m["merit"] for m in merits.values())
    tied = [c for c in candidates if c in merits and best - merits[c]["merit"] < TIE]
    chosen = min(tied, key=lambda c: (merits[c]["tokens_per_item"], candidates.index(c)))
    labels: list[int] = []
    scores: list[float] = []
    for s in sets:
        set_labels, set_scores, _ = _scored(cells[s, chosen])
        labels += set_labels
        scores += set_scores
    return {
        "chosen": chosen,
        "threshold": round(fit_threshold(labels, scores), 4),
        "tied": tied,
        "merits": merits,
    }


def loso_table(
    cells: Mapping[tuple[str, str], Cell],
    shipped_sets: Sequence[str],
    held_out_sets: Sequence[str],
    candidates: Sequence[str],
    partial: Collection[tuple[str, str]] = (),
) -> dict[str, Any]:
    """The leave-one-set-out rows over ``shipped_sets``, then each of ``held_out_sets``
    (never used to choose) with the choice made on all the shipped sets and every
    candidate's figures on it at that candidate's threshold fitted on the shipped sets;
    ``figures``: every cell's own figures (threshold 0.5), set by set.

    A choice is made only among every candidate: a row, or the default, that lacks a
    candidate's cell on a set it is chosen on says which cells are missing instead of
    figures (a choice among the candidates that happen to have cells would be no choice).
    Cells in ``partial`` (stopped part way) count as missing where a choice is made, and are
    reported on as they are where they are the set reported on."""

    def missing(sets: Sequence[str]) -> list[str]:
        return [f"{s} · {c}" for s in sets for c in candidates if (s, c) not in cells]

    def unfinished(sets: Sequence[str]) -> list[str]:
        return [
            f"{s} · {c}"
            for s in sets
            for c in candidates
            if (s, c) not in cells or (s, c) in partial
        ]

    rows: list[dict[str, Any]] = []
    for left_out in shipped_sets:
        others = [s for s in shipped_sets if s != left_out]
        choice = None if unfinished(others) else choose(cells, others, candidates)
        row: dict[str, Any] = {"left_out": left_out, "chosen_on": others}
        if choice is None or (left_out, choice["chosen"]) not in cells:
            row["missing_cells"] = [*unfinished(others), *missing([left_out])]
            rows.append(row)
            continue
        report = set_figures(cells[left_out, choice["chosen"]], choice["threshold"])
        row.update(
            chosen=choice["chosen"],
            threshold=choice["threshold"],
            tied=choice["tied"],
            merits=choice["merits"],
            **{k: v for k, v in report.items() if k != "threshold"},
        )
        rows.append(row)
    final = None if unfinished(shipped_sets) else choose(cells, shipped_sets, candidates)
    held_out: list[dict[str, Any]] = []
    for held in held_out_sets:
        entry: dict[str, Any] = {"set": held, "chosen_on": list(shipped_sets)}
        if final is not None:
            entry["chosen"] = final["chosen"]
            entry["threshold"] = final["threshold"]
        entry["candidates"] = {}
        for candidate in candidates:
            if (held, candidate) not in cells:
                continue
            finished = all((s, candidate) not in partial for s in shipped_sets)
            fitted = choose(cells, shipped_sets, [candidate]) if finished else None
            threshold = fitted["threshold"] if fitted is not None else 0.5
            entry["candidates"][candidate] = {
                **set_figures(cells[held, candidate], threshold),
                "threshold_from": "shipped sets" if fitted is not None else "fixed 0.5",
            }
        entry["missing_cells"] = missing([held])
        held_out.append(entry)
    figures = [
        {"set": s, "candidate": c, **set_figures(cells[s, c])}
        for s in (*shipped_sets, *held_out_sets)
        for c in candidates
        if (s, c) in cells
    ]
    return {
        "candidates": list(candidates),
        "tie": TIE,
        "figures": figures,
        "rows": rows,
        "default": None if final is None else {**final, "chosen_on": list(shipped_sets)},
        "held_out": held_out,
    }
