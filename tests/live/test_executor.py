"""The executor seam: a sampled run is a plain, JSON-safe job; what runs it is pluggable."""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from _live_support import FakeEmitter, assert_invariant, constant_scorer, make_run

from livescore import Run
from livescore.live import (
    Executor,
    InProcessExecutor,
    JobHandle,
    LiveDispatcher,
    ScorerConfig,
    ScoringJob,
)
from livescore.runs import TraceParent


def test_job_record_is_json_safe_and_round_trips() -> None:
    config = ScorerConfig(constant_scorer(), sampling=0.5, timeout=3)
    parent = TraceParent("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", 1)
    job = ScoringJob(make_run(3, metadata={"user": "u1"}), (config,), parent)
    record = json.loads(json.dumps(job.to_dict()))
    assert record["scorers"] == [
        {"id": "constant", "version": "1", "sample_rate": 0.5, "timeout": 3}
    ]
    assert record["parent"] == {
        "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736",
        "span_id": "00f067aa0ba902b7",
        "trace_flags": 1,
    }
    rebuilt = ScoringJob.from_dict(record, {"constant": config})
    assert rebuilt.run.to_dict() == job.run.to_dict()
    assert rebuilt.run.trace_id == job.run.trace_id
    assert rebuilt.scorers == (config,)
    assert rebuilt.parent is not None
    assert rebuilt.parent.is_remote
    assert (rebuilt.parent.trace_id, rebuilt.parent.span_id) == (parent.trace_id, parent.span_id)


def test_unknown_scorer_on_the_worker_side_is_a_clear_error() -> None:
    job = ScoringJob(make_run(1), (ScorerConfig(constant_scorer("remote-only")),))
    with pytest.raises(KeyError, match="remote-only"):
        ScoringJob.from_dict(job.to_dict(), {})


def test_a_record_from_a_newer_livescore_is_refused() -> None:
    record = ScoringJob(make_run(1), (ScorerConfig(constant_scorer()),)).to_dict()
    record["format"] = 99
    with pytest.raises(ValueError, match="format 99"):
        ScoringJob.from_dict(record, {"constant": ScorerConfig(constant_scorer())})


def test_executor_protocol_is_structural() -> None:
    class NothingFakeExecutor:
        async def run(self, jobs: AsyncIterator[JobHandle]) -> None:
            async for _ in jobs:
                pass

    assert isinstance(NothingFakeExecutor(), Executor)
    assert isinstance(InProcessExecutor(), Executor)
    assert not isinstance(object(), Executor)


class HandOffFakeExecutor:
    """A test double of a broker executor: it "publishes" each job's JSON record to a list
    (what a Celery/Dramatiq publish would send), with a local buffer of ``capacity`` jobs
    that a "broker" drains while ``broker_up`` is set."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.published: list[dict[str, Any]] = []
        self.broker_up = threading.Event()
        self.threads: set[int] = set()

    async def run(self, jobs: AsyncIterator[JobHandle]) -> None:
        send, receive = anyio.create_memory_object_stream[JobHandle](self.capacity)
        async with anyio.create_task_group() as tg, send:
            tg.start_soon(self._publish, receive)
            async for handle in jobs:
                try:
                    send.send_nowait(handle)
                except anyio.WouldBlock:
                    handle.drop("broker_unavailable")

    async def _publish(self, receive: Any) -> None:
        async with receive:
            async for handle in receive:
                while not self.broker_up.is_set():  # noqa: ASYNC110 (set from the test)
                    await anyio.sleep(0.005)
                self.threads.add(threading.get_ident())
                self.published.append(json.loads(json.dumps(handle.job.to_dict())))
                handle.hand_off()


def test_a_hand_off_executor_accounts_every_pair_as_handed_off_or_dropped() -> None:
    emitter = FakeEmitter()
    executor = HandOffFakeExecutor(capacity=2)
    scorers = [constant_scorer("a"), constant_scorer("b")]
    d = LiveDispatcher(scorers, emitter=emitter, executor=executor, register_atexit=False)
    try:
        # The broker is down: two jobs fit the local buffer (one more is being published),
        # the rest are dropped as broker_unavailable, never raised, never blocking.
        accepted = [d.submit(make_run(i)) for i in range(10)]
        assert all(accepted)  # the dispatcher's queue took them; the executor decides
        assert d.flush(timeout=0.2) is False  # the buffered ones wait for the broker
        executor.broker_up.set()
        assert d.flush(timeout=20) is True
        s = d.stats()
        assert s.sampled == 20
        assert s.handed_off + s.dropped == 20
        assert s.dropped_by_reason == {"broker_unavailable": s.dropped}
        assert 2 <= s.handed_off // 2 <= 10
        assert (s.scored, s.failed, s.skipped, s.queued, s.in_flight) == (0, 0, 0, 0, 0)
        assert_invariant(d)
        # Nothing was scored or emitted here; the counts reached the metric.
        assert emitter.results == []
        assert len(emitter.handed_off) == s.handed_off
        assert len(emitter.dropped) == s.dropped
        # What the broker got is the JSON-safe record, with the run's span as parent.
        first = executor.published[0]
        assert first["parent"]["trace_id"] == make_run(0).trace_id
        assert [sc["id"] for sc in first["scorers"]] == ["a", "b"]
    finally:
        d.shutdown(timeout=5)


def test_the_default_executor_is_in_process_with_the_given_concurrency() -> None:
    d = LiveDispatcher([constant_scorer()], max_judge_concurrency=7, register_atexit=False)
    assert isinstance(d.executor, InProcessExecutor)
    assert d.executor.max_concurrency == 7
    with pytest.raises(ValueError, match="set the concurrency on the executor"):
        LiveDispatcher(
            [constant_scorer()],
            executor=InProcessExecutor(),
            max_judge_concurrency=4,
            register_atexit=False,
        )
    with pytest.raises(TypeError, match="executor"):
        LiveDispatcher([constant_scorer()], executor=object(), register_atexit=False)  # type: ignore[arg-type]


def test_reports_after_the_first_are_ignored() -> None:
    class TwiceFakeExecutor:
        async def run(self, jobs: AsyncIterator[JobHandle]) -> None:
            async for handle in jobs:
                handle.hand_off(0)
                handle.drop("late", 0)  # ignored: already handed off
                handle.drop("late", 7)  # ignored: no such pair

    emitter = FakeEmitter()
    d = LiveDispatcher(
        [constant_scorer()], emitter=emitter, executor=TwiceFakeExecutor(), register_atexit=False
    )
    try:
        d.submit(make_run(1))
        assert d.flush(timeout=20)
        s = d.stats()
        assert (s.handed_off, s.dropped) == (1, 0)
        assert_invariant(d)
    finally:
        d.shutdown(timeout=5)


def test_pairs_an_executor_never_reports_are_dropped_at_shutdown() -> None:
    class ForgetfulFakeExecutor:
        async def run(self, jobs: AsyncIterator[JobHandle]) -> None:
            async for _ in jobs:
                pass  # takes the job, reports nothing

    d = LiveDispatcher(
        [constant_scorer()],
        emitter=FakeEmitter(),
        executor=ForgetfulFakeExecutor(),
        register_atexit=False,
    )
    d.submit(make_run(1))
    d.shutdown(timeout=0.5)
    s = d.stats()
    assert s.dropped_by_reason == {"shutdown": 1}
    assert_invariant(d)


def test_in_process_executor_rejects_bad_concurrency() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        InProcessExecutor(max_concurrency=0)
    with pytest.raises(TypeError, match="an int"):
        InProcessExecutor(max_concurrency=1.5)  # type: ignore[arg-type]


def test_a_run_submitted_as_a_mapping_is_scored() -> None:
    # LiveDispatcher.submit is typed RunLike: the mapping form works as scorers accept it.
    emitter = FakeEmitter()
    with LiveDispatcher([constant_scorer()], emitter=emitter, register_atexit=False) as d:
        assert d.submit({"input": "q", "output": "a", "run_id": "m1"}) is True
        assert d.flush(timeout=20)
    assert [r.run_id for _, r, _ in emitter.results] == ["m1"]
    assert isinstance(emitter.results[0][0], Run)
