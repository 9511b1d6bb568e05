"""Conversations from the Agents SDK: the runs of one ``group_id`` (the SDK's link between
the traces of one chat thread) are the turns of one conversation, scored whole."""

from __future__ import annotations

import threading
from collections.abc import Callable

import anyio
import pytest
from _sdk_support import ANSWER, QUESTION, ScriptedModels, weather_agent, weather_turns
from agents import RunConfig, Runner

from livescore import StepContext, create_scorer
from livescore.runs import Conversation
from livescore.testing import OpenAITestServer, Reply
from livescore_openai_agents import LiveScoringProcessor

pytestmark = pytest.mark.anyio


async def test_runs_sharing_a_group_id_are_one_conversation(
    make_processor: Callable[..., LiveScoringProcessor],
    model_server: OpenAITestServer,
    models: ScriptedModels,
) -> None:
    seen: list[Conversation] = []
    lock = threading.Lock()

    def generate_score(ctx: StepContext) -> float:
        assert ctx.conversation is not None
        with lock:
            seen.append(ctx.conversation)
        return 1.0

    turns = create_scorer(
        id="turns", description="turns", level="conversation", generate_score=generate_score
    )
    processor = make_processor([turns], conversation_idle_timeout=None)
    agent = weather_agent(models)
    model_server.enqueue(
        *weather_turns("call_a"), Reply.text("Bring sunglasses."), Reply.text("Sure.")
    )
    # Two separate Runner.run calls, two traces, one thread.
    config = RunConfig(group_id="thread-7")
    await Runner.run(agent, QUESTION, run_config=config)
    await Runner.run(agent, "Anything to bring?", run_config=config)
    await Runner.run(agent, "Unrelated", run_config=RunConfig())  # no group: no conversation
    assert processor.end_conversation("thread-7")
    assert await anyio.to_thread.run_sync(processor.flush, 30)
    (conversation,) = seen
    assert conversation.id == "thread-7"
    assert [run.output for run in conversation.runs] == [ANSWER, "Bring sunglasses."]
    assert {run.conversation_id for run in conversation.runs} == {"thread-7"}
