"""``livescore worker --calibration FILE``: the worker's scores carry the calibration's labels
and id; the scorers it has no entry for keep theirs (said once at start-up); a file fitted
for another judge model, or one that cannot be read, stops the worker before it connects."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from fleet_support import Fleet

from livescore import Run
from livescore.cli import main
from livescore.live import LiveDispatcher
from livescore.scoring import Calibration, CalibrationEntry, create_scorer


def keyword_calibration(tmp_path: Path, judge_model: str | None = None) -> Path:
    # Keyword coverage below 0.5 marks the defect "uncovered".
    calibration = Calibration(
        "uncovered",
        (CalibrationEntry("keyword-coverage", judge_model, 0.5, "low"),),
        created="2026-12-06T04:00:00+00:00",
    )
    return calibration.save(tmp_path / f"calibration-{judge_model}.json")


def test_worker_labels_the_scores_as_the_calibration_says(fleet: Fleet, tmp_path: Path) -> None:
    path = keyword_calibration(tmp_path)
    calibration = Calibration.load(path)
    worker = fleet.start_worker("--calibration", str(path))
    wanted = [
        create_scorer(id=sid, description=sid, generate_score=lambda ctx: 1.0)
        for sid in ("keyword-coverage", "raiser")
    ]
    missed = Run(input="React hooks tutorial", output="Nothing to see.")
    covered = Run(input="React hooks", output="Hooks in React.")
    with LiveDispatcher(wanted, broker=fleet.url, register_atexit=False) as dispatcher:
        assert dispatcher.submit(missed)
        assert dispatcher.submit(covered)
        assert dispatcher.flush(timeout=30)
    runs = (missed.run_id, covered.run_id)
    fleet.wait_for_pairs({(r, s.id) for r in runs for s in wanted}, timeout=120)

    spans = {
        (s.attributes["livescore.run.id"], s.attributes["livescore.scorer.id"]): s.attributes
        for s in fleet.score_spans()
    }
    assert spans[(missed.run_id, "keyword-coverage")]["gen_ai.evaluation.score.label"] == (
        "uncovered"
    )
    assert spans[(covered.run_id, "keyword-coverage")]["gen_ai.evaluation.score.label"] == (
        "not_uncovered"
    )
    for run_id in runs:
        assert spans[(run_id, "keyword-coverage")]["livescore.calibration"] == calibration.id
        assert "livescore.calibration" not in spans[(run_id, "raiser")]
    log = worker.output()
    assert log.count("has no entry for") == 1, log
    assert "has no entry for turns, crasher, raiser" in " ".join(log.split())


@pytest.mark.parametrize(
    ("judge_model", "problem"),
    [("gpt-x", "was fitted for judge model 'gpt-x', not None"), ("missing", "cannot read it")],
)
def test_worker_refuses_a_calibration_that_does_not_fit(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    judge_model: str,
    problem: str,
) -> None:
    monkeypatch.delitem(sys.modules, "fleet_scorers", raising=False)
    path = (
        keyword_calibration(tmp_path, judge_model)
        if judge_model != "missing"
        else tmp_path / "missing.json"
    )

    broker = ["--broker", "redis://127.0.0.1:9/0"]
    code = main(["worker", "fleet_scorers:scorers", *broker, "--calibration", str(path)])

    err = capsys.readouterr().err
    assert code == 2
    assert err.count("error:") == 1, err
    assert problem in " ".join(err.split())
