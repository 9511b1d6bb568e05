"""``livescore eval`` in CI: how often ``--fail-on-regression`` fails a rerun that changed
nothing, and what the judge response cache saves on a rerun.

1. **False alarms.** The same dataset scored twice by a *noisy* judge, nothing else changed,
   then ``EvalResult.compare`` (what ``--baseline --fail-on-regression`` runs). The judge is
   a code scorer drawing from a seeded random source, so thousands of reruns take seconds:

   - labels (McNemar): each item's verdict is right with probability 0.9, flipped otherwise,
     drawn anew in each run (a judge that disagrees with itself on 10 % of items per run);
   - scores (paired bootstrap): each item has a true score in [0, 1], and the judge reports it
     plus Gaussian noise (σ = 0.15), clipped to [0, 1], drawn anew in each run.

   The false-alarm rate is the share of reruns whose verdict is "regressed"; the test's own
   level is 5 % two-sided, so at most 2.5 % for the worse side is what it promises.
   Then the same with the CLI end to end: ``livescore eval --baseline --fail-on-regression``
   against the test server, whose hallucination verdicts flip at random, counting exit 1.

2. **The cache.** ``livescore eval`` on the 200-item HaluEval set (the hallucination scorer,
   three judge calls an item) against the test server with 50 ms of latency a call: a first
   run with an empty cache, then the same command again. Calls counted on the server.

Run: ``python bench/eval_ci.py [--quick]``; the figures go to ``bench/results/eval_ci.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import ROOT, Results, careful_hallucination_reply, console, print_machine, table

from livescore import create_scorer
from livescore.evals import EvalResult, run_evals_sync
from livescore.testing import OpenAITestServer

DATA = ROOT / "data" / "hallucination" / "halueval_qa_200.jsonl"
FLIP = 0.10
SIGMA = 0.15
LATENCY_S = 0.05
_SAVED = re.compile(
    r"judge cache \([^)]*\): (?P<hits>\d+) of (?P<lookups>\d+) request\(s\) answered from it "
    r"\((?P<rate>\d+)%\), (?P<tokens>[\d,]+) tokens and \$(?P<usd>[\d.e-]+) saved"
)
_SCORED_IN = re.compile(r"item\(s\) in ([\d.]+) s")


# -- 1. false alarms -----------------------------------------------------------------------------


def _noisy_run(truth: list[float], rng: random.Random, kind: str) -> EvalResult:
    """One run of a noisy judge over items whose true scores are ``truth``."""
    if kind == "labels":
        drawn = [t if rng.random() >= FLIP else 1.0 - t for t in truth]
    else:
        drawn = [min(1.0, max(0.0, rng.gauss(t, SIGMA))) for t in truth]
    table_ = {f"a{i}": s for i, s in enumerate(drawn)}
    judge = create_scorer(
        id="noisy-judge",
        description="a judge that disagrees with itself",
        generate_score=lambda ctx: table_[ctx.output_text],
    )
    data = [{"id": f"q{i}", "input": "?", "output": f"a{i}"} for i in range(len(truth))]
    return run_evals_sync(data, [judge])


def false_alarms(kind: str, items: int, trials: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    alarms = 0
    improved = 0
    started = time.perf_counter()
    for _ in range(trials):
        if kind == "labels":
            truth = [float(rng.random() < 0.7) for _ in range(items)]
        else:
            truth = [rng.random() for _ in range(items)]
        baseline = _noisy_run(truth, rng, kind)
        rerun = _noisy_run(truth, rng, kind)
        verdict = rerun.compare([it.to_dict() for it in baseline.items]).scorers["noisy-judge"]
        alarms += verdict.verdict == "regressed"
        improved += verdict.verdict == "improved"
    return {
        "kind": kind,
        "test": "McNemar" if kind == "labels" else "paired bootstrap",
        "noise": f"{FLIP:.0%} of verdicts flip per run"
        if kind == "labels"
        else f"Gaussian σ = {SIGMA} per score per run",
        "items": items,
        "trials": trials,
        "false_alarms": alarms,
        "false_alarm_rate": alarms / trials,
        "improved_by_chance_rate": improved / trials,
        "seconds": round(time.perf_counter() - started, 1),
    }


def _flipping_judge(rng: random.Random) -> Any:
    """The test server's hallucination answers, each verdict flipped with probability FLIP."""

    def respond(body: dict[str, Any]) -> Any:
        reply = careful_hallucination_reply(body)
        payload = json.loads(reply.content) if reply.kind == "json" else None
        if not isinstance(payload, dict) or "verdicts" not in payload:
            return reply
        for verdict in payload["verdicts"]:
            if rng.random() < FLIP:
                verdict["verdict"] = "no" if verdict["verdict"] == "yes" else "yes"
        return payload

    return respond


def cli_false_alarms(items: int, trials: int, seed: int) -> dict[str, Any]:
    """``livescore eval --baseline --fail-on-regression`` on identical data, a noisy judge."""
    rng = random.Random(seed)
    alarms = 0
    started = time.perf_counter()
    with (
        tempfile.TemporaryDirectory() as tmp,
        OpenAITestServer(responder=_flipping_judge(rng)) as server,
    ):
        data = Path(tmp) / "data.jsonl"
        data.write_text("".join(DATA.read_text(encoding="utf-8").splitlines(True)[:items]))
        base = Path(tmp) / "base.jsonl"
        for _ in range(trials):
            _eval(server.base_url, data, "--out", str(base), "--no-cache")
            code, _, _ = _eval(
                server.base_url,
                data,
                "--baseline",
                str(base),
                "--fail-on-regression",
                "--no-cache",
                check=False,
            )
            if code not in (0, 1):
                raise RuntimeError(f"livescore eval exited {code}")
            alarms += code == 1
    return {
        "kind": "CLI, hallucination scorer",
        "items": items,
        "trials": trials,
        "false_alarms": alarms,
        "false_alarm_rate": alarms / trials,
        "seconds": round(time.perf_counter() - started, 1),
    }


# -- 2. the cache --------------------------------------------------------------------------------


def _eval(base_url: str, data: Path, *extra: str, check: bool = True) -> tuple[int, str, float]:
    command = [
        sys.executable,
        "-m",
        "livescore.cli",
        "eval",
        str(data),
        "--scorer",
        "hallucination",
        "--model",
        "openai/gpt-4o-mini",
        "--base-url",
        base_url,
        "--concurrency",
        "8",
        "--quiet",
        *extra,
    ]
    env = {**os.environ, "OPENAI_API_KEY": "bench-key", "COLUMNS": "250"}
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    elapsed = time.perf_counter() - started
    if check and done.returncode != 0:
        raise RuntimeError(f"livescore eval failed ({done.returncode}):\n{done.stderr}")
    return done.returncode, done.stdout, elapsed


def cache_rerun(items: int) -> dict[str, Any]:
    with (
        tempfile.TemporaryDirectory() as tmp,
        OpenAITestServer(responder=careful_hallucination_reply, latency=LATENCY_S) as server,
    ):
        data = Path(tmp) / "data.jsonl"
        data.write_text("".join(DATA.read_text(encoding="utf-8").splitlines(True)[:items]))
        cache = Path(tmp) / "cache"
        runs = []
        outputs = []
        for n in range(2):
            before = len(server.requests)
            out = Path(tmp) / f"run{n}.jsonl"
            _, text, wall = _eval(
                server.base_url, data, "--cache-dir", str(cache), "--out", str(out)
            )
            flat = " ".join(text.split())
            saved = _SAVED.search(flat)
            scored = _SCORED_IN.search(flat)
            runs.append(
                {
                    "judge_calls": len(server.requests) - before,
                    "cache_hits": int(saved["hits"]) if saved else 0,
                    "lookups": int(saved["lookups"]) if saved else 0,
                    "tokens_saved": int(saved["tokens"].replace(",", "")) if saved else 0,
                    "usd_saved": float(saved["usd"]) if saved else 0.0,
                    "scoring_s": float(scored.group(1)) if scored else None,
                    "wall_s": round(wall, 2),
                }
            )
            outputs.append(
                [
                    (r["id"], s["score"], s["reason"])
                    for r in map(json.loads, out.read_text().splitlines())
                    for s in r["scores"].values()
                ]
            )
    first, second = runs
    return {
        "items": items,
        "judge_latency_s": LATENCY_S,
        "first": first,
        "rerun": second,
        "hit_rate": second["cache_hits"] / second["lookups"] if second["lookups"] else None,
        # The scoring time the command reports: the process's start-up (about 3 s of
        # imports here, the same in both runs) is not what the cache saves.
        "scoring_time_saved_s": round(first["scoring_s"] - second["scoring_s"], 2),
        "scoring_time_saved_pct": round(
            100 * (first["scoring_s"] - second["scoring_s"]) / first["scoring_s"], 1
        ),
        "same_results": outputs[0] == outputs[1],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer trials, 60 items")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    record = Results("eval_ci", quick=args.quick)
    print_machine("livescore eval in CI: false alarms of --fail-on-regression, the judge cache")
    trials = 100 if args.quick else 1000
    boot_trials = 60 if args.quick else 400
    alarms = [
        false_alarms("labels", 50, trials, seed=1),
        false_alarms("labels", 200, trials, seed=2),
        false_alarms("scores", 50, boot_trials, seed=3),
        false_alarms("scores", 200, boot_trials, seed=4),
    ]
    cli = cli_false_alarms(50, 5 if args.quick else 20, seed=5)
    table(
        "False alarms on identical reruns with a noisy judge (5 % two-sided test)",
        ["judge", "test", "items", "reruns", "failed (regressed)", "rate", "improved by chance"],
        [
            [
                a["noise"],
                a["test"],
                a["items"],
                a["trials"],
                a["false_alarms"],
                f"{a['false_alarm_rate']:.1%}",
                f"{a['improved_by_chance_rate']:.1%}",
            ]
            for a in alarms
        ]
        + [
            [
                f"{FLIP:.0%} of claim verdicts flip per run",
                "CLI --fail-on-regression",
                cli["items"],
                cli["trials"],
                cli["false_alarms"],
                f"{cli['false_alarm_rate']:.1%}",
                "–",
            ]
        ],
    )
    cache = cache_rerun(60 if args.quick else 200)
    table(
        f"The judge cache on a rerun of {cache['items']} items ({LATENCY_S * 1000:.0f} ms a call)",
        ["run", "judge calls", "cache hits", "tokens saved", "USD saved", "scoring s", "wall s"],
        [
            [
                name,
                r["judge_calls"],
                f"{r['cache_hits']} of {r['lookups']}",
                f"{r['tokens_saved']:,}",
                f"${r['usd_saved']:.4f}",
                r["scoring_s"],
                r["wall_s"],
            ]
            for name, r in (("first (empty cache)", cache["first"]), ("rerun", cache["rerun"]))
        ],
    )
    console.print(
        f"hit rate {cache['hit_rate']:.0%}; scoring time {cache['first']['scoring_s']} s → "
        f"{cache['rerun']['scoring_s']} s ({cache['scoring_time_saved_pct']} % saved); "
        f"same results: {cache['same_results']}"
    )
    path = record.write(
        {"false_alarms": alarms, "cli_false_alarms": cli, "cache": cache}, json_path=args.json
    )
    console.print(f"results: {path}")


if __name__ == "__main__":
    main()
