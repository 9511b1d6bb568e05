"""Benchmark 2: scoring throughput against a judge with a fixed reply latency.

N sampled runs (1,000 by default) are submitted at once to a ``LiveDispatcher`` whose
hallucination scorer talks to the benchmark's judge server (another process; every reply
comes after 200 ms), for each mode (three-step: three judge calls per score; one-call: one)
and each concurrency. The concurrency is set on all three knobs that bound it: the
dispatcher's ``max_judge_concurrency``, the scorer's ``ScorerConfig.max_concurrency`` and
the judge's ``max_concurrency``.

Each configuration runs in a fresh child process (clean memory figures, a fresh event loop).
It reports scores per second beside the ceiling the judge allows (concurrency / (calls per
score × latency)), judge calls and tokens per score (the server estimates tokens at four
characters each), the time from submit (≈ the run's end) to the end of the score's span
(p50, p99; everything is submitted at once, so this is mostly waiting in the queue), the
time a score takes once started (the span's duration), CPU per score, and peak memory.

A second table scores every run with the hallucination and faithfulness scorers together
(three-step each), with and without the run's shared judge requests
(``InProcessExecutor(share_judge_calls=...)``): both extract the answer's claims with the
same request, so with the memo each run costs 5 judge calls instead of 6. It prints judge
calls per run and what the memo saved.

The judge's ``openai`` client runs on aiohttp (its default on asyncio). A last table runs
both modes at concurrency 16 again with the client on httpx (``OpenAIJudge(transport=
"httpx")``, a quarter of the runs), to compare the CPU per score of the two transports
(``--no-transport-comparison`` skips it; ``--transport httpx`` runs everything on httpx).

Run: ``python bench/throughput.py [--quick] [--runs N] [--concurrency 16 64] [--only modes|pair]
[--transport auto|aiohttp|httpx] [--json out.json]``; the figures go to
``bench/results/throughput.json`` (see ``_common.Results``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _common import (
    BENCH_DIR,
    Results,
    console,
    current_rss,
    emit_json,
    judge_model,
    judge_server,
    mib,
    peak_rss,
    percentile,
    print_machine,
    table,
)

LATENCY_S = 0.2
QUESTION = "Where is my parcel 4711, and when will it reach the Bellecour locker?"
ANSWER = (
    "Parcel 4711 left the Lyon depot on Monday and is on its way to the Bellecour locker. "
    "Delivery to a locker takes two working days, so it should be there on Wednesday; you "
    "will get a text message with the pickup code when it arrives."
)
CONTEXT = [
    '{"tool": "track_parcel", "result": {"parcel": "4711", "status": "in transit", '
    '"last_scan": "Lyon depot", "scanned_at": "Monday 09:41", "destination": '
    '"Bellecour locker"}}',
    "Delivery times: to a home address, one working day in the same region; to a locker, "
    "two working days. Lockers keep parcels for five days; a pickup code is sent by text "
    "message when the parcel arrives. Parcels over 20 kg cannot go to a locker.",
]


CONFIGS = ("three_step", "one_call", "pair_shared", "pair_unshared")
"""What a child scores: the hallucination scorer in one mode, or hallucination and
faithfulness together with or without shared judge requests."""


def child(
    mode: str, concurrency: int, runs: int, base_url: str, transport: str = "auto"
) -> dict[str, Any]:
    """Score ``runs`` runs in this process; return the figures."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from livescore import Run
    from livescore.judges import OpenAIJudge
    from livescore.live import InProcessExecutor, LiveDispatcher, ScorerConfig
    from livescore.otel import OTelEmitter
    from livescore.scorers import create_faithfulness_scorer, create_hallucination_scorer

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    meters = MeterProvider(metric_readers=[InMemoryMetricReader()])
    judge = OpenAIJudge(
        judge_model(LATENCY_S),
        base_url=base_url,
        api_key="bench",
        max_concurrency=concurrency,
        timeout=60,
        max_retries=0,
        transport=transport,  # type: ignore[arg-type]
    )
    pair = mode.startswith("pair")
    if pair:
        scorers = [
            create_hallucination_scorer(model=judge, context=CONTEXT),
            create_faithfulness_scorer(model=judge, context=CONTEXT),
        ]
        judge_mode = "three_step"
    else:
        judge_mode = mode
        scorers = [
            create_hallucination_scorer(
                model=judge,
                context=CONTEXT,
                judge_mode=mode,  # type: ignore[arg-type]
            )
        ]
    dispatcher = LiveDispatcher(
        [ScorerConfig(scorer, max_concurrency=concurrency, timeout=120) for scorer in scorers],
        emitter=OTelEmitter(tracer_provider=provider, meter_provider=meters),
        max_queue=runs + concurrency,
        executor=InProcessExecutor(
            max_concurrency=concurrency, share_judge_calls=mode != "pair_unshared"
        ),
        register_atexit=False,
    )

    def make_run(i: int) -> Run:
        return Run(
            input=QUESTION,
            output=ANSWER,
            run_id=f"run-{i}",
            trace_id=f"{i + 1:032x}",
            span_id=f"{i + 1:016x}",
        )

    # Warm-up: one wave at full concurrency opens the connections and starts the worker.
    for i in range(concurrency):
        dispatcher.submit(make_run(-1 - i))
    dispatcher.flush(timeout=120)
    exporter.clear()

    rss_before = current_rss()
    submitted_ns: dict[str, int] = {}
    cpu = time.process_time()
    started = time.perf_counter()
    for i in range(runs):
        run = make_run(i)
        submitted_ns[run.run_id] = time.time_ns()
        dispatcher.submit(run)
    flushed = dispatcher.flush(timeout=600)
    elapsed = time.perf_counter() - started
    cpu = time.process_time() - cpu
    dispatcher.shutdown(timeout=5)

    spans = exporter.get_finished_spans()
    waits: list[float] = []
    durations: list[float] = []
    calls: list[int] = []
    shared: list[int] = []
    tokens_in: list[int] = []
    tokens_out: list[int] = []
    statuses: dict[str, int] = {}
    for span in spans:
        attrs = dict(span.attributes or {})
        status = str(attrs.get("livescore.status"))
        statuses[status] = statuses.get(status, 0) + 1
        run_id = str(attrs.get("livescore.run.id"))
        if run_id in submitted_ns and span.end_time is not None and span.start_time is not None:
            waits.append((span.end_time - submitted_ns[run_id]) / 1e6)
            durations.append((span.end_time - span.start_time) / 1e6)
        calls.append(_int(attrs.get("livescore.judge.calls")))
        shared.append(_int(attrs.get("livescore.judge.shared")))
        tokens_in.append(_int(attrs.get("livescore.judge.input_tokens")))
        tokens_out.append(_int(attrs.get("livescore.judge.output_tokens")))
    n = max(len(spans), 1)
    return {
        "mode": mode,
        "judge_mode": judge_mode,
        "scorers": [scorer.id for scorer in scorers],
        "calls_per_run": sum(calls) / runs,
        "shared_per_run": sum(shared) / runs,
        "input_tokens_per_run": sum(tokens_in) / runs,
        "cpu_ms_per_run": cpu / runs * 1e3,
        "concurrency": concurrency,
        "transport": transport,
        "runs": runs,
        "flushed": flushed,
        "statuses": statuses,
        "elapsed_s": elapsed,
        "scores_per_s": statuses.get("scored", 0) / elapsed,
        "calls_per_score": sum(calls) / n,
        "input_tokens_per_score": sum(tokens_in) / n,
        "output_tokens_per_score": sum(tokens_out) / n,
        "submit_to_span_end_ms": {"p50": percentile(waits, 50), "p99": percentile(waits, 99)},
        "score_duration_ms": {"p50": percentile(durations, 50), "p99": percentile(durations, 99)},
        "cpu_ms_per_score": cpu / runs * 1e3,
        "rss_before_bytes": rss_before,
        "peak_rss_bytes": peak_rss(),
    }


def _int(value: object) -> int:
    return int(value) if isinstance(value, int | float) else 0


def run_child(
    mode: str, concurrency: int, runs: int, base_url: str, transport: str = "auto"
) -> dict[str, Any]:
    proc = subprocess.run(
        [
            sys.executable,
            str(BENCH_DIR / "throughput.py"),
            "--child",
            mode,
            str(concurrency),
            str(runs),
            base_url,
            transport,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"throughput child {mode}/{concurrency} failed:\n{proc.stderr}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main(argv: Sequence[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 runs per configuration")
    parser.add_argument("--runs", type=int, help="runs per configuration (default 1000)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[16, 64])
    parser.add_argument(
        "--only",
        choices=("modes", "pair"),
        help="run only the hallucination modes, or only the hallucination + faithfulness pair",
    )
    parser.add_argument(
        "--transport",
        choices=("auto", "aiohttp", "httpx"),
        default="auto",
        help="the judge client's HTTP transport (default: auto, aiohttp on asyncio)",
    )
    parser.add_argument(
        "--no-transport-comparison",
        action="store_true",
        help="skip the second run of concurrency 16 on httpx",
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        mode, concurrency, runs, base_url, transport = args.child
        if mode not in CONFIGS:
            parser.error(f"unknown configuration {mode!r}")
        emit_json(child(mode, int(concurrency), int(runs), base_url, transport))
        return []

    record = Results(
        "throughput",
        quick=args.quick,
        partial=args.runs is not None
        or args.concurrency != [16, 64]
        or args.transport != "auto"
        or args.only is not None,
    )

    runs = args.runs or (200 if args.quick else 1000)
    print_machine("Throughput: scores per second against a judge with 200 ms replies")
    console.print(
        f"{runs} runs submitted at once per configuration; hallucination scorer; judge server "
        f"in its own process, every reply after {LATENCY_S * 1000:.0f} ms; each configuration "
        "in a fresh process"
    )
    results = []
    pairs = []
    compared: list[dict[str, Any]] = []
    started = time.perf_counter()
    with judge_server() as base_url:
        if args.only != "pair":
            for mode in ("three_step", "one_call"):
                for concurrency in args.concurrency:
                    results.append(run_child(mode, concurrency, runs, base_url, args.transport))
            if (
                args.transport == "auto"
                and 16 in args.concurrency
                and not args.no_transport_comparison
            ):
                compared = [
                    run_child(mode, 16, max(runs // 4, 50), base_url, "httpx")
                    for mode in ("three_step", "one_call")
                ]
        if args.only != "modes":
            for mode in ("pair_unshared", "pair_shared"):
                pairs.append(run_child(mode, max(args.concurrency), runs, base_url, args.transport))
    if results:
        print_modes(results)
    if compared:
        transport_table(results, compared)
    if pairs:
        print_pairs(pairs)
    console.print(f"wall time {time.perf_counter() - started:.0f} s")
    record.write(
        {
            "latency_s": LATENCY_S,
            "configurations": results,
            "httpx_comparison": compared,
            "pairs": pairs,
        },
        json_path=args.json,
    )
    return results + pairs


def transport_table(results: list[dict[str, Any]], compared: list[dict[str, Any]]) -> None:
    """CPU per score with the judge's client on aiohttp (the main table) and on httpx."""
    rows = []
    for other in compared:
        main_row = next(r for r in results if r["mode"] == other["mode"] and r["concurrency"] == 16)
        rows.append(
            [
                other["mode"].replace("_", "-"),
                f"{main_row['cpu_ms_per_score']:.1f} ({main_row['runs']} runs)",
                f"{other['cpu_ms_per_score']:.1f} ({other['runs']} runs)",
                f"{other['scores_per_s']:.1f}",
            ]
        )
    table(
        "CPU per score by the judge client's transport, concurrency 16",
        ["mode", "aiohttp CPU ms/score", "httpx CPU ms/score", "httpx scores/s"],
        rows,
    )


def print_modes(results: list[dict[str, Any]]) -> None:
    rows = []
    for r in results:
        ceiling = r["concurrency"] / (r["calls_per_score"] * LATENCY_S)
        statuses = r["statuses"]
        scored = statuses.get("scored", 0)
        rows.append(
            [
                r["mode"].replace("_", "-"),
                r["concurrency"],
                f"{scored}/{r['runs']}" + ("" if r["flushed"] else " (flush timed out)"),
                f"{r['scores_per_s']:.1f}",
                f"{ceiling:.1f}",
                f"{r['scores_per_s'] / ceiling:.0%}",
                f"{r['calls_per_score']:.2f}",
                f"{r['input_tokens_per_score']:,.0f}/{r['output_tokens_per_score']:,.0f}",
                f"{r['submit_to_span_end_ms']['p50'] / 1e3:.1f}/"
                f"{r['submit_to_span_end_ms']['p99'] / 1e3:.1f}",
                f"{r['score_duration_ms']['p50']:.0f}/{r['score_duration_ms']['p99']:.0f}",
                f"{r['cpu_ms_per_score']:.1f}",
                mib(r["peak_rss_bytes"]),
                mib(r["peak_rss_bytes"] - r["rss_before_bytes"]),
            ]
        )
    table(
        "Scoring throughput",
        [
            "mode",
            "conc.",
            "scored",
            "scores/s",
            "ceiling",
            "of ceil.",
            "calls/score",
            "tokens/score in/out",
            "submit→end s p50/p99",
            "score ms p50/p99",
            "CPU ms/score",
            "peak RSS",
            "RSS +",
        ],
        rows,
    )
    console.print(
        "ceiling = concurrency / (judge calls per score × 0.2 s): what the judge allows. "
        "submit→span end includes the wait in the queue (all runs arrive at once); 'score ms' "
        "is the span's duration, from the scorer's start to its end. CPU is the scoring "
        "process's (the judge server runs in another process). RSS growth is the peak during "
        "the run over the resident memory just before it."
    )


def print_pairs(pairs: list[dict[str, Any]]) -> None:
    rows = []
    for r in pairs:
        statuses = r["statuses"]
        rows.append(
            [
                "on (RunMemo per job)" if r["mode"] == "pair_shared" else "off",
                r["concurrency"],
                f"{statuses.get('scored', 0)}/{2 * r['runs']}"
                + ("" if r["flushed"] else " (flush timed out)"),
                f"{r['calls_per_run']:.2f}",
                f"{r['shared_per_run']:.2f}",
                f"{r['input_tokens_per_run']:,.0f}",
                f"{r['scores_per_s'] / 2:.1f}",
                f"{r['submit_to_span_end_ms']['p50'] / 1e3:.1f}",
                f"{r['cpu_ms_per_run']:.1f}",
            ]
        )
    table(
        "Shared work: hallucination + faithfulness on every run (three-step each)",
        [
            "shared requests",
            "conc.",
            "scores",
            "judge calls/run",
            "reused/run",
            "input tokens/run",
            "runs/s",
            "submit→end s p50",
            "CPU ms/run",
        ],
        rows,
    )
    by_mode = {r["mode"]: r for r in pairs}
    if {"pair_shared", "pair_unshared"} <= by_mode.keys():
        without = by_mode["pair_unshared"]["calls_per_run"]
        with_memo = by_mode["pair_shared"]["calls_per_run"]
        console.print(
            f"The run's memo saves {without - with_memo:.2f} judge calls per run "
            f"({(without - with_memo) / without:.0%}): the claims are extracted once for both "
            "scorers, and the faithfulness score says it reused them (livescore.judge.shared). "
            "Runs per second stay the same here because the executor's score slots, not the "
            "judge, bound them (a score waiting for a shared answer holds its slot); against a "
            "judge that is the bottleneck (rate limits, cost) the saved calls are what counts."
        )


if __name__ == "__main__":
    main()
