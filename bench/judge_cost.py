"""How well ``livescore eval --estimate`` predicts a run's judge cost and time.

Runs the documented commands as a user would, against the library's own OpenAI-compatible
test server playing ``gpt-4o-mini`` (so the default price table prices it) with a fixed
latency and prompt caching on: it answers the hallucination scorer about each item (the
claims are the output's sentences, the explanation names them) and reports the usage a real
server would, estimated from each request's and answer's text, so the cost varies from item
to item with the context's length and the answer's. For each sample size::

    livescore eval data/hallucination/halueval_qa_200.jsonl --scorer hallucination \\
        --model openai/gpt-4o-mini --base-url <server>/v1 --concurrency 8 \\
        --estimate --estimate-items N

then the full run (``--out``), and compares the estimated cost and time with the full run's
cost (the sum of ``usage.cost_usd`` over the ``--out`` items: what the server reported,
priced) and wall time.

Run: ``python bench/judge_cost.py [--quick]``; the figures go to
``bench/results/judge_cost.json``. ``--quick`` uses the first 60 items and one sample size.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _common import ROOT, Results, careful_hallucination_reply, console, print_machine, table

from livescore.testing import OpenAITestServer

DATA = ROOT / "data" / "hallucination" / "halueval_qa_200.jsonl"
MODEL = "openai/gpt-4o-mini"
CONCURRENCY = 8
LATENCY_S = 0.05
_ESTIMATE = re.compile(
    r"estimate from (?P<sample>\d+) of (?P<total>\d+) item\(s\): judge cost \$(?P<cost>[\d.e-]+)"
    r" for all \d+ \(95 % range \$(?P<low>[\d.e-]+) to \$(?P<high>[\d.e-]+)\)"
)
_TIME = re.compile(r"about (?P<value>[\d.]+) (?P<unit>s|min|h) for the whole dataset")


def _eval(base_url: str, data: Path, *extra: str) -> tuple[str, float]:
    """Run ``livescore eval`` on ``data``; its output and wall time."""
    command = [
        sys.executable,
        "-m",
        "livescore.cli",
        "eval",
        str(data),
        "--scorer",
        "hallucination",
        "--model",
        MODEL,
        "--base-url",
        base_url,
        "--concurrency",
        str(CONCURRENCY),
        "--quiet",
        *extra,
    ]
    env = {**os.environ, "OPENAI_API_KEY": "bench-key", "COLUMNS": "200"}
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"livescore eval failed ({done.returncode}):\n{done.stderr}")
    return done.stdout, elapsed


def _seconds(text: str) -> float:
    match = _TIME.search(text)
    if match is None:
        raise RuntimeError(f"no time estimate in:\n{text}")
    scale = {"s": 1, "min": 60, "h": 3600}[match.group("unit")]
    return float(match.group("value")) * scale


def measure(data: Path, sample_sizes: Sequence[int]) -> dict[str, Any]:
    """Estimate with each sample size, then run in full; the figures."""
    with OpenAITestServer(
        responder=careful_hallucination_reply, latency=LATENCY_S, prompt_caching=True
    ) as server:
        estimates = []
        for size in sample_sizes:
            text, elapsed = _eval(
                server.base_url, data, "--estimate", "--estimate-items", str(size)
            )
            match = _ESTIMATE.search(text)
            if match is None:
                raise RuntimeError(f"no cost estimate in:\n{text}")
            estimates.append(
                {
                    "sample": int(match.group("sample")),
                    "total": int(match.group("total")),
                    "cost_usd": float(match.group("cost")),
                    "cost_low_usd": float(match.group("low")),
                    "cost_high_usd": float(match.group("high")),
                    "seconds": _seconds(text),
                    "estimate_wall_s": round(elapsed, 2),
                }
            )
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "results.jsonl"
            text, _ = _eval(server.base_url, data, "--out", str(out))
            # The scoring time the command reports (the process's start-up is not part of it).
            full_wall = float(re.search(r"item\(s\) in ([\d.]+) s", text).group(1))  # type: ignore[union-attr]
            items = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    costs = [sum(s["usage"]["cost_usd"] or 0.0 for s in item["scores"].values()) for item in items]
    cached = sum(s["usage"]["cached_input_tokens"] for it in items for s in it["scores"].values())
    tokens = sum(
        s["usage"]["input_tokens"] + s["usage"]["output_tokens"]
        for it in items
        for s in it["scores"].values()
    )
    actual = sum(costs)
    for estimate in estimates:
        estimate["cost_error_pct"] = round(100 * (estimate["cost_usd"] - actual) / actual, 1)
        estimate["time_error_pct"] = round(100 * (estimate["seconds"] - full_wall) / full_wall, 1)
        estimate["within_25_pct"] = abs(estimate["cost_error_pct"]) <= 25
        estimate["actual_in_range"] = (
            estimate["cost_low_usd"] <= actual <= estimate["cost_high_usd"]
        )
    return {
        "dataset": str(data.relative_to(ROOT)) if data.is_relative_to(ROOT) else str(data),
        "items": len(items),
        "model": MODEL,
        "concurrency": CONCURRENCY,
        "judge_latency_s": LATENCY_S,
        "full_run": {
            "cost_usd": actual,
            "cost_per_item_min_usd": min(costs),
            "cost_per_item_max_usd": max(costs),
            "tokens": tokens,
            "cached_input_tokens": cached,
            "wall_s": round(full_wall, 2),
        },
        "estimates": estimates,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="60 items, one sample size")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    print_machine("judge cost: livescore eval --estimate against the full run")
    record = Results("judge_cost", quick=args.quick)
    with tempfile.TemporaryDirectory() as tmp:
        data = DATA
        sizes: Sequence[int] = (10, 20, 40)
        if args.quick:
            data = Path(tmp) / "first-60.jsonl"
            lines = DATA.read_text(encoding="utf-8").splitlines()[:60]
            data.write_text("\n".join(lines) + "\n", encoding="utf-8")
            sizes = (10,)
        figures = measure(data, sizes)
    full = figures["full_run"]
    console.print(
        f"full run: {figures['items']} items, judge cost ${full['cost_usd']:.5f} "
        f"(${full['cost_per_item_min_usd']:.6f} to ${full['cost_per_item_max_usd']:.6f} per "
        f"item; {full['cached_input_tokens']:,} of {full['tokens']:,} tokens cached input), "
        f"scored in {full['wall_s']:.1f} s at --concurrency {figures['concurrency']}"
    )
    table(
        "--estimate against the full run",
        ["sample", "estimated cost", "95 % range", "error", "estimated time", "time error"],
        [
            (
                f"{e['sample']} of {e['total']}",
                f"${e['cost_usd']:.5f}",
                f"${e['cost_low_usd']:.5f} – ${e['cost_high_usd']:.5f}",
                f"{e['cost_error_pct']:+.1f} %",
                f"{e['seconds']:.1f} s",
                f"{e['time_error_pct']:+.1f} %",
            )
            for e in figures["estimates"]
        ],
    )
    record.write(figures, json_path=args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
