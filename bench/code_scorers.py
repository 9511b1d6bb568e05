"""Benchmark 5: the code scorers' speed beside Mastra's own implementations under Node.js.

For each code scorer — completeness, content similarity, textual difference, tone, tool-call
accuracy, trajectory — scores per second on short and long inputs, livescore (the full scorer
pipeline, ``await scorer.run(run)`` as the live worker calls it) beside Mastra's
``@mastra/evals`` 1.10.2 (installed with npm into ./.bench-mastra, gitignored, and run by a
Node.js script this benchmark writes there), then the agreement of the two where their
definitions coincide.

Inputs, built here from the fixed corpus (bench/corpus/keyword_coverage.jsonl) with a fixed
seed:

- text scorers: *short* pairs, a reference of about 200 characters (an agent answer) and a
  response that edits it (about 15 % of the words replaced, some dropped); *long* pairs, a
  reference of 20,000 characters (answers concatenated) and an edited response of about the
  same length. Mastra compares the user's input with the output; livescore's scorers get the
  reference as the input (no ground truth), so both compare the same two texts.
- tool scorers: *short* runs of 3 tool calls and *long* runs of 100, names drawn from six
  tools, with Mastra's equivalent message parts (tool-call accuracy) and trajectory steps.

*cold* is the first pass (livescore's caches cleared first; Node's JIT cold), *warm* the
steady state over repeated passes: the best of three rounds of ``--seconds`` / 3 each, for
both, so a round slowed by other work on a shared machine does not decide. Mastra's textual
difference fills an n × m table: a long pair takes seconds to tens of seconds and gigabytes in
Node (the results file holds the rate and Node's peak RSS), so only
``--mastra-long-pairs`` of them run (cold only), and none with ``--quick``.

Run: ``python bench/code_scorers.py [--seconds 2] [--quick] [--no-mastra] [--json out.json]``.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from _common import (
    MASTRA_DIR,
    MASTRA_VERSIONS,
    Results,
    console,
    ensure_mastra,
    mastra_meta,
    print_machine,
    table,
)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from livescore import Run, Scorer, Step, ToolCall  # noqa: E402
from livescore.scorers import (  # noqa: E402
    _completeness,
    _keyword_coverage,
    _keywords,
    _tone,
    create_completeness_scorer,
    create_content_similarity_scorer,
    create_textual_difference_scorer,
    create_tone_scorer,
    create_tool_call_accuracy_scorer,
    create_trajectory_scorer,
)

CORPUS = Path(__file__).with_name("corpus") / "keyword_coverage.jsonl"
MASTRA_VERSION = MASTRA_VERSIONS["@mastra/evals"]  # pinned in _common.py
TOOLS = ("search", "get_weather", "lookup_order", "summarize", "send_email", "read_doc")
SEED = 20260

NODE_SCRIPT = r"""
// Written by bench/code_scorers.py: times one of Mastra's code scorers on the runs of a spec.
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import * as prebuilt from "@mastra/evals/scorers/prebuilt";

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));
const o = spec.options ?? {};
const factories = {
  "completeness": () => prebuilt.createCompletenessScorer(),
  "content-similarity": () => prebuilt.createContentSimilarityScorer(
    { ignoreCase: o.ignore_case ?? true, ignoreWhitespace: o.ignore_whitespace ?? true }),
  "textual-difference": () => prebuilt.createTextualDifferenceScorer(),
  "tone": () => prebuilt.createToneScorer(),
  "tool-call-accuracy": () => prebuilt.createToolCallAccuracyScorerCode({
    expectedTool: o.expected_tool, expectedToolOrder: o.expected_tool_order,
    strictMode: o.strict ?? false }),
  "trajectory": () => prebuilt.createTrajectoryScorerCode({ defaults: {
    steps: o.expected_steps.map((name) => ({ name })),
    ...(o.max_steps === undefined ? {} : { maxSteps: o.max_steps }) } }),
};
const scorer = factories[spec.scorer]();
const runs = spec.runs;
const scores = [];
let start = performance.now();
for (const run of runs) scores.push((await scorer.run(run)).score);
const cold = runs.length / ((performance.now() - start) / 1000);
// The best of three rounds: on a shared machine, the round least disturbed by others.
let warm = null;
for (let round = 0; round < 3 && spec.seconds > 0; round++) {
  let scored = 0;
  start = performance.now();
  while ((performance.now() - start) / 1000 < spec.seconds / 3) {
    for (const run of runs) await scorer.run(run);
    scored += runs.length;
  }
  warm = Math.max(warm ?? 0, scored / ((performance.now() - start) / 1000));
}
const version = JSON.parse(readFileSync("node_modules/@mastra/evals/package.json", "utf8")).version;
// Peak resident memory of the Node process (kB): what the n × m table of a long pair costs.
const maxRssKb = process.resourceUsage().maxRSS;
console.log(
  JSON.stringify({ node: process.version, evals: version, cold, warm, scores, maxRssKb }));
"""


# -- inputs -----------------------------------------------------------------------------------


@dataclass
class Case:
    """What one scorer is timed on: livescore runs and Mastra's equivalent runs."""

    runs: list[Run]
    mastra_runs: list[Any]


def _answers() -> list[str]:
    lines = CORPUS.read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["output"] for line in lines if line.strip()]


def _cut(text: str, size: int) -> str:
    if len(text) <= size:
        return text
    cut = text[:size]
    return cut[: cut.rfind(" ")] if " " in cut else cut


def _edit(text: str, rng: random.Random, vocabulary: list[str]) -> str:
    """An edited version: about 15 % of the words replaced, 5 % dropped."""
    words = []
    for word in text.split(" "):
        roll = rng.random()
        if roll < 0.05:
            continue
        words.append(rng.choice(vocabulary) if roll < 0.2 else word)
    return " ".join(words)


def text_pairs(long: bool, count: int) -> list[tuple[str, str]]:
    rng = random.Random(SEED + long)
    answers = [a for a in _answers() if len(a) >= 200]
    vocabulary = " ".join(answers).split()
    pairs = []
    for index in range(count):
        if long:
            shuffled = answers[:]
            rng.shuffle(shuffled)
            reference = _cut(" ".join(shuffled), 20_000)
        else:
            reference = _cut(answers[index % len(answers)], 200)
        pairs.append((reference, _edit(reference, rng, vocabulary)))
    return pairs


def text_case(pairs: list[tuple[str, str]]) -> Case:
    runs = [Run(input=ref, output=resp, run_id=f"p{i}") for i, (ref, resp) in enumerate(pairs)]
    mastra = [
        {
            "input": {
                "inputMessages": [{"role": "user", "content": ref}],
                "rememberedMessages": [],
                "systemMessages": [],
                "taggedSystemMessages": {},
            },
            "output": [{"role": "assistant", "content": resp}],
        }
        for ref, resp in pairs
    ]
    return Case(runs, mastra)


def tool_sequences(long: bool, count: int) -> list[list[tuple[str, bool]]]:
    """(tool name, succeeded) sequences; a call fails one time in ten."""
    rng = random.Random(SEED + 7 + long)
    size = 100 if long else 3
    return [[(rng.choice(TOOLS), rng.random() > 0.1) for _ in range(size)] for _ in range(count)]


def tool_case(sequences: list[list[tuple[str, bool]]], *, trajectory: bool) -> Case:
    runs = []
    mastra: list[Any] = []
    for i, calls in enumerate(sequences):
        steps = [
            Step(
                kind="tool",
                name=name,
                index=j,
                tool_call=ToolCall(
                    name, f"c{j}", {"n": j}, None if ok else "x", None if ok else "error"
                ),
            )
            for j, (name, ok) in enumerate(calls)
        ]
        runs.append(Run(input="Do it.", output="Done.", steps=steps, run_id=f"t{i}"))
        user = {"inputMessages": [{"role": "user", "content": "Do it."}]}
        if trajectory:
            output: Any = {
                "steps": [
                    {"stepType": "tool_call", "name": name, "toolArgs": {"n": j}, "success": ok}
                    for j, (name, ok) in enumerate(calls)
                ]
            }
        else:
            parts: list[Any] = [
                {
                    "type": "tool-invocation",
                    "toolInvocation": {
                        "state": "result" if ok else "output-error",
                        "toolCallId": f"c{j}",
                        "toolName": name,
                        "args": {"n": j},
                        "result": "x" if ok else {"error": "error"},
                    },
                }
                for j, (name, ok) in enumerate(calls)
            ]
            parts.append({"type": "text", "text": "Done."})
            output = [{"role": "assistant", "content": {"format": 2, "parts": parts}}]
        mastra.append({"input": user, "output": output})
    return Case(runs, mastra)


# -- livescore --------------------------------------------------------------------------------


def _clear_caches() -> None:
    # A cold first pass: forget the stems, token chunks and sentence tones cached so far.
    _keywords._stem.cache_clear()
    _keyword_coverage._extractor.cache_clear()
    _completeness._extractor.cache_clear()
    _tone._sentence_tone.cache_clear()


@dataclass
class Timing:
    cold: float | None
    warm: float | None
    scores: list[float] = field(default_factory=list)
    note: str = ""
    items: int = 0
    peak_rss_kb: int | None = None  # Mastra's Node process


def time_livescore(make: Callable[[], Scorer], runs: list[Run], seconds: float) -> Timing:
    _clear_caches()
    scorer = make()

    async def measure() -> Timing:
        started = time.perf_counter()
        results = [await scorer.run(run) for run in runs]
        cold = len(runs) / (time.perf_counter() - started)
        # The best of three rounds: on a shared machine, the round least disturbed by others.
        warm: float | None = None
        for _ in range(3 if seconds > 0 else 0):
            scored = 0
            started = time.perf_counter()
            while time.perf_counter() - started < seconds / 3:
                for run in runs:
                    await scorer.run(run)
                scored += len(runs)
            warm = max(warm or 0.0, scored / (time.perf_counter() - started))
        return Timing(cold, warm, [float(r.score) for r in results])

    return anyio.run(measure)


# -- Mastra -----------------------------------------------------------------------------------


def time_mastra(
    scorer: str, runs: list[Any], seconds: float, options: dict[str, Any] | None = None
) -> Timing | str:
    """Mastra's figures for one scorer, or why they are missing."""
    script = MASTRA_DIR / "time_code_scorer.mjs"
    script.write_text(NODE_SCRIPT, encoding="utf-8")
    spec = MASTRA_DIR / "spec.json"
    spec.write_text(
        json.dumps({"scorer": scorer, "options": options or {}, "runs": runs, "seconds": seconds}),
        encoding="utf-8",
    )
    try:
        # Textual difference on long pairs needs the room of its n × m table.
        done = subprocess.run(
            ["node", "--max-old-space-size=12000", script.name, spec.name],
            cwd=MASTRA_DIR,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return "timed out after 900 s"
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-2:]
        return "failed: " + " / ".join(tail)
    data = json.loads(done.stdout.strip().splitlines()[-1])
    return Timing(
        data["cold"],
        data["warm"],
        [float(s) for s in data["scores"]],
        items=len(runs),
        peak_rss_kb=data.get("maxRssKb"),
    )


# -- the benchmark ----------------------------------------------------------------------------

SCORERS: dict[str, Callable[[], Scorer]] = {
    "completeness": create_completeness_scorer,
    "content-similarity": create_content_similarity_scorer,
    "textual-difference": create_textual_difference_scorer,
    "tone": create_tone_scorer,
    "tool-call-accuracy": lambda: create_tool_call_accuracy_scorer(expected_tool="search"),
    "trajectory": lambda: create_trajectory_scorer(
        expected_steps=["search", "summarize"], max_steps=5
    ),
}
MASTRA_OPTIONS: dict[str, dict[str, Any]] = {
    "tool-call-accuracy": {"expected_tool": "search"},
    "trajectory": {"expected_steps": ["search", "summarize"], "max_steps": 5},
}


def _rate(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if value >= 10 else f"{value:.2g}"


def _times(ours: float | None, theirs: float | None) -> str:
    return "-" if ours is None or not theirs else f"{ours / theirs:,.1f}×"


def speed(args: argparse.Namespace, mastra_ready: str | None) -> list[dict[str, Any]]:
    short_pairs = text_pairs(False, 40 if args.quick else 200)
    long_pairs = text_pairs(True, 3 if args.quick else 6)
    cases = {
        "short": {
            "text": text_case(short_pairs),
            "tools": tool_case(tool_sequences(False, 200), trajectory=False),
            "trajectory": tool_case(tool_sequences(False, 200), trajectory=True),
        },
        "long": {
            "text": text_case(long_pairs),
            "tools": tool_case(tool_sequences(True, 20), trajectory=False),
            "trajectory": tool_case(tool_sequences(True, 20), trajectory=True),
        },
    }
    rows: list[dict[str, Any]] = []
    for name, make in SCORERS.items():
        kind = {"tool-call-accuracy": "tools", "trajectory": "trajectory"}.get(name, "text")
        for size in ("short", "long"):
            case = cases[size][kind]
            ours = time_livescore(make, case.runs, args.seconds)
            theirs: Timing | str = mastra_ready or "--no-mastra"
            if mastra_ready is None:
                mastra_runs = case.mastra_runs
                seconds = args.seconds
                if name == "textual-difference" and size == "long":
                    mastra_runs = mastra_runs[: 0 if args.quick else args.mastra_long_pairs]
                    seconds = 0  # one cold pass: each pair takes tens of seconds
                if name == "completeness" and size == "long":
                    seconds = 0  # seconds per pair
                theirs = (
                    time_mastra(name, mastra_runs, seconds, MASTRA_OPTIONS.get(name))
                    if mastra_runs
                    else "skipped (--quick)"
                )
            rows.append(
                {
                    "scorer": name,
                    "size": size,
                    "items": len(case.runs),
                    "livescore": ours,
                    "mastra": theirs,
                }
            )
            print(f"  timed {name} ({size})", flush=True)
    return rows


def _label(size: str, kind: str) -> str:
    if kind in ("tools", "trajectory"):
        return "3 calls" if size == "short" else "100 calls"
    return "≈200 chars" if size == "short" else "20,000 chars"


def print_speed(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    table_rows = []
    summary = []
    for row in rows:
        ours: Timing = row["livescore"]
        theirs = row["mastra"]
        kind = {"tool-call-accuracy": "tools", "trajectory": "trajectory"}.get(row["scorer"], "")
        m_cold = theirs.cold if isinstance(theirs, Timing) else None
        m_warm = theirs.warm if isinstance(theirs, Timing) else None
        # Against Mastra's best figure: its warm rate, or its only (cold) one.
        best = m_warm if m_warm is not None else m_cold
        ours_best = ours.warm if ours.warm is not None else ours.cold
        table_rows.append(
            [
                row["scorer"],
                _label(row["size"], kind),
                _rate(ours.cold),
                _rate(ours.warm),
                _rate(m_cold) if isinstance(theirs, Timing) else str(theirs),
                _rate(m_warm),
                _times(ours.cold, m_cold),
                _times(ours_best, best),
            ]
        )
        summary.append(
            {
                "scorer": row["scorer"],
                "size": row["size"],
                "livescore_cold_per_s": ours.cold,
                "livescore_warm_per_s": ours.warm,
                "mastra_cold_per_s": m_cold,
                "mastra_warm_per_s": m_warm,
                "mastra_items": theirs.items if isinstance(theirs, Timing) else None,
                "mastra_peak_rss_kb": theirs.peak_rss_kb if isinstance(theirs, Timing) else None,
                "mastra_note": None if isinstance(theirs, Timing) else str(theirs),
            }
        )
    table(
        "Scores per second (one thread each; livescore through the full scorer pipeline)",
        [
            "scorer",
            "input",
            "livescore cold",
            "livescore warm",
            f"Mastra {MASTRA_VERSION} cold",
            "Mastra warm",
            "× cold",
            "× warm",
        ],
        table_rows,
    )
    console.print(
        "× warm compares steady states (Mastra's cold figure where it has no warm one). "
        "livescore's warm figures include its caches (stems, token chunks, sentence tones), "
        "as in production; cold ones do not."
    )
    return summary


# -- agreement --------------------------------------------------------------------------------


@dataclass
class Agreement:
    name: str
    same: int
    total: int
    note: str
    higher: int = 0  # items where livescore scores higher than Mastra


def _compare(
    name: str, ours: list[float], theirs: list[float], note: str, digits: int | None
) -> Agreement:
    def same(a: float, b: float) -> bool:
        if digits is not None:
            return round(a + 1e-12, digits) == round(b, digits)
        return abs(a - b) <= 1e-12

    pairs = list(zip(ours, theirs, strict=True))
    return Agreement(
        name,
        sum(same(a, b) for a, b in pairs),
        len(pairs),
        note,
        higher=sum(not same(a, b) and a > b for a, b in pairs),
    )


def agreement(args: argparse.Namespace) -> list[Agreement]:
    pairs = text_pairs(False, 60 if args.quick else 200)
    # A few pairs where case, whitespace and emoji matter.
    pairs += [
        ("Ice Cream  and\u00a0cake 🍰", "icecream AND cake 🍩"),
        ("Your parcel\tis in LYON.", "your parcel is in lyon."),
        ("", "Something"),
        ("Same", "Same"),
    ]
    case = text_case(pairs)
    found: list[Agreement] = []

    def both(
        name: str,
        make: Callable[[], Scorer],
        mastra_name: str,
        options: dict[str, Any],
        runs: Case,
        note: str,
        digits: int | None = None,
    ) -> None:
        ours = time_livescore(make, runs.runs, 0).scores
        theirs = time_mastra(mastra_name, runs.mastra_runs, 0, options)
        if isinstance(theirs, str):
            found.append(Agreement(name, 0, 0, f"Mastra {theirs}"))
            return
        found.append(_compare(name, ours, theirs.scores, note, digits))

    for ignore_case in (True, False):
        both(
            f"content similarity (ignore_case={ignore_case})",
            lambda c=ignore_case: create_content_similarity_scorer(ignore_case=c),
            "content-similarity",
            {"ignore_case": ignore_case, "ignore_whitespace": True},
            case,
            "identical by design",
        )
    both(
        "content similarity (ignore_whitespace=False)",
        lambda: create_content_similarity_scorer(ignore_whitespace=False),
        "content-similarity",
        {"ignore_whitespace": False},
        case,
        "differs by design: Mastra's option changes nothing (string-similarity drops "
        "whitespace anyway); livescore counts whitespace",
    )
    both(
        "textual difference",
        create_textual_difference_scorer,
        "textual-difference",
        {},
        case,
        "same ratio (2·LCS / total length)",
    )
    tools = tool_case(tool_sequences(False, 100), trajectory=False)
    for options in (
        {"expected_tool": "search"},
        {"expected_tool": "search", "strict": True},
        {"expected_tool_order": ["search", "summarize"]},
        {"expected_tool_order": ["search", "summarize"], "strict": True},
        {"expected_tool_order": ["search", "get_weather", "search"]},
    ):
        note = "same rule"
        if options.get("expected_tool_order") == ["search", "get_weather", "search"]:
            note = (
                "a tool twice in the order: Mastra looks each tool up by its first index and "
                "fails valid paths; livescore checks the subsequence"
            )
        both(
            f"tool-call accuracy {options}",
            lambda o=options: create_tool_call_accuracy_scorer(**o),
            "tool-call-accuracy",
            options,
            tools,
            note,
        )
    paths = tool_case(
        [[(name, True) for name, _ in calls] for calls in tool_sequences(False, 200)],
        trajectory=True,
    )
    both(
        "trajectory, expected steps only (accuracy)",
        lambda: create_trajectory_scorer(expected_steps=["search", "summarize", "search"]),
        "trajectory",
        {"expected_steps": ["search", "summarize", "search"]},
        paths,
        "Mastra matches greedily, livescore by the longest common subsequence; Mastra "
        "rounds to 2 decimals (compared rounded)",
        digits=2,
    )
    return found


def print_agreement(found: list[Agreement]) -> None:
    table(
        "Same score as Mastra, where the definitions coincide",
        ["scorer and options", "same / items", "share", "livescore higher", "note"],
        [
            [
                a.name,
                f"{a.same}/{a.total}",
                f"{a.same / a.total:.1%}" if a.total else "-",
                f"{a.higher} of {a.total - a.same}",
                a.note,
            ]
            for a in found
        ],
    )
    console.print(
        "Completeness and tone have their own definitions (keywords, names and numbers vs. "
        "compromise's terms; VADER vs. AFINN), so no agreement is claimed for them."
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="warm timing per cell")
    parser.add_argument("--quick", action="store_true", help="fewer items, shorter timings")
    parser.add_argument("--no-mastra", action="store_true", help="skip the Node.js columns")
    parser.add_argument(
        "--mastra-long-pairs",
        type=int,
        default=1,
        help="long pairs Mastra's textual difference scores (seconds and gigabytes each)",
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    partial = args.no_mastra or args.seconds != 3.0 or args.mastra_long_pairs != 1
    record = Results("code_scorers", quick=args.quick, partial=partial)
    if args.quick:
        args.seconds = min(args.seconds, 0.5)

    print_machine("Code scorers: livescore beside Mastra under Node.js")
    mastra_ready = "--no-mastra given" if args.no_mastra else ensure_mastra()
    if mastra_ready is not None:
        console.print(f"Mastra columns skipped: {mastra_ready}")
    rows = speed(args, mastra_ready)
    summary: dict[str, Any] = {"speed": print_speed(rows)}
    if mastra_ready is None:
        found = agreement(args)
        print_agreement(found)
        summary["agreement"] = [a.__dict__ for a in found]
    if mastra_ready is None:
        record.extra["mastra"] = mastra_meta()
    record.write(summary, json_path=args.json)


if __name__ == "__main__":
    main()
