"""Judge prices: tables as written, where a judge finds its price, and the cost every score
carries, with the real ``openai`` client against OpenAITestServer."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from _judges_support import one_prompt_scorer

from livescore import ScoreResult
from livescore.judges import (
    DEFAULT_PRICES,
    DEFAULT_PRICES_AS_OF,
    PRICES_ENV,
    JudgeConfigError,
    JudgeUsage,
    OpenAIJudge,
    Price,
    load_prices,
    price_of,
)
from livescore.judges._prices import find_price, resolve_price
from livescore.otel import attributes as A
from livescore.testing import OpenAITestServer, Reply


def test_a_price_is_written_as_input_output_and_optionally_cached_input() -> None:
    assert Price.of((0.15, 0.60)) == Price(0.15, 0.60)
    assert Price.of([2.5, 10, 1.25]).cached_input == 1.25
    assert Price.of({"input": 1, "output": 2}) == Price(1, 2)
    usage = JudgeUsage(input_tokens=1_000_000, cached_input_tokens=400_000, output_tokens=10)
    # Cached input tokens are part of the input tokens, billed at the cached rate.
    assert Price(1.0, 2.0, 0.25).cost(usage) == pytest.approx(0.6 + 0.1 + 0.00002)
    assert Price(1.0, 2.0).cost(usage) == pytest.approx(1.0 + 0.00002)
    for bad in ((1.0,), (1, 2, 3, 4), "0.1,0.2", (-1, 2), (float("nan"), 1), (True, 1)):
        with pytest.raises(JudgeConfigError):
            Price.of(bad)  # type: ignore[arg-type]


def test_well_known_models_have_dated_default_prices() -> None:
    assert DEFAULT_PRICES_AS_OF.count("-") == 2  # an ISO date the prices were read on
    assert DEFAULT_PRICES["gpt-4o-mini"].as_tuple() == (0.15, 0.6, 0.075)
    # A dated snapshot is its family; the longest family name wins.
    assert find_price("gpt-4o-mini-2024-07-18", DEFAULT_PRICES) == DEFAULT_PRICES["gpt-4o-mini"]
    assert find_price("gpt-4o-2024-08-06", DEFAULT_PRICES) == DEFAULT_PRICES["gpt-4o"]
    assert find_price("gpt-4o-mini", {"gpt-4o": Price(9, 9)}) == Price(9, 9)
    assert find_price("llama3.2", DEFAULT_PRICES) is None


def test_the_judges_own_price_wins_then_the_budget_then_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(PRICES_ENV, raising=False)
    url = "http://127.0.0.1:9/v1"
    assert OpenAIJudge("gpt-4o-mini", base_url=url).price == DEFAULT_PRICES["gpt-4o-mini"]
    assert OpenAIJudge("qwen2.5:7b", base_url=url).price is None
    table = tmp_path / "prices.json"
    table.write_text(json.dumps({"qwen2.5": [0.1, 0.3], "gpt-4o-mini": [1, 2]}))
    monkeypatch.setenv(PRICES_ENV, str(table))
    assert OpenAIJudge("qwen2.5", base_url=url).price == Price(0.1, 0.3)
    # The environment overrides the defaults; the judge's own prices= override both.
    assert OpenAIJudge("gpt-4o-mini", base_url=url).price == Price(1, 2)
    judge = OpenAIJudge("gpt-4o-mini", base_url=url, prices=(0.5, 0.5))
    assert price_of(judge) == Price(0.5, 0.5)
    assert OpenAIJudge("m", base_url=url, prices={"m": (3, 4)}).price == Price(3, 4)
    # A table that does not name the model falls through to the budget's, then the rest.
    assert resolve_price("qwen2.5", {"other": (9, 9)}) == Price(0.1, 0.3)
    assert resolve_price("x", None, {"x": Price(7, 7)}) == Price(7, 7)
    # The variable may hold the JSON itself.
    monkeypatch.setenv(PRICES_ENV, '{"inline-model": [0.2, 0.4, 0.1]}')
    assert OpenAIJudge("inline-model", base_url=url).price == Price(0.2, 0.4, 0.1)


def test_a_malformed_price_table_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with pytest.raises(JudgeConfigError, match=r"prices\['m'\]"):
        OpenAIJudge("m", base_url="http://127.0.0.1:9/v1", prices={"m": (1,)})
    with pytest.raises(JudgeConfigError, match="cannot read the price table"):
        load_prices(str(tmp_path / "missing.json"))
    monkeypatch.setenv(PRICES_ENV, "{not json")
    with pytest.raises(JudgeConfigError, match=PRICES_ENV):
        OpenAIJudge("m", base_url="http://127.0.0.1:9/v1")


def test_every_score_carries_its_cost() -> None:
    with OpenAITestServer(
        [Reply.text("yes", usage=(1200, 30)), Reply.text("no", usage=(900, 10, 600))]
    ) as server:
        scorer = one_prompt_scorer(server.judge("judge-a", prices=(2.0, 8.0, 0.5)))

        async def main() -> list[ScoreResult]:
            return [await scorer.score({"input": "q", "output": f"a{i}"}) for i in range(2)]

        results = anyio.run(main)
    first, second = results
    assert first.usage.cost_usd == pytest.approx((1200 * 2.0 + 30 * 8.0) / 1e6)
    # 600 of the 900 prompt tokens came from the server's cache, billed at the cached rate.
    assert second.usage.cached_input_tokens == 600
    assert second.usage.cost_usd == pytest.approx((300 * 2.0 + 600 * 0.5 + 10 * 8.0) / 1e6)
    assert second.attributes[A.LIVESCORE_JUDGE_CACHED_INPUT_TOKENS] == 600
    assert first.step_usage["generate_score"].cost_usd == first.usage.cost_usd
    # The cost travels with the result (a fleet worker sends it back this way).
    again = ScoreResult.from_dict(json.loads(json.dumps(first.to_dict())))
    assert again.usage.cost_usd == first.usage.cost_usd
    assert again.attributes[A.LIVESCORE_JUDGE_COST] == first.usage.cost_usd


def test_the_test_server_reports_a_repeated_system_prompt_as_cached() -> None:
    with OpenAITestServer(responder=lambda body: "yes", prompt_caching=True) as server:
        scorer = one_prompt_scorer(server.judge("gpt-4o-mini"))

        async def main() -> list[ScoreResult]:
            return [await scorer.score({"input": "q", "output": f"a{i}"}) for i in range(3)]

        first, second, third = anyio.run(main)
    assert first.usage.cached_input_tokens == 0
    assert second.usage.cached_input_tokens == third.usage.cached_input_tokens > 100
    price = DEFAULT_PRICES["gpt-4o-mini"]
    assert second.usage.cost_usd == pytest.approx(price.cost(second.usage))
    assert second.usage.cost_usd < price.cost(
        JudgeUsage(input_tokens=second.usage.input_tokens, output_tokens=1)
    )


def test_a_judge_without_a_price_puts_no_cost_on_its_scores(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(PRICES_ENV, raising=False)
    with OpenAITestServer([Reply.text("yes", usage=(100, 5))]) as server:
        scorer = one_prompt_scorer(server.judge("local-model"))
        result = anyio.run(lambda: scorer.score({"input": "q", "output": "a"}))
    assert result.status == "scored"
    assert result.usage.input_tokens == 100
    assert result.usage.cost_usd is None
    assert A.LIVESCORE_JUDGE_COST not in result.attributes
