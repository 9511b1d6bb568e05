"""Running a fleet in tests: ``livescore worker`` subprocesses, and waiting on what arrives."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import redis
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from otlp_receiver import OTLPTestReceiver, ReceivedSpan

from livescore import Run
from livescore.live import LiveDispatcher
from livescore.otel import OTelEmitter
from livescore.testing import RedisTestServer, Reply

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def make_run(i: int, output: str = "Ownership in Rust", **fields: Any) -> Run:
    """Run ``i``: ids derived from ``i``, a sampled trace."""
    return Run(
        input="Rust ownership",
        output=output,
        run_id=f"run-{i}",
        trace_id=f"{i + 1:032x}",
        span_id=f"{i + 1:016x}",
        trace_flags=1,
        **fields,
    )


def job_record(run: Run, *scorer_ids: str, job_id: str, version: int = 1) -> dict[str, Any]:
    """A job record as an agent publishes it."""
    return {
        "format": version,
        "id": job_id,
        "source": "live",
        "run": run.to_dict(),
        "parent": {"trace_id": run.trace_id, "span_id": run.span_id, "trace_flags": 1},
        "scorers": [
            {"id": sid, "version": "1", "sample_rate": 1.0, "timeout": 30.0} for sid in scorer_ids
        ],
    }


def done_pairs(url: str, scorer_id: str) -> int:
    """Pairs of ``scorer_id`` marked done in the fleet's ledger."""
    client = redis.Redis.from_url(url)
    try:
        return sum(
            1
            for key in client.scan_iter("livescore:fleet:job:*")
            if (client.hget(key, scorer_id) or b"").startswith(b"done:")
        )
    finally:
        client.close()


def unacknowledged(url: str, queue: str = "livescore") -> int:
    """Messages on the queue not acknowledged yet (waiting, or held by a worker)."""
    client = redis.Redis.from_url(url)
    try:
        return int(client.hlen(f"livescore:{queue}.msgs"))
    finally:
        client.close()


class SlowJudge:
    """The judge's replies: the first ``hold`` requests wait until released, the rest at once."""

    def __init__(self, hold: int) -> None:
        self.hold = hold
        self.release = threading.Event()
        self.arrived = 0
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Any:
        with self._lock:
            self.arrived += 1
            held = self.arrived <= self.hold
        if held:
            self.release.wait(30)
        return Reply.text("yes")


def wait_for(condition: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll ``condition`` until it holds; fail with ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


class Worker:
    """One ``livescore worker`` process; its stderr goes to a file (or to a pipe nobody
    reads, with ``stderr_pipe=True``)."""

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
        self,
        *args: str,
        env: dict[str, str] | None = None,
        wait: bool = True,
        module: str = "livescore.cli",
        broker_args: tuple[str, ...] | None = None,
        stderr_pipe: bool = False,
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
                    module,
                    "worker",
                    "fleet_scorers:scorers",
                    *(("--broker", self.url) if broker_args is None else broker_args),
                    "--heartbeat-timeout",
                    "2",
                    *args,
                ],
                env=environ,
                cwd=self.tmp,
                stdout=out,
                stderr=subprocess.PIPE if stderr_pipe else subprocess.STDOUT,
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
        """How many score spans arrived per (run id, scorer id): distinct spans, so an OTLP
        export the exporter sent again after a timeout (the same span, the same span id, as a
        backend dedupes it) is one score; two scores of a pair are two span ids."""
        distinct = {
            (
                str(s.attributes["livescore.run.id"]),
                str(s.attributes["livescore.scorer.id"]),
                s.span_id,
            )
            for s in self.score_spans()
        }
        return Counter((run_id, scorer_id) for run_id, scorer_id, _ in distinct)

    def wait_for_pairs(self, pairs: Iterable[tuple[str, str]], timeout: float = 60.0) -> None:
        wanted = set(pairs)
        wait_for(
            lambda: wanted <= set(self.pair_counts()),
            timeout,
            f"{len(wanted)} scores (have {len(wanted & set(self.pair_counts()))}); logs:\n"
            + "\n".join(w.output()[-2000:] for w in self.workers),
        )

    def wait_for_count(
        self, value: float, what: str, name: str = "livescore.runs", **attributes: str
    ) -> None:
        """Wait until the workers' counter ``name`` (its points with ``attributes``; dots
        spelled ``_``) sums to ``value``."""
        wanted = {key.replace("_", "."): v for key, v in attributes.items()}
        wait_for(lambda: self.receiver.counter_total(name, wanted) == value, 30, what)

    def logs(self) -> str:
        return "\n".join(f"--- worker {w.pid}\n{w.output()}" for w in self.workers)


def agent_counts(reader: InMemoryMetricReader) -> Counter[tuple[str, str | None]]:
    """An agent's ``livescore.runs`` counter, by (status, reason), from its metric reader."""
    counts: Counter[tuple[str, str | None]] = Counter()
    data = reader.get_metrics_data()
    for rm in data.resource_metrics if data else ():
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                if metric.name != "livescore.runs":
                    continue
                for point in metric.data.data_points:
                    reason = point.attributes.get("livescore.reason")
                    key = (
                        str(point.attributes["livescore.status"]),
                        str(reason) if reason else None,
                    )
                    counts[key] += int(point.value)  # type: ignore[attr-defined]
    return counts


def worker_outcomes(receiver: OTLPTestReceiver) -> float:
    """The workers' ``livescore.runs`` ends (scored, failed, skipped, dropped), summed over
    every worker process from what they exported."""
    return sum(
        receiver.counter_total("livescore.runs", {"livescore.status": status})
        for status in ("scored", "failed", "skipped", "dropped")
    )


def agent_with_metrics(
    scorers: list[Any], executor: Any, **kwargs: Any
) -> tuple[LiveDispatcher, InMemoryMetricReader]:
    """A dispatcher whose metrics a test reads (its ``livescore.runs`` counter)."""
    reader = InMemoryMetricReader()
    emitter = OTelEmitter(meter_provider=MeterProvider(metric_readers=[reader]))
    dispatcher = LiveDispatcher(
        scorers, emitter=emitter, executor=executor, register_atexit=False, **kwargs
    )
    return dispatcher, reader


def wait_until_accounted(
    reader: InMemoryMetricReader, receiver: OTLPTestReceiver, timeout: float = 60.0
) -> Counter[tuple[str, str | None]]:
    """Wait until the workers counted an end for every pair the agent handed off; then the
    fleet's books must balance: ``sampled = dropped (agent) + ends (workers)``, exactly.
    Returns the agent's counts."""
    agent = agent_counts(reader)
    handed_off = agent[("handed_off", None)]
    wait_for(
        lambda: worker_outcomes(receiver) >= handed_off,
        timeout,
        f"the workers' counts of {handed_off} handed-off pairs (have {worker_outcomes(receiver)})",
    )
    dropped = sum(n for (status, _), n in agent.items() if status == "dropped")
    assert worker_outcomes(receiver) == handed_off, (worker_outcomes(receiver), agent)
    assert agent[("sampled", None)] == dropped + worker_outcomes(receiver), agent
    return agent


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
