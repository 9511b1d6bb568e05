"""EvalResult.label_quality: the judge-quality rows livescore eval prints, from a notebook."""

from __future__ import annotations

import pytest

from livescore import create_scorer
from livescore.evals import run_evals_sync

# Hallucinated answers (label 1) are the ones with "WRONG" in them; their length says little.
DATA = [
    {"id": f"item-{i}", "input": "q", "output": ("WRONG " if i % 2 else "right ") + "x" * (i % 7)}
    for i in range(40)
]
LABELS: list[int | None] = [i % 2 for i in range(40)]


def _flags_wrong():  # type: ignore[no-untyped-def]
    return create_scorer(
        id="flags-wrong",
        description="1 when the answer says WRONG",
        generate_score=lambda ctx: float("WRONG" in ctx.output_text),
    )


def _says_right():  # type: ignore[no-untyped-def]
    return create_scorer(
        id="says-right",
        description="1 when the answer says right (higher is better)",
        generate_score=lambda ctx: float("right" in ctx.output_text),
    )


def test_each_scorer_against_the_label_then_the_length_baseline() -> None:
    result = run_evals_sync(DATA, [_flags_wrong(), _says_right()])
    quality = result.label_quality(
        LABELS, label="hallucinated", scorers={"flags-wrong": False, "says-right": True}
    )
    assert quality.label == "hallucinated"
    assert [row.name for row in quality.rows] == [
        "flags-wrong",
        "says-right",
        "length-only baseline",
    ]
    flags, right, baseline = quality.rows
    assert flags.quality.accuracy == 1.0
    assert flags.rule == "score ≥ 0.5"
    assert right.quality.accuracy == 1.0  # a low score of a higher-is-better scorer predicts it
    assert right.rule == "score ≤ 0.5"
    assert flags.coverage == "40/40 labelled items scored"
    assert flags.calls_per_item == 0.0
    assert flags.split is not None
    assert flags.split.held_out.accuracy == 1.0
    assert baseline.rule.startswith("output ≥ ")
    assert baseline.quality.accuracy is not None
    assert baseline.quality.accuracy < 1.0
    assert quality.notes == []


def test_unlabelled_items_and_unscored_scorers() -> None:
    result = run_evals_sync(DATA, [_flags_wrong()])
    nothing = result.label_quality(
        [None] * 40, label="hallucinated", scorers={"flags-wrong": False}
    )
    assert (nothing.rows, nothing.notes) == ([], [])
    missing = result.label_quality(LABELS, label="hallucinated", scorers={"other": False})
    assert missing.rows == []
    assert missing.notes == [
        "other: no item labelled 'hallucinated' was scored, so no quality figures"
    ]


def test_a_threshold_moves_the_rule() -> None:
    result = run_evals_sync(DATA, [_flags_wrong()])
    quality = result.label_quality(
        LABELS, label="hallucinated", scorers={"flags-wrong": False}, threshold=0.9
    )
    assert quality.rows[0].rule == "score ≥ 0.9"
    assert quality.rows[0].quality.threshold == pytest.approx(0.9)


def test_totals_only_keep_what_the_figures_read_of_the_labelled_items() -> None:
    # keep_items=False with labels: no item is kept, yet the quality rows and a fitted
    # calibration are those of the run that kept every item.
    from livescore.evals import fit_calibration

    scorers = [_flags_wrong(), _says_right()]
    directions = {"flags-wrong": False, "says-right": True}
    half = LABELS[:30] + [None] * 10  # the last ten items are not labelled
    kept = run_evals_sync(DATA, scorers, concurrency=4)
    totals = run_evals_sync(DATA, scorers, concurrency=4, keep_items=False, labels=half)
    assert totals.items == []
    assert [it.index for it in totals.labelled] == list(range(30))
    assert totals.labelled[0].scores["flags-wrong"].score == 0.0
    by_kept = kept.label_quality(half, label="hallucinated", scorers=directions)
    by_totals = totals.label_quality(half, label="hallucinated", scorers=directions)
    assert by_totals == by_kept
    assert by_totals.rows[0].coverage == "30/30 labelled items scored"
    fitted = [
        fit_calibration(result, half, label="hallucinated", higher_is_better=directions)
        for result in (kept, totals)
    ]
    assert [e.threshold for e in fitted[1].entries] == [e.threshold for e in fitted[0].entries]
    assert [e.held_out for e in fitted[1].entries] == [e.held_out for e in fitted[0].entries]
