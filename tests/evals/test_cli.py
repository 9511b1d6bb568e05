"""The livescore CLI: eval over datasets (bad lines, outputs, report, judge quality)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from _evals_support import hallucination_responder

from livescore.evals._cli import main
from livescore.testing import OpenAITestServer


@pytest.fixture(autouse=True)
def _wide_plain_output(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    for name in ("LIVESCORE_JUDGE_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def _jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text(
        "\n".join(row if isinstance(row, str) else json.dumps(row) for row in rows) + "\n",
        encoding="utf-8",
    )
    return path


def test_help_lists_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "eval" in out
    assert "demo" in out
    with pytest.raises(SystemExit):
        main(["eval", "--help"])
    eval_help = capsys.readouterr().out
    for option in (
        "--scorer",
        "--model",
        "--target",
        "--concurrency",
        "--out",
        "--report",
        "--threshold",
        "--mode",
    ):
        assert option in eval_help


def test_no_command_prints_help_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage: livescore" in capsys.readouterr().out


def test_eval_ready_outputs_bad_lines_out_and_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _jsonl(
        tmp_path / "data.jsonl",
        [
            {"input": "Python generators", "output": "Generators in Python yield values."},
            "{broken json",
            {"input": "React hooks", "id": "no-output"},
            {"input": "Rust ownership rules", "output": "Nothing relevant here."},
        ],
    )
    out_path, report_path = tmp_path / "results.jsonl", tmp_path / "report.html"
    code = main(
        [
            "eval",
            str(data),
            "--scorer",
            "keyword-coverage",
            "--out",
            str(out_path),
            "--report",
            str(report_path),
            "--quiet",
        ]
    )
    captured = capsys.readouterr()

    assert code == 0
    assert f"{data}:2: invalid JSON" in captured.err
    assert f"{data}:3: missing field 'output'" in captured.err
    assert "scoring 2 item(s)" in captured.err
    assert "keyword-coverage" in captured.out  # the summary table
    assert "2 line(s) skipped" in captured.err

    records = [json.loads(line) for line in out_path.read_text().splitlines()]
    assert [r["line"] for r in records] == [1, 4]
    assert records[0]["scores"]["keyword-coverage"]["status"] == "scored"
    assert records[0]["scores"]["keyword-coverage"]["score"] == 1.0
    assert records[1]["scores"]["keyword-coverage"]["score"] == 0.0
    assert records[0]["run"]["input"] == "Python generators"

    html = report_path.read_text()
    assert html.count('<tr class="item"') == 2
    assert "line 2: invalid JSON" in html


def test_summary_table_shows_mean_and_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _jsonl(
        tmp_path / "d.jsonl",
        [
            {"input": "alpha beta", "output": "alpha beta"},
            {"input": "alpha beta", "output": "alpha"},
        ],
    )
    assert main(["eval", str(data), "--quiet"]) == 0  # default scorer: keyword coverage
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "keyword-coverage" in line)
    cells = [c.strip() for c in row.strip("│┃ ").split("│")]
    assert cells[:5] == ["keyword-coverage", "0.750", "2", "0", "0"]


def test_no_usable_line_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _jsonl(tmp_path / "bad.jsonl", ["nope", {"output": "x"}])
    assert main(["eval", str(data), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "has no usable line" in err
    assert ":1: invalid JSON" in err


def test_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _jsonl(tmp_path / "d.jsonl", [{"input": "q", "output": "a"}])
    assert main(["eval", str(tmp_path / "missing.jsonl")]) == 2
    assert "cannot read" in capsys.readouterr().err

    assert main(["eval", str(data), "--scorer", "hallucination"]) == 2
    assert "needs a judge model" in capsys.readouterr().err

    assert main(["eval", str(data), "--scorer", "hallucination", "--model", "claude/x"]) == 2
    assert "unknown provider 'claude'" in capsys.readouterr().err

    assert main(["eval", str(data), "--target", "no_such_module_xyz:agent"]) == 2
    assert "cannot import 'no_such_module_xyz'" in capsys.readouterr().err

    assert main(["eval", str(data), "--target", "not-a-spec"]) == 2
    assert "module:attribute" in capsys.readouterr().err

    with pytest.raises(SystemExit) as exit_info:
        main(["eval", str(data), "--scorer", "toxicity"])
    assert exit_info.value.code == 2


def test_target_from_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "my_agent_for_cli_test.py").write_text(
        "def answer(question):\n    return 'Answer about ' + question\n", encoding="utf-8"
    )
    data = _jsonl(tmp_path / "inputs.jsonl", [{"input": "solar panels"}, {"input": "wind"}])
    out_path = tmp_path / "out.jsonl"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    code = main(
        [
            "eval",
            str(data),
            "--target",
            "my_agent_for_cli_test:answer",
            "--out",
            str(out_path),
            "--quiet",
        ]
    )
    assert code == 0, capsys.readouterr().err
    records = [json.loads(line) for line in out_path.read_text().splitlines()]
    assert [r["output"] for r in records] == ["Answer about solar panels", "Answer about wind"]
    assert all(r["scores"]["keyword-coverage"]["score"] == 1.0 for r in records)


def test_labelled_hallucination_data_gives_judge_quality(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The scripted judge marks sentences with "WRONG" as hallucinated, so the scores are
    # 0, 0.5, 0.5 and 1 for labels 0, 0, 1, 1. By hand: AUROC = 3.5 / 4 = 0.875 (the tied
    # pair counts one half); at threshold 0.5: tp 2, fp 1, tn 1, fn 0 → accuracy 0.75,
    # precision 0.667, recall 1, F1 0.8.
    rows = [
        {"id": "a", "question": "q", "context": "ctx", "output": "Fine claim.", "hallucinated": 0},
        {
            "id": "b",
            "question": "q",
            "context": "ctx",
            "output": "Fine claim. WRONG claim.",
            "hallucinated": 0,
        },
        {
            "id": "c",
            "question": "q",
            "context": "ctx",
            "output": "Fine claim. WRONG claim.",
            "hallucinated": 1,
        },
        {"id": "d", "question": "q", "context": "ctx", "output": "WRONG claim.", "hallucinated": 1},
    ]
    data = _jsonl(tmp_path / "labelled.jsonl", rows)
    report_path = tmp_path / "report.html"
    with OpenAITestServer(responder=hallucination_responder) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        code = main(
            [
                "eval",
                str(data),
                "--scorer",
                "hallucination",
                "--model",
                "test-judge",  # the openai/ prefix is optional
                "--concurrency",
                "2",
                "--report",
                str(report_path),
                "--quiet",
            ]
        )
        requests = len(server.requests)
    out = capsys.readouterr().out

    assert code == 0
    assert requests == 12  # three calls per item
    summary, quality = (
        [c.strip() for c in line.strip("│┃ ").split("│")]
        for line in out.splitlines()
        if line.strip("│┃ ").startswith("hallucination")
    )
    assert summary[:6] == ["hallucination", "0.500", "4", "0", "0", "12"]
    cells = quality
    # scored by, n, threshold, accuracy, precision, recall, F1, AUROC, calls/item, tokens/item
    assert cells[:9] == [
        "hallucination",
        "4",
        "0.50",
        "0.750",
        "0.667",
        "1.000",
        "0.800",
        "0.875",
        "3.00",
    ]
    assert int(cells[9]) > 0
    assert "length-only baseline (REFERENCE)" in out
    assert "Judge quality" in out
    html = report_path.read_text()
    assert "Judge quality" in html
    assert "0.875" in html
    assert "WRONG claim." in html


def test_labelled_data_without_hallucination_scorer_explains(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _jsonl(
        tmp_path / "l.jsonl",
        [{"question": "q one", "context": "c", "output": "q one", "hallucinated": 0}],
    )
    assert main(["eval", str(data), "--quiet"]) == 0
    assert "add --scorer hallucination" in capsys.readouterr().out
