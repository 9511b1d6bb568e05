"""A judge budget shared by the whole fleet through Redis: two ``livescore worker`` processes
spend from one ``--judge-budget``, skip what it cannot pay, and overspend by at most one
score each."""

from __future__ import annotations

import json
import re
import threading
from typing import Any

import pytest
import redis
from fleet_support import Fleet

from livescore import Run
from livescore.fleet._dramatiq import DramatiqPublisher
from livescore.testing import OpenAITestServer, Reply

pytestmark = pytest.mark.slow

PRICE = {"test-model": [1.0, 2.0]}  # USD per million input / output tokens
BUDGET = 0.01


def _publish(fleet: Fleet, count: int) -> set[tuple[str, str]]:
    publisher = DramatiqPublisher(fleet.url, "livescore")
    pairs = set()
    for i in range(count):
        run = Run(
            input="q",
            output=f"answer number {i}",
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
                "scorers": [{"id": "priced", "sample_rate": 1.0}],
            }
        )
        pairs.add((run.run_id, "priced"))
    publisher.close()
    return pairs


class _Judge:
    """Answers "yes", reporting a usage that varies with the run (as real prompts do)."""

    def __init__(self) -> None:
        self.requests = 0
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Any:
        with self._lock:
            self.requests += 1
        prompt = str(body["messages"][-1]["content"])
        n = int(re.search(r"number (\d+)", prompt).group(1))  # type: ignore[union-attr]
        return Reply.delay(0.05, Reply.text("yes", usage=(800 + 53 * (n % 9), 10 + n % 5)))


def _cost(n: int) -> float:
    return ((800 + 53 * (n % 9)) * PRICE["test-model"][0] + (10 + n % 5) * 2.0) / 1e6


def test_two_workers_share_one_judge_budget(fleet: Fleet) -> None:
    judge = _Judge()
    with OpenAITestServer(responder=judge) as server:
        fleet.env["FLEET_TEST_JUDGE_URL"] = server.base_url
        workers = [
            fleet.start_worker(
                "--concurrency",
                "4",
                "--judge-budget",
                f"{BUDGET}/day",
                "--judge-prices",
                json.dumps(PRICE),
            )
            for _ in range(2)
        ]
        pairs = _publish(fleet, 40)
        fleet.wait_for_pairs(pairs)
        for worker in workers:
            assert worker.terminate() == 0
        spans = fleet.score_spans()
        scored = [s for s in spans if s.attributes["livescore.status"] == "scored"]
        skipped = [s for s in spans if s.attributes["livescore.status"] == "skipped"]
        assert len(scored) + len(skipped) == 40, fleet.logs()
        # Every score names the budget; the ones it could not pay say so and cost nothing.
        assert all(s.attributes["livescore.judge.budget"] == "judge" for s in spans)
        assert skipped, "the budget pays for about nine scores, not forty"
        for span in skipped:
            assert span.attributes["livescore.judge.budget_exhausted"] is True
            assert "judge budget 'judge'" in str(span.attributes["livescore.skip_reason"])
            assert "budget_exhausted" in str(span.attributes["livescore.skip_reason"])
        # A skipped score made no judge call: the judge saw one request per scored score.
        assert judge.requests == len(scored)
        costs = [float(s.attributes["livescore.judge.cost_usd"]) for s in scored]
        for span, cost in zip(scored, costs, strict=True):
            n = int(str(span.attributes["livescore.run.id"]).split("-")[1])
            assert cost == pytest.approx(_cost(n))
        spent = sum(costs)
        largest = max(_cost(n) for n in range(40))
        # One budget for both: spent up to it, past it by at most one score per worker.
        # (Two budgets of their own would have let the two workers spend about twice it.)
        assert spent <= BUDGET + 2 * largest, (spent, len(scored))
        assert spent >= BUDGET - 2 * largest, (spent, len(scored))
        # Both workers took part, and the ledger in Redis holds what the spans say.
        outputs = [w.output() for w in workers]
        assert all(re.search(r"stopped: [1-9]\d* job", out) for out in outputs), fleet.logs()
        client = redis.Redis.from_url(fleet.url)
        keys = list(client.scan_iter("livescore:fleet:budget:judge:*:spent"))
        assert len(keys) == 1, keys
        assert float(client.hget(keys[0], "usd") or 0) == pytest.approx(spent)
        client.close()
