"""Benchmark 4: a burst of 100,000 runs against a slow scorer.

One thread submits runs to a ``LiveDispatcher`` as fast as it can (building each ``Run`` as
an integration would), while the only scorer takes 1 s per score (16 at a time) and the
queue holds 1,000 runs. The dispatcher emits to the real OTel SDK (spans to an exporter that
drops them, metrics to an in-memory reader), so the drop counter is on the measured path.

Pass 1 times every ``submit`` call with ``time.perf_counter_ns`` (accepted and refused
separately), then shuts down with a short deadline and checks the accounting: refused
submissions are exactly the ``queue_full`` drops, and every sampled run ends scored or
dropped. Pass 2 repeats the burst under ``tracemalloc`` to show where memory goes: the queue
is bounded, so memory is too. Timings are counted, never asserted.

Run: ``python bench/burst.py [--quick] [--runs N] [--json out.json]``.
"""

from __future__ import annotations

import argparse
import gc
import time
import tracemalloc
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
from _common import (
    Results,
    console,
    current_rss,
    mib,
    peak_rss,
    percentile,
    print_machine,
    table,
)
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from livescore import Run, StepContext, create_scorer
from livescore.live import DispatchStats, LiveDispatcher, ScorerConfig
from livescore.otel import OTelEmitter

MAX_QUEUE = 1000
SCORER_CONCURRENCY = 16
SHUTDOWN_DEADLINE_S = 0.5
QUESTION = "Where is my parcel 4711?"
ANSWER = "Parcel 4711 left the Lyon depot on Monday; it reaches the locker on Wednesday."


class DropExporter(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


async def slow_score(ctx: StepContext) -> float:
    await anyio.sleep(1.0)  # a judge that takes a second
    return 1.0


def make_dispatcher() -> tuple[LiveDispatcher, TracerProvider, MeterProvider]:
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(DropExporter()))
    meters = MeterProvider(metric_readers=[InMemoryMetricReader()])
    scorer = create_scorer(id="slow", description="takes 1 s", generate_score=slow_score)
    dispatcher = LiveDispatcher(
        [ScorerConfig(scorer, max_concurrency=SCORER_CONCURRENCY)],
        emitter=OTelEmitter(tracer_provider=provider, meter_provider=meters),
        max_queue=MAX_QUEUE,
        max_judge_concurrency=SCORER_CONCURRENCY,
        register_atexit=False,
    )
    return dispatcher, provider, meters


def make_run(i: int) -> Run:
    # Texts of its own, as every real run has (shared strings would hide their memory).
    return Run(
        input=f"{QUESTION} (#{i})",
        output=f"{ANSWER} (#{i})",
        run_id=f"burst-{i}",
        trace_id=f"{i + 1:032x}",
        span_id=f"{i + 1:016x}",
    )


def timed_pass(runs: int) -> dict[str, Any]:
    dispatcher, provider, meters = make_dispatcher()
    gc.collect()
    rss_before = current_rss()
    accepted_ns: list[int] = []
    refused_ns: list[int] = []
    started = time.perf_counter()
    for i in range(runs):
        run = make_run(i)
        t0 = time.perf_counter_ns()
        ok = dispatcher.submit(run)
        elapsed = time.perf_counter_ns() - t0
        (accepted_ns if ok else refused_ns).append(elapsed)
    burst_s = time.perf_counter() - started
    rss_after = current_rss()
    before_shutdown = dispatcher.stats()
    shutdown_started = time.perf_counter()
    dispatcher.shutdown(timeout=SHUTDOWN_DEADLINE_S)
    shutdown_s = time.perf_counter() - shutdown_started
    after = dispatcher.stats()
    provider.shutdown()
    meters.shutdown()
    return {
        "runs": runs,
        "burst_s": burst_s,
        "accepted": len(accepted_ns),
        "refused": len(refused_ns),
        "all_ns": accepted_ns + refused_ns,
        "accepted_ns": accepted_ns,
        "refused_ns": refused_ns,
        "rss_before": rss_before,
        "rss_after": rss_after,
        "peak_rss": peak_rss(),
        "before_shutdown": before_shutdown,
        "after_shutdown": after,
        "shutdown_s": shutdown_s,
    }


def memory_pass(runs: int) -> dict[str, int]:
    dispatcher, provider, meters = make_dispatcher()
    gc.collect()
    tracemalloc.start()
    base, _ = tracemalloc.get_traced_memory()
    for i in range(runs):
        dispatcher.submit(make_run(i))
    during, peak = tracemalloc.get_traced_memory()
    dispatcher.shutdown(timeout=SHUTDOWN_DEADLINE_S)
    gc.collect()
    after, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    provider.shutdown()
    meters.shutdown()
    return {"held": during - base, "peak": peak - base, "after_shutdown": after - base}


def run_size() -> int:
    """Traced bytes of one Run like the burst's (what an unbounded queue would keep per run)."""
    gc.collect()
    tracemalloc.start()
    base, _ = tracemalloc.get_traced_memory()
    kept = [make_run(i) for i in range(1000)]
    size, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del kept
    return (size - base) // 1000


def us(ns: float) -> str:
    return f"{ns / 1e3:,.1f}"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20,000 runs")
    parser.add_argument("--runs", type=int, help="runs in the burst (default 100,000)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    record = Results("burst", quick=args.quick, partial=args.runs is not None)
    runs = args.runs or (20_000 if args.quick else 100_000)

    print_machine("Burst: 100,000 runs as fast as possible, a scorer that takes 1 s")
    console.print(
        f"{runs:,} runs from one thread; queue {MAX_QUEUE:,} (drop_new); one scorer sleeping "
        f"1 s, {SCORER_CONCURRENCY} at a time; shutdown deadline {SHUTDOWN_DEADLINE_S} s"
    )
    t = timed_pass(runs)
    rows = []
    for name, values in (
        ("every submit", t["all_ns"]),
        ("accepted (queued)", t["accepted_ns"]),
        ("refused (queue full)", t["refused_ns"]),
    ):
        rows.append(
            [
                name,
                f"{len(values):,}",
                us(percentile(values, 50)),
                us(percentile(values, 99)),
                us(percentile(values, 99.99)),
                us(max(values) if values else float("nan")),
            ]
        )
    table(
        f"Cost of submit() on the agent's thread, µs ({runs:,} calls in {t['burst_s']:.2f} s)",
        ["calls", "count", "p50", "p99", "p99.99", "max"],
        rows,
    )

    before: DispatchStats = t["before_shutdown"]
    after: DispatchStats = t["after_shutdown"]
    queue_full = before.dropped_by_reason.get("queue_full", 0)
    refused_exact = queue_full == runs - t["accepted"]
    invariant = after.sampled == after.scored + after.failed + after.skipped + after.dropped
    table(
        "Accounting",
        ["", "value"],
        [
            ["submitted", f"{runs:,}"],
            ["accepted by submit()", f"{t['accepted']:,}"],
            ["submitted − accepted", f"{runs - t['accepted']:,}"],
            ["stats before shutdown: dropped with reason 'queue_full'", f"{queue_full:,}"],
            ["  equal to submitted − accepted, exactly", "yes" if refused_exact else "NO"],
            [
                "stats before shutdown: dropped, all reasons",
                f"{before.dropped:,} ("
                + ", ".join(f"{k} {v:,}" for k, v in before.dropped_by_reason.items())
                + ")",
            ],
            [
                f"after shutdown({SHUTDOWN_DEADLINE_S}) — took {t['shutdown_s']:.2f} s",
                f"sampled {after.sampled:,} = scored {after.scored:,} + failed {after.failed:,}"
                f" + skipped {after.skipped:,} + dropped {after.dropped:,}",
            ],
            [
                "  dropped after shutdown, by reason",
                ", ".join(f"{k} {v:,}" for k, v in after.dropped_by_reason.items()),
            ],
            ["  queued / in flight", f"{after.queued} / {after.in_flight}"],
            ["  invariant holds", "yes" if invariant else "NO"],
        ],
    )

    memory = memory_pass(runs)
    per_run = run_size()
    table(
        "Memory",
        ["", "value"],
        [
            [
                "RSS before → after the burst (pass 1)",
                f"{mib(t['rss_before'])} → {mib(t['rss_after'])}",
            ],
            ["peak RSS of the process", mib(t["peak_rss"])],
            ["traced memory held after the burst (pass 2)", mib(memory["held"])],
            ["traced peak during the burst", mib(memory["peak"])],
            ["traced memory left after shutdown", mib(memory["after_shutdown"])],
            ["one Run like these, its texts included (traced)", f"{per_run:,} bytes"],
            [f"what {runs:,} queued runs would hold unbounded", mib(per_run * runs)],
        ],
    )
    console.print(
        "Timings are from one thread, submit only (building the Run is outside the timer). "
        "The max includes the interpreter handing the GIL to the worker thread (switch "
        "interval 5 ms) and garbage collection; it is a count, not a lock wait."
    )
    result = {
        "runs": runs,
        "burst_s": t["burst_s"],
        "accepted": t["accepted"],
        "submit_ns": {
            name: {
                "p50": percentile(values, 50),
                "p99": percentile(values, 99),
                "p99.99": percentile(values, 99.99),
                "max": max(values) if values else None,
            }
            for name, values in (
                ("all", t["all_ns"]),
                ("accepted", t["accepted_ns"]),
                ("refused", t["refused_ns"]),
            )
        },
        "refused": runs - t["accepted"],
        "queue_full_drops_before_shutdown": queue_full,
        "refused_equals_queue_full_drops": refused_exact,
        "shutdown_s": t["shutdown_s"],
        "rss_bytes": {
            "before": t["rss_before"],
            "after_burst": t["rss_after"],
            "peak": t["peak_rss"],
        },
        "stats_after_shutdown": {
            "sampled": after.sampled,
            "scored": after.scored,
            "failed": after.failed,
            "skipped": after.skipped,
            "dropped": after.dropped,
            "dropped_by_reason": dict(after.dropped_by_reason),
        },
        "invariant_holds": invariant,
        "memory": memory,
        "run_bytes": per_run,
    }
    record.write(result, json_path=args.json)
    return result


if __name__ == "__main__":
    main()
