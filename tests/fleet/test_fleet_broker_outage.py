"""The broker goes away for 10 s: the agent is unaffected, drops are counted, publishing
resumes by itself, and every sampled pair is accounted for across the fleet."""

from __future__ import annotations

import time

import pytest
from fleet_support import Fleet, agent_counts, agent_with_metrics, wait_for, worker_outcomes
from fleet_support import make_run as _run

from livescore.fleet import BrokerExecutor
from livescore.scorers import create_keyword_coverage_scorer

pytestmark = pytest.mark.slow

OUTAGE_S = 10.0
BUFFER = 5


def test_a_broker_outage_costs_counted_drops_and_publishing_resumes(fleet: Fleet) -> None:
    from livescore.scoring import Scorer

    raiser = next(
        s for s in __import__("fleet_scorers").scorers if isinstance(s, Scorer) and s.id == "raiser"
    )
    fleet.start_worker("--scorer-concurrency", "4")
    dispatcher, reader = agent_with_metrics(
        [create_keyword_coverage_scorer(), raiser], BrokerExecutor(fleet.url, max_buffer=BUFFER)
    )
    # Before: ten runs (one in five poisoned, so the raiser fails on it), all scored remotely.
    for i in range(10):
        assert dispatcher.submit(_run(i, "POISON" if i % 5 == 0 else "Ownership in Rust"))
    assert dispatcher.flush(timeout=30)
    fleet.wait_for_pairs(
        {(f"run-{i}", sid) for i in range(10) for sid in ("keyword-coverage", "raiser")}
    )

    fleet.redis.stop()
    started = time.monotonic()
    during = 0
    while time.monotonic() - started < OUTAGE_S:
        # The agent goes on as usual: submit never blocks, never raises.
        assert dispatcher.submit(_run(100 + during)) is True
        during += 1
        time.sleep(0.2)
    wait_for(
        lambda: (
            dispatcher.stats().dropped_by_reason.get("broker_unavailable", 0)
            == 2 * (during - BUFFER)
        ),
        10,
        "the drops of what the buffer could not hold",
    )
    fleet.redis.start()
    # Publishing resumes by itself: the buffered runs reach the worker and are scored.
    assert dispatcher.flush(timeout=60)
    buffered = [f"run-{100 + i}" for i in range(BUFFER)]
    fleet.wait_for_pairs({(r, sid) for r in buffered for sid in ("keyword-coverage", "raiser")})
    dispatcher.shutdown(timeout=10)

    stats = dispatcher.stats()
    agent = agent_counts(reader)
    sampled = agent[("sampled", None)]
    assert sampled == stats.sampled == 2 * (10 + during)
    assert agent[("dropped", "broker_unavailable")] == 2 * (during - BUFFER)
    assert agent[("handed_off", None)] == stats.handed_off == 2 * (10 + BUFFER)

    # Nothing lost silently: what the agent sampled ended on the agent (dropped) or on the
    # worker (scored, failed, skipped, dropped), by the same metric's counts.
    def worker_total() -> float:
        return worker_outcomes(fleet.receiver)

    wait_for(lambda: worker_total() == agent[("handed_off", None)], 20, "the worker's counts")
    assert (
        fleet.receiver.counter_total(
            "livescore.runs", {"livescore.status": "failed", "error.type": "ValueError"}
        )
        == 2
    )  # runs 0 and 5 were poisoned
    assert agent[("dropped", "broker_unavailable")] + worker_total() == sampled
