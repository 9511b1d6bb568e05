"""capture_run / acapture_run: one invocation, its output and the Run it produced."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from _lc_support import ANSWER, QUESTION, WEATHER, broken_forecast, weather_agent, weather_call
from langchain.agents import create_agent
from langchain_core.callbacks import BaseCallbackHandler, CallbackManager
from langchain_core.runnables import RunnableLambda

from livescore import Run, create_scorer, extract_tool_results
from livescore.live import LiveDispatcher, is_scoring
from livescore.runs import get_assistant_message, get_user_message
from livescore_langchain import acapture_run, capture_run
from livescore_langchain.testing import ScriptedChatModel


class CountingHandler(BaseCallbackHandler):
    """A callback handler test double that counts root chain starts."""

    def __init__(self) -> None:
        self.roots = 0

    def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
        if kwargs.get("parent_run_id") is None:
            self.roots += 1


def test_capture_run_returns_the_output_and_the_run() -> None:
    output, run = capture_run(weather_agent(), QUESTION)

    assert output["messages"][-1].content == ANSWER
    assert get_user_message(run) == "What is the weather in Paris?"
    assert get_assistant_message(run) == ANSWER
    assert [s.kind for s in run.steps] == ["model", "tool", "model"]
    (result,) = extract_tool_results(run)
    assert json.loads(result.result) == WEATHER
    assert run.trace_id is None


@pytest.mark.anyio
async def test_acapture_run_records_the_async_invocation() -> None:
    output, run = await acapture_run(weather_agent(), QUESTION)

    assert output["messages"][-1].content == ANSWER
    assert [r.tool_name for r in extract_tool_results(run)] == ["get_weather"]


def test_capture_keeps_the_callers_callbacks_and_run_id() -> None:
    mine = CountingHandler()
    run_id = uuid.uuid4()

    _, run = capture_run(weather_agent(), QUESTION, config={"callbacks": [mine], "run_id": run_id})
    _, _ = capture_run(weather_agent(), QUESTION, config={"callbacks": CallbackManager([mine])})

    assert run.run_id == str(run_id)
    assert mine.roots == 2


def test_capture_records_even_inside_a_scorer() -> None:
    # run_evals may call it from a scoring task: the live guard must not blank the run.
    captured: list[Run] = []

    def generate_score(ctx: Any) -> float:
        assert is_scoring()  # really inside a live scorer
        _, run = capture_run(RunnableLambda(lambda q: q.upper()), "hi")
        captured.append(run)
        return 1.0

    scorer = create_scorer(id="capturer", description="d", generate_score=generate_score)
    with LiveDispatcher([scorer], register_atexit=False) as dispatcher:
        dispatcher.submit(Run(input="q", output="a"))
        assert dispatcher.flush(timeout=10)
        assert dispatcher.stats().scored == 1

    (run,) = captured
    assert (run.input, run.output) == ("hi", "HI")


def test_capture_lets_the_runnables_exception_through() -> None:
    model = ScriptedChatModel(responses=[weather_call("c1", "broken_forecast"), ANSWER])

    with pytest.raises(ValueError, match="forecast service down"):
        capture_run(create_agent(model, tools=[broken_forecast]), QUESTION)


def test_capture_needs_a_runnable() -> None:
    with pytest.raises(TypeError, match="needs a LangChain Runnable"):
        capture_run(lambda q: q, "hi")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="RunnableConfig"):
        capture_run(RunnableLambda(lambda q: q), "hi", config=["callbacks"])  # type: ignore[arg-type]
