"""Running a fleet in tests: ``livescore worker`` subprocesses, and waiting on what arrives."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

from otlp_receiver import OTLPTestReceiver, ReceivedSpan

from livescore import Run
from livescore.testing import RedisTestServer

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def wait_for(condition: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll ``condition`` until it holds; fail with ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


class Worker:
    """One ``livescore worker`` process; its stderr goes to a file."""

    def __init__(self, process: subprocess.Popen[bytes], log: Path) -> None:
        self.process = process
        self.log = log

    @property
    def pid(self) -> int:
        return self.process.pid

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def wait_ready(self, timeout: float = 30.0) -> None:
        wait_for(
            lambda: "scoring" in self.output() or self.process.poll() is not None,
            timeout,
            "the worker to start",
        )
        assert self.process.poll() is None, self.output()

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def terminate(self, timeout: float = 60.0) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=timeout)


class Fleet:
    """Workers against one Redis and one OTLP receiver, stopped at the end of a test."""

    def __init__(self, redis: RedisTestServer, receiver: OTLPTestReceiver, tmp: Path) -> None:
        self.redis = redis
        self.receiver = receiver
        self.tmp = tmp
        self.workers: list[Worker] = []
        self.env: dict[str, str] = {}

    @property
    def url(self) -> str:
        return self.redis.url

    def start_worker(
        self, *args: str, env: dict[str, str] | None = None, wait: bool = True
    ) -> Worker:
        environ = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
            "OTEL_EXPORTER_OTLP_ENDPOINT": self.receiver.url,
            "OTEL_SERVICE_NAME": "livescore-worker-test",
            "OTEL_BSP_SCHEDULE_DELAY": "200",
            **self.env,
            **(env or {}),
        }
        log = self.tmp / f"worker-{len(self.workers)}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "livescore.cli",
                    "worker",
                    "fleet_scorers:scorers",
                    "--broker",
                    self.url,
                    "--heartbeat-timeout",
                    "2",
                    *args,
                ],
                env=environ,
                cwd=self.tmp,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        worker = Worker(process, log)
        self.workers.append(worker)
        if wait:
            worker.wait_ready()
        return worker

    def close(self) -> None:
        for worker in self.workers:
            if worker.process.poll() is None:
                worker.process.kill()
                worker.process.wait(timeout=10)

    def score_spans(self) -> list[ReceivedSpan]:
        return [s for s in list(self.receiver.spans) if s.name.startswith("evaluation ")]

    def pair_counts(self) -> Counter[tuple[str, str]]:
        """How many score spans arrived per (run id, scorer id)."""
        return Counter(
            (str(s.attributes["livescore.run.id"]), str(s.attributes["livescore.scorer.id"]))
            for s in self.score_spans()
        )

    def wait_for_pairs(self, pairs: Iterable[tuple[str, str]], timeout: float = 60.0) -> None:
        wanted = set(pairs)
        wait_for(
            lambda: wanted <= set(self.pair_counts()),
            timeout,
            f"{len(wanted)} scores (have {len(wanted & set(self.pair_counts()))}); logs:\n"
            + "\n".join(w.output()[-2000:] for w in self.workers),
        )

    def logs(self) -> str:
        return "\n".join(f"--- worker {w.pid}\n{w.output()}" for w in self.workers)


def span_by_pair(spans: Iterable[ReceivedSpan]) -> dict[tuple[str, str], ReceivedSpan]:
    return {
        (str(s.attributes["livescore.run.id"]), str(s.attributes["livescore.scorer.id"])): s
        for s in spans
    }


def publish_jobs(
    url: str,
    indices: Iterable[int],
    scorer_id: str,
    output: Callable[[int], str] = lambda i: "a",
) -> set[tuple[str, str]]:
    """Publish one job per index (run ``run-{i}``, answer ``output(i)``) for ``scorer_id``,
    as an agent's broker executor does; the (run id, scorer id) pairs."""
    from livescore.fleet._dramatiq import DramatiqPublisher

    publisher = DramatiqPublisher(url, "livescore")
    pairs = set()
    for i in indices:
        run = Run(
            input="q",
            output=output(i),
            run_id=f"run-{i}",
            trace_id=f"{i + 1:032x}",
            span_id=f"{i + 1:016x}",
            trace_flags=1,
        )
        publisher.publish(
            {
                "format": 1,
                "id": f"job-{i}",
                "run": run.to_dict(),
                "parent": {"trace_id": run.trace_id, "span_id": run.span_id, "trace_flags": 1},
                "scorers": [{"id": scorer_id, "sample_rate": 1.0}],
            }
        )
        pairs.add((run.run_id, scorer_id))
    publisher.close()
    return pairs
