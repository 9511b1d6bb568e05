"""livescore eval --calibrate (fit on labelled data, write the file) and --calibration (label
with it), against the OpenAI-compatible test server playing a judge biased low: its
P("no") stays under 0.5 on every hallucinated answer."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from _cli_support import write_jsonl

from livescore.cli import main
from livescore.otel import attributes as A
from livescore.scoring import Calibration
from livescore.testing import OpenAITestServer, Reply

NO_SERVER = "http://127.0.0.1:9/v1"


def biased_judge(body: dict[str, Any]) -> Reply:
    """P("no") is the number the output carries ("[p=0.31]")."""
    prompt = str(body["messages"][-1]["content"])
    found = re.search(r"\[p=([0-9.]+)\]", prompt)
    p = float(found.group(1)) if found else 0.5
    return Reply.token_probabilities({"no": p, "yes": 1 - p})


def labelled_rows(n: int, seed: int) -> list[dict[str, Any]]:
    """Half hallucinated (P 0.25–0.45), half faithful (P 0.02–0.20)."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        bad = i % 2
        p = rng.uniform(0.25, 0.45) if bad else rng.uniform(0.02, 0.20)
        rows.append(
            {
                "id": f"item-{seed}-{i}",
                "question": "Where is the office?",
                "context": "The office is in Lyon.",
                "output": f"The office is in town. [p={p:.3f}]",
                "hallucinated": bad,
            }
        )
    return rows


def eval_args(data: Path, *extra: str, model: str = "judge-a") -> list[str]:
    return [
        "eval",
        str(data),
        "--scorer",
        "hallucination",
        "--judge-mode",
        "logprob",
        "--model",
        model,
        "--quiet",
        *extra,
    ]


def test_calibrate_then_label_new_data_with_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    train = write_jsonl(tmp_path / "train.jsonl", labelled_rows(40, seed=1))
    fresh_rows = labelled_rows(20, seed=2)
    fresh = write_jsonl(tmp_path / "fresh.jsonl", fresh_rows)
    calibration_path = tmp_path / "calibration.json"
    out = tmp_path / "out.jsonl"
    with OpenAITestServer(responder=biased_judge) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        fit_code = main(
            eval_args(train, "--label", "hallucinated", "--calibrate", str(calibration_path))
        )
        fit_out = capsys.readouterr().out
        code = main(eval_args(fresh, "--calibration", str(calibration_path), "--out", str(out)))
        run = capsys.readouterr()

    assert fit_code == 0, fit_out
    calibration = Calibration.load(calibration_path)
    (entry,) = calibration.entries
    assert calibration.label == "hallucinated"
    assert entry.scorer_id == "hallucination"
    assert 0.20 <= entry.threshold <= 0.25
    text = " ".join(fit_out.split())
    assert (
        f"Calibrated hallucination (judge {entry.judge_model}) on 20 items: score ≥ "
        f"{entry.threshold:.3g} predicts 'hallucinated'; on the other 20: accuracy 1.000"
    ) in text
    assert f"calibration: {calibration_path} ({calibration.id})" in text
    # At the usual 0.5 the same run predicted no hallucination at all.
    assert "TP 0 · FP 0 · FN 20 · TN 20" in text

    assert code == 0, run.out + run.err
    records = [json.loads(line) for line in out.read_text().splitlines()]
    scores = [r["scores"]["hallucination"] for r in records]
    assert [s["label"] for s in scores] == [
        "hallucinated" if row["hallucinated"] else "not_hallucinated" for row in fresh_rows
    ]
    assert all(s["attributes"][A.LIVESCORE_CALIBRATION] == calibration.id for s in scores)
    assert all(s["score"] < 0.5 for s in scores)  # the judge's score, as it was


def test_a_calibration_for_another_judge_model_is_refused_before_scoring(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    train = write_jsonl(tmp_path / "train.jsonl", labelled_rows(40, seed=1))
    calibration_path = tmp_path / "calibration.json"
    with OpenAITestServer(responder=biased_judge) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        assert main(eval_args(train, "--calibrate", str(calibration_path))) == 0
        capsys.readouterr()
        calls = len(server.requests)
        code = main(eval_args(train, "--calibration", str(calibration_path), model="judge-b"))
        err = capsys.readouterr().err
        assert len(server.requests) == calls  # not one judge call

    assert code == 2
    assert err.count("error:") == 1  # one message (rich wraps it at the terminal's width)
    assert "fitted for judge model 'judge-a', not 'judge-b'" in " ".join(err.split())


@pytest.mark.parametrize(
    ("content", "problem"),
    [(None, "cannot read it"), ("{", "not JSON"), ('{"format": 9}', "calibration format 9")],
)
def test_a_bad_calibration_file_is_a_one_line_usage_error(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    content: str | None,
    problem: str,
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", NO_SERVER)  # refused before any call
    data = write_jsonl(tmp_path / "data.jsonl", labelled_rows(4, seed=1))
    path = tmp_path / "calibration.json"
    if content is not None:
        path.write_text(content)

    code = main(eval_args(data, "--calibration", str(path)))

    err = capsys.readouterr().err
    assert code == 2
    assert err.count("error:") == 1
    assert f"error: --calibration {path}: {problem}" in " ".join(err.split())


def test_calibrate_refuses_what_it_cannot_fit_before_scoring(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", NO_SERVER)  # refused before any call
    unlabelled = [{k: v for k, v in r.items() if k != "hallucinated"} for r in labelled_rows(4, 1)]
    data = write_jsonl(tmp_path / "data.jsonl", unlabelled)

    code = main(eval_args(data, "--calibrate", str(tmp_path / "c.json")))
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2
    assert "--calibrate: no usable line of" in err
    assert "has a 0/1 'hallucinated' field to fit on" in err

    code = main(eval_args(data, "--calibrate", str(data)))
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2
    assert f"--calibrate {data} is the dataset: choose another path" in err


def test_calibrate_says_why_when_a_half_lacks_a_class(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = labelled_rows(6, seed=1)
    for row in rows:
        row["hallucinated"] = 1
    rows[0]["hallucinated"] = 0
    data = write_jsonl(tmp_path / "data.jsonl", rows)
    path = tmp_path / "calibration.json"
    with OpenAITestServer(responder=biased_judge) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        code = main(eval_args(data, "--calibrate", str(path)))
    err = " ".join(capsys.readouterr().err.split())

    assert code == 1
    assert not path.exists()
    assert "--calibrate" in err
    assert "hallucination: 6 labelled item(s) leave a half without one of the classes" in err
