"""A judge budget shared by the whole fleet through Redis: two ``livescore worker`` processes
spend from one ``--judge-budget``, skip what it cannot pay, and overspend by at most one
score each; budgets given ``broker=`` share one ledger; with Redis away a budget fails
closed."""

from __future__ import annotations

import json
import re
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
import redis
from fleet_support import Fleet, publish_jobs

from livescore import ScoreResult
from livescore.judges import JudgeBudget
from livescore.testing import OpenAITestServer, RedisTestServer, Reply

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "judges"))

from _judges_support import one_prompt_scorer

pytestmark = pytest.mark.slow

PRICE = {"test-model": [1.0, 2.0]}  # USD per million input / output tokens
BUDGET = 0.01


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

    def start() -> Any:
        return fleet.start_worker(
            "--scorer-concurrency",
            "4",
            "--judge-budget",
            f"{BUDGET}/day",
            "--judge-prices",
            json.dumps(PRICE),
        )

    with OpenAITestServer(responder=judge) as server:
        fleet.env["FLEET_TEST_JUDGE_URL"] = server.base_url
        # The first worker spends about half the budget; the second, started after it
        # stopped, spends from what is left: one ledger in Redis, not one per process.
        # (Run side by side, which worker takes which job is the broker's choice, and one
        # of them could take every job: each worker gets its own jobs here.)
        first = start()
        pairs = publish_jobs(fleet.url, range(5), "priced", lambda i: f"answer number {i}")
        fleet.wait_for_pairs(pairs)
        assert first.terminate() == 0
        second = start()
        pairs = publish_jobs(fleet.url, range(5, 40), "priced", lambda i: f"answer number {i}")
        fleet.wait_for_pairs(pairs)
        assert second.terminate() == 0
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
        # (Two budgets of their own would have let the second worker spend it all again.)
        assert spent <= BUDGET + 2 * largest, (spent, len(scored))
        assert spent >= BUDGET - 2 * largest, (spent, len(scored))
        # Both workers spent from it, and the ledger in Redis holds what the spans say.
        outputs = [first.output(), second.output()]
        assert all(re.search(r"stopped: [1-9]\d* job", out) for out in outputs), fleet.logs()
        assert all(re.search(r"\$0\.0*[1-9]\d* spent here", out) for out in outputs), outputs
        client = redis.Redis.from_url(fleet.url)
        keys = list(client.scan_iter("livescore:fleet:budget:judge:*:spent"))
        assert len(keys) == 1, keys
        assert float(client.hget(keys[0], "usd") or 0) == pytest.approx(spent)
        client.close()


def test_budgets_with_one_broker_share_one_ledger(redis_server: RedisTestServer) -> None:
    """Two budgets on one Redis (as two processes hold them) spend from one ledger."""
    with OpenAITestServer(responder=lambda body: Reply.delay(0.01, "yes")) as server:
        budgets = [JudgeBudget(usd=0.02, per="day", broker=redis_server.url) for _ in range(2)]
        scorers = [
            one_prompt_scorer(server.judge(prices=(1.0, 2.0), budget=b), system="Yes or no?")
            for b in budgets
        ]
        texts = ["word " * (20 + 37 * (i % 11)) for i in range(120)]

        async def main() -> list[ScoreResult]:
            results: list[ScoreResult] = []
            limiter = anyio.CapacityLimiter(16)

            async def one(i: int) -> None:
                async with limiter:
                    run = {"input": "q", "output": texts[i]}
                    results.append(await scorers[i % 2].score(run))

            async with anyio.create_task_group() as tg:
                for i in range(len(texts)):
                    tg.start_soon(one, i)
            return results

        results = anyio.run(main)
        spent_in_redis = anyio.run(budgets[0].spent)
    costs = [r.usage.cost_usd or 0.0 for r in results if r.status == "scored"]
    assert sum(costs) <= 0.02 + 2 * max(costs)  # one score per budget holder at most
    assert sum(costs) >= 0.02 - 2 * max(costs)
    assert spent_in_redis[0] == pytest.approx(sum(costs))
    assert all(b.stats.admitted for b in budgets)
    assert any(r.status == "skipped" for r in results)


def test_a_budget_whose_redis_is_away_skips_scores_saying_why() -> None:
    with OpenAITestServer(responder=lambda body: "yes") as server:
        budget = JudgeBudget(usd=1.0, per="day", broker="redis://127.0.0.1:9/0")
        scorer = one_prompt_scorer(server.judge(prices=(1.0, 2.0), budget=budget))
        result = anyio.run(lambda: scorer.score({"input": "q", "output": "a"}))
        assert server.requests == []  # fails closed: no judge call without the ledger
    assert result.status == "skipped"
    assert "judge budget 'judge' ($1 per day) cannot be checked" in (result.reason or "")
    assert "127.0.0.1:9" in (result.reason or "")
    assert result.attributes["livescore.judge.budget_exhausted"] is True


def test_a_redis_restart_without_persistence_holds_spending_and_is_warned_of(
    redis_server: RedisTestServer, caplog: pytest.LogCaptureFixture
) -> None:
    # Before: the spend after a restart started from zero (102 % of the cap spent).
    with OpenAITestServer(responder=lambda body: Reply.text("yes", usage=(1000, 0))) as server:
        budget = JudgeBudget(usd=0.01, per="day", broker=redis_server.url)
        scorer = one_prompt_scorer(server.judge(prices=(1.0, 2.0), budget=budget))

        def score() -> ScoreResult:
            return anyio.run(lambda: scorer.score({"input": "q", "output": "a"}))

        with caplog.at_level("WARNING", logger="livescore.fleet"):
            assert score().status == "scored"  # $0.001 of $0.01
        # The test server keeps nothing across a restart (save "", appendonly no): said once.
        warnings = [r.getMessage() for r in caplog.records if "no persistence" in r.getMessage()]
        assert len(warnings) == 1, warnings
        assert "a restart forgets what was spent" in warnings[0]
        caplog.clear()
        redis_server.stop()
        redis_server.start()
        calls = len(server.requests)
        with caplog.at_level("WARNING", logger="livescore.fleet"):
            held = [score() for _ in range(3)]
        assert len(server.requests) == calls  # no judge call while what was spent is unknown
        for result in held:
            assert result.status == "skipped"
            assert "was reset, so what was spent is unknown" in (result.reason or "")
            assert "spending is held until the window ends" in (result.reason or "")
        assert any("was reset" in r.getMessage() for r in caplog.records)
        # Another budget holder that starts after the reset is held too (one ledger).
        late = JudgeBudget(usd=0.01, per="day", broker=redis_server.url)
        late_scorer = one_prompt_scorer(server.judge(prices=(1.0, 2.0), budget=late))
        result = anyio.run(lambda: late_scorer.score({"input": "q", "output": "a"}))
        assert result.status == "skipped"
        assert len(server.requests) == calls
