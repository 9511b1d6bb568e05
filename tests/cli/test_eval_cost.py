"""livescore eval and judge cost: the total and per-item cost printed, in --out and in the
report; --estimate on the 200-item dataset against the full run, and on stored traces;
--max-cost refusing to start, and stopping a run (keeping what it scored, marked partial)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from _cli_support import hallucination_responder, write_jsonl

from livescore.cli import main
from livescore.testing import OpenAITestServer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "traces"))
from _trace_support import genai_tool_run, memory_provider, otlp_json_line

DATA = Path(__file__).resolve().parents[2] / "data" / "hallucination" / "halueval_qa_200.jsonl"
PRICES = json.dumps({"test-judge": [2.0, 8.0]})  # USD per million input / output tokens
ESTIMATE = re.compile(
    r"estimate from (\d+) of (\d+) item\(s\): judge cost \$([\d.e-]+) for all \d+ "
    r"\(95 % range \$([\d.e-]+) to \$([\d.e-]+)\), \$([\d.e-]+) per item"
)


@pytest.fixture(autouse=True)
def _plain_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    for name in ("LIVESCORE_JUDGE_MODEL", "OPENAI_API_KEY", "LIVESCORE_JUDGE_PRICES"):
        monkeypatch.delenv(name, raising=False)


def _eval(server: OpenAITestServer, *args: str) -> int:
    return main(
        [
            "eval",
            *args,
            "--scorer",
            "hallucination",
            "--model",
            "test-judge",
            "--base-url",
            server.base_url,
            "--judge-prices",
            PRICES,
            "--quiet",
            # Costs are what these tests measure: every run pays for its calls, however
            # many runs a test makes (the cache is tested in test_eval_cache.py).
            "--no-cache",
        ]
    )


def _rows(count: int, long_every: int = 0) -> list[dict[str, Any]]:
    rows = []
    for i in range(count):
        sentences = 12 if long_every and i % long_every else 1
        rows.append(
            {
                "id": f"item-{i}",
                "input": "Tell me about the depot.",
                "context": "The depot opens at 8 am. " * (1 + i % 4),
                "output": " ".join(f"The depot has door number {j}." for j in range(sentences)),
            }
        )
    return rows


def test_eval_prints_the_total_and_per_item_cost(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", _rows(6))
    out_path, report_path = tmp_path / "out.jsonl", tmp_path / "report.html"
    with OpenAITestServer(responder=hallucination_responder) as server:
        code = _eval(server, str(data), "--out", str(out_path), "--report", str(report_path))
    out = capsys.readouterr().out
    assert code == 0
    items = [json.loads(line) for line in out_path.read_text().splitlines()]
    costs = [item["scores"]["hallucination"]["usage"]["cost_usd"] for item in items]
    usages = [item["scores"]["hallucination"]["usage"] for item in items]
    # Each item's cost is its usage at the given price.
    for cost, usage in zip(costs, usages, strict=True):
        assert cost == pytest.approx((usage["input_tokens"] * 2 + usage["output_tokens"] * 8) / 1e6)
    assert len(set(costs)) > 1  # the contexts differ, and so do the prompts
    total = sum(costs)
    line = next(line for line in out.splitlines() if "item(s) in" in line)
    shown = re.search(r"judge cost \$([\d.e-]+) \(\$([\d.e-]+) per item\)", line)
    assert shown is not None, line
    assert float(shown.group(1)) == pytest.approx(total, rel=1e-3)
    assert float(shown.group(2)) == pytest.approx(total / 6, rel=1e-3)
    assert "cost (USD)" in out
    report = report_path.read_text()
    assert re.search(r'id="cost">judge cost \$[\d.]+ \(\$[\d.e-]+ per item\)', report)


@pytest.mark.slow
def test_the_estimate_of_the_200_item_dataset_is_within_25_percent_of_the_full_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_path = tmp_path / "out.jsonl"
    with OpenAITestServer(responder=hallucination_responder) as server:
        assert _eval(server, str(DATA), "--estimate", "--concurrency", "8") == 0
        estimate_requests = len(server.requests)
        estimated = capsys.readouterr().out
        assert _eval(server, str(DATA), "--concurrency", "8", "--out", str(out_path)) == 0
        full_requests = len(server.requests) - estimate_requests
    match = ESTIMATE.search(estimated)
    assert match is not None, estimated
    sample, total, cost, low, high, _ = match.groups()
    assert (int(sample), int(total)) == (20, 200)
    # Only the sample was scored (three judge calls an item), then it stopped.
    assert estimate_requests == 20 * 3
    assert full_requests == 200 * 3
    assert "for the whole dataset at --concurrency 8" in estimated
    items = [json.loads(line) for line in out_path.read_text().splitlines()]
    actual = sum(item["scores"]["hallucination"]["usage"]["cost_usd"] for item in items)
    per_item = [item["scores"]["hallucination"]["usage"]["cost_usd"] for item in items]
    # The cost varies from item to item (the contexts' and answers' lengths), under the
    # fixed weight of the scorer's instructions, as with a real judge.
    assert max(per_item) > 1.25 * min(per_item)
    assert abs(float(cost) - actual) <= 0.25 * actual, (cost, actual)
    assert float(low) <= float(cost) <= float(high)


def test_max_cost_refuses_to_start_when_the_estimate_is_above_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", _rows(30))
    out_path, report_path = tmp_path / "out.jsonl", tmp_path / "report.html"
    # The outputs of an earlier run: a run that does not start leaves them as they are.
    out_path.write_text("".join(f'{{"earlier": {i}}}\n' for i in range(100)))
    report_path.write_text("<html>the earlier run</html>")
    with OpenAITestServer(responder=hallucination_responder) as server:
        code = _eval(
            server,
            str(data),
            "--max-cost",
            "0.0001",
            "--estimate-items",
            "5",
            "--out",
            str(out_path),
            "--report",
            str(report_path),
        )
        requests = len(server.requests)
    captured = capsys.readouterr()
    assert code == 1
    assert "refusing to start: the estimated judge cost" in captured.err
    assert "is above --max-cost $0.0001; nothing was written" in captured.err
    # The sample was scored (within --max-cost), and nothing more; no file was written.
    assert requests <= 5 * 3
    assert out_path.read_text().splitlines() == [f'{{"earlier": {i}}}' for i in range(100)]
    assert report_path.read_text() == "<html>the earlier run</html>"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.jsonl", "out.jsonl", "report.html"]


def test_the_estimate_under_max_cost_is_of_the_run_without_the_cap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", _rows(40))
    with OpenAITestServer(responder=hallucination_responder) as server:
        assert _eval(server, str(data), "--estimate", "--estimate-items", "12") == 0
        free = ESTIMATE.search(capsys.readouterr().out)
        assert free is not None
        uncapped = float(free.group(3))
    # Another server (the same answers): nothing of the first run is reused.
    with OpenAITestServer(responder=hallucination_responder) as server:
        # A cap the sample itself reaches: the items it skipped must not count as free.
        code = _eval(
            server,
            str(data),
            "--max-cost",
            f"{uncapped / 8:.6f}",
            "--estimate-items",
            "12",
            "--concurrency",
            "1",
        )
    captured = capsys.readouterr()
    assert code == 1
    capped = ESTIMATE.search(captured.out)
    assert capped is not None, captured.out
    assert int(capped.group(1)) < 12  # estimated from the items the cap let through
    assert float(capped.group(3)) == pytest.approx(uncapped, rel=0.3)
    assert "refusing to start" in captured.err


def test_estimate_says_once_what_it_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", _rows(30))
    with OpenAITestServer(responder=hallucination_responder) as server:
        code = main(
            [
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
                "--estimate",
                "--estimate-items",
                "6",
            ]
        )
    err = capsys.readouterr().err
    assert code == 0
    first = err.splitlines()[0]
    assert first.startswith("estimating the cost of scoring 30 item(s) from "), err
    assert first.endswith("with hallucination from a sample of 6"), err
    assert "estimating from" not in err


def test_max_cost_stops_the_run_keeping_what_it_scored_marked_partial(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The evenly spread sample (every fourth item) is short and cheap; the rest is long,
    # so the estimate passes and the spend reaches --max-cost during the run.
    data = write_jsonl(tmp_path / "data.jsonl", _rows(40, long_every=4))
    out_path, report_path = tmp_path / "out.jsonl", tmp_path / "report.html"
    max_cost = 0.15
    with OpenAITestServer(responder=hallucination_responder) as server:
        code = _eval(
            server,
            str(data),
            "--max-cost",
            str(max_cost),
            "--estimate-items",
            "10",
            "--out",
            str(out_path),
            "--report",
            str(report_path),
        )
    captured = capsys.readouterr()
    assert code == 1
    match = ESTIMATE.search(captured.out)
    assert match is not None
    assert float(match.group(3)) <= max_cost
    assert "stopped:" in captured.err
    assert "the judge spend reached --max-cost $0.15 after" in captured.err
    items = [json.loads(line) for line in out_path.read_text().splitlines()]
    assert 10 < len(items) < 40
    results = [item["scores"]["hallucination"] for item in items]
    spent = sum(r["usage"]["cost_usd"] or 0.0 for r in results)
    largest = max(r["usage"]["cost_usd"] or 0.0 for r in results)
    assert spent <= max_cost + largest
    assert spent >= max_cost - 2 * largest
    assert "Partial report:" in report_path.read_text()
    assert "--max-cost" in report_path.read_text()


def test_estimate_takes_no_outputs_and_max_cost_no_broker(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", _rows(3))
    with OpenAITestServer(responder=hallucination_responder) as server:
        assert _eval(server, str(data), "--estimate", "--out", str(tmp_path / "o.jsonl")) == 2
        assert "--estimate scores a sample and stops" in capsys.readouterr().err
        code = _eval(server, str(data), "--max-cost", "1", "--broker", "redis://127.0.0.1:9/0")
        assert code == 2
        assert "livescore worker --judge-budget" in capsys.readouterr().err
        assert main(["eval", str(data), "--judge-prices", "[1, 2]", "--quiet"]) == 2
        assert "--judge-prices" in capsys.readouterr().err
        assert server.requests == []


def test_max_cost_needs_the_judges_price(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", _rows(3))
    with OpenAITestServer(responder=hallucination_responder) as server:
        code = main(
            [
                "eval",
                str(data),
                "--scorer",
                "hallucination",
                "--model",
                "unpriced-judge",
                "--base-url",
                server.base_url,
                "--max-cost",
                "1",
                "--quiet",
            ]
        )
        assert server.requests == []
    assert code == 2
    err = capsys.readouterr().err
    assert "no known price" in err
    # Said in flags, not in the library's arguments (before: "give OpenAIJudge(...,
    # prices=(input, output)) or JudgeBudget(prices=...)").
    assert "--judge-prices '{\"unpriced-judge\": [INPUT, OUTPUT]}'" in err
    assert "OpenAIJudge(" not in err
    assert "prices=" not in err


def test_estimate_a_backfill_of_stored_traces(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    provider, exporter = memory_provider()
    for i in range(12):
        answer = "It is sunny in Lyon. " * (1 + i % 3)
        genai_tool_run(provider, question="Weather in Lyon?", answer=answer.strip())
    path = tmp_path / "traces.jsonl"
    path.write_text(otlp_json_line(list(exporter.get_finished_spans())) + "\n")
    with OpenAITestServer(responder=hallucination_responder) as server:
        code = _eval(server, "--traces", str(path), "--estimate", "--estimate-items", "4")
        requests = len(server.requests)
    out = capsys.readouterr().out
    assert code == 0
    match = ESTIMATE.search(out)
    assert match is not None, out
    assert match.group(1, 2) == ("4", "12")
    assert requests == 4 * 3  # the sample only: three judge calls a run
