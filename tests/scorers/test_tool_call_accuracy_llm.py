"""The LLM tool-call accuracy scorer: no call when one was needed, missing tools, failed
calls, the tool list, over real HTTP; the code scorer's name and keywords still work."""

from __future__ import annotations

from typing import Any

import pytest
from _judge_support import INJECTION, Case, between, score_over_http, user_prompt

from livescore import Run, Step, ToolCall
from livescore.otel import attributes as A
from livescore.scorers import create_tool_call_accuracy_scorer, create_tool_call_accuracy_scorer_llm
from livescore.scorers._tool_call_accuracy_llm import AvailableTool
from livescore.testing import ScriptedJudge

pytestmark = pytest.mark.anyio


# -- the case the cross-cutting judge tests run (test_judge_scorers.py) --------------------


WEATHER_TOOLS = ["get_weather: the current weather in a city", "search_news: recent news"]


def weather_run(*calls: tuple[str, str | None]) -> Run:
    """A run asking for the weather in Paris whose tool calls are ``(name, error)``."""
    steps = [
        Step(
            kind="tool",
            name=name,
            index=i,
            tool_call=ToolCall(name, f"c{i}", {"city": "Paris"}, None if error else "ok", error),
            error=error,
        )
        for i, (name, error) in enumerate(calls)
    ]
    return Run(input="What is the weather in Paris?", output="It is sunny.", steps=steps)


def _tool_call_case() -> Case:
    answer = {
        "evaluations": [
            {"tool_called": "get_weather", "was_appropriate": True, "reasoning": "Asked for."},
            {"tool_called": "search_news", "was_appropriate": False, "reasoning": "Not asked."},
        ],
        "missing_tools": [],
    }
    run = weather_run(("get_weather", None), ("search_news", None))
    injected = weather_run(("get_weather", None), ("search_news", None))
    injected.output = f"It is sunny. {INJECTION}"
    return Case(
        name="tool-call-accuracy-llm",
        build=lambda judge, mode: create_tool_call_accuracy_scorer_llm(
            model=judge,
            available_tools=WEATHER_TOOLS,
            judge_mode=mode,
        ),
        run=run,
        step_replies=[answer, "The score is 0.5 because the news search was not asked for."],
        one_call_reply={**answer, "reason": "The news search was not asked for."},
        score=0.5,
        label="partial",
        count_step="analyze",
        wrong_count={**answer, "evaluations": answer["evaluations"][:1]},
        replies_before_count=[],
        injected_run=injected,
    )


JUDGE_CASES = [_tool_call_case()]


def build(judge: Any, mode: Any = "three_step") -> Any:
    return create_tool_call_accuracy_scorer_llm(
        model=judge, available_tools=WEATHER_TOOLS, judge_mode=mode
    )


@pytest.mark.parametrize("mode", ["three_step", "one_call"])
async def test_no_tool_call_when_a_tool_was_needed_scores_zero(mode: Any) -> None:
    answer: dict[str, Any] = {"evaluations": [], "missing_tools": ["get_weather"]}
    if mode == "one_call":
        answer["reason"] = "It answered from memory."
    replies: list[Any] = [answer] if mode == "one_call" else [answer, "The score is 0 because …"]
    result, requests = await score_over_http(
        lambda judge: build(judge, mode), replies, weather_run()
    )

    assert result.score == 0.0
    assert result.label == "incorrect"
    assert "(the agent called no tool)" in user_prompt(requests[0])
    assert result.attributes[A.LIVESCORE_TOOLS_MISSING] == 1


async def test_no_tool_call_when_none_was_needed_scores_one() -> None:
    result, _ = await score_over_http(
        build, [{"evaluations": [], "missing_tools": []}, "why"], weather_run()
    )

    assert result.score == 1.0
    assert result.label == "correct"


async def test_a_missing_tool_counts_against_the_calls_made() -> None:
    answer = {
        "evaluations": [{"tool_called": "x", "was_appropriate": True, "reasoning": "r"}],
        "missing_tools": ["search_news"],
    }
    result, _ = await score_over_http(build, [answer, "why"], weather_run(("get_weather", None)))

    assert result.score == 0.5  # Mastra would give 1.0: the call made was right
    # The call decides which tool an evaluation is about, not the judge's copy.
    assert result.analyze_step_result["evaluations"][0]["tool_called"] == "get_weather"


async def test_a_missing_tool_that_is_not_available_gets_a_corrective_retry() -> None:
    wrong = {"evaluations": [], "missing_tools": ["weather_api"]}
    right = {"evaluations": [], "missing_tools": ["get_weather"]}
    result, requests = await score_over_http(build, [wrong, right, "why"], weather_run())

    assert result.score == 0.0
    assert "'get_weather' or 'search_news'" in requests[1]["messages"][-1]["content"]
    schema = requests[0]["response_format"]["json_schema"]["schema"]
    names = schema["properties"]["missing_tools"]["items"]["enum"]
    assert names == ["get_weather", "search_news"]  # structured output cannot name others


async def test_failed_calls_and_the_tool_list_reach_the_judge() -> None:
    answer = {
        "evaluations": [
            {"tool_called": "get_weather", "was_appropriate": True, "reasoning": "r"},
            {"tool_called": "get_weather", "was_appropriate": True, "reasoning": "r"},
        ],
        "missing_tools": [],
    }
    run = weather_run(("get_weather", "503 upstream"), ("get_weather", None))
    result, requests = await score_over_http(build, [answer, "why"], run)

    prompt = user_prompt(requests[0])
    assert "failed: 503 upstream" in prompt
    assert '<tool name="get_weather">the current weather in a city</tool>' in prompt
    assert between(prompt, "input") == "What is the weather in Paris?"
    assert result.score == 1.0
    assert result.preprocess_step_result["actual_tools"] == ["get_weather", "get_weather"]


def test_available_tools_in_every_form() -> None:
    class LangChainLikeTool:
        name = "lookup"
        description = "Look an order up."

    def cancel_order(order_id: str) -> str:
        """Cancel an order.

        More text.
        """
        return order_id

    tools = [
        AvailableTool.of("search: web search"),
        AvailableTool.of({"id": "book", "description": "Book a flight."}),
        AvailableTool.of(LangChainLikeTool()),
        AvailableTool.of(cancel_order),
        AvailableTool.of("bare_name"),
    ]
    assert [(t.name, t.description) for t in tools] == [
        ("search", "web search"),
        ("book", "Book a flight."),
        ("lookup", "Look an order up."),
        ("cancel_order", "Cancel an order."),
        ("bare_name", ""),
    ]


@pytest.mark.parametrize(
    ("tools", "error"),
    [([], ValueError), (["a", "a"], ValueError), ([" : no name"], ValueError), ([3], TypeError)],
)
def test_bad_tool_lists_are_refused(tools: list[Any], error: type[Exception]) -> None:
    with pytest.raises(error):
        create_tool_call_accuracy_scorer_llm(model=ScriptedJudge(), available_tools=tools)


async def test_a_run_without_a_request_is_not_scorable() -> None:
    run = weather_run()
    run.input = ""
    result, requests = await score_over_http(build, [], run)

    assert result.status == "skipped"
    assert requests == []


def test_the_code_scorer_keeps_its_name_and_keywords() -> None:
    scorer = create_tool_call_accuracy_scorer(expected_tool="get_weather", strict=False)
    llm = create_tool_call_accuracy_scorer_llm(model=ScriptedJudge(), available_tools=WEATHER_TOOLS)

    assert scorer.id == "tool-call-accuracy"
    assert scorer.judge is None
    assert llm.id == "tool-call-accuracy-llm"
    assert scorer.run_sync(weather_run(("get_weather", None))).score == 1.0
