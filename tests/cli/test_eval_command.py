"""livescore eval: datasets, bad lines, outputs, report, judge quality, exit codes."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from _cli_support import hallucination_responder, write_jsonl

from livescore.cli import main
from livescore.testing import OpenAITestServer

DATA = Path(__file__).resolve().parents[2] / "data" / "hallucination"


@pytest.fixture(autouse=True)
def _wide_plain_output(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    for name in ("LIVESCORE_JUDGE_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


_jsonl = write_jsonl


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
        "--judge-mode",
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
    assert records[0]["input"] == "Python generators"
    assert "run" not in records[0]
    assert "output_text" not in records[0]

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

    assert main(["eval", str(data), "--scorer", "toxicty"]) == 2
    err = capsys.readouterr().err
    assert "unknown scorer 'toxicty'" in err
    assert "keyword-coverage" in err  # the names to choose from

    assert main(["eval", str(data), "--scorer", "keyword-coverage:answer"]) == 2
    assert "'input' or 'ground_truth', not 'answer'" in capsys.readouterr().err


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
    # scored by, n, predicts when, accuracy, precision, recall, F1, AUROC, κ, calls/item,
    # tokens. κ: 3 of 4 agree (0.75) where chance agrees half the time: (0.75 - 0.5) / 0.5.
    assert cells[:10] == [
        "hallucination",
        "4",
        "score ≥ 0.5",
        "0.750",
        "0.667",
        "1.000",
        "0.800",
        "0.875",
        "0.500",
        "3.00",
    ]
    assert int(cells[10]) > 0
    assert "length-only baseline " in out
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


def test_help_lists_the_scorer_catalog_and_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["eval", "--help"])
    out = capsys.readouterr().out
    assert "hallucination " in out
    assert "[judge]" in out
    assert "keyword-coverage[:REFERENCE]" in out
    for code in ("  0 ", "  1 ", "  2 ", "  130 "):
        assert code in out
    for option in ("--fail-on-error", "--fail-under", "--fail-over", "--api-key-env"):
        assert option in out


# -- what a new user runs into ---------------------------------------------------------------


def test_summedits_is_scored_although_every_question_is_empty(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: "skipped … the input is empty" on all 200 lines, nothing scored.
    with OpenAITestServer(responder=hallucination_responder) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        code = main(
            [
                "eval",
                str(DATA / "summedits_200.jsonl"),
                "--scorer",
                "hallucination",
                "--model",
                "test-judge",
                "--limit",
                "3",
                "--quiet",
            ]
        )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "input is empty" not in captured.err
    assert "scoring 3 item(s)" in captured.err
    row = next(line for line in captured.out.splitlines() if line.startswith("│ hallucination"))
    assert [c.strip() for c in row.strip("│ ").split("│")][2:4] == ["3", "0"]  # scored, failed


@pytest.mark.parametrize("limit", ["0", "-1", "two"])
def test_limit_must_be_positive(
    tmp_path: Path, limit: str, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _jsonl(tmp_path / "d.jsonl", [{"input": "q", "output": "a"}])
    with pytest.raises(SystemExit) as exit_info:
        main(["eval", str(data), "--limit", limit])
    assert exit_info.value.code == 2
    assert "--limit" in capsys.readouterr().err


def test_threshold_outside_the_scorers_scale_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _jsonl(tmp_path / "d.jsonl", [{"question": "q", "context": "c", "output": "a"}])
    base = ["eval", str(data), "--scorer", "hallucination", "--model", "m"]
    base += ["--base-url", "http://127.0.0.1:9/v1"]
    assert main([*base, "--threshold", "1.5"]) == 2
    assert "--threshold 1.5 is outside the hallucination scorer's scores (0 to 1)" in (
        capsys.readouterr().err
    )
    assert main([*base, "--threshold", "-0.1"]) == 2
    capsys.readouterr()


def test_output_paths_are_checked_before_scoring(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _jsonl(tmp_path / "d.jsonl", [{"question": "q", "context": "c", "output": "A."}])
    with OpenAITestServer(responder=hallucination_responder) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        common = ["eval", str(data), "--scorer", "hallucination", "--model", "m", "--quiet"]
        assert main([*common, "--out", str(tmp_path / "no-such-dir" / "r.jsonl")]) == 2
        assert "--out" in capsys.readouterr().err
        assert main([*common, "--report", str(tmp_path)]) == 2
        assert "is a directory" in capsys.readouterr().err
        requests = len(server.requests)
    assert requests == 0  # nothing was scored (and paid for) before the usage error


def test_one_output_failing_does_not_lose_the_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import livescore.evals

    def disk_full(*args: Any, **kwargs: Any) -> Path:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(livescore.evals, "write_report", disk_full)
    data = _jsonl(tmp_path / "d.jsonl", [{"input": "alpha", "output": "alpha"}] * 3)
    out_path = tmp_path / "r.jsonl"
    code = main(["eval", str(data), "--out", str(out_path), "--report", str(tmp_path / "r.html")])
    captured = capsys.readouterr()
    assert code == 1
    assert "No space left on device" in captured.err
    assert len(out_path.read_text().splitlines()) == 3  # the results were still written


def test_unknown_fields_are_named_once_and_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _jsonl(
        tmp_path / "d.jsonl",
        [{"input": "a b", "output": "a b", "sourse": "x"}, {"input": "a", "output": "a"}],
    )
    out_path = tmp_path / "r.jsonl"
    assert main(["eval", str(data), "--out", str(out_path), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert err.count("unknown field(s) kept as metadata: 'sourse' (1 line(s))") == 1
    first = json.loads(out_path.read_text().splitlines()[0])
    assert first["metadata"] == {"sourse": "x"}


def test_a_file_with_a_byte_order_mark_is_scored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"input": "a", "output": "a"}).encode() + b"\n")
    assert main(["eval", str(path), "--quiet"]) == 0
    assert "BOM" not in capsys.readouterr().err


# -- exit policy ------------------------------------------------------------------------------


def _rejecting_judge(body: dict[str, Any]) -> Any:
    from livescore.testing import Reply

    # Each item's own failure: a refused key (401) would stop the run after the first.
    return Reply.error(422, "unprocessable request")


def test_exit_1_when_no_item_could_be_scored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: exit 0 with every score failed, so CI never noticed.
    data = _jsonl(tmp_path / "d.jsonl", [{"question": "q", "context": "c", "output": "A."}] * 2)
    with OpenAITestServer(responder=_rejecting_judge) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        code = main(["eval", str(data), "--scorer", "hallucination", "--model", "m", "--quiet"])
    captured = capsys.readouterr()
    assert code == 1
    assert "no item could be scored" in captured.err


def test_fail_on_error_fail_under_and_fail_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Keyword coverage: 1.0 and 0.5, mean 0.75. Hallucination (scripted): 0 and 0.5.
    data = _jsonl(
        tmp_path / "d.jsonl",
        [
            {"input": "alpha beta", "output": "Alpha beta.", "context": "c"},
            {"input": "alpha beta", "output": "Alpha here. WRONG claim.", "context": "c"},
        ],
    )
    with OpenAITestServer(responder=hallucination_responder) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        common = ["eval", str(data), "--model", "m", "--quiet"]  # both scorers by default

        assert main([*common, "--fail-under", "0.7", "--fail-over", "0.3"]) == 0
        assert main([*common, "--fail-under", "0.8"]) == 1
        assert "keyword-coverage mean 0.750 is below" in capsys.readouterr().err
        assert main([*common, "--fail-over", "0.2"]) == 1  # applies to hallucination only
        assert "hallucination mean 0.250 is above" in capsys.readouterr().err
        assert main([*common, "--fail-under", "hallucination=0.3"]) == 1  # named: any scorer
        assert main([*common, "--fail-on-error"]) == 0  # nothing failed
        assert main([*common, "--fail-under", "toxicity=0.3"]) == 2
        assert "no scorer 'toxicity' runs" in capsys.readouterr().err
        assert main([*common, "--fail-over", "2"]) == 2
        assert "outside the hallucination scorer's scores" in capsys.readouterr().err

    # The judge rejects every call: hallucination fails, keyword coverage still scores.
    bad = _jsonl(tmp_path / "bad.jsonl", [{"input": "alpha", "output": "alpha", "context": "c"}])
    with OpenAITestServer(responder=_rejecting_judge) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        common = ["eval", str(bad), "--model", "m", "--quiet"]
        assert main(common) == 0  # something was scored: failures are reported, not fatal
        assert main([*common, "--fail-on-error"]) == 1
        assert "--fail-on-error: 1 failure(s)" in capsys.readouterr().err
