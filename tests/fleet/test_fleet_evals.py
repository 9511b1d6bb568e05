"""Offline evaluation on the fleet: ``run_evals(..., broker=)`` and ``livescore eval --broker``
fan the dataset out to the same workers and gather the results in data order."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from fleet_support import Fleet

from livescore.evals import run_evals
from livescore.fleet import BrokerUnavailableError
from livescore.scorers import create_keyword_coverage_scorer

DATA = [
    {"input": "Rust ownership rules", "output": "Ownership rules in Rust", "id": "a"},
    {"input": "Python generators", "output": "Nothing relevant", "id": "b"},
    {"input": "Go channels", "output": "Channels in Go", "id": "c"},
]


def test_run_evals_scores_on_the_workers_in_data_order(fleet: Fleet) -> None:
    worker = fleet.start_worker("--scorer-concurrency", "4")
    completed: list[int] = []
    data = DATA * 10  # 30 items
    result = anyio.run(
        lambda: run_evals(
            data,
            [create_keyword_coverage_scorer()],
            broker=fleet.url,
            on_item_complete=lambda item: completed.append(item.index),
        )
    )
    assert [item.index for item in result.items] == list(range(len(data)))
    assert sorted(completed) == list(range(len(data)))
    local = anyio.run(lambda: run_evals(data, [create_keyword_coverage_scorer()]))
    # The fleet's scores are the in-process ones.
    assert [it.scores["keyword-coverage"].score for it in result.items] == [
        it.scores["keyword-coverage"].score for it in local.items
    ]
    assert result.scores["keyword-coverage"].scored == len(data)
    # The worker emitted each score, as an eval score under its item's span.
    fleet.wait_for_pairs({(it.run.run_id, "keyword-coverage") for it in result.items if it.run})
    spans = fleet.score_spans()
    assert {s.attributes["livescore.source"] for s in spans} == {"eval"}
    assert worker.terminate() == 0


def test_run_evals_with_an_unreachable_broker_says_so() -> None:
    with pytest.raises(BrokerUnavailableError, match="cannot reach the broker"):
        anyio.run(
            lambda: run_evals(
                DATA, [create_keyword_coverage_scorer()], broker="redis://127.0.0.1:9/0"
            )
        )


def test_livescore_eval_broker(fleet: Fleet, tmp_path: Path) -> None:
    fleet.start_worker("--scorer-concurrency", "4")
    data = tmp_path / "data.jsonl"
    data.write_text("\n".join(json.dumps(row) for row in DATA) + "\n")
    out = tmp_path / "results.jsonl"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "livescore.cli",
            "eval",
            str(data),
            "--scorer",
            "keyword-coverage",
            "--broker",
            fleet.url,
            "--out",
            str(out),
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["a", "b", "c"]
    assert rows[0]["scores"]["keyword-coverage"]["score"] == 1.0
    assert "keyword-coverage" in done.stdout


def test_livescore_eval_broker_unreachable_is_a_usage_error(tmp_path: Path) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps(DATA[0]) + "\n")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "livescore.cli",
            "eval",
            str(data),
            "--broker",
            "redis://127.0.0.1:9/0",
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "--broker" in done.stderr
    assert "cannot reach the broker" in done.stderr


def test_livescore_eval_broker_needs_no_local_judge(fleet: Fleet, tmp_path: Path) -> None:
    # The workers judge; here a judge scorer only names itself. These workers lack it, so
    # its scores fail, named, and nothing could be scored (exit 1, not a usage error).
    fleet.start_worker("--scorer-concurrency", "2")
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps(DATA[0]) + "\n")
    out = tmp_path / "results.jsonl"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "livescore.cli",
            "eval",
            str(data),
            "--scorer",
            "hallucination",
            "--broker",
            fleet.url,
            "--out",
            str(out),
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert row["scores"]["hallucination"]["error_type"] == "unknown_scorer"
    # The summary names the failure without a step it does not have (before: "in None").
    assert "(unknown_scorer):" in done.stdout, done.stdout
    assert "None" not in done.stdout, done.stdout
    # The worker read the catalog: it says how to give the workers that scorer.
    assert (
        "build_scorer('hallucination', ScorerOptions(model=...))"
        in (row["scores"]["hallucination"]["error"])
    )


def test_run_evals_scores_a_conversation_item_on_the_workers(fleet: Fleet) -> None:
    from livescore import create_scorer

    fleet.start_worker("--scorer-concurrency", "2")
    # The workers hold the "turns" conversation scorer; here it only names itself.
    turns = create_scorer(
        id="turns", description="turns covered", level="conversation", generate_score=lambda c: 0.0
    )
    conversation = {
        "id": "conv-1",
        "turns": [
            {"input": "Rust ownership rules", "output": "Ownership rules in Rust"},
            {"input": "Go channels", "output": "Channels in Go"},
            {"input": "Python generators", "output": "Nothing relevant"},
        ],
    }
    result = anyio.run(
        lambda: run_evals(
            [conversation, DATA[0]], [turns, create_keyword_coverage_scorer()], broker=fleet.url
        )
    )
    item, plain = result.items
    # The conversation scorer judged all three turns; the run scorer the last one.
    assert item.scores["turns"].score == 3.0
    assert item.scores["keyword-coverage"].run_id == "conv-1:3"
    assert item.scores["keyword-coverage"].score == 0.0
    assert plain.scores["turns"].score == 1.0
    covered = item.scores["turns"].turns
    assert covered is not None
    assert (covered.conversation_id, covered.last) == ("conv-1", 3)
