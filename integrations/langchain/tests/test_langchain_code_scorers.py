"""The code scorers and quick checks on runs of a real create_agent agent.

The agent (a scripted model, real tools) calls get_weather, then a forecast tool that reports
its failure to the model, then answers. The runs come from the LangChain handler's capture:
the same Run the live worker scores.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from _lc_support import ANSWER, QUESTION, flaky_forecast, get_weather, weather_call
from langchain.agents import create_agent
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from livescore import Run, checks
from livescore.otel import attributes as attrs
from livescore.scorers import create_tool_call_accuracy_scorer, create_trajectory_scorer
from livescore_langchain import LiveScoringHandler, capture_run
from livescore_langchain.testing import ScriptedChatModel

MakeHandler = Callable[..., LiveScoringHandler]


def forecast_agent() -> Any:
    """get_weather (succeeds), flaky_forecast (fails, reported to the model), then the answer."""
    model = ScriptedChatModel(
        responses=[
            weather_call("call_1", "get_weather"),
            weather_call("call_2", "flaky_forecast"),
            ANSWER,
        ]
    )
    return create_agent(model, tools=[get_weather, flaky_forecast])


def captured_run() -> Run:
    _, run = capture_run(forecast_agent(), QUESTION)
    return run


def test_tool_call_accuracy_reads_the_captured_calls_with_the_failure() -> None:
    run = captured_run()

    result = create_tool_call_accuracy_scorer(
        expected_tool_order=["get_weather", "flaky_forecast"], strict=True
    ).run_sync(run)

    assert result.score == 1.0
    assert result.preprocess_step_result["tool_calls"] == [
        {"name": "get_weather", "ok": True, "error": None},
        {"name": "flaky_forecast", "ok": False, "error": "no forecast for Paris"},
    ]
    assert result.reason == (
        "Made exactly the calls get_weather → flaky_forecast as expected. Calls: get_weather, "
        "flaky_forecast (failed: no forecast for Paris)."
    )
    wrong = create_tool_call_accuracy_scorer(expected_tool="search").run_sync(run)
    assert wrong.score == 0.0


def test_trajectory_of_the_captured_run() -> None:
    run = captured_run()

    result = create_trajectory_scorer(
        expected_steps=["get_weather"], max_steps=1, blacklist=["broken_forecast"]
    ).run_sync(run)

    analysis = result.analyze_step_result
    assert analysis["accuracy"]["score"] == 1.0
    assert analysis["accuracy"]["extra"] == ["flaky_forecast"]
    assert analysis["efficiency"]["score"] == 0.0  # 2 calls, a budget of 1
    assert analysis["failure_handling"]["failed_calls"] == [
        {"name": "flaky_forecast", "ok": False, "error": "no forecast for Paris"}
    ]
    assert result.score == 0.0
    blacklisted = create_trajectory_scorer(
        expected_steps=["get_weather"], blacklist=["flaky_forecast"]
    ).run_sync(run)
    assert blacklisted.reason is not None
    assert blacklisted.reason.startswith("Blacklisted: flaky_forecast.")


def test_quick_checks_as_assertions_on_the_captured_run() -> None:
    run = captured_run()

    assert checks.includes(run, "sunny")
    assert checks.called_tool(run, "get_weather")
    assert checks.tool_order(run, ["get_weather", "flaky_forecast"], strict=True)
    assert checks.did_not_call(run, "broken_forecast")
    assert checks.max_tool_calls(run, 2)
    assert not checks.used_no_tools(run)
    failed = checks.no_tool_errors(run)
    assert not failed
    assert failed.reason == (
        "1 of 2 tool calls failed: flaky_forecast (failed: no forecast for Paris)"
    )


def test_checks_score_live_and_reach_the_evaluation_spans(
    make_handler: MakeHandler, exporter: InMemorySpanExporter
) -> None:
    handler = make_handler(
        [
            checks.no_tool_errors_scorer(),
            checks.includes_scorer("sunny"),
            create_tool_call_accuracy_scorer(expected_tool="get_weather"),
        ]
    )

    forecast_agent().invoke(QUESTION, config={"callbacks": [handler]})

    assert handler.flush(timeout=10)
    evaluations = {
        span.attributes[attrs.GEN_AI_EVALUATION_NAME]: span.attributes
        for span in exporter.get_finished_spans()
        if span.attributes and span.attributes.get(attrs.GEN_AI_OPERATION_NAME) == "evaluation"
    }
    assert set(evaluations) == {"no-tool-errors", "includes", "tool-call-accuracy"}
    errors = evaluations["no-tool-errors"]
    assert errors[attrs.GEN_AI_EVALUATION_SCORE_VALUE] == 0.0
    assert errors[attrs.GEN_AI_EVALUATION_SCORE_LABEL] == "fail"
    assert "flaky_forecast (failed: no forecast for Paris)" in str(
        errors[attrs.GEN_AI_EVALUATION_EXPLANATION]
    )
    assert evaluations["includes"][attrs.GEN_AI_EVALUATION_SCORE_VALUE] == 1.0
    assert evaluations["tool-call-accuracy"][attrs.GEN_AI_EVALUATION_SCORE_LABEL] == "correct"
