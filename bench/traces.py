"""Benchmark 11: scoring agents from their traces: the span processor's cost on the agent's
thread, and ``livescore collect`` under a flood.

**The span processor** (``LiveScoringSpanProcessor``), three measurements:

- ``on_end`` alone: the time one call takes on the calling thread, over pre-built SDK
  spans, beside the SDK's no-op ``SpanProcessor`` and its ``BatchSpanProcessor`` (to an
  exporter that drops everything: what exporting traces costs any instrumented agent).
- A traced run: the same four-span GenAI run (``invoke_agent`` > ``chat`` >
  ``execute_tool`` > ``chat``, with message content) replayed through an SDK tracer; wall
  time and CPU time of the agent's thread per run, for: no processor, the no-op processor,
  a ``BatchSpanProcessor``, and the ``BatchSpanProcessor`` with livescore's processor
  (keyword coverage on every run, scored on livescore's threads).
- A real agent: smolagents' ``ToolCallingAgent`` with a scripted model (no network), per
  run: uninstrumented, with OpenInference's instrumentor (and a ``BatchSpanProcessor``), and
  with livescore's processor added.

**The receiver** (``livescore collect``, a process of its own): client processes post
pre-encoded OTLP protobuf requests (8 runs of 4 spans each, distinct trace ids) as fast as
they can over keep-alive connections for ``--seconds``; then SIGTERM. Reported: runs/s
sent, accepted and refused (429), runs assembled and scored, dropped (by reason), the
receiver's peak RSS, and the accounting check (every run sent is refused, or assembled
and then scored, skipped, failed or dropped).

Run: ``python bench/traces.py [--quick] [--seconds S] [--runs N]``; the figures go to
``bench/results/traces.json`` (see ``_common.Results``).
"""

from __future__ import annotations

import argparse
import functools
import gc
import http.client
import json
import multiprocessing
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from _common import ROOT, Results, console, percentile, print_machine, table

QUESTION = "What is the weather in Lyon today, and should I take an umbrella?"
ANSWER = "It is sunny in Lyon today at 24 °C, so you can leave the umbrella at home."
TOOL_RESULT = json.dumps({"city": "Lyon", "sky": "sunny", "temperature_c": 24, "rain_mm": 0})


def _user(text: str) -> str:
    return json.dumps([{"role": "user", "parts": [{"type": "text", "content": text}]}])


def _assistant(text: str) -> str:
    return json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": text}]}])


def traced_run(tracer: Any) -> None:
    """One tool-using agent run, traced in the GenAI conventions (what pydantic-ai writes)."""
    call = [{"type": "tool_call", "id": "c1", "name": "get_weather", "arguments": {"city": "Lyon"}}]
    with tracer.start_as_current_span(
        "invoke_agent weather",
        attributes={
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "weather",
            "gen_ai.input.messages": _user(QUESTION),
            "gen_ai.output.messages": _assistant(ANSWER),
        },
    ):
        with tracer.start_as_current_span(
            "chat m",
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "m",
                "gen_ai.input.messages": _user(QUESTION),
                "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": call}]),
            },
        ):
            pass
        with tracer.start_as_current_span(
            "execute_tool get_weather",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.call.id": "c1",
                "gen_ai.tool.call.arguments": '{"city": "Lyon"}',
                "gen_ai.tool.call.result": TOOL_RESULT,
            },
        ):
            pass
        with tracer.start_as_current_span(
            "chat m",
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "m",
                "gen_ai.output.messages": _assistant(ANSWER),
            },
        ):
            pass


def _scorers() -> list[Any]:
    from livescore.scorers import create_keyword_coverage_scorer

    return [create_keyword_coverage_scorer()]


def _drop_exporter() -> Any:
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

    class DropExporter(SpanExporter):
        def export(self, spans: Any) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    return DropExporter()


# -- the span processor -----------------------------------------------------------------------


def bench_on_end(calls: int) -> list[dict[str, Any]]:
    """The cost of one on_end call on the calling thread."""
    from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from livescore.collect import LiveScoringSpanProcessor

    provider = TracerProvider()
    keep = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(keep))
    tracer = provider.get_tracer("bench")
    for _ in range(max(1, calls // 4)):
        traced_run(tracer)
    spans = list(keep.get_finished_spans())[:calls]
    rows = []
    for name, make in (
        ("no-op SpanProcessor (SDK)", SpanProcessor),
        (
            "BatchSpanProcessor (SDK) to a dropping exporter",
            lambda: BatchSpanProcessor(_drop_exporter(), max_queue_size=len(spans) + 1),
        ),
        (
            "LiveScoringSpanProcessor",
            lambda: LiveScoringSpanProcessor(scorers=_scorers(), max_queued_spans=len(spans) + 1),
        ),
    ):
        processor = make()
        gc.collect()
        start_cpu, start = time.thread_time_ns(), time.perf_counter_ns()
        for span in spans:
            processor.on_end(span)
        wall, cpu = time.perf_counter_ns() - start, time.thread_time_ns() - start_cpu
        processor.shutdown()
        rows.append(
            {
                "processor": name,
                "calls": len(spans),
                "wall_ns_per_call": wall / len(spans),
                "cpu_ns_per_call": cpu / len(spans),
            }
        )
    table(
        "on_end, per call on the calling thread",
        ["processor", "calls", "wall ns/call", "CPU ns/call"],
        [
            [
                r["processor"],
                r["calls"],
                f"{r['wall_ns_per_call']:.0f}",
                f"{r['cpu_ns_per_call']:.0f}",
            ]
            for r in rows
        ],
    )
    return rows


def _per_run(fn: Any, runs: int) -> dict[str, float]:
    walls, cpus = [], []
    for _ in range(runs):
        start_cpu, start = time.thread_time_ns(), time.perf_counter_ns()
        fn()
        walls.append((time.perf_counter_ns() - start) / 1000)
        cpus.append((time.thread_time_ns() - start_cpu) / 1000)
    return {
        "wall_us_median": statistics.median(walls),
        "wall_us_p99": percentile(walls, 99),
        "cpu_us_median": statistics.median(cpus),
        "cpu_us_mean": statistics.fmean(cpus),
    }


def bench_traced_runs(runs: int) -> list[dict[str, Any]]:
    """A four-span traced run through the SDK, per configuration."""
    from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from livescore.collect import LiveScoringSpanProcessor

    rows = []
    configurations: list[tuple[str, Any]] = [
        ("SDK provider, no processor", lambda p: []),
        ("+ no-op SpanProcessor", lambda p: [SpanProcessor()]),
        (
            "+ BatchSpanProcessor (dropping exporter)",
            lambda p: [BatchSpanProcessor(_drop_exporter())],
        ),
        (
            "+ BatchSpanProcessor + LiveScoringSpanProcessor (100 % scored)",
            lambda p: [
                BatchSpanProcessor(_drop_exporter()),
                LiveScoringSpanProcessor(scorers=_scorers(), tracer_provider=p),
            ],
        ),
    ]
    for name, make in configurations:
        provider = TracerProvider()
        processors = make(provider)
        for processor in processors:
            provider.add_span_processor(processor)
        tracer = provider.get_tracer("bench")
        for _ in range(200):  # warm up
            traced_run(tracer)
        gc.collect()
        scoring = [p for p in processors if isinstance(p, LiveScoringSpanProcessor)]
        for processor in scoring:  # the warm-up's scores, out of the way
            processor.flush(60)
        before = scoring[0].stats() if scoring else None
        figures = _per_run(functools.partial(traced_run, tracer), runs)
        scored = dropped = None
        for processor in scoring:
            processor.flush(60)
            after = processor.stats()
            assert before is not None
            scored, dropped = after.scored - before.scored, after.dropped - before.dropped
        provider.shutdown()
        rows.append(
            {"configuration": name, "runs": runs, **figures, "scored": scored, "dropped": dropped}
        )
    table(
        "a traced four-span agent run, agent's thread",
        ["configuration", "runs", "wall µs p50", "wall µs p99", "CPU µs p50", "scored", "dropped"],
        [
            [
                r["configuration"],
                r["runs"],
                f"{r['wall_us_median']:.1f}",
                f"{r['wall_us_p99']:.1f}",
                f"{r['cpu_us_median']:.1f}",
                "–" if r["scored"] is None else r["scored"],
                "–" if r["dropped"] is None else f"{r['dropped']} (queue_full)",
            ]
            for r in rows
        ],
    )
    return rows


def bench_smolagents(runs: int) -> list[dict[str, Any]]:
    """A real smolagents tool-calling run (scripted model), per configuration."""
    try:
        import smolagents
        from openinference.instrumentation.smolagents import SmolagentsInstrumentor
    except ImportError:
        console.print("smolagents or its OpenInference instrumentor is not installed: skipped")
        return []
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from smolagents.models import (
        ChatMessage,
        ChatMessageToolCall,
        ChatMessageToolCallFunction,
        MessageRole,
    )

    from livescore.collect import LiveScoringSpanProcessor

    class ScriptedModel(smolagents.Model):
        """A test double of the model: the weather tool, then the final answer."""

        def generate(self, messages: Any, **kwargs: Any) -> ChatMessage:
            done = any("Observation" in str(m) for m in messages)
            name, arguments = (
                ("final_answer", {"answer": ANSWER}) if done else ("get_weather", {"city": "Lyon"})
            )
            call = ChatMessageToolCall(
                id="c",
                type="function",
                function=ChatMessageToolCallFunction(name=name, arguments=arguments),
            )
            return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=[call])

    # The instrumentor wraps the Model subclasses that exist when it instruments.
    globals()["ScriptedModel"] = ScriptedModel

    tool = smolagents.tool

    @tool
    def get_weather(city: str) -> str:
        """Get the weather of a city.

        Args:
            city: The city.
        """
        return TOOL_RESULT

    def make_agent() -> Any:
        return smolagents.ToolCallingAgent(
            tools=[get_weather],
            model=ScriptedModel(model_id="scripted"),
            max_steps=4,
            verbosity_level=-1,
        )

    rows = []
    for name, instrument, score in (
        ("smolagents, uninstrumented", False, False),
        ("+ OpenInference (BatchSpanProcessor, dropping exporter)", True, False),
        ("+ OpenInference + LiveScoringSpanProcessor (100 % scored)", True, True),
    ):
        provider = TracerProvider()
        provider.add_span_processor(BatchSpanProcessor(_drop_exporter()))
        processor = None
        if score:
            processor = LiveScoringSpanProcessor(scorers=_scorers(), tracer_provider=provider)
            provider.add_span_processor(processor)
        instrumentor = SmolagentsInstrumentor()
        if instrument:
            instrumentor.instrument(tracer_provider=provider)
        agent = make_agent()
        for _ in range(20):
            agent.run(QUESTION)
        gc.collect()
        figures = _per_run(functools.partial(agent.run, QUESTION), runs)
        scored = None
        if processor is not None:
            processor.flush(60)
            scored = processor.stats().scored
        if instrument:
            instrumentor.uninstrument()
        provider.shutdown()
        rows.append({"configuration": name, "runs": runs, **figures, "scored": scored})
    table(
        "a smolagents ToolCallingAgent run, agent's thread",
        ["configuration", "runs", "wall µs p50", "wall µs p99", "CPU µs p50", "scored"],
        [
            [
                r["configuration"],
                r["runs"],
                f"{r['wall_us_median']:.0f}",
                f"{r['wall_us_p99']:.0f}",
                f"{r['cpu_us_median']:.0f}",
                r["scored"] if r["scored"] is not None else "–",
            ]
            for r in rows
        ],
    )
    return rows


# -- the receiver -------------------------------------------------------------------------------

RUNS_PER_REQUEST = 8


def _bodies(count: int, seed: int) -> list[bytes]:
    """``count`` protobuf requests of RUNS_PER_REQUEST runs each, every trace id distinct."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("bench-agent")
    bodies = []
    for _ in range(count):
        exporter.clear()
        for _ in range(RUNS_PER_REQUEST):
            traced_run(tracer)
        bodies.append(encode_spans(exporter.get_finished_spans()).SerializeToString())
    return bodies


def _client(port: int, seconds: float, seed: int, queue: Any, go: Any) -> None:
    """One load process: threads posting distinct requests over keep-alive connections."""
    bodies = _bodies(int(150 * seconds) + 50, seed)
    queue.put("ready")
    go.wait()
    started = time.monotonic()
    stop_at = started + seconds
    counts = {"sent": 0, "200": 0, "429": 0, "other": 0}
    lock = threading.Lock()
    index = [0]

    def worker() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        while time.monotonic() < stop_at:
            with lock:
                i = index[0]
                index[0] += 1
            if i >= len(bodies):
                break  # every trace id is sent once
            try:
                connection.request(
                    "POST",
                    "/v1/traces",
                    body=bodies[i],
                    headers={"Content-Type": "application/x-protobuf"},
                )
                response = connection.getresponse()
                response.read()
                status = str(response.status)
            except (OSError, http.client.HTTPException):
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                status = "other"
            with lock:
                counts["sent"] += 1
                counts[status if status in counts else "other"] += 1
        connection.close()

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    queue.put({**counts, "started": started, "ended": time.monotonic()})


def _rss_kib(pid: int) -> int:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    match = re.search(r"^VmRSS:\s*(\d+) kB", text, re.MULTILINE)
    return int(match.group(1)) if match else 0


def bench_receiver(seconds: float, clients: int, max_memory_mb: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "bench_collect_scorers.py").write_text(
            "from livescore.scorers import create_keyword_coverage_scorer\n"
            "scorers = [create_keyword_coverage_scorer()]\n",
            encoding="utf-8",
        )
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "300"}
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "livescore.cli",
                "collect",
                "bench_collect_scorers:scorers",
                "--listen",
                f"127.0.0.1:{port}",
                "--quiet-period",
                "0.5",
                "--max-memory-mb",
                str(max_memory_mb),
                "--drain-timeout",
                "60",
            ],
            cwd=tmp,
            env=env,
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
        )
        assert process.stderr is not None
        process.stderr.readline()  # listening
        idle_rss = _rss_kib(process.pid)
        queue: Any = multiprocessing.Queue()
        go = multiprocessing.Event()
        loaders = [
            multiprocessing.Process(target=_client, args=(port, seconds, seed, queue, go))
            for seed in range(clients)
        ]
        peak = idle_rss
        for loader in loaders:
            loader.start()
        for _ in loaders:
            assert queue.get(timeout=300) == "ready"  # every request body is built
        go.set()
        counts: list[dict[str, Any]] = []
        while len(counts) < len(loaders):
            peak = max(peak, _rss_kib(process.pid))
            try:
                counts.append(queue.get(timeout=0.1))
            except Exception:
                continue
        elapsed = max(c["ended"] for c in counts) - min(c["started"] for c in counts)
        for loader in loaders:
            loader.join()
        peak = max(peak, _rss_kib(process.pid))
        process.send_signal(signal.SIGTERM)
        _, summary = process.communicate(timeout=120)
    sent = sum(c["sent"] for c in counts)
    ok = sum(c["200"] for c in counts)
    busy = sum(c["429"] for c in counts)
    other = sum(c["other"] for c in counts)

    def number(pattern: str) -> int:
        found = re.search(pattern, summary)
        return int(found.group(1)) if found else -1

    dropped_by = re.search(r"dropped \d+ (\{[^}]*\})", summary)
    figures = {
        "seconds": round(elapsed, 2),
        "client_processes": clients,
        "runs_per_request": RUNS_PER_REQUEST,
        "runs_sent": sent * RUNS_PER_REQUEST,
        "runs_accepted": ok * RUNS_PER_REQUEST,
        "runs_refused_429": busy * RUNS_PER_REQUEST,
        "requests_failed_otherwise": other,
        "runs_assembled": number(r"runs (\d+): submitted"),
        "runs_scored": number(r"scores: scored (\d+)"),
        "runs_dropped": number(r"scores: scored \d+, failed \d+, skipped \d+, dropped (\d+)"),
        "dropped_by_reason": dropped_by.group(1) if dropped_by else "{}",
        "traces_evicted": number(r"evicted (\d+)"),
        "received_per_s": round(sent * RUNS_PER_REQUEST / elapsed, 1),
        "accepted_per_s": round(ok * RUNS_PER_REQUEST / elapsed, 1),
        "rss_idle_mib": round(idle_rss / 1024, 1),
        "rss_peak_mib": round(peak / 1024, 1),
        "max_memory_mb": max_memory_mb,
        "exit_code": process.returncode,
        "summary": summary.strip().splitlines()[-4:],
    }
    accounted = figures["runs_scored"] + figures["runs_dropped"]
    figures["accounting_exact"] = (
        figures["runs_accepted"] == figures["runs_assembled"] == accounted
        and figures["runs_sent"] == figures["runs_accepted"] + figures["runs_refused_429"]
    )
    table(
        f"livescore collect under a flood ({clients} client processes × 4 connections, "
        f"{elapsed:.1f} s)",
        [
            "runs sent/s",
            "accepted/s",
            "refused (429)",
            "assembled",
            "scored",
            "dropped",
            "peak RSS",
            "accounting",
        ],
        [
            [
                figures["received_per_s"],
                figures["accepted_per_s"],
                figures["runs_refused_429"],
                figures["runs_assembled"],
                figures["runs_scored"],
                f"{figures['runs_dropped']} {figures['dropped_by_reason']}",
                f"{figures['rss_peak_mib']} MiB (idle {figures['rss_idle_mib']})",
                "exact" if figures["accounting_exact"] else "MISMATCH",
            ]
        ],
    )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs, a shorter flood")
    parser.add_argument("--runs", type=int, default=None, help="runs per configuration")
    parser.add_argument("--seconds", type=float, default=None, help="the flood's length")
    parser.add_argument("--clients", type=int, default=2, help="load processes")
    parser.add_argument(
        "--max-memory-mb", type=int, default=64, help="the receiver's span memory cap"
    )
    args = parser.parse_args()
    runs = args.runs or (300 if args.quick else 3000)
    seconds = args.seconds or (3.0 if args.quick else 15.0)
    partial = (
        args.runs is not None
        or args.seconds is not None
        or args.clients != 2
        or args.max_memory_mb != 64
    )
    record = Results("traces", quick=args.quick, partial=partial)
    print_machine("Benchmark 11: scoring agents from their traces")
    figures = {
        "on_end": bench_on_end(20_000 if args.quick else 200_000),
        "traced_run": bench_traced_runs(runs),
        "smolagents": bench_smolagents(max(50, runs // 10)),
        "receiver": bench_receiver(seconds, args.clients, args.max_memory_mb),
    }
    record.write(figures)


if __name__ == "__main__":
    main()
