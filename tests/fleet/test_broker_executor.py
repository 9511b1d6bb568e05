"""The agent side in isolation: BrokerExecutor's buffer, drops and hand-offs, with a
publisher test double standing in for the broker (the fleet tests use a real Redis)."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import pytest
from fleet_support import wait_for

from livescore import Run
from livescore._errors import JobTooLargeError
from livescore.fleet import BrokerExecutor, BrokerUnavailableError
from livescore.live import LiveDispatcher, ScorerConfig
from livescore.scorers import create_keyword_coverage_scorer


class PublisherDouble:
    """A test double of a broker publisher: keeps records; can be switched down and up."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self.threads: set[str] = set()
        self.up = threading.Event()
        self.up.set()
        self.attempts = 0
        self.closed = False

    def publish(self, record: Mapping[str, Any]) -> None:
        self.attempts += 1
        self.threads.add(threading.current_thread().name)
        if not self.up.is_set():
            raise BrokerUnavailableError("cannot reach the broker: test double is down")
        self.records.append(dict(record))

    def publish_many(self, records: list[Mapping[str, Any]]) -> None:
        for record in records:
            self.publish(record)

    def close(self) -> None:
        self.closed = True


def _dispatcher(double: PublisherDouble, max_buffer: int = 1000) -> LiveDispatcher:
    executor = BrokerExecutor(
        "redis://127.0.0.1:1/0", max_buffer=max_buffer, publisher_factory=lambda u, q: double
    )
    return LiveDispatcher(
        [ScorerConfig(create_keyword_coverage_scorer(), sampling=1.0)],
        executor=executor,
        register_atexit=False,
    )


def _run(i: int) -> Run:
    return Run(
        input="q",
        output="a",
        run_id=f"r{i}",
        trace_id=f"{i + 1:032x}",
        span_id=f"{i + 1:016x}",
        trace_flags=1,
    )


def test_published_records_carry_what_a_worker_needs_and_count_as_handed_off() -> None:
    double = PublisherDouble()
    with _dispatcher(double) as dispatcher:
        for i in range(5):
            assert dispatcher.submit(_run(i))
        assert dispatcher.flush(timeout=10)
        stats = dispatcher.stats()
    assert stats.handed_off == stats.sampled == 5
    assert len(double.records) == 5
    record = double.records[0]
    assert record["format"] == 1
    assert record["source"] == "live"
    assert record["run"]["run_id"] == "r0"
    assert record["parent"] == {"trace_id": f"{1:032x}", "span_id": f"{1:016x}", "trace_flags": 1}
    assert record["scorers"][0]["id"] == "keyword-coverage"
    assert record["scorers"][0]["sample_rate"] == 1.0
    assert len({r["id"] for r in double.records}) == 5  # one idempotency key per job
    # Published from the dispatcher's side, never the agent's thread.
    assert threading.current_thread().name not in double.threads
    assert double.closed


def test_an_absent_broker_fills_the_buffer_then_drops_and_publishing_resumes() -> None:
    double = PublisherDouble()
    double.up.clear()
    with _dispatcher(double, max_buffer=3) as dispatcher:
        for i in range(10):
            assert dispatcher.submit(_run(i)) is True  # never raises, never blocks
        wait_for(
            lambda: dispatcher.stats().dropped_by_reason.get("broker_unavailable") == 7,
            10,
            "drops past the buffer",
        )
        assert double.records == []
        double.up.set()
        assert dispatcher.flush(timeout=10)
        stats = dispatcher.stats()
    assert [r["run"]["run_id"] for r in double.records] == ["r0", "r1", "r2"]
    assert stats.handed_off == 3
    assert stats.dropped == 7
    assert stats.sampled == stats.handed_off + stats.dropped
    # A retried job keeps its id: a worker recognises a republished record.
    assert double.attempts > 3


def test_what_is_still_buffered_at_shutdown_is_dropped_with_the_reason() -> None:
    double = PublisherDouble()
    double.up.clear()
    dispatcher = _dispatcher(double, max_buffer=100)
    for i in range(4):
        dispatcher.submit(_run(i))
    wait_for(lambda: double.attempts > 0, 10, "a publish attempt")
    dispatcher.shutdown(timeout=0.5)
    stats = dispatcher.stats()
    assert stats.dropped_by_reason == {"broker_unavailable": 4}
    assert stats.sampled == 4


def test_broker_argument_checks() -> None:
    scorer = create_keyword_coverage_scorer()
    with pytest.raises(ValueError, match="Redis URL"):
        BrokerExecutor("http://127.0.0.1:6379")
    with pytest.raises(ValueError, match="not both"):
        LiveDispatcher(
            [scorer],
            broker="redis://127.0.0.1:6379/0",
            executor=BrokerExecutor("redis://127.0.0.1:6379/0"),
            register_atexit=False,
        )
    with pytest.raises(ValueError, match="max_judge_concurrency"):
        LiveDispatcher(
            [scorer],
            broker="redis://127.0.0.1:6379/0",
            max_judge_concurrency=4,
            register_atexit=False,
        )
    dispatcher = LiveDispatcher([scorer], broker="redis://127.0.0.1:6379/0", register_atexit=False)
    assert isinstance(dispatcher.executor, BrokerExecutor)
    assert "redis://127.0.0.1:6379/0" in repr(dispatcher.executor)
    dispatcher.shutdown()


class RefusingPublisherDouble(PublisherDouble):
    """A test double that refuses the run ``r-bad`` with ``error`` (as the engine does a
    record JSON cannot encode, or one over its size cap)."""

    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error

    def publish(self, record: Mapping[str, Any]) -> None:
        if record["run"]["run_id"] == "r-bad":
            raise self.error
        super().publish(record)

    def publish_many(self, records: list[Mapping[str, Any]]) -> None:
        if any(r["run"]["run_id"] == "r-bad" for r in records):
            raise self.error
        super().publish_many(records)


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (TypeError("Object of type Thing is not JSON serializable"), "invalid_job"),
        (JobTooLargeError(2_000_000, 1_048_576), "job_too_large"),
    ],
)
def test_a_job_the_engine_refuses_is_dropped_and_the_rest_published(
    error: Exception, reason: str
) -> None:
    double = RefusingPublisherDouble(error)
    executor = BrokerExecutor(
        "redis://127.0.0.1:1/0", linger=0.2, publisher_factory=lambda u, q: double
    )
    with LiveDispatcher(
        [create_keyword_coverage_scorer()], executor=executor, register_atexit=False
    ) as dispatcher:
        for run_id in ("r1", "r-bad", "r2"):
            dispatcher.submit(Run(input="q", output="a", run_id=run_id))
        assert dispatcher.flush(timeout=10)
        stats = dispatcher.stats()
    assert stats.dropped_by_reason == {reason: 1}
    assert stats.handed_off == 2
    assert sorted(r["run"]["run_id"] for r in double.records) == ["r1", "r2"]


class PartialPublisherDouble(PublisherDouble):
    """A test double of a broker that takes the first ``room`` jobs of a batch, then
    refuses the rest as a full Redis does, until ``room`` is raised."""

    def __init__(self, room: int) -> None:
        super().__init__()
        self.room = room

    def publish_many(self, records: list[Mapping[str, Any]]) -> None:
        taken = records[: self.room]
        self.records.extend(dict(r) for r in taken)
        self.room -= len(taken)
        if len(taken) < len(records):
            raise BrokerUnavailableError(
                "the broker is out of memory", published=tuple(range(len(taken)))
            )


def test_jobs_taken_before_the_broker_refused_the_rest_are_published_once() -> None:
    double = PartialPublisherDouble(room=3)
    executor = BrokerExecutor(
        "redis://127.0.0.1:1/0", linger=0.2, publisher_factory=lambda u, q: double
    )
    with LiveDispatcher(
        [create_keyword_coverage_scorer()], executor=executor, register_atexit=False
    ) as dispatcher:
        for i in range(8):
            dispatcher.submit(_run(i))
        wait_for(lambda: len(double.records) == 3, 10, "the first three")
        double.room = 100  # room again
        assert dispatcher.flush(timeout=10)
        stats = dispatcher.stats()
    assert [r["run"]["run_id"] for r in double.records] == [f"r{i}" for i in range(8)]
    assert stats.handed_off == 8
    assert stats.dropped == 0
