"""Conversations from LangChain: LangGraph's thread_id (or a session id in the metadata)
makes the runs of one thread the turns of one conversation, scored whole."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from _lc_support import ANSWER, QUESTION, get_weather, weather_call
from langchain.agents import create_agent
from langchain_core.runnables import RunnableLambda

from livescore import StepContext, create_scorer
from livescore.runs import Conversation
from livescore.scoring import Scorer
from livescore_langchain import LiveScoringHandler
from livescore_langchain.testing import ScriptedChatModel


class Seen:
    """What a recording conversation scorer was given, one conversation per score."""

    def __init__(self) -> None:
        self.conversations: list[Conversation] = []
        self.lock = threading.Lock()

    def scorer(self) -> Scorer:
        def generate_score(ctx: StepContext) -> float:
            assert ctx.conversation is not None
            with self.lock:
                self.conversations.append(ctx.conversation)
            return float(len(ctx.conversation.runs))

        return create_scorer(
            id="turns", description="turns", level="conversation", generate_score=generate_score
        )

    def wait_for(self, count: int, timeout: float = 30.0) -> list[Conversation]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.conversations) >= count:
                    return list(self.conversations)
            time.sleep(0.02)
        raise AssertionError(f"waited {timeout}s for {count} conversation scores")


def _agent(turns: int) -> Any:
    responses: list[Any] = []
    for i in range(turns):
        responses += [weather_call(f"call_{i}"), ANSWER]
    return create_agent(ScriptedChatModel(responses=responses), tools=[get_weather])


def test_runs_of_one_langgraph_thread_are_one_conversation(
    make_handler: Callable[..., LiveScoringHandler],
) -> None:
    seen = Seen()
    handler = make_handler([seen.scorer()], conversation_idle_timeout=None)
    agent = _agent(2)
    config: Any = {"callbacks": [handler], "configurable": {"thread_id": "thread-1"}}
    agent.invoke(QUESTION, config=config)
    agent.invoke({"messages": [{"role": "user", "content": "And tomorrow?"}]}, config=config)
    assert handler.end_conversation("thread-1")
    assert handler.flush(timeout=30)
    (conversation,) = seen.wait_for(1)
    assert conversation.id == "thread-1"
    assert [run.conversation_id for run in conversation.runs] == ["thread-1", "thread-1"]
    # Each turn is the whole agent run, tool results included.
    assert [len(run.steps) for run in conversation.runs] == [3, 3]
    assert handler.stats().by_scorer["turns"].scored == 1


def test_a_thread_that_goes_quiet_is_scored_without_being_ended(
    make_handler: Callable[..., LiveScoringHandler],
) -> None:
    seen = Seen()
    handler = make_handler([seen.scorer()], conversation_idle_timeout=0.2)
    agent = _agent(1)
    agent.invoke(QUESTION, config={"callbacks": [handler], "configurable": {"thread_id": "t"}})
    (conversation,) = seen.wait_for(1)
    assert conversation.id == "t"


def test_a_session_id_in_the_metadata_names_the_conversation_of_any_runnable(
    make_handler: Callable[..., LiveScoringHandler],
) -> None:
    seen = Seen()
    handler = make_handler([seen.scorer()], conversation_idle_timeout=None)
    echo = RunnableLambda(lambda text: f"echo: {text}")
    for text in ("one", "two", "three"):
        echo.invoke(text, config={"callbacks": [handler], "metadata": {"session_id": "s-9"}})
    echo.invoke("alone", config={"callbacks": [handler]})  # no conversation
    handler.end_conversation("s-9")
    assert handler.flush(timeout=30)
    (conversation,) = seen.wait_for(1)
    assert [run.output for run in conversation.runs] == ["echo: one", "echo: two", "echo: three"]
