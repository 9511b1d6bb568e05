"""``livescore collect --calibration FILE``: the scores of the runs it is sent carry the
calibration's labels and id; a file that does not fit is refused at start-up, on one line."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from otlp_receiver import OTLPTestReceiver

from livescore.cli import main
from livescore.scoring import Calibration, CalibrationEntry

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "traces"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "collect"))
from _collect_process import SCORERS, start_collect, stop
from _trace_support import genai_tool_run


def calibration_file(tmp_path: Path, judge_model: str | None = None) -> Path:
    # "grounded" scores 1.0 when the tool result backs the answer: at or above 0.5, "backed".
    calibration = Calibration(
        "backed",
        (CalibrationEntry("grounded", judge_model, 0.5, "high"),),
        created="2026-12-06T04:00:00+00:00",
    )
    return calibration.save(tmp_path / "calibration.json")


def test_collect_labels_the_scores_as_the_calibration_says(tmp_path: Path) -> None:
    path = calibration_file(tmp_path)
    calibration = Calibration.load(path)
    with OTLPTestReceiver() as backend:
        process, url = start_collect(
            tmp_path,
            "--otlp-endpoint",
            backend.url,
            "--quiet-period",
            "0.2",
            "--calibration",
            str(path),
        )
        try:
            provider = TracerProvider()
            provider.add_span_processor(
                SimpleSpanProcessor(OTLPSpanExporter(endpoint=url + "/v1/traces"))
            )
            genai_tool_run(provider, question="Weather in Lyon?", answer="It is sunny in Lyon.")
            provider.shutdown()
        finally:
            code, err = stop(process)
        assert code == 0, err
        (score,) = [s for s in backend.spans if s.name == "evaluation grounded"]
        (event,) = backend.events()
    assert score.attributes["gen_ai.evaluation.score.value"] == 1.0
    assert score.attributes["gen_ai.evaluation.score.label"] == "backed"
    assert score.attributes["livescore.calibration"] == calibration.id
    assert score.attributes["livescore.calibration.threshold"] == 0.5
    assert event.attributes["gen_ai.evaluation.score.label"] == "backed"
    assert event.attributes["livescore.calibration"] == calibration.id


def test_a_calibration_that_does_not_fit_is_refused_on_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "collect_scorers.py").write_text(SCORERS.replace("SLEEP", "0"), encoding="utf-8")
    other_judge = calibration_file(tmp_path, judge_model="gpt-x")
    cases = [
        (["--calibration", str(other_judge)], "was fitted for judge model 'gpt-x', not None"),
        (["--calibration", str(tmp_path / "missing.json")], "missing.json: cannot read it"),
        (
            ["--calibration", str(other_judge), "--broker", "redis://127.0.0.1:1/0"],
            "--calibration: with --broker the workers score: give it to livescore worker",
        ),
    ]
    for extra, message in cases:
        assert main(["collect", "collect_scorers:scorers", "--listen", "127.0.0.1:0", *extra]) == 2
        err = capsys.readouterr().err
        assert message in " ".join(err.split())
        assert err.count("error:") == 1, err
