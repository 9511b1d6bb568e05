"""Benchmark 3: keyword coverage speed, livescore beside Mastra's own scorer under Node.js.

Scores every pair of the fixed corpus (bench/corpus/keyword_coverage.jsonl, 216 realistic
agent question/answer pairs) with:

- livescore's ``create_keyword_coverage_scorer()`` through the full scorer pipeline
  (``await scorer.run(run)``, as the live worker calls it), and its keyword extraction and
  matching alone;
- Mastra's ``createKeywordCoverageScorer()`` from ``@mastra/evals`` (the version pinned in
  ``_common.MASTRA_VERSIONS``), installed with npm into ./.bench-mastra (gitignored) and run
  by a small Node.js script this benchmark writes there.

It prints scores per second (the first, cold pass and warm passes), the mean score, and the
share of pairs where both give the same score, with the reasons for the disagreements found by
ablation (livescore re-run without stemming, without compound terms…). The Mastra column is
skipped, with a message, when Node.js, npm or the package is not available.

Run: ``python bench/keyword_coverage.py [--seconds 3] [--quick] [--no-mastra] [--json out.json]``;
the figures go to ``bench/results/keyword_coverage.json`` (see ``_common.Results``).
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from _common import MASTRA_DIR, Results, ensure_mastra, mastra_meta, print_machine

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from livescore import Run  # noqa: E402
from livescore.scorers import _keyword_coverage, _keywords, create_keyword_coverage_scorer  # noqa: E402
from livescore.scorers._keywords import KeywordExtractor  # noqa: E402

CORPUS = Path(__file__).with_name("corpus") / "keyword_coverage.jsonl"
SAME = 1e-9

NODE_SCRIPT = r"""
// Written by bench/keyword_coverage.py: scores the corpus with Mastra's own scorer.
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";

async function loadScorer() {
  // @mastra/evals 1.x exports prebuilt scorers here; 0.x from "scorers/code".
  for (const path of ["@mastra/evals/scorers/prebuilt", "@mastra/evals/scorers/code"]) {
    try {
      const mod = await import(path);
      if (mod.createKeywordCoverageScorer) return mod.createKeywordCoverageScorer;
    } catch (e) { /* try the next one */ }
  }
  throw new Error("createKeywordCoverageScorer not found in @mastra/evals");
}

const [corpusPath, secondsArg] = process.argv.slice(2);
const seconds = Number(secondsArg);
const pairs = readFileSync(corpusPath, "utf8").split("\n").filter(Boolean).map(JSON.parse);
// Mastra's agent scorers read messages: input.inputMessages and an output message list.
const runs = pairs.map((p) => ({
  input: { inputMessages: [{ role: "user", content: p.input }] },
  output: [{ role: "assistant", content: p.output }],
}));
const createKeywordCoverageScorer = await loadScorer();
const scorer = createKeywordCoverageScorer();

const results = [];
let start = performance.now();
for (let i = 0; i < runs.length; i++) {
  const r = await scorer.run(runs[i]);
  const pre = r.preprocessStepResult ?? {};
  results.push({
    id: pairs[i].id,
    score: r.score,
    reference: [...(pre.referenceKeywords ?? [])],
    response: [...(pre.responseKeywords ?? [])],
  });
}
const coldSeconds = (performance.now() - start) / 1000;

let scored = 0;
start = performance.now();
while ((performance.now() - start) / 1000 < seconds) {
  for (const run of runs) await scorer.run(run);
  scored += runs.length;
}
const warmSeconds = (performance.now() - start) / 1000;

// The same work without Mastra's scorer pipeline: keyword-extractor, as the scorer calls it.
const kx = (await import("keyword-extractor")).default;
const options = { language: "english", remove_digits: true, return_changed_case: true,
  remove_duplicates: true };
function extractionOnly(pair) {
  const ref = new Set(kx.extract(pair.input, options));
  const resp = new Set(kx.extract(pair.output, options));
  if (!ref.size) return 1;
  return [...ref].filter((k) => resp.has(k)).length / ref.size;
}
start = performance.now();
const rawScores = pairs.map(extractionOnly);
const rawColdSeconds = (performance.now() - start) / 1000;
let rawScored = 0;
start = performance.now();
while ((performance.now() - start) / 1000 < seconds) {
  for (const pair of pairs) extractionOnly(pair);
  rawScored += pairs.length;
}
const rawWarmSeconds = (performance.now() - start) / 1000;
const rawSame = rawScores.filter((s, i) => Math.abs(s - results[i].score) < 1e-9).length;

const version = (name) =>
  JSON.parse(readFileSync(`node_modules/${name}/package.json`, "utf8")).version;
console.log(JSON.stringify({
  node: process.version,
  evals: version("@mastra/evals"),
  core: version("@mastra/core"),
  cold_per_s: runs.length / coldSeconds,
  warm_per_s: scored / warmSeconds,
  warm_scores: scored,
  raw_cold_per_s: pairs.length / rawColdSeconds,
  raw_warm_per_s: rawScored / rawWarmSeconds,
  raw_scores: Object.fromEntries(pairs.map((p, i) => [p.id, rawScores[i]])),
  raw_same: rawSame,
  results,
}));
"""


@dataclass
class Column:
    """One implementation's figures."""

    name: str
    cold_per_s: float | None
    warm_per_s: float | None
    scores: dict[str, float]
    notes: str = ""
    reference: dict[str, list[str]] = field(default_factory=dict)
    response: dict[str, list[str]] = field(default_factory=dict)
    missing: dict[str, list[str]] = field(default_factory=dict)


def load_corpus(path: Path) -> list[dict[str, str]]:
    pairs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    if not pairs:
        raise SystemExit(f"empty corpus: {path}")
    return pairs


# -- livescore --------------------------------------------------------------------------------


async def _score_all(scorer: Any, runs: list[Run]) -> tuple[list[Any], float]:
    started = time.perf_counter()
    results = [await scorer.run(run) for run in runs]
    return results, time.perf_counter() - started


async def _warm(scorer: Any, runs: list[Run], seconds: float) -> float:
    scored = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        for run in runs:
            await scorer.run(run)
        scored += len(runs)
    return scored / (time.perf_counter() - started)


def _cold_start() -> None:
    # A truly cold first pass: forget the stems and token chunks earlier columns cached.
    _keywords._stem.cache_clear()
    _keyword_coverage._extractor.cache_clear()


def livescore_column(
    pairs: list[dict[str, str]], seconds: float, name: str = "livescore", **options: Any
) -> Column:
    _cold_start()
    scorer = create_keyword_coverage_scorer(**options)
    runs = [Run(input=p["input"], output=p["output"], run_id=p["id"]) for p in pairs]

    async def measure() -> tuple[list[Any], float, float | None]:
        results, cold = await _score_all(scorer, runs)
        warm = await _warm(scorer, runs, seconds) if seconds > 0 else None
        return results, cold, warm

    results, cold, warm = anyio.run(measure)
    column = Column(name, len(runs) / cold, warm, {r.run_id: float(r.score) for r in results})
    for r in results:
        column.reference[r.run_id] = sorted(r.preprocess_step_result["reference_keywords"])
        column.response[r.run_id] = sorted(r.preprocess_step_result["response_keywords"])
        column.missing[r.run_id] = r.analyze_step_result["missing_keywords"]
    return column


def extraction_column(pairs: list[dict[str, str]], seconds: float) -> Column:
    """Keyword extraction and matching alone: the scorer's own work, without the pipeline."""
    _cold_start()
    extractor = KeywordExtractor()

    def one(pair: dict[str, str]) -> float:
        ref, resp = extractor.extract(pair["input"]), extractor.extract(pair["output"])
        if not len(ref):
            return 1.0 if not len(resp) else 0.0
        return sum(1 for key in ref.terms if resp.covers(key)) / len(ref)

    started = time.perf_counter()
    scores = {p["id"]: one(p) for p in pairs}
    cold = len(pairs) / (time.perf_counter() - started)
    scored = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        for pair in pairs:
            one(pair)
        scored += len(pairs)
    warm = scored / (time.perf_counter() - started) if seconds > 0 else None
    return Column("livescore extraction only", cold, warm, scores, notes="no scorer pipeline")


# -- Mastra -----------------------------------------------------------------------------------


def mastra_columns(corpus: Path, seconds: float) -> tuple[Column, Column] | str:
    """Mastra's figures (its scorer, and its keyword extraction alone), or why they are
    missing."""
    why = ensure_mastra()
    if why is not None:
        return why
    script = MASTRA_DIR / "score_keyword_coverage.mjs"
    script.write_text(NODE_SCRIPT, encoding="utf-8")
    try:
        done = subprocess.run(
            ["node", script.name, str(corpus), str(seconds)],
            cwd=MASTRA_DIR,
            capture_output=True,
            text=True,
            timeout=600 + seconds,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return "the Node.js scoring script timed out"
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-3:]
        return "the Node.js scoring script failed: " + " / ".join(tail)
    data = json.loads(done.stdout.strip().splitlines()[-1])
    column = Column(
        f"Mastra @mastra/evals {data['evals']}",
        data["cold_per_s"],
        data["warm_per_s"] if seconds > 0 else None,
        {r["id"]: float(r["score"]) for r in data["results"]},
        notes=f"Node.js {data['node']}, @mastra/core {data['core']}",
    )
    for r in data["results"]:
        ref, resp = r["reference"], set(r["response"])
        column.reference[r["id"]] = sorted(ref)
        column.response[r["id"]] = sorted(resp)
        column.missing[r["id"]] = sorted(k for k in ref if k not in resp)
    raw = Column(
        "Mastra keyword-extractor only",
        data["raw_cold_per_s"],
        data["raw_warm_per_s"] if seconds > 0 else None,
        {k: float(v) for k, v in data["raw_scores"].items()},
        notes=(
            "no scorer pipeline; same score as Mastra's scorer on "
            f"{data['raw_same']}/{len(data['results'])} pairs"
        ),
    )
    return column, raw


# -- report -----------------------------------------------------------------------------------


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def _mean(scores: dict[str, float]) -> float:
    return sum(scores.values()) / len(scores)


def agreement(a: dict[str, float], b: dict[str, float]) -> float:
    return sum(1 for k in a if abs(a[k] - b[k]) < SAME) / len(a)


def cause(pair_id: str, ours: Column, ablations: dict[str, Column], mastra: Column) -> str:
    """Why livescore and Mastra disagree on a pair, found by switching features off."""
    target = mastra.scores[pair_id]
    if not ours.reference[pair_id] or not mastra.reference[pair_id]:
        return "empty rules (an input without keywords)"
    for label, column in ablations.items():
        if abs(column.scores[pair_id] - target) < SAME:
            return label
    return "tokenization (technical terms, markdown, punctuation)"


def report(
    pairs: list[dict[str, str]],
    columns: list[Column],
    mastra_figures: tuple[Column, Column] | str,
    ablations: dict[str, Column],
    examples: int,
) -> dict[str, Any]:
    ours = columns[0]
    mastra: Column | str = mastra_figures if isinstance(mastra_figures, str) else mastra_figures[0]
    rows = [*columns, *(mastra_figures if not isinstance(mastra_figures, str) else ())]
    print()
    print(f"Keyword coverage: {len(pairs)} pairs from {CORPUS.relative_to(ROOT)}")
    print(f"Python {platform.python_version()} on {platform.machine()}, one thread each")
    print()
    header = (
        f"| {'implementation':<38} | {'pairs':>5} | {'cold scores/s':>13} | "
        f"{'warm scores/s':>13} | {'mean score':>10} | {'same score as Mastra':>20} |"
    )
    print(header)
    print("|" + "|".join("-" * (len(part)) for part in header.split("|")[1:-1]) + "|")
    summary: dict[str, Any] = {"pairs": len(pairs), "rows": []}
    for column in rows:
        same = (
            f"{agreement(column.scores, mastra.scores):.1%}"
            if isinstance(mastra, Column) and not column.name.startswith("Mastra")
            else "-"
        )
        print(
            f"| {column.name:<38} | {len(column.scores):>5} | {_rate(column.cold_per_s):>13} | "
            f"{_rate(column.warm_per_s):>13} | {_mean(column.scores):>10.3f} | {same:>20} |"
        )
        summary["rows"].append(
            {
                "implementation": column.name,
                "cold_scores_per_s": column.cold_per_s,
                "warm_scores_per_s": column.warm_per_s,
                "mean_score": _mean(column.scores),
                "same_score_as_mastra": same,
                "notes": column.notes,
            }
        )
    for column in rows:
        if column.notes:
            print(f"  {column.name}: {column.notes}")
    if not isinstance(mastra, Column):
        print(f"\nMastra column skipped: {mastra}")
        return summary

    print("\nAgreement with Mastra when livescore's extra features are switched off:")
    summary["agreement_without"] = {}
    for label, column in ablations.items():
        share = agreement(column.scores, mastra.scores)
        summary["agreement_without"][label] = share
        print(f"  livescore without {label:<28} {share:.1%}")

    disagreements = [
        p["id"] for p in pairs if abs(ours.scores[p["id"]] - mastra.scores[p["id"]]) >= SAME
    ]
    causes: dict[str, list[str]] = {}
    for pair_id in disagreements:
        causes.setdefault(cause(pair_id, ours, ablations, mastra), []).append(pair_id)
    higher = sum(1 for k in disagreements if ours.scores[k] > mastra.scores[k])
    print(
        f"\n{len(disagreements)} disagreements; livescore scores higher on {higher}, "
        f"lower on {len(disagreements) - higher}."
    )
    print("First feature whose removal makes livescore agree with Mastra:")
    for label, ids in sorted(causes.items(), key=lambda item: -len(item[1])):
        print(f"  {label:<56} {len(ids):>4}")
    summary["disagreements"] = {label: len(ids) for label, ids in causes.items()}
    summary["livescore_higher"] = higher
    summary["agreement"] = agreement(ours.scores, mastra.scores)

    print("\nExamples:")
    by_input = {p["id"]: p for p in pairs}
    shown = 0
    for label, ids in sorted(causes.items(), key=lambda item: -len(item[1])):
        for pair_id in ids[: max(1, examples // max(1, len(causes)))]:
            if shown >= examples:
                break
            shown += 1
            pair = by_input[pair_id]
            print(f"- {pair_id} [{label}]  input: {pair['input']!r}")
            print(
                f"    livescore {ours.scores[pair_id]:.3f}, missing {ours.missing[pair_id]}; "
                f"Mastra {mastra.scores[pair_id]:.3f}, missing {mastra.missing[pair_id]}"
            )
    return summary


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--seconds", type=float, help="warm timing per column (default 3)")
    parser.add_argument("--quick", action="store_true", help="1 s of warm timing per column")
    parser.add_argument("--no-mastra", action="store_true", help="skip the Node.js column")
    parser.add_argument("--examples", type=int, default=6, help="disagreements to show")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    partial = args.no_mastra or args.seconds is not None or args.corpus != CORPUS
    record = Results("keyword_coverage", quick=args.quick, partial=partial)
    if args.seconds is None:
        args.seconds = 1.0 if args.quick else 3.0
    print_machine("Keyword coverage: livescore beside Mastra's own scorer under Node.js")

    pairs = load_corpus(args.corpus)
    columns = [
        livescore_column(pairs, args.seconds),
        extraction_column(pairs, args.seconds),
    ]
    mastra: tuple[Column, Column] | str = (
        "--no-mastra given" if args.no_mastra else mastra_columns(args.corpus, args.seconds)
    )
    ablations: dict[str, Column] = {}
    if not isinstance(mastra, str):
        ablations = {
            "stemming": livescore_column(pairs, 0, stemming=False),
            "compound terms": livescore_column(pairs, 0, builtin_compound_terms=False),
            "stemming and compound terms": livescore_column(
                pairs, 0, stemming=False, builtin_compound_terms=False
            ),
        }
    summary = report(pairs, columns, mastra, ablations, args.examples)
    if not isinstance(mastra, str):
        record.extra["mastra"] = mastra_meta()
    record.write(summary, json_path=args.json)


if __name__ == "__main__":
    main()
