"""Test doubles and helpers for the live dispatcher tests."""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from livescore import NotScorable, Run, ScoreResult, StepContext, create_scorer
from livescore.live import LiveDispatcher
from livescore.scoring import Scorer


@dataclass
class FakeEmitter:
    """An Emitter test double that records every call (thread-safe)."""

    results: list[tuple[Run, ScoreResult, dict[str, Any]]] = field(default_factory=list)
    sampled: list[str] = field(default_factory=list)
    dropped: list[tuple[str, str]] = field(default_factory=list)
    handed_off: list[str] = field(default_factory=list)
    meter_threads: list[int] = field(default_factory=list)  # idents of record_* callers
    queue_sources: list[Any] = field(default_factory=list)
    flushes: list[float | None] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def observe_queue_depth(self, source: Any) -> None:
        with self.lock:  # weakly, as OTelEmitter does: it must not keep a dispatcher alive
            self.queue_sources.append(weakref.WeakMethod(source))

    def flush(self, timeout: float | None = None) -> bool:
        with self.lock:
            self.flushes.append(timeout)
        return True

    def record_handed_off(self, scorer_id: str, count: int = 1) -> None:
        with self.lock:
            self.handed_off.extend([scorer_id] * count)
            self.meter_threads.append(threading.get_ident())

    def emit(self, run: Run, result: ScoreResult, **kwargs: Any) -> None:
        with self.lock:
            self.results.append((run, result, kwargs))

    def record_sampled(self, scorer_id: str, count: int = 1) -> None:
        with self.lock:
            self.sampled.extend([scorer_id] * count)
            self.meter_threads.append(threading.get_ident())

    def record_dropped(self, scorer_id: str, reason: str, count: int = 1) -> None:
        with self.lock:
            self.dropped.extend([(scorer_id, reason)] * count)
            self.meter_threads.append(threading.get_ident())

    def statuses(self) -> list[str]:
        with self.lock:
            return [r.status for _, r, _ in self.results]

    def run_ids(self, status: str = "scored") -> list[str]:
        with self.lock:
            return [r.run_id for _, r, _ in self.results if r.status == status]


class Gate:
    """Blocks scorers until opened; records how many are running at once."""

    def __init__(self) -> None:
        self.opened = threading.Event()
        self.started = threading.Event()
        self._lock = threading.Lock()
        self.running = 0
        self.peak = 0
        self.calls = 0

    async def wait(self) -> None:
        with self._lock:
            self.running += 1
            self.calls += 1
            self.peak = max(self.peak, self.running)
        self.started.set()
        try:
            # The opener is another thread, so poll a threading.Event.
            while not self.opened.is_set():  # noqa: ASYNC110
                await anyio.sleep(0.002)
        finally:
            with self._lock:
                self.running -= 1


def gated_scorer(gate: Gate, id: str = "gated") -> Scorer:
    async def score(ctx: StepContext) -> float:
        await gate.wait()
        return 1.0

    return create_scorer(id=id, description="waits for the gate", generate_score=score)


def constant_scorer(id: str = "constant", value: float = 0.5) -> Scorer:
    return create_scorer(id=id, description="a constant", generate_score=lambda ctx: value)


def raising_scorer(id: str = "raising") -> Scorer:
    def score(ctx: StepContext) -> float:
        raise ValueError("boom")

    return create_scorer(id=id, description="always fails", generate_score=score)


def skipping_scorer(id: str = "skipping") -> Scorer:
    def score(ctx: StepContext) -> float:
        raise NotScorable("nothing to judge")

    return create_scorer(id=id, description="never scorable", generate_score=score)


def wait_until(predicate: Callable[[], bool], timeout: float = 20.0) -> None:
    """Wait for a state the worker reaches asynchronously (a guard, not a timing check)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached")
        time.sleep(0.002)


def make_run(i: int = 0, **kwargs: Any) -> Run:
    kwargs.setdefault("input", "What is the capital of France?")
    kwargs.setdefault("output", "Paris is the capital of France.")
    return Run(run_id=f"run-{i}", trace_id=f"{i + 1:032x}", span_id=f"{i + 1:016x}", **kwargs)


def assert_invariant(dispatcher: LiveDispatcher) -> None:
    s = dispatcher.stats()
    assert s.sampled == (
        s.scored + s.failed + s.skipped + s.dropped + s.handed_off + s.queued + s.in_flight
    )
    for per in s.by_scorer.values():
        assert per.sampled == per.finished + per.queued + per.in_flight
        assert per.dropped == sum(per.dropped_by_reason.values())
        assert per.failed == sum(per.failed_by_type.values())
