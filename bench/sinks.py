"""Benchmark 7: what a dashboard sink costs per score, and how fast it delivers.

Sinks run after each score, on the thread that finished it (a dispatcher's worker), never on
the agent's. Measured here, in one process, with ``PhoenixSink`` delivering to a stand-in for
Phoenix's annotation endpoint in a process of its own (``bench/_annotation_server.py``: it
accepts every batch without storing it, so the figures are the sink's):

- ``send()``: the per-score cost on the finishing thread (the queue append), timed one call
  at a time while the sink's own thread delivers;
- ``emit`` with and without the sink: ``OTelEmitter.emit`` on an SDK tracer provider (a
  ``SimpleSpanProcessor`` to an exporter that drops spans) against the same emitter wrapped
  by ``with_sinks(emitter, [PhoenixSink])``: what attaching the sink adds to each score;
- delivery: scores per second from the first ``send`` until ``flush()`` returns, with batches
  of 100 (the default) and of 1.

Run: ``python bench/sinks.py [--quick] [--json out.json]``; the figures go to
``bench/results/sinks.json`` (see ``_common.Results``).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _common import BENCH_DIR, Results, console, percentile, print_machine, table
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

from livescore import Run, ScoreResult
from livescore.otel import OTelEmitter
from livescore.runs import TraceParent
from livescore.sinks import PhoenixSink, ScoreRecord, with_sinks

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"


class DropSpans(SpanExporter):
    def export(self, spans: Any) -> SpanExportResult:
        return SpanExportResult.SUCCESS


def scores(n: int) -> list[tuple[Run, ScoreResult]]:
    out = []
    for i in range(n):
        run = Run(input="q", output="a", run_id=f"r{i}", trace_id=TRACE_ID, span_id=f"{i + 1:016x}")
        result = ScoreResult(
            run_id=run.run_id,
            scorer_id="keyword-coverage",
            score=0.75,
            label="high",
            reason="Covered 3 of 4 keywords of the input; missing: latency.",
        )
        out.append((run, result))
    return out


def send_cost(url: str, n: int) -> dict[str, float]:
    sink = PhoenixSink(url, max_queue=n)  # a burst this fast would otherwise overrun the queue
    records = [
        ScoreRecord(run, result, TraceParent.of_run(run), 1.0, "live", "1")
        for run, result in scores(n)
    ]
    times = []
    for record in records:
        start = time.perf_counter_ns()
        sink.send(record)
        times.append((time.perf_counter_ns() - start) / 1000)
    sink.flush(60)
    stats = sink.stats()
    sink.shutdown(5)
    assert stats.sent == n, stats
    return {"median_us": percentile(times, 50), "p99_us": percentile(times, 99)}


def emit_cost(url: str, n: int) -> dict[str, float]:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(DropSpans()))
    plain = OTelEmitter(tracer_provider=provider)
    sink = PhoenixSink(url, max_queue=n)
    wrapped = with_sinks(OTelEmitter(tracer_provider=provider), [sink])
    data = scores(n)
    results: dict[str, list[float]] = {"plain": [], "with_sink": []}
    # Interleaved blocks, so drift on a shared machine spreads over both.
    block = max(n // 10, 1)
    for offset in range(0, n, block):
        for name, emitter in (("plain", plain), ("with_sink", wrapped)):
            for run, result in data[offset : offset + block]:
                start = time.perf_counter_ns()
                emitter.emit(run, result, sample_rate=1.0)
                results[name].append((time.perf_counter_ns() - start) / 1000)
    sink.flush(60)
    sink.shutdown(5)
    provider.shutdown()
    return {
        "plain_median_us": percentile(results["plain"], 50),
        "with_sink_median_us": percentile(results["with_sink"], 50),
        "added_median_us": percentile(results["with_sink"], 50) - percentile(results["plain"], 50),
    }


def delivery(url: str, n: int, max_batch: int) -> dict[str, float]:
    sink = PhoenixSink(url, max_batch=max_batch, max_queue=max(n, 1))
    records = [
        ScoreRecord(run, result, TraceParent.of_run(run), 1.0, "live", "1")
        for run, result in scores(n)
    ]
    start = time.perf_counter()
    for record in records:
        sink.send(record)
    assert sink.flush(300)
    elapsed = time.perf_counter() - start
    stats = sink.stats()
    sink.shutdown(5)
    assert stats.sent == n, stats
    return {"scores": n, "seconds": elapsed, "per_second": n / elapsed}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer scores")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    record = Results("sinks", quick=args.quick)
    n = 2_000 if args.quick else 20_000
    print_machine("Benchmark 7: dashboard sinks (PhoenixSink)")
    server = subprocess.Popen(
        [sys.executable, str(BENCH_DIR / "_annotation_server.py")], stdout=subprocess.PIPE
    )
    try:
        assert server.stdout is not None
        url = f"http://127.0.0.1:{int(server.stdout.readline())}"
        sent = send_cost(url, n)
        emitted = emit_cost(url, n)
        batched = delivery(url, n, 100)
        single = delivery(url, max(n // 10, 1), 1)
    finally:
        server.kill()
        server.wait()
    table(
        f"Per score, on the thread that finished it ({n} scores)",
        ["call", "median µs", "p99 µs"],
        [
            ["PhoenixSink.send()", f"{sent['median_us']:.2f}", f"{sent['p99_us']:.2f}"],
            ["OTelEmitter.emit", f"{emitted['plain_median_us']:.1f}", ""],
            [
                "with_sinks(emitter, [PhoenixSink]).emit",
                f"{emitted['with_sink_median_us']:.1f}",
                "",
            ],
            ["added by the sink", f"{emitted['added_median_us']:.1f}", ""],
        ],
    )
    table(
        "Delivery to the annotation endpoint (loopback, a stand-in that stores nothing)",
        ["max_batch", "scores", "seconds", "scores / s"],
        [
            ["100", batched["scores"], f"{batched['seconds']:.2f}", f"{batched['per_second']:.0f}"],
            ["1", single["scores"], f"{single['seconds']:.2f}", f"{single['per_second']:.0f}"],
        ],
    )
    console.print(
        "send() only appends to the sink's queue; the HTTP work happens on the sink's thread "
        "(it shares the GIL with the rest of the process)."
    )
    record.write(
        {"scores": n, "send": sent, "emit": emitted, "batch_100": batched, "batch_1": single},
        json_path=args.json,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
