"""Render the docs' benchmark tables from the results files in ``bench/results/``.

Each table that shows benchmark figures (in ``docs/performance.md``, ``docs/evals/judge-
quality.md``, or any other page of ``docs/``, README.md or bench/README.md) sits between two
markers, ``<!-- bench:NAME -->`` and ``<!-- /bench:NAME -->``; this script renders NAME from
the committed results files (``make bench`` writes them), with a line naming the file, the
command, the commit and the machine's load. So after a new ``make bench``:

    python bench/render_tables.py            # print every table (Markdown)
    python bench/render_tables.py --write    # replace the tables in the pages
    python bench/render_tables.py --check    # exit 1 if a table is stale

``tests/test_bench_tables.py`` runs the check, so a table always shows the figures of the
committed results. Prose figures around the tables are not rendered: update them by hand.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
RESULTS_DIR = BENCH_DIR / "results"


def pages() -> list[Path]:
    """Every page that may hold a marked table: README.md, bench/README.md and docs/."""
    return [ROOT / "README.md", BENCH_DIR / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


MARKER = re.compile(
    r"<!-- bench:(?P<name>[\w.\-/]+) -->\n(?P<body>.*?)<!-- /bench:(?P=name) -->", re.S
)


# -- reading ---------------------------------------------------------------------------------------


def load(name: str, results_dir: Path = RESULTS_DIR) -> dict[str, Any]:
    """The results document of one benchmark (``bench/results/NAME.json``)."""
    path = results_dir / f"{name}.json"
    if not path.exists():
        raise FileNotFoundError(f"{path.relative_to(ROOT)} is missing: run `make bench`")
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return document


def source(document: dict[str, Any]) -> str:
    """The line under each table: which file, which command, which commit, how busy."""
    git = document.get("git") or {}
    commit = (git.get("commit") or "unknown")[:7]
    if git.get("dirty"):
        commit += " (with uncommitted changes)"
    load_average = document.get("load_average") or {}
    start, end = load_average.get("start"), load_average.get("end")
    busy = f"; load average {start[0]:.1f} → {end[0]:.1f}" if start and end else ""
    machine = document.get("machine") or {}
    where = f"{machine.get('cores', '?')} cores ({machine.get('cpu', '?')})"
    # A file rebuilt from its run's kept cells by later code (``--rewrite``) says so: its
    # rows carry that code's method names.
    rewritten = (document.get("rewritten") or {}).get("git") or {}
    again = f"; rewritten from its cells at commit {rewritten['commit'][:7]}" if rewritten else ""
    return (
        f"*From `bench/results/{document['benchmark']}.json`: `{document['command']}` on "
        f"{where}, commit {commit}, {document['started'][:10]}{busy}{again}.*"
    )


def table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def ms(us: float, signed: bool = False) -> str:
    """Microseconds as milliseconds, one decimal (a sign when ``signed``)."""
    value = us / 1e3
    text = f"{value:+.1f}" if signed else f"{value:.1f}"
    return text.replace("-", "−")


def signed_int(value: float) -> str:
    return f"{value:+,.0f}".replace("-", "−")


# -- hot path --------------------------------------------------------------------------------------

LABELS = {
    "no callbacks": "baseline (no callbacks)",
    "no trace processor": "baseline (SDK tracing, no trace processor)",
    "livescore, 1 s judge": (
        "livescore: hallucination (1 s judge) + keyword coverage, 100 % sampled"
    ),
    "livescore, 0.1 s judge": "livescore: the same with a 0.1 s judge",
    "livescore, keyword coverage only": "livescore: keyword coverage only",
    "livescore handler, no scoring": "livescore handler alone (capture, its own run spans)",
    "livescore processor, no scoring": "livescore processor alone (capture, its own run spans)",
    "livescore processor, capture only": (
        'livescore processor, capture only (`emit_run_spans="never"`)'
    ),
    "livescore processor, own spans": (
        "livescore processor with its `invoke_agent`/`execute_tool` spans"
    ),
    "livescore, keyword coverage": "livescore, keyword coverage scored live (worker thread)",
    "Langfuse": "Langfuse LangChain callback handler",
}
PEER_LABELS = {
    "langchain": {"OpenInference": "OpenInference LangChain instrumentation"},
    "openai-agents": {"OpenInference": "OpenInference Agents SDK instrumentation"},
}


def label(name: str, runtime: str) -> str:
    return PEER_LABELS.get(runtime, {}).get(name) or LABELS.get(name, name)


def hot_path_steady(runtime: str) -> str:
    document = load("hot_path")
    data = document["results"]["steady"][runtime]
    rows = []
    for name, row in data["rows"].items():
        base = row["added_p50_us"] == 0 and row["added_p99_us"] == 0
        rows.append(
            [
                label(name, runtime),
                row["runs"],
                f"{ms(row['p50_us'])} / {ms(row['p99_us'])}"
                if base
                else f"{ms(row['added_p50_us'], True)} / {ms(row['added_p99_us'], True)}",
                ms(row["cpu_per_run_us"]),
                "—" if base else ms(row["added_cpu_per_run_us"], True),
                f"{row['cpu_share_of_one_core']:.1%}",
                _work(row["note"]),
            ]
        )
    heading = (
        f"{data['rate_per_s']:g} runs/s, model answers in {data['model_delay_s'] * 1e3:.0f} ms; "
        f"{data['windows']} window{'s' if data['windows'] != 1 else ''} of "
        f"{data['window_s']:g} s per configuration"
    )
    return (
        table(
            [
                f"configuration ({heading})",
                "runs",
                "added latency p50 / p99, ms (baseline: absolute)",
                "process CPU per run, ms (all threads)",
                "added CPU per run, ms",
                "process CPU, share of one core",
                "work done in the window",
            ],
            rows,
        )
        + "\n\n"
        + source(document)
    )


def _work(note: str) -> str:
    # "270/270 scores (0 failed, 0 dropped); ..." → "270/270 scores (0 failed, 0 dropped)"
    return note.split(";")[0].strip() or "—"


def hot_path_burst(runtime: str) -> str:
    document = load("hot_path")
    burst = document["results"]["burst"]
    io, instant = burst[f"{runtime}/io"], burst[f"{runtime}/instant"]
    rows = []
    for name, row in instant["rows"].items():
        io_row = io["rows"].get(name)
        base = row["added_p50_us"] == 0 and row["added_p99_us"] == 0
        if base:
            cells = [
                f"{ms(io_row['p50_us'])} / {ms(io_row['p99_us'])}" if io_row else "—",
                f"{ms(row['p50_us'])} / {ms(row['p99_us'])}",
                "—",
            ]
        else:
            after = row.get("cpu_after_per_run_us", 0.0)
            cells = [
                f"{ms(io_row['added_p50_us'], True)} / {ms(io_row['added_p99_us'], True)}"
                if io_row
                else "—",
                f"{ms(row['added_p50_us'], True)} / {ms(row['added_p99_us'], True)}",
                f"{ms(row['added_cpu_per_run_us'], True)}"
                + (f" + {ms(after)} after" if after >= 50 else ""),
            ]
        rows.append([label(name, runtime), *cells])
    return (
        table(
            [
                "configuration (burst mode)",
                f"agent waits 20 ms on its model: added p50 / p99, ms ({io['runs']} runs)",
                f"CPU-bound runs back to back: added p50 / p99, ms ({instant['runs']} runs)",
                "CPU-bound: added CPU per run in the timed runs + scoring CPU after them, ms",
            ],
            rows,
        )
        + "\n\n"
        + source(document)
    )


def hot_path_replay() -> str:
    document = load("hot_path")
    data = document["results"]["replay"]["openai-agents"]
    rows = []
    for name, row in data["rows"].items():
        base = row["added_p50_us"] == 0
        rows.append(
            [
                label(name, "openai-agents"),
                f"{row['p50_us']:,.0f}" if base else signed_int(row["added_p50_us"]),
                f"{row['thread_cpu_per_run_us']:,.0f}"
                if base
                else signed_int(row["added_thread_cpu_per_run_us"]),
            ]
        )
    return (
        table(
            [
                "trace processor (one run's span tree replayed)",
                "added wall time p50, µs (baseline: absolute)",
                "added CPU of the agent's thread, µs (baseline: absolute)",
            ],
            rows,
        )
        + "\n\n"
        + source(document)
    )


# -- throughput ------------------------------------------------------------------------------------


def throughput() -> str:
    document = load("throughput")
    data = document["results"]
    latency = data["latency_s"]
    rows = []
    for r in data["configurations"]:
        ceiling = r["concurrency"] / (r["calls_per_score"] * latency)
        scored = r["statuses"].get("scored", 0)
        busy = r["cpu_ms_per_score"] * r["scores_per_s"] / 1e3
        rows.append(
            [
                r.get("label") or r["mode"].replace("_", "-"),
                r["concurrency"],
                f"{scored:,}/{r['runs']:,}",
                f"{r['scores_per_s']:.1f}",
                f"{ceiling:.1f}",
                f"{r['scores_per_s'] / ceiling:.0%}",
                f"{r['calls_per_score']:g}",
                f"{r['input_tokens_per_score']:,.0f} / {r['output_tokens_per_score']:,.0f}",
                f"{r['submit_to_span_end_ms']['p50'] / 1e3:.1f} / "
                f"{r['submit_to_span_end_ms']['p99'] / 1e3:.1f} s",
                f"{r['cpu_ms_per_score']:.1f} ms",
                f"{busy:.0%}",
                f"{r['peak_rss_bytes'] / 2**20:.0f} MiB",
            ]
        )
    return (
        table(
            [
                "mode",
                "concurrency",
                "scored",
                "scores/s",
                "judge ceiling",
                "of the ceiling",
                "judge calls / score",
                "tokens / score in / out",
                "submit → score span p50 / p99",
                "CPU / score",
                "CPU busy (one core)",
                "peak RSS",
            ],
            rows,
        )
        + "\n\n"
        + source(document)
    )


def throughput_transport() -> str:
    document = load("throughput")
    data = document["results"]
    rows = []
    for other in data.get("httpx_comparison") or []:
        main = next(
            r
            for r in data["configurations"]
            if r["mode"] == other["mode"] and r["concurrency"] == other["concurrency"]
        )
        rows.append(
            [
                other["mode"].replace("_", "-"),
                other["concurrency"],
                f"{main['cpu_ms_per_score']:.1f} ms ({main['runs']:,} runs)",
                f"{other['cpu_ms_per_score']:.1f} ms ({other['runs']:,} runs)",
            ]
        )
    return (
        table(["mode", "concurrency", "CPU / score on aiohttp", "CPU / score on httpx"], rows)
        + "\n\n"
        + source(document)
    )


def throughput_pairs() -> str:
    document = load("throughput")
    rows = []
    for r in document["results"].get("pairs") or []:
        scored = r["statuses"].get("scored", 0)
        rows.append(
            [
                "on (the default: a `RunMemo` per job)"
                if r["mode"] == "pair_shared"
                else "off (`InProcessExecutor(share_judge_calls=False)`)",
                f"{scored:,}/{2 * r['runs']:,}",
                f"{r['calls_per_run']:.2f}",
                f"{r['shared_per_run']:.2f}",
                f"{r['input_tokens_per_run']:,.0f}",
                f"{r['scores_per_s'] / 2:.1f}",
                f"{r['cpu_ms_per_run']:.1f} ms",
            ]
        )
    columns = [
        f"shared judge requests (concurrency {_pair_concurrency(document)})",
        "scores",
        "judge calls / run",
        "reused answers / run",
        "input tokens / run",
        "runs/s",
        "CPU / run",
    ]
    return table(columns, rows) + "\n\n" + source(document)


def _pair_concurrency(document: dict[str, Any]) -> str:
    found = {r["concurrency"] for r in document["results"].get("pairs") or []}
    return ", ".join(str(c) for c in sorted(found)) or "—"


def sinks() -> str:
    document = load("sinks")
    r = document["results"]
    send, emit = r["send"], r["emit"]
    rows = [
        [
            "`PhoenixSink.send()`, per score",
            f"{send['median_us']:.2f} µs median, {send['p99_us']:.2f} µs p99",
        ],
        [
            "`OTelEmitter.emit`, per score: plain → with the sink attached",
            f"{emit['plain_median_us']:.1f} → {emit['with_sink_median_us']:.1f} µs median "
            f"({emit['added_median_us']:+.1f} µs)".replace("-", "−"),
        ],
        [
            "delivery, batches of 100 (the default)",
            f"{r['batch_100']['per_second']:,.0f} scores/s "
            f"({r['batch_100']['scores']:,} in {r['batch_100']['seconds']:.2f} s)",
        ],
        [
            "delivery, one score per request",
            f"{r['batch_1']['per_second']:,.0f} scores/s "
            f"({r['batch_1']['scores']:,} in {r['batch_1']['seconds']:.2f} s)",
        ],
    ]
    return (
        table([f"PhoenixSink ({r['scores']:,} scores)", "figure"], rows) + "\n\n" + source(document)
    )


# -- the others ------------------------------------------------------------------------------------


def keyword_coverage() -> str:
    document = load("keyword_coverage")
    data = document["results"]
    rows = [
        [
            row["implementation"],
            "—" if row["cold_scores_per_s"] is None else f"{row['cold_scores_per_s']:,.0f}",
            "—" if row["warm_scores_per_s"] is None else f"{row['warm_scores_per_s']:,.0f}",
            f"{row['mean_score']:.3f}",
            row["same_score_as_mastra"].replace("-", "—"),
        ]
        for row in data["rows"]
    ]
    return (
        table(
            [
                f"implementation ({data['pairs']} pairs)",
                "cold scores/s",
                "warm scores/s",
                "mean score",
                "same score as Mastra",
            ],
            rows,
        )
        + "\n\n"
        + source(document)
    )


def keyword_coverage_agreement() -> str:
    document = load("keyword_coverage")
    data = document["results"]
    pairs = data["pairs"]
    disagreements = data.get("disagreements") or {}
    rows = [["same score as Mastra", f"{data['agreement']:.0%} of {pairs} pairs"]]
    rows += [
        [f"differs — {cause}", n]
        for cause, n in sorted(disagreements.items(), key=lambda item: -item[1])
    ]
    rows += [
        [f"same score with livescore's {feature} switched off", f"{share:.0%}"]
        for feature, share in (data.get("agreement_without") or {}).items()
    ]
    return (
        table(["keyword coverage beside Mastra", "pairs / share"], rows) + "\n\n" + source(document)
    )


def burst() -> str:
    document = load("burst")
    r = document["results"]
    submit = r["submit_ns"]
    after = r["stats_after_shutdown"]
    memory = r["memory"]
    by_reason = ", ".join(f"{k} {v:,}" for k, v in after["dropped_by_reason"].items())
    rows = [
        ["runs submitted from one thread", f"{r['runs']:,} in {r['burst_s']:.2f} s"],
        [
            "`submit()` p50 / p99 / max, every call",
            f"{submit['all']['p50'] / 1e3:.1f} / {submit['all']['p99'] / 1e3:.1f} / "
            f"{submit['all']['max'] / 1e3:,.0f} µs",
        ],
        [
            "accepted / refused (queue full)",
            f"{r['accepted']:,} / {r['refused']:,}",
        ],
        [
            "dropped with reason `queue_full` before shutdown (equals refused?)",
            f"{r['queue_full_drops_before_shutdown']:,} "
            f"({'yes' if r['refused_equals_queue_full_drops'] else 'NO'})",
        ],
        [
            "after `shutdown(0.5)`: sampled = scored + failed + skipped + dropped",
            f"{after['sampled']:,} = {after['scored']:,} + {after['failed']:,} + "
            f"{after['skipped']:,} + {after['dropped']:,} ({by_reason})",
        ],
        [
            "memory the dispatcher holds during the burst / after shutdown (tracemalloc)",
            f"{memory['held'] / 2**20:.1f} / {memory['after_shutdown'] / 2**20:.1f} MiB",
        ],
        [
            "one run like these; what an unbounded queue would hold",
            f"{r['run_bytes']:,} bytes; {r['run_bytes'] * r['runs'] / 2**20:.1f} MiB",
        ],
    ]
    return table(["figure", "value"], rows) + "\n\n" + source(document)


def import_time() -> str:
    document = load("import_time")
    data = document["results"]
    rows = [
        [
            f"`{row['statement']}`",
            f"{row['median_ms']:.1f}",
            f"{row['fastest_ms']:.1f}",
            ", ".join(row["heavy_packages_loaded"]) or "none",
        ]
        for row in data["imports"]
    ]
    return (
        table(
            [
                f"statement ({data['runs']} fresh interpreters each)",
                "median ms",
                "fastest ms",
                "heavy packages it loads",
            ],
            rows,
        )
        + "\n\n"
        + source(document)
    )


def handler_callbacks() -> str:
    document = load("handler_callbacks")
    data = document["results"]
    rows = [
        [
            case,
            f"{data[case]['per_callback_avg_ns'] / 1e3:.1f}",
            f"{data[case]['per_run_us']:.1f}",
        ]
        for case in ("sampled", "not sampled")
    ]
    return (
        table(["run", "µs per callback (average)", "µs per run (14 callbacks)"], rows)
        + "\n\n"
        + source(document)
    )


def judge_quality() -> str:
    document = load("judge_quality")
    data = document["results"]

    def cell(value: float | None) -> str:
        return "–" if value is None else f"{value:.3f}"

    judge, base = data["judge"], data["length_baseline"]
    rows = [
        [
            "hallucination scorer, SmolLM2-135M judge",
            judge["n"],
            cell(judge["accuracy"]),
            cell(judge["f1"]),
            cell(judge["auroc"]),
            f"{judge['calls_per_item']:.2f}",
            f"{judge['tokens_per_item']:,.0f}",
        ],
        [
            f"length-only baseline (output ≥ {base['median_chars']:,.0f} chars)",
            base["n"],
            cell(base["accuracy"]),
            cell(base["f1"]),
            cell(base["auroc"]),
            "–",
            "–",
        ],
    ]
    columns = ["scored by", "n", "accuracy", "F1", "AUROC", "judge calls / item", "tokens / item"]
    return table(columns, rows) + "\n\n" + source(document)


LOCAL_METHODS = (
    "livescore three-step",
    "livescore one-call",
    "livescore logprob",
    "logprob core rules",
    "rules prompt",
    "phoenix template",
    "length baseline",
)


def judge_quality_local(dataset: str) -> str:
    """One set's rows of ``bench/results/judge_quality_local.json``, each beside the length
    baseline on the same items (a row stopped part way scored fewer)."""
    document = load("judge_quality_local")
    rows = {r["method"]: r for r in document["rows"] if r["dataset"] == dataset}

    def cell(value: float | None) -> str:
        return "–" if value is None else f"{value:.3f}"

    base = rows.get("length baseline", {})
    lines = []
    for method in LOCAL_METHODS:
        row = rows.get(method)
        if row is None:
            continue
        value = row["balanced_accuracy"]
        length = row.get("length_balanced_accuracy", base.get("balanced_accuracy"))
        length_auroc = row.get("length_auroc", base.get("auroc"))
        baseline = method == "length baseline"
        beside = (
            "–"
            if baseline or value is None or length is None
            else f"{value - length:+.3f}".replace("-", "−")
        )
        held = row.get("held_out_balanced_accuracy")
        n = f"{row['scored']}/{row['n']}" if row.get("failed") else str(row["n"])
        if row.get("partial"):
            n += f" of {row['items_planned']} (stopped)"
        lines.append(
            [
                method,
                n,
                cell(value),
                "–" if baseline else f"{cell(length)} / {cell(length_auroc)}",
                beside,
                cell(row["f1"]),
                cell(row["auroc"]),
                cell(held) if held is not None else "–",
                "–" if baseline else f"{row['cpu_s_per_item']:.1f}",
                "–" if baseline else f"{row['judge_tokens_per_item']:,.0f}",
            ]
        )
    columns = [
        "method",
        "n",
        "balanced accuracy",
        "length baseline, same items (bal. acc. / AUROC)",
        "vs length",
        "F1",
        "AUROC",
        "held-out balanced accuracy",
        "CPU s / item",
        "judge tokens / item",
    ]
    # What has no row at all (a row stopped part way says so in its n).
    missing = [
        m
        for m in document.get("missing") or []
        if m["dataset"] == dataset and m["method"] in LOCAL_METHODS and m["method"] not in rows
    ]
    left = ""
    if missing:
        reasons = sorted({m["reason"] for m in missing})
        names = ", ".join(m["method"] for m in missing)
        left = f"\n\n*Not in this table: {names} ({'; '.join(reasons)}).*"
    # Rows scored on another machine are carried as they were: say which rows are later.
    later = [m for m in LOCAL_METHODS if m in rows and "carried_from" not in rows[m]]
    if later and len(later) < len(rows) and "rewritten" in document:
        commit = document["rewritten"]["git"]["commit"][:7]
        left += (
            f"\n\n*{', '.join(later)}: scored by a later run, added to the results file with"
            f" `--rewrite` at commit {commit}; the other rows are the run described below.*"
        )
    else:
        # A run that has not rescored every cell yet keeps the earlier file's rows for them.
        carried: dict[str, list[str]] = {}
        for method in LOCAL_METHODS:
            if method in rows and "carried_from" in rows[method]:
                carried.setdefault(str(rows[method]["carried_from"])[:7], []).append(method)
        left += "".join(
            f"\n\n*{', '.join(methods)}: not rescored yet by the run described below; carried"
            f" as they were from the results file of commit {commit}.*"
            for commit, methods in carried.items()
        )
    return table(columns, lines) + left + "\n\n" + source(document)


def _cell(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _set_name(name: str) -> str:
    return {
        "halueval_qa_200": "HaluEval-QA",
        "summedits_200": "SummEdits",
        "begin_wow_200": "BEGIN",
        "expertqa_rag_200": "ExpertQA (held out)",
    }.get(name, name)


def judge_quality_local_ranking() -> str:
    """Each candidate prompt on each set, from its per-item cell: AUROC, the split-half
    (held-out) balanced accuracy, the balanced accuracy at 0.5, tokens per item."""
    document = load("judge_quality_local")
    loso = document.get("leave_one_set_out") or {}
    partial = set(loso.get("partial_cells") or [])
    lines = []
    for f in loso.get("figures") or []:
        n = f"{f['scored']}/{f['n']}" if f["scored"] != f["n"] else str(f["n"])
        if f"{f['set']} · {f['candidate']}" in partial:
            n += " (stopped)"
        lines.append(
            [
                _set_name(f["set"]),
                f["candidate"],
                n,
                _cell(f["auroc"]),
                _cell(f["split_half_balanced_accuracy"]),
                _cell(f["balanced_accuracy"]),
                f"{f['tokens_per_item']:,.0f}",
            ]
        )
    columns = [
        "set",
        "candidate prompt",
        "n",
        "AUROC",
        "held-out balanced accuracy (split half)",
        "balanced accuracy at 0.5",
        "judge tokens / item",
    ]
    if not lines:
        return "*No candidate cell scored yet.*\n\n" + source(document)
    return table(columns, lines) + "\n\n" + source(document)


def judge_quality_local_loso() -> str:
    """The leave-one-set-out rows: the candidate and threshold chosen on the other sets,
    reported on the set left out; then the held-out set, every candidate on it."""
    document = load("judge_quality_local")
    loso = document.get("leave_one_set_out") or {}
    lines = []
    for row in loso.get("rows") or []:
        if "chosen" not in row:
            lines.append(
                [
                    _set_name(row["left_out"]),
                    "–",
                    "–",
                    "–",
                    "–",
                    "–",
                    "cells missing on "
                    + ", ".join(
                        dict.fromkeys(_set_name(c.split(" · ")[0]) for c in row["missing_cells"])
                    ),
                ]
            )
            continue
        lines.append(
            [
                _set_name(row["left_out"]),
                row["chosen"],
                f"{row['threshold']:.3f}",
                _cell(row["auroc"]),
                _cell(row["balanced_accuracy"]),
                f"{row['tokens_per_item']:,.0f}",
                "" if row["scored"] == 60 else f"{row['scored']} items",
            ]
        )
    for entry in loso.get("held_out") or []:
        for candidate, f in entry["candidates"].items():
            chosen = " (the choice)" if candidate == entry.get("chosen") else ""
            note = "threshold fixed at 0.5" if f["threshold_from"] != "shipped sets" else ""
            if f["scored"] != 60:
                note = (note + "; " if note else "") + f"{f['scored']} items"
            lines.append(
                [
                    _set_name(entry["set"]),
                    candidate + chosen,
                    f"{f['threshold']:.3f}",
                    _cell(f["auroc"]),
                    _cell(f["balanced_accuracy"]),
                    f"{f['tokens_per_item']:,.0f}",
                    note,
                ]
            )
    columns = [
        "reported on",
        "prompt chosen on the other sets",
        "threshold (from the other sets)",
        "AUROC",
        "balanced accuracy",
        "judge tokens / item",
        "note",
    ]
    if not lines:
        return "*No leave-one-set-out row yet.*\n\n" + source(document)
    return table(columns, lines) + "\n\n" + source(document)


def judge_quality_local_ab() -> str:
    """The prompt A/B rows of the local benchmark, each beside the shipped prompt."""
    document = load("judge_quality_local")

    def cell(value: float | None) -> str:
        return "–" if value is None else f"{value:.3f}"

    def arrow(entry: dict[str, Any], key: str) -> str:
        return f"{cell(entry[f'shipped_{key}'])} → {cell(entry[f'variant_{key}'])}"

    lines = [
        [
            entry["dataset"],
            f"{entry['shipped']} → {entry['variant'].removeprefix('A/B ')}",
            entry["n"],
            arrow(entry, "balanced_accuracy"),
            arrow(entry, "auroc"),
            f"{entry['shipped_tokens_per_item']:,.0f} → {entry['variant_tokens_per_item']:,.0f}",
        ]
        for entry in document.get("ab") or []
    ]
    columns = ["set", "shipped → variant", "n", "balanced accuracy", "AUROC", "tokens / item"]
    if not lines:
        left = [m for m in document.get("missing") or [] if m["method"].startswith("A/B ")]
        reasons = "; ".join(sorted({m["reason"] for m in left})) or "none was asked for"
        return f"*No prompt A/B row in this run ({reasons}).*\n\n" + source(document)
    return table(columns, lines) + "\n\n" + source(document)


def judge_cost() -> str:
    document = load("judge_cost")
    data = document["results"]
    full = data["full_run"]
    rows = [
        [
            f"{e['sample']} of {e['total']} items",
            f"${e['cost_usd']:.4f}",
            f"${e['cost_low_usd']:.4f} to ${e['cost_high_usd']:.4f}",
            f"${full['cost_usd']:.4f}",
            f"{e['cost_error_pct']:+.1f} %",
            f"{e['seconds']:.1f} s",
            f"{full['wall_s']:.1f} s",
            f"{e['time_error_pct']:+.1f} %",
        ]
        for e in data["estimates"]
    ]
    columns = [
        "--estimate from",
        "estimated cost",
        "95 % range",
        "full run's cost",
        "cost error",
        "estimated time",
        "full run's time",
        "time error",
    ]
    note = (
        f"{data['items']} items, `{data['model']}` at OpenAI's list price, "
        f"--concurrency {data['concurrency']}, the test judge answering after "
        f"{data['judge_latency_s']:g} s; the items cost "
        f"${full['cost_per_item_min_usd']:.6f} to ${full['cost_per_item_max_usd']:.6f}."
    )
    return table(columns, rows) + "\n\n" + note + "\n\n" + source(document)


def hallucination_cost() -> str:
    """What one hallucination score costs, by judge mode: the throughput benchmark's calls
    and tokens, the local benchmark's logprob tokens, the cost benchmark's dollars."""
    speed, local, cost = load("throughput"), load("judge_quality_local"), load("judge_cost")
    by_mode = {}
    for r in speed["results"]["configurations"]:
        by_mode.setdefault(r["judge_mode"], r)  # the same per score at every concurrency
    rows = [
        [
            f'`judge_mode="{mode}"`',
            f"{r['calls_per_score']:g}",
            f"{r['input_tokens_per_score']:,.0f} / {r['output_tokens_per_score']:,.0f}",
            "`throughput.json`",
        ]
        for mode, r in by_mode.items()
    ]
    logprob = [
        r["judge_tokens_per_item"] for r in local["rows"] if r["method"] == "livescore logprob"
    ]
    if logprob:
        rows.append(
            [
                '`judge_mode="logprob"`',
                "1",
                f"{min(logprob):,.0f} to {max(logprob):,.0f} in all, by data set",
                "`judge_quality_local.json`",
            ]
        )
    for r in speed["results"].get("pairs") or []:
        shared = "shared" if r["mode"] == "pair_shared" else "not shared"
        rows.append(
            [
                f"with faithfulness on the same run, claims {shared} (three-step)",
                f"{r['calls_per_run']:g} for the two",
                f"{r['input_tokens_per_run']:,.0f} input for the two",
                "`throughput.json`",
            ]
        )
    full, data = cost["results"]["full_run"], cost["results"]
    note = (
        f"In dollars: {data['items']} HaluEval QA items scored three-step with "
        f"`{data['model']}` at OpenAI's list price cost ${full['cost_usd']:.4f} in all, "
        f"${full['cost_per_item_min_usd']:.6f} to ${full['cost_per_item_max_usd']:.6f} an item, "
        f"{full['tokens']:,} tokens (`judge_cost.json`; the benchmark's test judge reports "
        "usage from each request's text)."
    )
    sources = "\n\n".join(source(document) for document in (speed, local, cost))
    columns = ["hallucination scorer", "judge calls / score", "tokens / score in / out", "from"]
    return table(columns, rows) + "\n\n" + note + "\n\n" + sources


def hallucination_quality() -> str:
    """The hallucination scorer's balanced accuracy with the local judge, mode by mode,
    beside the length baseline on each set."""
    document = load("judge_quality_local")
    methods = ("livescore logprob", "livescore one-call", "length baseline")
    names = {
        "summedits_200": "SummEdits",
        "begin_wow_200": "BEGIN",
        "halueval_qa_200": "HaluEval-QA",
    }
    found = {(r["dataset"], r["method"]): r for r in document["rows"]}
    rows = []
    for dataset, name in names.items():
        cells = []
        for method in methods:
            row = found.get((dataset, method))
            value = None if row is None else row["balanced_accuracy"]
            cells.append("–" if value is None else f"{value:.3f} ({row['scored']} items)")
        rows.append([name, *cells])
    columns = ["set", '`judge_mode="logprob"`', '`judge_mode="one_call"`', "length alone"]
    judge = document["judge"]
    note = (
        f"The judge: {judge['model']}, served by {judge['server']}; balanced accuracy at the"
        " default threshold."
    )
    # Rows a later run added (``--rewrite``) carry no ``carried_from``: say which.
    later = sorted({m for (_, m), r in found.items() if m in methods and "carried_from" not in r})
    if later and len(later) < len(methods) and "rewritten" in document:
        commit = document["rewritten"]["git"]["commit"][:7]
        note += f" {', '.join(later)}: scored by a later run, added at commit {commit}."
    elif "rewritten" not in document:
        # A run that has not rescored every cell yet carries the earlier file's rows.
        carried = sorted(
            {(str(r["carried_from"])[:7], m) for (_, m), r in found.items() if "carried_from" in r}
        )
        for commit in dict.fromkeys(c for c, _ in carried):
            names_carried = ", ".join(m for c, m in carried if c == commit and m in methods)
            if names_carried:
                note += (
                    f" {names_carried}: not rescored yet by the run below; carried as they"
                    f" were from the results file of commit {commit}."
                )
    return table(columns, rows) + f"\n\n{note}\n\n" + source(document)


TOOL_SCORERS = ("tool-call-accuracy", "trajectory")


def _rate(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:,.0f}" if value >= 10 else f"{value:.2g}"


def _times(ours: float | None, theirs: float | None) -> str:
    if ours is None or not theirs:
        return "—"
    ratio = ours / theirs
    return f"{ratio:,.0f}×" if ratio >= 10 else f"{ratio:.1f}×"


def code_scorers_speed() -> str:
    document = load("code_scorers")
    rows = []
    for row in document["results"]["speed"]:
        tools = row["scorer"] in TOOL_SCORERS
        size = (
            ("3 calls" if tools else "≈200 chars")
            if row["size"] == "short"
            else ("100 calls" if tools else "20,000 chars")
        )
        m_cold, m_warm = row["mastra_cold_per_s"], row["mastra_warm_per_s"]
        if m_cold is None:
            mastra = row.get("mastra_note") or "—"
        elif m_warm is None:
            items = row.get("mastra_items")
            rss = row.get("mastra_peak_rss_kb")
            extra = f"{items} item{'s' if items != 1 else ''}" if items else ""
            if rss:
                extra += f", Node peak RSS {rss / 2**20:.1f} GiB"
            mastra = f"{_rate(m_cold)} (cold only: {extra})"
        else:
            mastra = f"{_rate(m_cold)} / {_rate(m_warm)}"
        ours_best = row["livescore_warm_per_s"] or row["livescore_cold_per_s"]
        best = m_warm if m_warm is not None else m_cold
        rows.append(
            [
                row["scorer"].replace("-", " "),
                size,
                f"{_rate(row['livescore_cold_per_s'])} / {_rate(row['livescore_warm_per_s'])}",
                mastra,
                f"{_times(row['livescore_cold_per_s'], m_cold)} / {_times(ours_best, best)}",
            ]
        )
    mastra_meta = document.get("mastra") or {}
    versions = mastra_meta.get("npm_packages") or {}
    evals = versions.get("@mastra/evals", "?")
    return (
        table(
            [
                "scorer",
                "input",
                "livescore cold / warm",
                f"Mastra {evals} cold / warm",
                "× cold / × warm",
            ],
            rows,
        )
        + "\n\n"
        + source(document)
    )


def code_scorers_agreement() -> str:
    document = load("code_scorers")
    rows = [
        [
            a["name"],
            f"{a['same']}/{a['total']}",
            f"{a['higher']} of {a['total'] - a['same']}",
            a["note"],
        ]
        for a in document["results"].get("agreement") or []
    ]
    return (
        table(["scorer and options", "same score / items", "livescore higher", "note"], rows)
        + "\n\n"
        + source(document)
    )


def conversations() -> str:
    document = load("conversations")
    r = document["results"]
    memory = ", ".join(
        f"{m['held_bytes_per_conversation'] / 1024:.1f} KiB at {m['turns_per_conversation']}"
        for m in r["memory"]
    )
    bookkeeping = " · ".join(
        f"{m['bookkeeping_bytes_per_turn']:,} B at {m['turns_per_conversation']}"
        for m in r["memory"]
    )
    timers = " / ".join(f"{t['turn_us']:.0f}" for t in r["timers"])
    opens = " / ".join(f"{t['open']:,}" for t in r["timers"])
    submit, idle, e2e = r["submit"], r["idle_worker"], r["end_to_end"]
    chars = r["memory"][0]["chars_per_turn"]
    rows = [
        [
            f"memory held per open conversation, by turns (support turns of {chars} characters)",
            memory,
        ],
        ["of which the dispatcher's own bookkeeping, per turn", bookkeeping],
        [
            "`submit()` of a turn on the agent's thread, p50 (a run outside any conversation)",
            f"{submit['turn']['p50_us']:.1f} µs ({submit['run']['p50_us']:.1f} µs)",
        ],
        [f"recording a turn on the worker, its timer included, with {opens} open", f"{timers} µs"],
        [
            f"the worker with {idle['open']:,} open, quiet conversations",
            f"{idle['worker_cpu_ms_per_s']} ms of CPU per second",
        ],
        [
            f"the worker's CPU per conversation scored ({e2e['conversations']:,} conversations "
            f"of {e2e['turns_each']} turns, a code score; {e2e['scored']:,} scores)",
            f"{e2e['worker_cpu_us_per_conversation']} µs (a single run's code score: "
            f"{e2e['worker_cpu_us_per_run_score']} µs)",
        ],
    ]
    return table(["what", "figure"], rows) + "\n\n" + source(document)


def alerts() -> str:
    document = load("alerts")
    settings = document["settings"]

    def share(p: float | None) -> str:
        return "not detected" if p is None else f"{settings['base_share']:.0%} → {p:.0%}"

    rows = [
        [
            f"{r['sample_rate']:.0%}",
            f"{r['scores_per_hour']:g}",
            share(r["smallest_share_detected_1h"]),
            share(r["smallest_share_detected_1d"]),
            f"{sum(r['false_alarms_per_month'].values()):.3f}",
        ]
        for r in document["results"]
    ]
    columns = [
        "sampling",
        "scores an hour",
        "smallest rise detected within an hour",
        "within a day",
        "false alarms a month (steady stream)",
    ]
    note = (
        f"*{settings['runs_per_hour']} runs an hour; detected: in at least "
        f"{settings['detection_probability']:.0%} of {settings['trials']} trials; false "
        f"alarms: alerts started over {settings['months']} simulated months, both bad-share "
        f"rules together.*"
    )
    return table(columns, rows) + "\n\n" + note + "\n\n" + source(document)


def pii_detection() -> str:
    """Detection precision and recall per entity type (bench/pii.py)."""
    document = load("pii")
    figures = document["results"]["detection"]
    rows = [
        [
            f"`{kind}`",
            row["gold"],
            row["predicted"],
            *map(_share, (row["precision"], row["recall"])),
        ]
        for kind, row in figures["types"].items()
    ]
    names = [
        [f"`{locale}`", row["names"], row["found"], _share(row["recall"])]
        for locale, row in figures["other_locales"].items()
    ]
    return (
        table(["entity", "in the set", "found", "precision", "recall"], rows)
        + "\n\nNames from other locales (`PERSON` recall):\n\n"
        + table(["Faker locale", "names", "found", "recall"], names)
        + "\n\n"
        + source(document)
    )


def pii_verdicts() -> str:
    """Hallucination verdicts with and without redaction (bench/pii.py)."""
    document = load("pii")
    v = document["results"]["verdicts"]
    rows = [
        [
            f"{v['items']} ({v['hallucinated']} hallucinated)",
            _share(v["agreement"]),
            _share(v["accuracy_plain"]),
            _share(v["accuracy_redacted"]),
        ]
    ]
    columns = ["items", "same verdict", "accuracy, plain", "accuracy, redacted"]
    return table(columns, rows) + "\n\n" + source(document)


def pii_local_verdicts() -> str:
    """The local judge's hallucination verdicts with and without redaction (bench/pii.py
    --judge local)."""
    document = load("pii_local")
    v = document["results"]["verdicts"]
    rows = [
        [
            mode,
            f"{v[key]['scored']} of {v['items']}",
            f"{v[key]['balanced_accuracy']:.3f}",
            f"{v[key]['auroc']:.3f}",
        ]
        for mode, key in (("plain", "plain"), ("redacted", "redacted"))
    ]
    table_text = table(["text the judge read", "scored", "balanced accuracy (0.5)", "AUROC"], rows)
    agreement = f"The same verdict with and without redaction on {v['agreement']:.0%} of the items."
    return table_text + "\n\n" + agreement + "\n\n" + source(document)


def pii_cost() -> str:
    """Redaction CPU per score by text size (bench/pii.py)."""
    document = load("pii")
    rows = [
        [
            "patterns + spaCy NER" if row["ner"] else "patterns only (`names=False`)",
            f"{row['chars']:,}",
            f"{row['cpu_ms_median']:.1f} ms",
        ]
        for row in document["results"]["cost"]
    ]
    return table(["detection", "characters per score", "CPU per score (median)"], rows) + (
        "\n\n" + source(document)
    )


def _share(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


TABLES: dict[str, Callable[[], str]] = {
    "alerts": alerts,
    "hot_path.steady.langchain": lambda: hot_path_steady("langchain"),
    "hot_path.steady.openai-agents": lambda: hot_path_steady("openai-agents"),
    "hot_path.burst.langchain": lambda: hot_path_burst("langchain"),
    "hot_path.burst.openai-agents": lambda: hot_path_burst("openai-agents"),
    "hot_path.replay": hot_path_replay,
    "throughput": throughput,
    "throughput.transport": throughput_transport,
    "throughput.pairs": throughput_pairs,
    "keyword_coverage": keyword_coverage,
    "keyword_coverage.agreement": keyword_coverage_agreement,
    "burst": burst,
    "import_time": import_time,
    "handler_callbacks": handler_callbacks,
    "judge_quality": judge_quality,
    "judge_quality_local.summedits_200": lambda: judge_quality_local("summedits_200"),
    "judge_quality_local.begin_wow_200": lambda: judge_quality_local("begin_wow_200"),
    "judge_quality_local.halueval_qa_200": lambda: judge_quality_local("halueval_qa_200"),
    "judge_quality_local.expertqa_rag_200": lambda: judge_quality_local("expertqa_rag_200"),
    "judge_quality_local.ranking": judge_quality_local_ranking,
    "judge_quality_local.loso": judge_quality_local_loso,
    "judge_quality_local.ab": judge_quality_local_ab,
    "judge_cost": judge_cost,
    "judge_cost.hallucination": hallucination_cost,
    "judge_quality_local.hallucination": hallucination_quality,
    "sinks": sinks,
    "code_scorers.speed": code_scorers_speed,
    "code_scorers.agreement": code_scorers_agreement,
    "conversations": conversations,
    "pii.detection": pii_detection,
    "pii.verdicts": pii_verdicts,
    "pii.cost": pii_cost,
    "pii.local_verdicts": pii_local_verdicts,
}


# -- the pages -------------------------------------------------------------------------------------


def render(text: str) -> str:
    """``text`` with every marked table rendered afresh from the results files."""

    def block(match: re.Match[str]) -> str:
        name = match.group("name")
        if name not in TABLES:
            raise KeyError(f"unknown benchmark table {name!r} (known: {', '.join(TABLES)})")
        return f"<!-- bench:{name} -->\n{TABLES[name]()}\n<!-- /bench:{name} -->"

    return MARKER.sub(block, text)


def stale_tables(text: str) -> list[str]:
    """The names of the marked tables in ``text`` whose figures differ from the results."""
    fresh = {m.group("name"): m.group("body") for m in MARKER.finditer(render(text))}
    return [
        m.group("name") for m in MARKER.finditer(text) if m.group("body") != fresh[m.group("name")]
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--write", action="store_true", help="update the tables in the pages")
    what.add_argument("--check", action="store_true", help="exit 1 if a table is stale")
    parser.add_argument("names", nargs="*", help="tables to print (default: all)")
    args = parser.parse_args(argv)
    if args.write or args.check:
        stale = []
        for page in pages():
            text = page.read_text(encoding="utf-8")
            if args.write:
                rendered = render(text)
                if rendered != text:
                    page.write_text(rendered, encoding="utf-8")
            else:
                stale += [f"{page.relative_to(ROOT)}: {name}" for name in stale_tables(text)]
        if stale:
            print("stale benchmark tables (run python bench/render_tables.py --write):")
            print("\n".join(f"  {line}" for line in stale))
            return 1
        return 0
    for name in args.names or TABLES:
        print(f"<!-- bench:{name} -->\n{TABLES[name]()}\n<!-- /bench:{name} -->\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
