"""What ``livescore eval`` says: no placeholders, right plurals and articles, labels that
exist, hints that fit what was asked, and one judge timeout default."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from _cli_support import hallucination_responder, write_jsonl

from livescore.cli import main
from livescore.cli._judge_options import JudgeOptions
from livescore.cli._main import build_parser
from livescore.judges import DEFAULT_TIMEOUT, OpenAIJudge
from livescore.testing import OpenAITestServer

LABELLED = [
    {"question": "q1", "context": "c", "output": "Fine.", "hallucinated": 0, "toxic": 0},
    {"question": "q2", "context": "c", "output": "A WRONG claim.", "hallucinated": 1, "toxic": 1},
]


@pytest.fixture
def judge(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAITestServer]:
    with OpenAITestServer(responder=hallucination_responder) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        yield server


def test_no_placeholder_reaches_the_output_or_the_report(
    tmp_path: Path, judge: OpenAITestServer, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", LABELLED)
    report = tmp_path / "r.html"
    args = ["eval", str(data), "--scorer", "hallucination", "--model", "m", "--quiet"]
    assert main([*args, "--report", str(report)]) == 0
    out = capsys.readouterr().out
    html = report.read_text(encoding="utf-8")
    for text in (out, html):
        # No placeholder in capitals, such as "length-only baseline (TODO)", and no
        # "Judge quality (the label = positive)".
        assert re.search(r"\([A-Z]{4,}\)", text) is None, text
        assert "= positive" not in text
    assert "length-only baseline" in out
    assert "length-only baseline" in html
    assert "Judge quality: how well each scorer predicts 'hallucinated' (label 1)" in out


def test_one_judge_call_is_one_call(
    tmp_path: Path, judge: OpenAITestServer, capsys: pytest.CaptureFixture[str]
) -> None:
    from livescore.testing import Reply

    judge.enqueue(
        Reply.json(
            {
                "claims": ["Fine."],
                "verdicts": [{"statement": "Fine.", "verdict": "no", "reason": "ok"}],
                "reason": "The score is 0 because it is fine.",
            }
        )
    )
    data = write_jsonl(tmp_path / "d.jsonl", LABELLED[:1])
    args = ["eval", str(data), "--scorer", "hallucination", "--model", "m", "--quiet"]
    assert main([*args, "--judge-mode", "one_call"]) == 0
    out = capsys.readouterr().out
    assert "1 judge call," in out  # before: "judge calls 1" / "1 judge calls"
    assert "1 judge calls" not in out


def test_a_non_text_line_is_a_bad_line_with_its_type(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(
        tmp_path / "d.jsonl", [{"input": 5, "output": 6}, {"input": "a", "output": "a"}]
    )
    assert main(["eval", str(data), "--quiet"]) == 0
    captured = capsys.readouterr()
    # Before: a TypeError failure, "cannot read text from a int"; then an item every scorer
    # skipped, which --fail-on-bad-lines did not see. Now the bad line the docs say it is.
    assert "TypeError" not in captured.out + captured.err
    assert "d.jsonl:1: 'input' must be text" in captured.err
    assert "not int 5" in captured.err
    assert main(["eval", str(data), "--quiet", "--fail-on-bad-lines"]) == 1
    assert "--fail-on-bad-lines: 1 line(s) were skipped" in capsys.readouterr().err


def test_a_label_no_line_has_is_a_usage_error(
    tmp_path: Path, judge: OpenAITestServer, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", LABELLED)
    args = ["eval", str(data), "--scorer", "hallucination", "--model", "m", "--quiet"]
    # Before: ignored, and the hint said to add the scorer that was already there.
    assert main([*args, "--label", "halucinated"]) == 2
    assert "no usable line of" in capsys.readouterr().err
    assert len(judge.requests) == 0  # refused before any judge call


def test_a_label_without_a_judge_scorer_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", LABELLED)
    assert main(["eval", str(data), "--label", "toxic", "--quiet"]) == 2
    assert "none is selected" in capsys.readouterr().err


def test_the_hint_about_another_label_fits_the_scorers_running(
    tmp_path: Path, judge: OpenAITestServer, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", LABELLED)
    args = ["eval", str(data), "--scorer", "hallucination", "--model", "m", "--quiet"]
    assert main([*args, "--label", "toxic"]) == 0
    out = capsys.readouterr().out
    assert "predicts 'toxic'" in out
    assert "add --scorer hallucination" not in out
    assert "without --label, hallucination is measured against it" in out


def test_the_library_and_the_command_share_one_judge_timeout() -> None:
    judge = OpenAIJudge("m", base_url="http://127.0.0.1:1/v1")
    args = build_parser().parse_args(["eval", "d.jsonl"])
    resolved = JudgeOptions.from_args(args)
    # Before: 30 s in the library, 60 s for --judge-timeout.
    assert judge.timeout == DEFAULT_TIMEOUT
    assert JudgeOptions().timeout == DEFAULT_TIMEOUT
    assert resolved.timeout == DEFAULT_TIMEOUT
    model = JudgeOptions(model="openai/m", base_url="http://127.0.0.1:1/v1").resolve()
    assert getattr(model, "timeout", None) == DEFAULT_TIMEOUT


def test_help_names_the_judge_timeout_default(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["eval", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"(default: {DEFAULT_TIMEOUT:g}, the library's)" in text
