"""Judge budgets in one process: scores until the budget is spent, skips the rest before any
judge call with the reason, never overspends by more than one score (under concurrency too),
shares one budget between scorers, falls back to a cheaper judge or judge mode, and keeps
windows apart. The real ``openai`` client against OpenAITestServer throughout."""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))

from _cli_support import hallucination_responder
from _judges_support import one_prompt_scorer

from livescore import Scorer, ScoreResult
from livescore.judges import (
    JudgeBudget,
    JudgeConfigError,
    LocalBudgetLedger,
    OpenAIJudge,
    budget_of,
)
from livescore.otel import attributes as A
from livescore.scorers import create_hallucination_scorer
from livescore.testing import OpenAITestServer, Reply

PRICE = (1.0, 4.0)  # USD per million input / output tokens


def asking(judge: OpenAIJudge, scorer_id: str = "asked") -> Scorer:
    """One judge prompt per score: the run's output, so usage varies with the run."""
    return one_prompt_scorer(judge, scorer_id, system="Answer yes or no.")


def outputs(n: int, seed: int = 7) -> list[str]:
    """Answers of varied length (5 to 400 words): their prompts cost different amounts."""
    rng = random.Random(seed)
    return ["word " * rng.randint(5, 400) for _ in range(n)]


async def score_all(scorer: Scorer, texts: list[str], concurrency: int = 1) -> list[ScoreResult]:
    results: list[ScoreResult] = []
    limiter = anyio.CapacityLimiter(concurrency)

    async def one(text: str) -> None:
        async with limiter:
            run = {"input": "q", "output": text}
            results.append(await scorer.score(run))

    async with anyio.create_task_group() as tg:
        for text in texts:
            tg.start_soon(one, text)
    return results


def spend(results: list[ScoreResult]) -> tuple[float, float]:
    """Total and largest cost of the scored results."""
    costs = [r.usage.cost_usd or 0.0 for r in results if r.status == "scored"]
    return sum(costs), max(costs)


def test_a_stream_scores_until_the_budget_is_spent_then_skips_with_the_reason() -> None:
    with OpenAITestServer(responder=lambda body: "yes") as server:
        budget = JudgeBudget(usd=0.01, per="day")
        scorer = asking(server.judge(prices=PRICE, budget=budget))
        results = anyio.run(score_all, scorer, outputs(80))
        requests = len(server.requests)
    scored = [r for r in results if r.status == "scored"]
    skipped = [r for r in results if r.status == "skipped"]
    assert scored
    assert skipped
    # In order: scored while it could pay, then nothing but skips.
    statuses = [r.status for r in results]
    assert statuses == ["scored"] * len(scored) + ["skipped"] * len(skipped)
    total, largest = spend(results)
    assert 0.01 - largest <= total <= 0.01 + largest
    # A skipped score never reached the judge.
    assert requests == len(scored)
    for result in skipped:
        assert "judge budget 'judge' ($0.01 per day) is exhausted" in (result.reason or "")
        assert "budget_exhausted" in (result.reason or "")
        assert result.attributes[A.LIVESCORE_JUDGE_BUDGET_EXHAUSTED] is True
        assert result.usage.calls == 0
        assert result.usage.cost_usd == 0.0
    assert all(r.attributes[A.LIVESCORE_JUDGE_BUDGET] == "judge" for r in results)
    assert budget.stats.admitted == len(scored)
    assert budget.stats.exhausted == len(skipped)
    assert budget.stats.settled_usd == pytest.approx(total)
    assert anyio.run(budget.spent) == (
        pytest.approx(total),
        sum(r.usage.total_tokens for r in scored),
    )


@pytest.mark.parametrize("concurrency", [8, 32])
def test_concurrent_scores_overspend_by_at_most_one_score(concurrency: int) -> None:
    def judge(body: dict[str, Any]) -> Any:
        return Reply.delay(random.random() * 0.02, "yes")  # finishing out of order

    with OpenAITestServer(responder=judge) as server:
        budget = JudgeBudget(usd=0.05, per="hour")
        scorer = asking(server.judge(prices=PRICE, budget=budget, max_concurrency=64))
        results = anyio.run(score_all, scorer, outputs(200, seed=concurrency), concurrency)
        requests = len(server.requests)
    total, largest = spend(results)
    scored = sum(r.status == "scored" for r in results)
    assert scored + sum(r.status == "skipped" for r in results) == 200
    assert total <= 0.05 + largest, (total, largest, scored)
    # Reservations are released as scores settle: the budget is spent, not left idle.
    assert total >= 0.05 - 2 * largest, (total, largest, scored)
    assert requests == scored


def test_a_token_budget_counts_input_and_output_tokens() -> None:
    with OpenAITestServer(responder=lambda body: Reply.text("yes", usage=(90, 10))) as server:
        # No price needed: tokens are what the server reports.
        budget = JudgeBudget(tokens=1000, per="minute")
        scorer = asking(server.judge("local-model", budget=budget))
        results = anyio.run(score_all, scorer, outputs(30))
    assert [r.status for r in results] == ["scored"] * 10 + ["skipped"] * 20
    assert "1,000 tokens per minute" in (results[-1].reason or "")
    assert anyio.run(budget.spent) == (0.0, 1000)


def test_every_scorer_using_the_judge_shares_its_budget() -> None:
    with OpenAITestServer(responder=lambda body: Reply.text("yes", usage=(1000, 0))) as server:
        judge = server.judge(prices=PRICE, budget=JudgeBudget(usd=0.006, per="day"))
        first, second = asking(judge, "first"), asking(judge, "second")

        async def main() -> list[ScoreResult]:
            results = []
            for _ in range(5):
                results += [await s.score({"input": "q", "output": "a"}) for s in (first, second)]
            return results

        results = anyio.run(main)
    # $0.001 a score: six scores in all, three of each, whichever scorer asks.
    assert [r.status for r in results] == ["scored"] * 6 + ["skipped"] * 4
    assert budget_of(judge) is not None
    assert budget_of(judge).stats.admitted == 6  # type: ignore[union-attr]


def test_a_usd_budget_needs_the_judges_price() -> None:
    with pytest.raises(JudgeConfigError, match="no known price"):
        OpenAIJudge("local-model", base_url="http://127.0.0.1:9/v1", budget=JudgeBudget(usd=1))
    # The budget's own price table is enough.
    judge = OpenAIJudge(
        "local-model",
        base_url="http://127.0.0.1:9/v1",
        budget=JudgeBudget(usd=1, prices={"local-model": (0.1, 0.2)}),
    )
    assert judge.price is not None
    assert judge.price.output == 0.2
    for bad in (
        {},
        {"usd": -1},
        {"usd": 1, "per": "week"},
        {"tokens": 0},
        {"usd": 1, "fallback": "x"},
    ):
        with pytest.raises(JudgeConfigError):
            JudgeBudget(**bad)


def test_a_cheaper_judge_takes_over_when_the_budget_runs_low() -> None:
    with OpenAITestServer(responder=lambda body: Reply.text("yes", usage=(1000, 0))) as server:
        cheap = server.judge("cheap-model", prices=(0.1, 0.1))
        budget = JudgeBudget(usd=0.004, per="day", fallback=cheap, fallback_below=0.5)
        scorer = asking(server.judge("main-model", prices=PRICE, budget=budget))
        results = anyio.run(score_all, scorer, ["a"] * 30)
        models = [r["model"] for r in server.requests]
    # $0.001 a score on the main judge while more than half is left, then $0.0001 scores
    # on the cheap one until the rest is spent.
    assert [r.judge_model for r in results[:2]] == ["main-model"] * 2
    fallbacks = [r for r in results if r.attributes.get(A.LIVESCORE_JUDGE_FALLBACK) == "judge"]
    assert fallbacks
    assert all(r.judge_model == "cheap-model" for r in fallbacks)
    assert models.count("main-model") == 2
    assert models.count("cheap-model") == len(fallbacks)
    assert budget.stats.fallbacks == len(fallbacks)
    total, _ = spend(results)
    assert total <= 0.004 + 0.001


def test_the_one_call_judge_mode_takes_over_when_the_budget_runs_low() -> None:
    with OpenAITestServer(responder=hallucination_responder) as server:
        budget = JudgeBudget(usd=0.2, per="day", fallback="one_call", fallback_below=0.6)
        judge = server.judge(prices=(20.0, 20.0), budget=budget)
        scorer = create_hallucination_scorer(model=judge, context=["The sky is blue."])
        text = "The sky is blue. Grass is WRONG."

        async def main() -> list[tuple[ScoreResult, int]]:
            done = []
            for _ in range(12):
                before = len(server.requests)
                result = await scorer.score({"input": "q", "output": text})
                done.append((result, len(server.requests) - before))
            return done

        results = anyio.run(main)
    modes = [r.attributes.get(A.LIVESCORE_JUDGE_FALLBACK) for r, _ in results]
    assert modes[0] is None
    assert "one_call" in modes
    for (result, requests), mode in zip(results, modes, strict=True):
        if result.status != "scored":
            continue
        # Three judge calls a score in three-step mode, one in one-call mode; same verdict.
        assert requests == (1 if mode == "one_call" else 3), (mode, requests)
        assert result.score == 0.5
    assert budget.stats.fallbacks == modes.count("one_call")


def test_a_cancelled_or_failed_score_still_settles_what_it_spent() -> None:
    with OpenAITestServer(
        [Reply.text("yes", usage=(500, 0)), Reply.hang(30), Reply.server_error()]
    ) as server:
        budget = JudgeBudget(usd=1.0, per="day")
        scorer = asking(server.judge(prices=PRICE, budget=budget, max_retries=0))

        async def main() -> list[ScoreResult]:
            return [
                await scorer.score({"input": "q", "output": "a"}, timeout=0.5) for _ in range(3)
            ]

        ok, timed_out, failed = anyio.run(main)
    assert ok.status == "scored"
    assert (timed_out.status, timed_out.error_type) == ("failed", "timeout")
    assert (failed.status, failed.error_type) == ("failed", "server_error")
    # Every reservation was released; the spend is what was reported.
    assert budget.stats.admitted == 3
    assert budget._in_flight == 0
    assert anyio.run(budget.spent)[0] == pytest.approx(500 * PRICE[0] / 1e6)


def test_windows_reset_on_the_clock() -> None:
    now = [7200.0]
    ledger = LocalBudgetLedger(clock=lambda: now[0])
    with OpenAITestServer(responder=lambda body: Reply.text("yes", usage=(1000, 0))) as server:
        budget = JudgeBudget(usd=0.002, per="hour", ledger=ledger)
        scorer = asking(server.judge(prices=PRICE, budget=budget))
        first_hour = anyio.run(score_all, scorer, ["a"] * 4)
        now[0] += 3600  # the next hour
        second_hour = anyio.run(score_all, scorer, ["a"] * 4)
    assert [r.status for r in first_hour] == ["scored", "scored", "skipped", "skipped"]
    assert [r.status for r in second_hour] == ["scored", "scored", "skipped", "skipped"]
    assert "resets at 1970-01-01 03:00 UTC" in (first_hour[-1].reason or "")


@pytest.mark.parametrize(
    "bad",
    [
        {"usd": 1, "lease": float("inf")},
        {"usd": 1, "lease": float("nan")},
        {"usd": 1, "lease": True},
        {"usd": 1, "wait": float("inf")},
        {"usd": 1, "wait": True},
        {"usd": 1, "fallback_below": True},
        {"usd": float("inf")},
        {"usd": float("nan")},
        {"usd": 1, "prices": {"m": (float("inf"), 1.0)}},
        {"usd": 1, "prices": {"m": (1.0, float("nan"))}},
    ],
)
def test_a_budget_argument_that_is_not_finite_and_positive_is_refused_at_construction(
    bad: dict[str, Any],
) -> None:
    # lease=inf used to be accepted, then every admission raised OverflowError.
    with pytest.raises(JudgeConfigError):
        JudgeBudget(**bad)
