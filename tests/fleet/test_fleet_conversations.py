"""Conversations on the fleet: turns captured by different agent processes, kept in Redis,
scored by any worker when the conversation ends or goes quiet, each (conversation, turns)
exactly once, even when the worker scoring it is SIGKILLed.

Real Redis, real ``livescore worker`` processes, a real agent subprocess; the scores are
counted where they arrive, at an OTLP receiver.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import redis
from fleet_support import Fleet, wait_for

from livescore import Run, create_scorer
from livescore.live import ConversationLimits, LiveDispatcher
from livescore.testing import OpenAITestServer, Reply

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent


def _turn(conversation_id: str, number: int) -> Run:
    return Run(
        input=f"question {number}",
        output=f"answer {number}",
        run_id=f"{conversation_id}-{number}",
        trace_id=f"{number:032x}",
        span_id=f"{number:016x}",
        conversation_id=conversation_id,
    )


def _agent(fleet: Fleet, scorer_id: str, idle: float | None) -> LiveDispatcher:
    # The agent knows its conversation scorer by id; the workers hold the scorer itself.
    stand_in = create_scorer(
        id=scorer_id,
        description="scored by the fleet",
        level="conversation",
        generate_score=lambda ctx: 0.0,
    )
    return LiveDispatcher(
        [stand_in], broker=fleet.url, register_atexit=False, conversation_idle_timeout=idle
    )


def _agent_process(fleet: Fleet, conversation_id: str, number: int, scorer_id: str) -> None:
    """Turn ``number`` from another agent process."""
    done = subprocess.run(
        [
            sys.executable,
            str(HERE / "conversation_agent.py"),
            fleet.url,
            conversation_id,
            str(number),
            scorer_id,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


def _turns_kept(fleet: Fleet, conversation_id: str) -> int:
    client = redis.Redis.from_url(fleet.url)
    try:
        return int(client.hget(f"livescore:fleet:conv:{conversation_id}", "count") or 0)
    finally:
        client.close()


def _conversation_scores(fleet: Fleet) -> list[Any]:
    return [s for s in fleet.score_spans() if "gen_ai.conversation.id" in s.attributes]


def _by_turns(fleet: Fleet) -> Counter[tuple[str, int]]:
    return Counter(
        (
            str(s.attributes["gen_ai.conversation.id"]),
            int(s.attributes["livescore.conversation.last_turn"]),
        )
        for s in _conversation_scores(fleet)
    )


class _HoldFirst:
    """The judge's replies: the first request waits until released, the rest at once."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.arrived = 0
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Any:
        with self._lock:
            self.arrived += 1
            first = self.arrived == 1
        if first:
            self.release.wait(60)
        return Reply.text("yes")


def test_a_conversation_from_two_agents_is_scored_once_per_turn_count_through_a_sigkill(
    fleet: Fleet,
) -> None:
    judge = _HoldFirst()
    with OpenAITestServer(responder=judge) as server:
        fleet.env["FLEET_TEST_JUDGE_URL"] = server.base_url
        doomed = fleet.start_worker("--scorer-concurrency", "2")
        # Turns 1 and 2 from this process, turn 3 from another agent process.
        agent = _agent(fleet, "judged-conversation", idle=None)
        for number in (1, 2):
            assert agent.submit(_turn("c-1", number))
        assert agent.flush(timeout=60)
        _agent_process(fleet, "c-1", 3, "judged-conversation")
        wait_for(lambda: _turns_kept(fleet, "c-1") == 3, 60, "the three turns in Redis")
        # The conversation ends: its evaluation goes to the only worker, whose score holds
        # in the judge call. Another worker starts; the first is killed mid-score.
        assert agent.end_conversation("c-1")
        wait_for(lambda: judge.arrived >= 1, 60, "the conversation's score to start")
        fleet.start_worker("--scorer-concurrency", "2")
        doomed.kill()
        judge.release.set()
        wait_for(lambda: _by_turns(fleet)[("c-1", 3)] >= 1, 90, "the score of three turns")
        # A fourth turn, from an agent with an idle timeout: quiet, then scored again.
        later = _agent(fleet, "judged-conversation", idle=0.5)
        assert later.submit(_turn("c-1", 4))
        assert later.flush(timeout=60)
        wait_for(lambda: _by_turns(fleet)[("c-1", 4)] >= 1, 90, "the score of four turns")
        agent.shutdown(timeout=10)
        later.shutdown(timeout=10)
        assert agent.conversation_stats().turns_handed_off == 2
        assert later.conversation_stats().turns_handed_off == 1
    # Nothing lost, nothing doubled: one score per (conversation, turn count).
    assert _by_turns(fleet) == {("c-1", 3): 1, ("c-1", 4): 1}, fleet.logs()
    four = next(
        s
        for s in _conversation_scores(fleet)
        if s.attributes["livescore.conversation.last_turn"] == 4
    )
    assert four.attributes["livescore.scorer.id"] == "judged-conversation"
    assert four.attributes["gen_ai.evaluation.score.value"] == 4.0
    assert four.parent_span_id == f"{4:016x}"  # the last covered turn's span
    assert four.trace_id == f"{4:032x}"
    assert {link_span for _, link_span in four.links} == {f"{n:016x}" for n in (1, 2, 3, 4)}


def test_a_quiet_conversation_is_scored_by_the_fleet_and_again_when_it_resumes(
    fleet: Fleet,
) -> None:
    fleet.start_worker("--scorer-concurrency", "2")
    fleet.start_worker("--scorer-concurrency", "2")
    # The first two turns from an agent without an idle timeout, kept before the third
    # comes: however late a loaded machine delivers them, the conversation is not quiet
    # before its third turn.
    early = _agent(fleet, "turns", idle=None)
    agent = _agent(fleet, "turns", idle=0.5)
    conversation = "c-quiet"
    for number in (1, 2):
        early.submit(_turn(conversation, number))
    assert early.flush(timeout=60)
    wait_for(lambda: _turns_kept(fleet, conversation) == 2, 60, "the two turns in Redis")
    agent.submit(_turn(conversation, 3))
    assert agent.flush(timeout=60)
    wait_for(lambda: _by_turns(fleet)[(conversation, 3)] >= 1, 90, "the first score")
    agent.submit(_turn(conversation, 4))
    assert agent.flush(timeout=60)
    wait_for(lambda: _by_turns(fleet)[(conversation, 4)] >= 1, 90, "the second score")
    early.shutdown(timeout=10)
    agent.shutdown(timeout=10)
    assert _by_turns(fleet) == {(conversation, 3): 1, (conversation, 4): 1}, fleet.logs()
    scores = sorted(
        float(s.attributes["gen_ai.evaluation.score.value"]) for s in _conversation_scores(fleet)
    )
    assert scores == [3.0, 4.0]


def test_a_conversation_that_never_goes_quiet_is_scored_at_its_max_age_and_again_at_its_end(
    fleet: Fleet,
) -> None:
    # Before: a conversation on the fleet was scored only once quiet; one with a turn more
    # often than its idle timeout never was. Here the idle timeout (60 s) is never reached
    # and turns keep coming until a score arrives: the one at its max age (1 s).
    fleet.start_worker("--scorer-concurrency", "2")
    stand_in = create_scorer(
        id="turns",
        description="scored by the fleet",
        level="conversation",
        generate_score=lambda ctx: 0.0,
    )
    agent = LiveDispatcher(
        [stand_in],
        broker=fleet.url,
        register_atexit=False,
        conversation_idle_timeout=60.0,
        # A turn bound the test never reaches (225 turns in its 45 s): only the age is left.
        conversation_limits=ConversationLimits(max_age=1.0, max_turns=1_000),
    )
    conversation = "c-busy"
    number = 0
    start = time.monotonic()
    while not _conversation_scores(fleet):
        assert time.monotonic() - start < 45, f"no score at the max age\n{fleet.logs()}"
        number += 1
        agent.submit(_turn(conversation, number))
        time.sleep(0.2)
    number += 1
    agent.submit(_turn(conversation, number))  # one more, then it ends
    assert agent.flush(timeout=60)
    wait_for(lambda: _turns_kept(fleet, conversation) == number, 60, "every turn in Redis")
    assert agent.end_conversation(conversation)
    assert agent.flush(timeout=60)
    wait_for(lambda: _by_turns(fleet)[(conversation, number)] >= 1, 90, "the score at its end")
    agent.shutdown(timeout=10)
    counts = _by_turns(fleet)
    assert all(n == 1 for n in counts.values()), counts  # each (conversation, turns) once
    # The one at its max age, while the turns kept coming, and the one at its end.
    assert len(counts) >= 2
    assert max(turns for _, turns in counts) == number
