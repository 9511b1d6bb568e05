"""run_evals(calibration=...): a notebook user fits a calibration on labelled data, then
scores new data with it (the Calibration or its file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from livescore import create_scorer
from livescore.evals import calibrate_scorers, fit_calibration, run_evals_sync
from livescore.scoring import CalibrationError


def test_run_evals_labels_by_a_calibration_it_is_given(tmp_path: Path) -> None:
    # A notebook user: fit on labelled data, then score new data with the calibration
    # (or its file); a scorer it does not name keeps its own labels.
    length = create_scorer(
        id="length",
        description="Characters",
        generate_score=lambda ctx: float(len(ctx.output_text)),
    )
    other = create_scorer(
        id="other", description="Always 1", generate_score=lambda ctx: 1.0, label=lambda s: "one"
    )
    data = [{"id": str(i), "input": "q", "output": "x" * (i % 10)} for i in range(40)]
    long = [int(i % 10 >= 6) for i in range(40)]
    calibration = fit_calibration(
        run_evals_sync(data, [length]), long, label="long", higher_is_better={"length": False}
    )
    path = tmp_path / "calibration.json"
    calibration.save(path)
    for given in (calibration, path):
        result = run_evals_sync(
            [{"input": "q", "output": "x" * 9}, {"input": "q", "output": "x"}],
            [length, other],
            calibration=given,
        )
        assert [it.scores["length"].label for it in result.items] == ["long", "not_long"]
        assert [it.scores["other"].label for it in result.items] == ["one", "one"]
    with pytest.raises(CalibrationError, match="none of the scorers here"):
        run_evals_sync(data[:1], [other], calibration=calibration)


def test_calibrate_scorers_names_the_scorers_it_left_alone() -> None:
    length = create_scorer(
        id="length",
        description="Characters",
        generate_score=lambda ctx: float(len(ctx.output_text)),
    )
    other = create_scorer(id="other", description="Always 1", generate_score=lambda ctx: 1.0)
    data = [{"id": str(i), "input": "q", "output": "x" * (i % 10)} for i in range(40)]
    calibration = fit_calibration(
        run_evals_sync(data, [length]),
        [int(i % 10 >= 6) for i in range(40)],
        label="long",
        higher_is_better={"length": False},
    )
    calibrated, left = calibrate_scorers([length, other], calibration)
    assert left == ["other"]
    assert calibrated[1] is other
    assert calibrated[0] is not length
