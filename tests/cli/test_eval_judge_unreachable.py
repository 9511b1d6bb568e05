"""``livescore eval`` with a judge it cannot use: a bad --base-url is a usage error, and an
unreachable judge ends the run early with one line, keeping what was scored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli_support import write_jsonl

from livescore.cli import main
from livescore.testing import OpenAITestServer, Reply

ITEMS = [{"question": f"q{i}", "context": "c", "output": f"Answer {i}."} for i in range(50)]
JUDGED = ["--scorer", "hallucination", "--model", "m", "--quiet"]


@pytest.mark.parametrize("url", ["not a url", "ftp://judge.example/v1", "http://:8080/v1"])
def test_a_base_url_that_is_not_http_is_a_usage_error(
    url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", ITEMS[:2])
    # Before: accepted, then every item's judge calls were retried and failed.
    assert main(["eval", str(data), *JUDGED, "--base-url", url]) == 2
    err = capsys.readouterr().err
    assert "base URL must be an http(s) URL" in err
    assert err.count("\n") == 1  # one line


def test_a_refused_judge_ends_the_run_with_one_line(
    refused_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", ITEMS)
    out, report = tmp_path / "r.jsonl", tmp_path / "r.html"
    outputs = ["--out", str(out), "--report", str(report)]
    code = main(["eval", str(data), *JUDGED, "--base-url", f"{refused_url}/v1", *outputs])
    captured = capsys.readouterr()
    assert code == 1
    lines = [line for line in captured.err.splitlines() if "unreachable" in line]
    assert len(lines) == 1, captured.err  # the judge's own warning is held back
    assert "is unreachable (connection refused): stopped after" in lines[0]
    assert "check failed" not in captured.err  # said once, not again as a failed check
    scored = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    # Before: all 50 items ran, 4 attempts each (200 calls, 34 s).
    assert 0 < len(scored) < len(ITEMS)
    for record in scored:
        assert record["scores"]["hallucination"]["error_type"] == "connection_error"
    assert "is unreachable (connection refused))" in report.read_text(encoding="utf-8")


def test_a_hanging_judge_ends_the_run_after_the_first_timeouts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", ITEMS)
    with OpenAITestServer(responder=lambda body: Reply.hang(60)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        code = main(["eval", str(data), *JUDGED, "--judge-timeout", "0.3"])
        requests = len(server.requests)
    err = capsys.readouterr().err
    assert code == 1
    assert "is unreachable (timed out after 0.3s)" in err
    # Before: every item waited 4 x the timeout (plus backoff), 50 items deep.
    assert requests <= 16


_NOT_FOUND = {"error": {"message": "The model `m` does not exist", "code": "model_not_found"}}


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (404, _NOT_FOUND),
        (401, {"error": {"message": "Incorrect API key provided"}}),
        (403, {"error": {"message": "Project does not have access"}}),
        (400, {"error": {"message": "Invalid model name passed in model=m"}}),
    ],
)
def test_a_judge_that_refuses_every_call_ends_the_run_after_the_first(
    status: int, body: dict[str, object], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", ITEMS)
    out, report = tmp_path / "r.jsonl", tmp_path / "r.html"
    outputs = ["--out", str(out), "--report", str(report), "--concurrency", "1"]
    with OpenAITestServer(responder=lambda _: Reply.error(status, body)) as server:
        code = main(["eval", str(data), *JUDGED, "--base-url", server.base_url, *outputs])
        requests = len(server.requests)
    captured = capsys.readouterr()
    assert code == 1
    # Before: one failed call per item (50 of 50).
    assert requests == 1
    assert f"refuses every call (HTTP {status}: " in captured.err
    assert "stopped after 1 of 50 item(s)" in captured.err
    assert len(out.read_text(encoding="utf-8").splitlines()) == 1
    assert "refuses every call" in report.read_text(encoding="utf-8")


def test_a_refusal_of_one_item_does_not_end_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A 400 that does not name the model (this item's prompt is too long) is the item's.
    data = write_jsonl(tmp_path / "d.jsonl", ITEMS[:5])
    too_long = {"error": {"message": "max_tokens: this item is too long for model m-large"}}
    with OpenAITestServer(responder=lambda _: Reply.error(400, too_long)) as server:
        main(["eval", str(data), *JUDGED, "--base-url", server.base_url, "--concurrency", "1"])
        requests = len(server.requests)
    assert requests == 5
    assert "refuses every call" not in capsys.readouterr().err
