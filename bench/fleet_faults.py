"""Benchmark 11: the fleet's duplicate window under faults (``livescore worker``, real Redis).

A worker commits its scores in batches: it fences the pairs' claims in Redis, exports their
spans, then marks them done. A pair is scored twice only when its worker stops for good
between the export and the marks (SIGKILL, a crash, the OOM killer): the next worker finds
the pair not done and scores it again. A *freeze* (SIGSTOP, a VM pause) no longer
duplicates anything: a frozen worker's lapsed claims fail the fence and its scores are
discarded.

1. **Commit window.** One worker, run as ``livescore worker`` runs it (the held span
   processor, OTLP export to a receiver on 127.0.0.1), scores N jobs (hallucination one-call
   against the bench judge, 200 ms a reply, and keyword coverage). Per commit: the seconds
   from the start of its span export to the marks' write (the window), the pairs in it,
   and the share of the worker's wall time spent inside a window: the chance that a kill
   at a random moment lands in one.
2. **Freezes.** Two workers (``--heartbeat-timeout 2``); per round, M jobs are published
   and one worker is frozen (SIGSTOP) at a random moment for 4 s, past its heartbeat, while
   the other takes its jobs over. Duplicate and lost score spans at the receiver, and the
   scores the frozen worker discarded.
3. **Kills.** Per round, M jobs are published and one of two workers is SIGKILLed at a
   random moment while it scores; another takes its place. Duplicates and losses per kill.

Run: ``python bench/fleet_faults.py [--quick] [--json out.json]``; a full run writes
``bench/results/fleet_faults.json``.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _common import (
    BENCH_DIR,
    Results,
    console,
    emit_json,
    judge_server,
    percentile,
    print_machine,
    table,
)
from fleet import LATENCY_S, Worker, _pairs, _record, _wait

from livescore.fleet._dramatiq import DramatiqPublisher
from livescore.testing import RedisTestServer

sys.path.insert(0, str(BENCH_DIR.parent / "tests"))
from otlp_receiver import OTLPTestReceiver

IDS = ("hallucination", "keyword-coverage")


def _judge_env(judge: str) -> dict[str, str]:
    return {
        "BENCH_JUDGE_URL": judge,
        "BENCH_JUDGE_LATENCY": str(LATENCY_S),
        "BENCH_MODE": "one_call",
    }


def _job(round_no: int, i: int) -> dict[str, Any]:
    """Job ``i`` of a round (run ids apart from the other rounds')."""
    return _record(round_no * 100_000 + i, IDS)


def _stop(worker: Worker) -> int:
    """Stop a worker gracefully; the scores it discarded (its stop line's ``fenced``)."""
    worker.stop()
    found = re.search(r"fenced (\d+)", worker.stop_line)
    return int(found.group(1)) if found else 0


# -- 1. the commit window ------------------------------------------------------------------------


def _child(broker: str) -> None:
    """Run one worker in this process (as ``livescore worker`` does) until SIGTERM; print
    its commit windows as JSON."""
    import _fleet_scorers

    from livescore.fleet import FleetWorker, configure_from_env

    worker = FleetWorker(_fleet_scorers.scorers, broker=broker, concurrency=16)
    telemetry = configure_from_env(worker.worker_id)
    worker.span_hold = telemetry.held
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    threading.Thread(
        target=lambda: worker.ready.wait() and print("ready", flush=True), daemon=True
    ).start()
    worker.run(stop)
    telemetry.shutdown()
    emit_json({"windows_s": list(worker.stats.commit_windows_s), "scored": worker.stats.scored})


def commit_window(judge: str, jobs: int) -> dict[str, Any]:
    import json

    with RedisTestServer() as redis_server, OTLPTestReceiver() as receiver:
        child = subprocess.Popen(
            [sys.executable, __file__, "--child", redis_server.url],
            env={
                **os.environ,
                "PYTHONPATH": os.pathsep.join([str(BENCH_DIR), os.environ.get("PYTHONPATH", "")]),
                "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url,
                "OTEL_METRICS_EXPORTER": "none",
                **_judge_env(judge),
            },
            stdout=subprocess.PIPE,
            text=True,
        )
        assert child.stdout is not None
        if child.stdout.readline().strip() != "ready":
            raise RuntimeError("the worker did not start")
        publisher = DramatiqPublisher(redis_server.url, "livescore")
        started = time.perf_counter()
        for i in range(jobs):
            publisher.publish(_job(0, i))
        publisher.close()
        _wait(lambda: len(_pairs(receiver)) >= jobs * len(IDS), 600)
        wall = time.perf_counter() - started
        child.send_signal(signal.SIGTERM)
        out, _ = child.communicate(timeout=90)
    found = json.loads(out.strip().splitlines()[-1])
    windows = [w * 1000 for w in found["windows_s"]]
    commits = len(windows)
    share = sum(windows) / 1000 / wall
    row = [
        jobs,
        jobs * len(IDS),
        commits,
        f"{jobs * len(IDS) / commits:.1f}" if commits else "—",
        f"{percentile(windows, 50):.2f}",
        f"{percentile(windows, 99):.2f}",
        f"{max(windows):.2f}" if windows else "—",
        f"{share:.2%}",
    ]
    table(
        "1. The commit window: from a commit's span export to its marks in Redis",
        [
            "jobs",
            "pairs",
            "commits",
            "pairs/commit",
            "p50 ms",
            "p99 ms",
            "max ms",
            "wall time in a window",
        ],
        [row],
    )
    console.print(
        "A worker killed inside a window leaves that commit's pairs exported but not marked: "
        "the next worker scores them again. A kill at a random moment lands in one with the "
        "probability in the last column; a freeze cannot duplicate (see 2)."
    )
    return {
        "jobs": jobs,
        "commits": commits,
        "pairs_per_commit": jobs * len(IDS) / commits if commits else None,
        "window_p50_ms": percentile(windows, 50),
        "window_p99_ms": percentile(windows, 99),
        "window_max_ms": max(windows) if windows else None,
        "wall_share_in_window": share,
    }


# -- 2, 3. freezes and kills ----------------------------------------------------------------------


def faults(judge: str, kind: str, rounds: int, jobs: int, seed: int = 7) -> dict[str, Any]:
    rng = random.Random(seed)
    with RedisTestServer() as redis_server, OTLPTestReceiver() as receiver:
        env = _judge_env(judge)
        args = ("--scorer-concurrency", "16", "--heartbeat-timeout", "2")
        workers = [Worker(redis_server.url, receiver.url, env, *args) for _ in range(2)]
        publisher = DramatiqPublisher(redis_server.url, "livescore")
        fenced = 0
        for round_no in range(1, rounds + 1):
            for i in range(jobs):
                publisher.publish(_job(round_no, i))
            # A random moment while both score (two workers take ~0.6 s per 100 jobs).
            time.sleep(rng.uniform(0.1, 0.5) * jobs / 100)
            victim = workers[0]
            if kind == "freeze":
                victim.process.send_signal(signal.SIGSTOP)
                time.sleep(4.0)  # past its 2 s heartbeat: its jobs go to the other worker
                victim.process.send_signal(signal.SIGCONT)
            else:
                victim.process.send_signal(signal.SIGKILL)
                victim.process.wait(timeout=10)
                workers[0] = Worker(redis_server.url, receiver.url, env, *args)
            expected = {(f"run-{round_no * 100_000 + i}", sid) for i in range(jobs) for sid in IDS}
            _wait(lambda e=expected: e <= set(_pairs(receiver)), 300)  # type: ignore[misc]
        publisher.close()
        time.sleep(2.0)  # a late duplicate would arrive now
        for worker in workers:
            fenced += _stop(worker)
        counts = _pairs(receiver)
    expected_all = {
        (f"run-{r * 100_000 + i}", sid)
        for r in range(1, rounds + 1)
        for i in range(jobs)
        for sid in IDS
    }
    lost = len(expected_all - set(counts))
    duplicated = sum(v - 1 for v in counts.values() if v > 1)
    return {
        "rounds": rounds,
        "jobs_per_round": jobs,
        "pairs": len(expected_all),
        "lost": lost,
        "duplicated": duplicated,
        "duplicates_per_fault": duplicated / rounds,
        "discarded_by_fence": fenced,
    }


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller runs (about a minute)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--only", choices=("1", "2", "3"), help="one figure only")
    parser.add_argument("--child", metavar="BROKER", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args.child)
        return {}
    quick = args.quick
    record = Results("fleet_faults", quick=quick, partial=args.only is not None)
    print_machine("Fleet faults: the duplicate window, freezes and kills")
    started = time.perf_counter()
    results: dict[str, Any] = {}
    rounds = 2 if quick else 5
    jobs = 100 if quick else 200
    with judge_server() as base_url:
        if args.only in (None, "1"):
            results["commit_window"] = commit_window(base_url, jobs=200 if quick else 1000)
        if args.only in (None, "2"):
            results["freezes"] = faults(base_url, "freeze", rounds, jobs)
        if args.only in (None, "3"):
            results["kills"] = faults(base_url, "kill", rounds, jobs)
    names = {"freezes": "SIGSTOP 4 s (heartbeat 2 s)", "kills": "SIGKILL"}
    rows = [
        [
            name,
            r["rounds"],
            r["pairs"],
            r["lost"],
            r["duplicated"],
            f"{r['duplicates_per_fault']:.1f}",
            r["discarded_by_fence"],
        ]
        for name, r in ((names[k], results[k]) for k in names if k in results)
    ]
    if rows:
        table(
            "2-3. Faults while two workers score (hallucination one-call + keyword coverage)",
            ["fault", "rounds", "pairs", "lost", "duplicate spans", "per fault", "discarded"],
            rows,
        )
    console.print(f"wall time {time.perf_counter() - started:.0f} s")
    record.write(results, json_path=args.json)
    return results


if __name__ == "__main__":
    main()
