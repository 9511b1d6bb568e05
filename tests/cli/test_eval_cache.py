"""livescore eval's judge response cache: a second identical run makes no judge call (counted
on the test server), says what it saved, and writes the same results; two processes share
one cache at once; a corrupt cache is a warning and a miss; --no-cache asks every time."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _cli_support import hallucination_responder, write_jsonl

from livescore.cli import main
from livescore.testing import OpenAITestServer

PRICES = json.dumps({"test-judge": [2.0, 8.0]})
SAVED = re.compile(
    r"judge cache \((?P<dir>[^)]*)\): (?P<hits>\d+) of (?P<lookups>\d+) request\(s\) answered "
    r"from it \((?P<rate>\d+)%\), (?P<tokens>[\d,]+) tokens and \$(?P<usd>[\d.e-]+) saved"
)


def _rows(count: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"item-{i}",
            "input": "Tell me about the depot.",
            "context": "The depot opens at 8 am.",
            "output": f"The depot has door {i}." + (" It has a WRONG roof." if i % 3 else ""),
        }
        for i in range(count)
    ]


def _args(server: OpenAITestServer, data: Path, *extra: str) -> list[str]:
    return [
        "eval",
        str(data),
        "--scorer",
        "hallucination",
        "--model",
        "test-judge",
        "--base-url",
        server.base_url,
        "--judge-prices",
        PRICES,
        "--quiet",
        *extra,
    ]


def _scores(path: Path) -> list[tuple[Any, ...]]:
    """What a results file says about each item (not the timings or the usage)."""
    records = [json.loads(line) for line in path.read_text().splitlines()]
    return [
        (r["id"], s["status"], s["score"], s["label"], s["reason"], s["analyze_step_result"])
        for r in records
        for s in r["scores"].values()
    ]


def test_a_second_identical_eval_makes_no_judge_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", _rows(8))
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    report = tmp_path / "report.html"
    with OpenAITestServer(responder=hallucination_responder) as server:
        assert main(_args(server, data, "--out", str(first))) == 0
        calls = len(server.requests)
        first_out = capsys.readouterr().out
        assert main(_args(server, data, "--out", str(second), "--report", str(report))) == 0
        assert len(server.requests) == calls  # not one more call
    assert calls == 8 * 3
    out = capsys.readouterr().out
    # The first run stored its answers (none served it); the second was served all of them.
    miss = SAVED.search(first_out)
    assert miss is not None
    assert miss["hits"] == "0"
    hit = SAVED.search(out)
    assert hit is not None, out
    assert (hit["hits"], hit["lookups"], hit["rate"]) == (str(calls), str(calls), "100")
    costs = [
        json.loads(line)["scores"]["hallucination"]["usage"]
        for line in first.read_text().splitlines()
    ]
    tokens = sum(u["input_tokens"] + u["output_tokens"] for u in costs)
    assert int(hit["tokens"].replace(",", "")) == tokens
    assert float(hit["usd"]) == pytest.approx(sum(u["cost_usd"] for u in costs), rel=1e-3)
    # A cached answer reports zero new cost.
    assert "0 judge calls, 0 tokens, judge cost $0" in out
    assert _scores(second) == _scores(first)
    second_usage = [
        json.loads(line)["scores"]["hallucination"]["usage"]
        for line in second.read_text().splitlines()
    ]
    assert all(u["calls"] == 0 and u["cached"] == 3 for u in second_usage)
    assert f"{calls} of {calls} request(s) answered from it" in report.read_text()


def test_no_cache_asks_the_judge_again(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", _rows(3))
    with OpenAITestServer(responder=hallucination_responder) as server:
        assert main(_args(server, data)) == 0
        assert main(_args(server, data, "--no-cache")) == 0
        assert len(server.requests) == 2 * 3 * 3


def test_a_changed_judge_setting_is_a_miss(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", _rows(3))
    with OpenAITestServer(responder=hallucination_responder) as server:
        assert main(_args(server, data)) == 0
        # One call for all steps: other prompts, other keys.
        assert main(_args(server, data, "--judge-mode", "one_call")) == 0
        assert len(server.requests) == 3 * 3 + 3


def test_a_corrupt_cache_is_a_warning_and_a_miss(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", _rows(3))
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "judge-responses.sqlite3").write_bytes(b"this is not a database" * 100)
    out = tmp_path / "out.jsonl"
    with OpenAITestServer(responder=hallucination_responder) as server:
        code = main(_args(server, data, "--cache-dir", str(cache), "--out", str(out)))
        assert len(server.requests) == 3 * 3
    captured = capsys.readouterr()
    assert code == 0
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1, warnings  # once, not once per request
    assert "file is not a database" in warnings[0]
    assert "the judge is asked instead" in warnings[0]
    assert "the cache could not be used (file is not a database)" in " ".join(captured.out.split())
    assert "Traceback" not in captured.err
    assert len(out.read_text().splitlines()) == 3


def test_two_eval_processes_share_one_cache_at_once(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", _rows(30))
    cache = tmp_path / "shared-cache"
    env = {**os.environ, "COLUMNS": "200"}
    with OpenAITestServer(responder=hallucination_responder) as server:
        processes = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "livescore.cli",
                    *_args(
                        server,
                        data,
                        "--cache-dir",
                        str(cache),
                        "--out",
                        str(tmp_path / f"{n}.jsonl"),
                    ),
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
            )
            for n in range(2)
        ]
        outcomes = [p.communicate(timeout=600) for p in processes]
        for process, (stdout, stderr) in zip(processes, outcomes, strict=True):
            assert process.returncode == 0, stderr
            assert "Traceback" not in stderr
            assert "cache error" not in stdout
        # A third run finds every answer one of them stored.
        before = len(server.requests)
        assert main(_args(server, data, "--cache-dir", str(cache))) == 0
        assert len(server.requests) == before
    assert _scores(tmp_path / "0.jsonl") == _scores(tmp_path / "1.jsonl")
