"""The fleet under faults: Redis away, full or read-only; a dead collector; poison and
malformed messages; a frozen or clock-skewed worker; eviction.

Every test runs real ``livescore worker`` processes against a real ``redis-server`` and an
OTLP receiver on 127.0.0.1, and checks the fleet's books where the agent drives: every
sampled pair ends once, ``sampled = dropped (agent) + scored + failed + skipped + dropped
(workers)``, summed from the agent's and the workers' ``livescore.runs`` metrics.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from typing import Any

import dramatiq
import pytest
import redis
from dramatiq.brokers.redis import RedisBroker
from fleet_support import (
    Fleet,
    SlowJudge,
    agent_with_metrics,
    done_pairs,
    job_record,
    make_run,
    unacknowledged,
    wait_for,
    wait_until_accounted,
)

from livescore.fleet import BrokerExecutor
from livescore.fleet._dramatiq import ACTOR_NAME, DramatiqConsumer, DramatiqPublisher
from livescore.runs import Step, ToolCall
from livescore.scorers import create_keyword_coverage_scorer
from livescore.testing import OpenAITestServer, RedisTestServer

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

KC = "keyword-coverage"


def _client(fleet: Fleet) -> redis.Redis:
    return redis.Redis.from_url(fleet.url)


def _raw_message(client: redis.Redis, message: tuple[str, bytes] | bytes) -> None:
    """Put a message on the queue as any producer could: Dramatiq's own layout."""
    redis_id, data = message if isinstance(message, tuple) else (str(uuid.uuid4()), message)
    client.hset("livescore:livescore.msgs", redis_id, data)
    client.rpush("livescore:livescore", redis_id)


def _message(*args: Any, actor: str = ACTOR_NAME, **kwargs: Any) -> tuple[str, bytes]:
    """A Dramatiq message (its Redis id, its data) to ``actor`` with these arguments."""
    redis_id = str(uuid.uuid4())
    message: dramatiq.Message[Any] = dramatiq.Message(
        queue_name="livescore",
        actor_name=actor,
        args=args,
        kwargs=kwargs,
        options={"redis_message_id": redis_id},
    )
    return redis_id, message.encode()


def _deliveries(client: redis.Redis, message_id: str) -> int:
    """How many deliveries of a message reached a worker's handler (the ledger's count)."""
    return int(client.scard(f"livescore:fleet:delivered:{message_id}"))


def _dead_letters(client: redis.Redis) -> int:
    return int(client.zcard("livescore:livescore.XQ"))


# -- 1. an outage during a commit ------------------------------------------------------------


def test_a_commit_cut_off_by_a_redis_outage_is_retried_by_itself(fleet: Fleet) -> None:
    fleet.env["OTEL_EXPORTER_OTLP_TIMEOUT"] = "30"
    worker = fleet.start_worker("--scorer-concurrency", "1")  # two engine threads
    publisher = DramatiqPublisher(fleet.url, "livescore")
    # The collector takes the spans but holds its answer: the commit waits in its export.
    fleet.receiver.gate.clear()
    first = [make_run(i) for i in range(2)]
    for i, run in enumerate(first):
        publisher.publish(job_record(run, KC, job_id=f"job-{i}"))
    wait_for(lambda: fleet.receiver.held >= 1, 30, "the commit's export")
    fleet.redis.stop()  # ... and Redis goes away before the marks are written
    fleet.receiver.gate.set()
    # The worker says it lost Redis (in a line, or in the client's ConnectionError).
    wait_for(
        lambda: any(word in worker.output() for word in ("unreachable", "ConnectionError")),
        30,
        "the outage to be seen",
    )
    fleet.redis.start()
    publisher.close()
    publisher = DramatiqPublisher(fleet.url, "livescore")
    # Both engine threads hold a finished job: only the commit retrying by itself frees them.
    later = [make_run(10 + i) for i in range(6)]
    for i, run in enumerate(later):
        publisher.publish(job_record(run, KC, job_id=f"job-later-{i}"))
    fleet.wait_for_pairs({(r.run_id, KC) for r in first + later}, timeout=60)
    wait_for(lambda: done_pairs(fleet.url, KC) == 8, 30, "every pair marked done")
    assert worker.terminate() == 0
    output = worker.output()
    assert "8 job(s) handled, 0 handed back to the queue" in output, output
    assert "scores: scored 8," in output, output
    assert max(fleet.pair_counts().values()) == 1
    assert "Traceback" not in output, output
    publisher.close()


# -- 2. a dead collector ------------------------------------------------------------------------


def test_jobs_wait_unacknowledged_while_the_collector_refuses_their_spans(fleet: Fleet) -> None:
    fleet.env["OTEL_EXPORTER_OTLP_TIMEOUT"] = "1"  # one export attempt gives up within 1 s
    fleet.receiver.refuse.set()  # 503 to every export
    worker = fleet.start_worker("--scorer-concurrency", "4")
    dispatcher, reader = agent_with_metrics(
        [create_keyword_coverage_scorer()], BrokerExecutor(fleet.url)
    )
    runs = [make_run(i) for i in range(20)]
    for run in runs:
        assert dispatcher.submit(run)
    assert dispatcher.flush(timeout=30)
    wait_for(lambda: fleet.receiver.refused >= 3, 60, "export attempts")
    # Nothing left, so nothing is done or acknowledged, and nothing was counted.
    assert fleet.score_spans() == []
    assert done_pairs(fleet.url, KC) == 0
    assert unacknowledged(fleet.url) == 20
    fleet.receiver.refuse.clear()
    fleet.wait_for_pairs({(r.run_id, KC) for r in runs}, timeout=60)
    dispatcher.shutdown(timeout=10)
    wait_until_accounted(reader, fleet.receiver)
    wait_for(lambda: unacknowledged(fleet.url) == 0, 30, "the acknowledgements")
    assert max(fleet.pair_counts().values()) == 1
    assert worker.output().count("could not be exported") == 1, worker.output()


def test_past_the_export_deadline_the_jobs_go_back_to_the_queue(fleet: Fleet) -> None:
    fleet.env["OTEL_EXPORTER_OTLP_TIMEOUT"] = "1"
    fleet.receiver.refuse.set()
    worker = fleet.start_worker("--scorer-concurrency", "2", "--export-deadline", "2")
    publisher = DramatiqPublisher(fleet.url, "livescore")
    runs = [make_run(i) for i in range(4)]
    for i, run in enumerate(runs):
        publisher.publish(job_record(run, KC, job_id=f"job-{i}"))
    wait_for(lambda: "go back to the queue" in worker.output(), 60, "the export deadline")
    fleet.receiver.refuse.clear()
    fleet.wait_for_pairs({(r.run_id, KC) for r in runs}, timeout=60)
    wait_for(lambda: unacknowledged(fleet.url) == 0, 30, "the acknowledgements")
    assert worker.terminate() == 0
    output = worker.output()
    assert " 0 handed back to the queue" not in output, output
    # Scored again after the hand-back, counted once each: the discarded scores never left.
    fleet.wait_for_count(4, "the worker's counts", livescore_status="scored")
    assert max(fleet.pair_counts().values()) == 1
    publisher.close()


# -- 3. out of memory, read-only, a full Redis at start -------------------------------------------


def test_a_full_redis_is_an_outage_every_run_is_counted_once(
    fleet: Fleet, caplog: pytest.LogCaptureFixture
) -> None:
    client = _client(fleet)
    client.config_set("maxmemory-policy", "noeviction")
    client.config_set("maxmemory", "2mb")
    worker = fleet.start_worker("--scorer-concurrency", "8")
    dispatcher, reader = agent_with_metrics(
        [create_keyword_coverage_scorer()], BrokerExecutor(fleet.url, max_buffer=300)
    )
    long_answer = "Ownership in Rust " * 110  # ~2 KB a run: 2 MB holds ~700 jobs
    with caplog.at_level(logging.WARNING, logger="livescore"):
        for i in range(2000):
            dispatcher.submit(make_run(i, long_answer))
        # Redis fills up, the agent's buffer with it: the rest are dropped, counted.
        wait_for(
            lambda: dispatcher.stats().dropped_by_reason.get("broker_unavailable", 0) > 0,
            60,
            "drops while Redis is full",
        )
        client.config_set("maxmemory", "0")  # the operator makes room
        assert dispatcher.flush(timeout=60)
        dispatcher.shutdown(timeout=10)
    stats = dispatcher.stats()
    # Dropped only while Redis was full (or, the executor held back, past the dispatcher's
    # queue): never a good job taken for a bad one.
    assert "broker_unavailable" in stats.dropped_by_reason, stats.dropped_by_reason
    assert set(stats.dropped_by_reason) <= {"broker_unavailable", "queue_full"}
    # Said once per outage (the few keys that expire meanwhile can end one), not per job.
    full = [r for r in caplog.records if "out of memory" in r.getMessage()]
    assert 1 <= len(full) <= 5, [r.getMessage() for r in caplog.records]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    agent = wait_until_accounted(reader, fleet.receiver, timeout=120)
    assert agent[("handed_off", None)] == stats.handed_off
    counts = fleet.pair_counts()
    assert len(counts) == stats.handed_off
    assert max(counts.values()) == 1
    assert worker.terminate() == 0
    output = worker.output()
    assert "Traceback" not in output, output
    client.close()


def test_a_failover_read_only_window_loses_no_run(fleet: Fleet, redis_binary: str) -> None:
    client = _client(fleet)
    worker = fleet.start_worker("--scorer-concurrency", "4")
    dispatcher, reader = agent_with_metrics(
        [create_keyword_coverage_scorer()], BrokerExecutor(fleet.url)
    )
    with RedisTestServer(redis_binary) as gone:
        dead_primary = gone.port
    for i in range(300):
        if i == 100:
            client.replicaof("127.0.0.1", dead_primary)  # a failover: this one is a replica now
            wait_for(lambda: client.info("replication")["role"] == "slave", 10, "the replica role")
        if i == 200:
            client.replicaof("NO", "ONE")  # ... and the primary again
        dispatcher.submit(make_run(i))
        time.sleep(0.01)  # runs keep arriving through the window
    assert dispatcher.flush(timeout=60)
    dispatcher.shutdown(timeout=10)
    stats = dispatcher.stats()
    assert stats.dropped == 0, stats
    assert stats.handed_off == 300, stats
    wait_until_accounted(reader, fleet.receiver, timeout=90)
    assert max(fleet.pair_counts().values()) == 1
    assert worker.terminate() == 0
    assert "Traceback" not in worker.output(), worker.output()
    client.close()


def test_a_worker_started_against_a_full_redis_waits_and_says_why(fleet: Fleet) -> None:
    client = _client(fleet)
    client.config_set("maxmemory-policy", "noeviction")
    client.config_set("maxmemory", "1")  # full: every write is refused
    worker = fleet.start_worker(wait=False)
    wait_for(lambda: "out of memory" in worker.output(), 30, "the reason it waits")
    assert worker.process.poll() is None, worker.output()
    client.config_set("maxmemory", "0")
    worker.wait_ready()
    publisher = DramatiqPublisher(fleet.url, "livescore")
    run = make_run(1)
    publisher.publish(job_record(run, KC, job_id="job-1"))
    fleet.wait_for_pairs({(run.run_id, KC)})
    assert worker.terminate() == 0
    assert "Traceback" not in worker.output(), worker.output()
    publisher.close()
    client.close()


# -- 4. reply_to ------------------------------------------------------------------------------


def test_a_job_may_not_name_a_foreign_key_as_its_reply_to(fleet: Fleet) -> None:
    client = _client(fleet)
    client.set("someones:session", "precious")
    worker = fleet.start_worker("--scorer-concurrency", "2")
    publisher = DramatiqPublisher(fleet.url, "livescore")
    bad = make_run(0)
    record = job_record(bad, KC, job_id="job-bad")
    record["reply_to"] = "someones:session"
    publisher.publish(record)
    good = [make_run(i) for i in range(1, 6)]
    for i, run in enumerate(good):
        publisher.publish(job_record(run, KC, job_id=f"job-{i}"))
    fleet.wait_for_pairs({(r.run_id, KC) for r in [bad, *good]})
    wait_for(lambda: unacknowledged(fleet.url) == 0, 30, "every job acknowledged")
    spans = {s.attributes["livescore.run.id"]: s for s in fleet.score_spans()}
    assert spans[bad.run_id].attributes["error.type"] == "invalid_job"
    assert client.get("someones:session") == b"precious"
    assert client.ttl("someones:session") == -1  # no expiry set on it either
    assert worker.terminate() == 0
    publisher.close()
    client.close()


# -- 5, 6. runs that cannot become jobs -----------------------------------------------------------


def _tool_run(i: int, result: Any) -> Any:
    return make_run(
        i,
        steps=[
            Step(kind="tool", name="lookup", index=0, tool_call=ToolCall("lookup", result=result))
        ],
    )


def test_a_run_too_deep_or_self_referential_is_dropped_alone(fleet: Fleet) -> None:
    fleet.start_worker("--scorer-concurrency", "4")
    dispatcher, reader = agent_with_metrics(
        [create_keyword_coverage_scorer()], BrokerExecutor(fleet.url)
    )
    deep: Any = "bottom"
    for _ in range(500):
        deep = {"next": deep}  # JSON parsers accept this; walking it overflows the stack
    looped: dict[str, Any] = {"name": "a tool result that contains itself"}
    looped["self"] = looped
    runs = [make_run(i) for i in range(10)]
    runs += [_tool_run(100, deep), _tool_run(101, looped)]
    runs += [make_run(i) for i in range(10, 20)]
    for run in runs:
        assert dispatcher.submit(run)
    assert dispatcher.flush(timeout=30)
    dispatcher.shutdown(timeout=10)
    stats = dispatcher.stats()
    assert stats.dropped_by_reason == {"invalid_job": 2}, stats.dropped_by_reason
    assert stats.handed_off == 20
    fleet.wait_for_pairs({(f"run-{i}", KC) for i in range(20)})
    wait_until_accounted(reader, fleet.receiver)


def test_a_run_too_large_for_redis_is_dropped_and_the_rest_published(fleet: Fleet) -> None:
    client = _client(fleet)
    client.config_set("proto-max-bulk-len", "1mb")  # Redis closes the connection past it
    fleet.start_worker("--scorer-concurrency", "4")
    dispatcher, reader = agent_with_metrics(
        [create_keyword_coverage_scorer()], BrokerExecutor(fleet.url)
    )
    runs = [make_run(i) for i in range(5)] + [make_run(5, "x" * 3_000_000)]
    runs += [make_run(i) for i in range(6, 11)]
    for run in runs:
        assert dispatcher.submit(run)
    assert dispatcher.flush(timeout=30)
    dispatcher.shutdown(timeout=10)
    stats = dispatcher.stats()
    assert stats.dropped_by_reason == {"job_too_large": 1}, stats.dropped_by_reason
    assert stats.handed_off == 10
    wait_until_accounted(reader, fleet.receiver)
    client.close()


# -- 7. duplicates: the same message twice, a frozen worker, skewed clocks ----------------------


@contextlib.contextmanager
def _judged(fleet: Fleet, judge: SlowJudge) -> Iterator[OpenAITestServer]:
    """A judge server the workers started in the block ask (the ``judged`` scorer)."""
    with OpenAITestServer(responder=judge) as server:
        fleet.env["FLEET_TEST_JUDGE_URL"] = server.base_url
        yield server


def test_the_same_message_twice_on_one_worker_is_scored_once(fleet: Fleet) -> None:
    judge = SlowJudge(hold=1)
    with _judged(fleet, judge):
        worker = fleet.start_worker("--scorer-concurrency", "4")
        client = _client(fleet)
        broker = RedisBroker(client=client, namespace="livescore", middleware=[])
        run = make_run(1)
        message: dramatiq.Message[Any] = dramatiq.Message(
            queue_name="livescore",
            actor_name=ACTOR_NAME,
            args=(job_record(run, "judged", job_id="job-1"),),
            kwargs={},
            options={},
        )
        # One message, two copies in Redis (what a redelivery to the same worker is).
        broker.enqueue(message)
        broker.enqueue(message)
        wait_for(lambda: judge.arrived >= 1, 30, "the first copy's judge call")
        # Both copies reached the worker's handler while the first one scores (or the second
        # one has asked the judge too).
        wait_for(
            lambda: _deliveries(client, message.message_id) == 2 or judge.arrived >= 2,
            30,
            "both copies",
        )
        judge.release.set()
        fleet.wait_for_pairs({(run.run_id, "judged")})
        wait_for(lambda: unacknowledged(fleet.url) == 0, 30, "both copies acknowledged")
        assert worker.terminate() == 0
        assert judge.arrived == 1
        assert fleet.pair_counts() == {(run.run_id, "judged"): 1}
        assert "duplicates skipped 1" in worker.output(), worker.output()
        client.close()


def test_a_worker_frozen_past_its_heartbeat_exports_nothing_when_it_resumes(fleet: Fleet) -> None:
    judge = SlowJudge(hold=4)
    with _judged(fleet, judge):
        frozen = fleet.start_worker("--scorer-concurrency", "4")
        publisher = DramatiqPublisher(fleet.url, "livescore")
        runs = [make_run(i) for i in range(4)]
        for i, run in enumerate(runs):
            publisher.publish(job_record(run, "judged", job_id=f"job-{i}"))
        wait_for(lambda: judge.arrived >= 4, 30, "the four judge calls")
        frozen.process.send_signal(signal.SIGSTOP)  # a VM pause, a stop-the-world
        try:
            judge.release.set()  # its answers wait in its sockets
            other = fleet.start_worker("--scorer-concurrency", "4")
            # Its heartbeat (2 s) lapses: the other worker takes the jobs over and scores them.
            fleet.wait_for_pairs({(r.run_id, "judged") for r in runs}, timeout=60)
        finally:
            frozen.process.send_signal(signal.SIGCONT)
        # It resumes with four finished scores whose claims lapsed, commits them as it stops
        # (the scores in hand finish first): discarded, not exported.
        assert frozen.terminate() == 0
        assert other.terminate() == 0
        assert fleet.pair_counts() == {(r.run_id, "judged"): 1 for r in runs}
        assert "fenced 4" in frozen.output(), frozen.output()
        fleet.wait_for_count(4, "the workers' counts", livescore_status="scored")
        publisher.close()


def test_heartbeats_are_stamped_with_redis_time_whatever_a_workers_clock_says(
    fleet: Fleet,
) -> None:
    judge = SlowJudge(hold=2)
    with _judged(fleet, judge):
        behind = fleet.start_worker(
            "--scorer-concurrency",
            "2",
            module="skewed_clock",
            env={"FLEET_TEST_CLOCK_SKEW": "-120"},
        )
        ahead = fleet.start_worker(
            "--scorer-concurrency", "2", module="skewed_clock", env={"FLEET_TEST_CLOCK_SKEW": "120"}
        )
        client = _client(fleet)
        wait_for(lambda: client.zcard("livescore:__heartbeats__") >= 2, 30, "two heartbeats")
        seconds, micros = client.time()
        now_ms = seconds * 1000 + micros // 1000
        beats = client.zrange("livescore:__heartbeats__", 0, -1, withscores=True)
        # Within seconds of Redis's clock, not two minutes off: neither worker looks dead to
        # the other (whose maintenance would then hand its jobs in flight to someone else).
        assert all(abs(score - now_ms) < 10_000 for _, score in beats), (now_ms, beats)
        publisher = DramatiqPublisher(fleet.url, "livescore")
        runs = [make_run(i) for i in range(4)]
        for i, run in enumerate(runs):
            publisher.publish(job_record(run, "judged", job_id=f"job-{i}"))
        wait_for(lambda: judge.arrived >= 2, 30, "two held judge calls")
        judge.release.set()
        fleet.wait_for_pairs({(r.run_id, "judged") for r in runs})
        assert behind.terminate() == 0
        assert ahead.terminate() == 0
        assert fleet.pair_counts() == {(r.run_id, "judged"): 1 for r in runs}
        for worker in (behind, ahead):
            assert "duplicates skipped 0" in worker.output(), worker.output()
        publisher.close()
        client.close()


# -- 8, 9. messages that are not jobs ------------------------------------------------------------


def test_an_undecodable_message_is_dead_lettered_and_the_jobs_fetched_with_it_go_on(
    fleet: Fleet,
) -> None:
    client = _client(fleet)
    _raw_message(client, b"\x80\x81 not json at all")
    runs = [make_run(i) for i in range(10)]
    for i, run in enumerate(runs):
        _raw_message(client, _message(job_record(run, KC, job_id=f"job-{i}")))
    worker = fleet.start_worker("--scorer-concurrency", "2")  # fetches the lot at once
    fleet.wait_for_pairs({(r.run_id, KC) for r in runs}, timeout=30)
    wait_for(lambda: _dead_letters(client) == 1, 10, "the dead letter")
    wait_for(lambda: unacknowledged(fleet.url) == 0, 30, "the good jobs acknowledged")
    assert worker.terminate() == 0
    output = worker.output()
    assert " 1 dead letter(s)" in output, output
    assert output.count("dead-letter set") == 1, output
    assert "Traceback" not in output, output
    fleet.wait_for_count(1, "the dead-letter count", name="livescore.fleet.dead_letters")
    client.close()


def test_malformed_messages_are_dead_lettered_once_and_counted(fleet: Fleet) -> None:
    client = _client(fleet)
    stray = make_run(99)
    _raw_message(client, _message())  # no argument
    _raw_message(client, _message("not a job record"))
    _raw_message(client, _message(job_record(stray, KC, job_id="job-stray"), "extra"))
    _raw_message(client, _message({"x": 1}, actor="someone.elses_actor"))
    runs = [make_run(i) for i in range(3)]
    for i, run in enumerate(runs):
        _raw_message(client, _message(job_record(run, KC, job_id=f"job-{i}")))
    worker = fleet.start_worker("--scorer-concurrency", "2")
    fleet.wait_for_pairs({(r.run_id, KC) for r in runs}, timeout=30)
    wait_for(lambda: _dead_letters(client) == 4, 30, "four dead letters")
    wait_for(lambda: unacknowledged(fleet.url) == 0, 30, "nothing left unacknowledged")
    assert worker.terminate() == 0
    output = worker.output()
    assert " 4 dead letter(s)" in output, output
    assert "Traceback" not in output, output
    assert output.count("malformed_message") == 3, output
    # The record the malformed message carried: its pair is counted, dropped, not lost.
    fleet.wait_for_count(
        1, "the stray job's pair", livescore_status="dropped", livescore_reason="malformed_message"
    )
    client.close()


def test_a_message_whose_handling_keeps_failing_is_dead_lettered_after_max_failures(
    fleet: Fleet, caplog: pytest.LogCaptureFixture
) -> None:
    client = _client(fleet)
    _raw_message(client, _message(job_record(make_run(1), KC, job_id="job-bad")))
    good = {f"job-{i}" for i in range(3)}
    for i, job_id in enumerate(sorted(good)):
        _raw_message(client, _message(job_record(make_run(10 + i), KC, job_id=job_id)))
    calls: Counter[str] = Counter()
    handled: set[str] = set()
    dead: list[tuple[str, Any]] = []
    lock = threading.Lock()

    def failing_handler(record: Any, delivery: Any) -> None:
        """A test double: a handler that fails every time for one job, done for the rest."""
        with lock:
            calls[record["id"]] += 1
        if record["id"] == "job-bad":
            raise RuntimeError("this handler fails every time")
        with lock:
            handled.add(record["id"])

    consumer = DramatiqConsumer(
        fleet.url, "livescore", concurrency=2, heartbeat_timeout=10.0, max_failures=3
    )
    stop = threading.Event()
    thread = threading.Thread(
        target=consumer.run,
        args=(failing_handler,),
        kwargs={
            "stop": stop,
            "drain_timeout": 5.0,
            "on_dead_letter": lambda reason, record: dead.append((reason, record)),
        },
    )
    with caplog.at_level(logging.WARNING, logger="livescore"):
        thread.start()
        try:
            wait_for(lambda: bool(dead) and handled == good, 60, "a dead letter, the rest done")
            wait_for(lambda: unacknowledged(fleet.url) == 0, 30, "nothing left unacknowledged")
        finally:
            stop.set()
            thread.join(30)
    assert not thread.is_alive()
    assert calls["job-bad"] == 3, calls
    assert [(reason, record["id"]) for reason, record in dead] == [("handler_error", "job-bad")]
    assert _dead_letters(client) == 1
    assert consumer.dead_letters == 1
    failures = [r for r in caplog.records if "handling job message" in r.getMessage()]
    # The traceback once, each repeat in one line.
    assert [r.exc_info is not None for r in failures] == [True, False, False], failures
    client.close()


# -- 12. eviction ------------------------------------------------------------------------------


def test_an_evicting_redis_is_warned_about_at_start(
    fleet: Fleet, caplog: pytest.LogCaptureFixture
) -> None:
    client = _client(fleet)
    client.config_set("maxmemory-policy", "allkeys-lru")
    worker = fleet.start_worker()
    assert "maxmemory-policy is allkeys-lru" in worker.output(), worker.output()
    publisher = DramatiqPublisher(fleet.url, "livescore")
    with caplog.at_level(logging.WARNING, logger="livescore"):
        publisher.publish(job_record(make_run(1), KC, job_id="job-1"))
    assert any("maxmemory-policy is allkeys-lru" in r.getMessage() for r in caplog.records)
    assert worker.terminate() == 0
    publisher.close()
    client.close()
