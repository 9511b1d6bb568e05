"""Judge limits shared by the whole fleet through Redis: requests per minute, requests in
flight, and a 429 that pauses every worker, not only the one that got it."""

from __future__ import annotations

import re
import threading
import time
from typing import Any

import pytest
import redis
from fleet_support import Fleet, publish_jobs, wait_for

from livescore.testing import OpenAITestServer, Reply

pytestmark = pytest.mark.slow


def _publish(fleet: Fleet, first: int, count: int) -> set[tuple[str, str]]:
    return publish_jobs(fleet.url, range(first, first + count), "judged")


class _Clock:
    """The judge's replies, and when each request arrived."""

    def __init__(self, first: Any = None, delay: float = 0.0) -> None:
        self.first = first
        self.delay = delay
        self.arrivals: list[float] = []
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Any:
        with self._lock:
            self.arrivals.append(time.time())
            first = len(self.arrivals) == 1 and self.first is not None
        if first:
            return self.first
        return Reply.delay(self.delay, "yes") if self.delay else Reply.text("yes")


def _jobs_done(worker_output: str) -> int:
    match = re.search(r"stopped: (\d+) job", worker_output)
    return int(match.group(1)) if match else -1


def test_a_429_pauses_every_worker(fleet: Fleet) -> None:
    clock = _Clock(first=Reply.rate_limited(retry_after=2.0))
    with OpenAITestServer(responder=clock) as server:
        fleet.env["FLEET_TEST_JUDGE_URL"] = server.base_url
        fleet.env["FLEET_TEST_JUDGE_RETRIES"] = "5"
        # No limit configured: the pause after a 429 is always shared.
        # Small prefetch (Dramatiq takes twice its threads, which are twice --scorer-concurrency),
        # so that both workers hold jobs while the fleet is paused.
        workers = [fleet.start_worker("--scorer-concurrency", "2") for _ in range(2)]
        first = _publish(fleet, 0, 1)
        client = redis.Redis.from_url(fleet.url)
        wait_for(
            lambda: client.exists("livescore:fleet:gate:judge:pause") == 1,
            30,
            "the fleet-wide pause",
        )
        rest = _publish(fleet, 1, 24)  # work for both workers while the fleet is paused
        fleet.wait_for_pairs(first | rest)
        for worker in workers:
            assert worker.terminate() == 0
        # Both workers scored, and none sent a request before the 2 s pause ended.
        assert all(_jobs_done(w.output()) > 0 for w in workers), fleet.logs()
        paused_at = clock.arrivals[0]
        assert min(clock.arrivals[1:]) >= paused_at + 1.9, [t - paused_at for t in clock.arrivals]
        client.close()


def test_judge_concurrency_is_shared_by_the_fleet(fleet: Fleet) -> None:
    clock = _Clock(delay=0.3)
    with OpenAITestServer(responder=clock) as server:
        fleet.env["FLEET_TEST_JUDGE_URL"] = server.base_url
        for _ in range(2):
            fleet.start_worker("--scorer-concurrency", "8", "--fleet-judge-concurrency", "3")
        fleet.wait_for_pairs(_publish(fleet, 0, 16))
        # 16 workers' worth of slots, three judge requests at a time across both.
        assert server.max_concurrent == 3


def test_judge_requests_per_minute_are_shared_by_the_fleet(fleet: Fleet) -> None:
    clock = _Clock()
    with OpenAITestServer(responder=clock) as server:
        fleet.env["FLEET_TEST_JUDGE_URL"] = server.base_url
        for _ in range(2):
            fleet.start_worker("--scorer-concurrency", "8", "--fleet-judge-rpm", "120")
        fleet.wait_for_pairs(_publish(fleet, 0, 10))
        # 120 a minute = at most 2 in each 1 s window: any 5 requests in a row span at
        # least three windows, so more than a second.
        times = sorted(clock.arrivals)
        assert len(times) == 10
        spans = [times[i + 4] - times[i] for i in range(len(times) - 4)]
        assert min(spans) >= 0.95, spans
