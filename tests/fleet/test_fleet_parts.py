"""The fleet's Redis parts against a real Redis server: the ledger, the judge gate, and the
export barrier."""

from __future__ import annotations

import threading
import time

import anyio
import redis

from livescore.fleet._barrier import ExportBarrier
from livescore.fleet._gate import RedisJudgeGate, rpm_window
from livescore.fleet._ledger import Ledger, Mark, valid_reply_to
from livescore.fleet._redis import outage_reason
from livescore.testing import RedisTestServer


def test_claims_done_busy_and_stale(redis_server: RedisTestServer) -> None:
    client = redis.Redis.from_url(redis_server.url)
    a = Ledger(client, "worker-a", alive_ttl=30, ttl=60)
    b = Ledger(client, "worker-b", alive_ttl=30, ttl=60)
    a.beat()
    b.beat()
    a1, a3, b2 = a.new_owner(), a.new_owner(), b.new_owner()
    assert a.claim("job", ["s1", "s2"], owner=a1, lease=30) == {
        "s1": "claimed",
        "s2": "claimed",
    }
    # Another live worker holding the pairs: busy; the same delivery again: still ours.
    assert b.claim("job", ["s1"], owner=b2, lease=30) == {"s1": "busy"}
    assert a.claim("job", ["s1"], owner=a1, lease=30) == {"s1": "claimed"}
    # The same worker, another delivery of the job (the same message delivered twice to
    # it): busy too, never a second claim.
    assert a.claim("job", ["s1"], owner=a3, lease=30) == {"s1": "busy"}
    a.mark_done("job", {"s1": "scored"}, owner=a1)
    assert b.claim("job", ["s1"], owner=b2, lease=30) == {"s1": "done"}
    # A dead worker's claim (no alive key) is taken over; released claims are free.
    client.delete("livescore:fleet:alive:worker-a")
    assert b.claim("job", ["s2"], owner=b2, lease=30) == {"s2": "claimed"}
    b.release("job", ["s2"], owner=b2)
    a4 = a.new_owner()
    assert a.claim("job", ["s2"], owner=a4, lease=30) == {"s2": "claimed"}
    # Deliveries count once each, however often counting is retried.
    assert a.count_delivery("m9", a1) == 1
    assert a.count_delivery("m9", a1) == 1
    assert a.count_delivery("m9", a3) == 2
    a.uncount_delivery("m9", a3)
    assert a.count_delivery("m9", a4) == 2
    client.close()


def test_a_fence_outlives_the_heartbeat_and_marks_check_the_token(
    redis_server: RedisTestServer,
) -> None:
    client = redis.Redis.from_url(redis_server.url)
    a = Ledger(client, "worker-a", alive_ttl=30, ttl=60)
    b = Ledger(client, "worker-b", alive_ttl=30, ttl=60)
    a.beat()
    b.beat()
    mine, theirs = a.new_owner(), b.new_owner()
    a.claim("job", ["s1", "s2"], owner=mine, lease=30)
    # Fenced: held even once its worker looks dead (frozen mid-export).
    assert a.fence([("job", "s1", mine)], seconds=30) == [True]
    client.delete("livescore:fleet:alive:worker-a")
    assert b.claim("job", ["s1", "s2"], owner=theirs, lease=30) == {
        "s1": "busy",
        "s2": "claimed",  # only claimed, and its worker is gone: taken over
    }
    # The lapsed claim cannot be fenced, nor marked, by its old owner.
    assert a.fence([("job", "s2", mine)], seconds=30) == [False]
    assert a.mark([Mark("job", "s1", mine, "scored"), Mark("job", "s2", mine, "scored")]) == [
        "marked",
        "taken",
    ]
    assert b.mark([Mark("job", "s2", theirs, "scored")]) == ["marked"]
    assert a.mark([Mark("job", "s2", mine, "scored")]) == ["done_elsewhere"]
    client.close()


def test_a_job_may_reply_only_to_an_evaluation_list() -> None:
    assert valid_reply_to("livescore:fleet:eval:" + "ab" * 16 + ":results")
    assert not valid_reply_to("livescore:fleet:job:x")
    assert not valid_reply_to("session:42")
    assert not valid_reply_to(None)


def test_rpm_windows() -> None:
    assert rpm_window(600) == (10, 1000)
    assert rpm_window(60) == (1, 1000)
    assert rpm_window(30) == (1, 2000)
    assert rpm_window(90) == (1, 1000)


def test_the_gate_waits_out_a_pause_and_bounds_concurrency(redis_server: RedisTestServer) -> None:
    async def main() -> None:
        gate = RedisJudgeGate(redis_server.url, concurrency=2, lease=10)
        other = RedisJudgeGate(redis_server.url, concurrency=2, lease=10)
        await gate.rate_limited(0.3)
        started = time.monotonic()
        async with other.request():  # another worker's gate honours the pause
            waited = time.monotonic() - started
        assert waited >= 0.25
        assert other.waits == 1
        in_flight = 0
        most = 0

        async def one() -> None:
            nonlocal in_flight, most
            async with gate.request():
                in_flight += 1
                most = max(most, in_flight)
                await anyio.sleep(0.05)
                in_flight -= 1

        async with anyio.create_task_group() as tg:
            for _ in range(8):
                tg.start_soon(one)
        assert most == 2
        await gate.aclose()
        await other.aclose()

    anyio.run(main)


def test_the_gate_fails_open_without_redis() -> None:
    async def main() -> None:
        gate = RedisJudgeGate("redis://127.0.0.1:9/0", concurrency=1)
        async with gate.request():
            pass
        await gate.rate_limited(1.0)  # no error either
        await gate.aclose()

    anyio.run(main)


def test_the_export_barrier_waits_for_a_flush_that_starts_after_the_call() -> None:
    started = threading.Event()
    release = threading.Event()
    calls: list[float] = []

    def flush(timeout: float) -> bool:
        calls.append(time.monotonic())
        started.set()
        release.wait(5)
        return True

    barrier = ExportBarrier(flush, min_interval=0.0)
    first = threading.Thread(target=barrier.wait)
    first.start()
    assert started.wait(5)
    # Called while a flush runs: that flush may have missed this caller's scores.
    result: list[bool] = []
    second = threading.Thread(target=lambda: result.append(barrier.wait(5)))
    second.start()
    release.set()
    first.join(5)
    second.join(5)
    assert result == [True]
    assert len(calls) == 2
    barrier.stop()


def test_a_failed_flush_is_retried_by_the_barrier_itself() -> None:
    results = [False, False, True]
    calls: list[float] = []
    done = threading.Event()

    def flush(timeout: float) -> bool:
        calls.append(time.monotonic())
        ok = results[min(len(calls) - 1, len(results) - 1)]
        if ok:
            done.set()
        return ok

    barrier = ExportBarrier(flush, min_interval=0.0, retry_first=0.01, retry_max=0.05)
    barrier.request()  # one request; nobody asks again
    assert done.wait(10)
    assert len(calls) == 3
    assert barrier.failures == 2
    barrier.stop()


def test_outages_are_told_from_bad_requests() -> None:
    assert outage_reason(redis.ConnectionError("Error 111 connecting")) is not None
    assert outage_reason(redis.TimeoutError("Timeout reading")) is not None
    oom = redis.exceptions.OutOfMemoryError(
        "command not allowed when used memory > 'maxmemory'. script: 1, on @user_script:58."
    )
    assert outage_reason(oom) == ("out of memory (maxmemory reached, maxmemory-policy noeviction)")
    readonly = redis.exceptions.ReadOnlyError("You can't write against a read only replica.")
    assert outage_reason(readonly) == "read-only (a replica: a failover in progress?)"
    assert outage_reason(redis.ResponseError("MASTERDOWN Link with MASTER is down")) is not None
    # Retrying cannot fix these: they are errors.
    assert outage_reason(redis.AuthenticationError("invalid username-password pair")) is None
    assert outage_reason(redis.ResponseError("WRONGTYPE Operation against a key")) is None
    assert outage_reason(ValueError("no")) is None
