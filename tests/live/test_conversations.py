"""Conversations in the live dispatcher: scored when quiet, again when they resume, at once
when ended; sampled once per conversation; bounded; counted; finished at shutdown.

The tests that count scores precisely run the conversations on a clock of their own
(:class:`FakeClock`, a test double of the dispatcher's monotonic clock): every turn happens
at a chosen instant, so a loaded machine's pauses between two ``submit`` calls never split
a conversation. The worker still wakes on its real timer (``conversation_idle_timeout``
seconds at most) to look at the clock.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from _live_support import FakeEmitter

from livescore import Run, StepContext, create_scorer
from livescore.live import (
    ConversationLimits,
    InProcessExecutor,
    LiveDispatcher,
    ScorerConfig,
    record_run,
)
from livescore.live._sampling import sample_fraction
from livescore.runs import Conversation
from livescore.scoring import Scorer, ScoreResult

IDLE = 0.2  # seconds: how often a parked worker looks at the clock, at most


class FakeClock:
    """A test double of the dispatcher's monotonic clock: it moves when the test says."""

    def __init__(self) -> None:
        self.now = 1000.0
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self.now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self.now += seconds


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.01)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


class Turns:
    """A conversation scorer that records each conversation it scores (score: its turns)."""

    def __init__(self, scorer_id: str = "turns") -> None:
        self.seen: list[Conversation] = []
        self.lock = threading.Lock()
        self.release = threading.Event()
        self.release.set()

        def generate_score(ctx: StepContext) -> float:
            assert ctx.conversation is not None
            self.release.wait(30)
            with self.lock:
                self.seen.append(ctx.conversation)
            return float(len(ctx.conversation.runs))

        self.scorer: Scorer = create_scorer(
            id=scorer_id,
            description="turns covered",
            level="conversation",
            generate_score=generate_score,
        )

    def count(self) -> int:
        with self.lock:
            return len(self.seen)


def turn(conversation_id: str, i: int, **kwargs: Any) -> Run:
    return Run(
        input=f"question {i}",
        output=f"answer {i}",
        run_id=f"{conversation_id}-{i}",
        conversation_id=conversation_id,
        **kwargs,
    )


def conversation_results(emitter: FakeEmitter, scorer_id: str = "turns") -> list[ScoreResult]:
    with emitter.lock:
        return [r for _, r, _ in emitter.results if r.scorer_id == scorer_id]


def make(
    dispatchers: list[LiveDispatcher],
    scorers: list[Any],
    emitter: FakeEmitter,
    clock: FakeClock | None = None,
    **kwargs: Any,
) -> LiveDispatcher:
    kwargs.setdefault("conversation_idle_timeout", IDLE)
    dispatcher = LiveDispatcher(scorers, emitter=emitter, register_atexit=False, **kwargs)
    if clock is not None:
        dispatcher._clock = clock  # the test's clock double
    dispatchers.append(dispatcher)
    return dispatcher


def test_three_turns_then_quiet_one_score_a_fourth_then_quiet_a_second_covering_four(
    dispatchers: list[LiveDispatcher], emitter: FakeEmitter
) -> None:
    clock = FakeClock()
    turns = Turns()
    d = make(dispatchers, [turns.scorer], emitter, clock)
    for i in (1, 2, 3):
        assert d.submit(turn("c1", i))
        clock.advance(0.05)  # well inside the idle timeout
    assert d.flush(timeout=30)  # the turns are recorded: nothing is due yet
    assert turns.count() == 0
    clock.advance(IDLE)
    wait_until(lambda: len(conversation_results(emitter)) == 1, "the first score")
    assert d.submit(turn("c1", 4))
    assert d.flush(timeout=30)
    clock.advance(IDLE + 0.01)
    wait_until(lambda: len(conversation_results(emitter)) == 2, "the second score")
    first, second = conversation_results(emitter)
    assert first.turns is not None
    assert second.turns is not None
    assert (first.turns.first, first.turns.last, first.score) == (1, 3, 3.0)
    assert (second.turns.first, second.turns.last, second.score) == (1, 4, 4.0)
    assert second.turns.run_ids == ("c1-1", "c1-2", "c1-3", "c1-4")
    stats = d.stats().by_scorer["turns"]
    assert (stats.sampled, stats.scored) == (2, 2)
    assert d.conversation_stats().evaluations == {"idle": 2}
    # Quiet again, nothing new: no third score.
    clock.advance(IDLE * 3)
    assert d.flush(timeout=30)
    assert len(conversation_results(emitter)) == 2


def test_a_worker_behind_a_burst_does_not_score_a_conversation_its_next_turn_awaits(
    dispatchers: list[LiveDispatcher], emitter: FakeEmitter
) -> None:
    clock = FakeClock()
    started, release = threading.Event(), threading.Event()

    def slow(ctx: StepContext) -> float:
        started.set()
        return float(release.wait(30))

    # One score at a time, and a run with two scorers whose first waits: the worker takes
    # no further job (the turns stay queued) until it is released.
    blocker = create_scorer(id="slow", description="waits", generate_score=slow)
    other = create_scorer(id="other", description="1", generate_score=lambda ctx: 1.0)
    turns = Turns()
    d = make(
        dispatchers,
        [blocker, other, turns.scorer],
        emitter,
        clock,
        executor=InProcessExecutor(max_concurrency=1),
    )
    assert d.submit(Run(input="busy", output="busy", run_id="busy"))
    assert started.wait(30)
    assert d.submit(turn("c1", 1))
    clock.advance(0.05)
    assert d.submit(turn("c1", 2))
    # Past both turns' deadlines before the worker has seen either: when it records the
    # first, the second is still queued, so the conversation is not quiet yet.
    clock.advance(IDLE * 5)
    release.set()
    wait_until(lambda: len(conversation_results(emitter)) == 1, "the conversation's score")
    assert d.flush(timeout=30)
    (only,) = conversation_results(emitter)
    assert only.turns is not None
    assert (only.turns.first, only.turns.last) == (1, 2)


def test_a_conversation_goes_quiet_on_the_real_clock_too(
    dispatchers: list[LiveDispatcher], emitter: FakeEmitter
) -> None:
    turns = Turns()
    d = make(dispatchers, [turns.scorer], emitter)
    assert d.submit(turn("c1", 1))
    wait_until(lambda: turns.count() == 1, "the conversation to go quiet")
    assert turns.seen[0].last_turn == 1


def test_end_conversation_scores_at_once(
    dispatchers: list[LiveDispatcher], emitter: FakeEmitter
) -> None:
    turns = Turns()
    d = make(dispatchers, [turns.scorer], emitter, conversation_idle_timeout=3600)
    for i in (1, 2, 3):
        d.submit(turn("c1", i))
    assert d.end_conversation("c1")
    # flush waits for the conversation's score too: the end request is queued behind the
    # turns, and completes with the scores it started.
    assert d.flush(timeout=30)
    (result,) = conversation_results(emitter)
    assert result.turns is not None
    assert result.turns.last == 3
    assert d.conversation_stats().evaluations == {"ended": 1}
    # Ending it again with nothing new scores nothing; a new turn reopens it.
    assert d.end_conversation("c1")
    assert d.flush(timeout=30)
    assert len(conversation_results(emitter)) == 1
    d.submit(turn("c1", 4))
    assert d.end_conversation("c1")
    assert d.flush(timeout=30)
    assert [r.turns.last for r in conversation_results(emitter) if r.turns] == [3, 4]
    assert not d.end_conversation("unknown") or d.flush(timeout=30)


def test_run_scorers_and_conversation_scorers_share_one_list(
    dispatchers: list[LiveDispatcher], emitter: FakeEmitter
) -> None:
    turns = Turns()
    length = create_scorer(
        id="length", description="answer length", generate_score=lambda c: len(c.output_text)
    )
    d = make(dispatchers, [length, turns.scorer], emitter, conversation_idle_timeout=None)
    for i in (1, 2):
        d.submit(turn("c1", i))
    d.submit(Run(input="q", output="a run outside any conversation"))
    d.end_conversation("c1")
    assert d.flush(timeout=30)
    assert len(conversation_results(emitter, "length")) == 3  # every run, once
    assert len(conversation_results(emitter, "turns")) == 1  # the conversation, once
    stats = d.stats()
    assert stats.sampled == stats.scored == 4


def test_each_conversation_is_scored_on_its_own(
    dispatchers: list[LiveDispatcher], emitter: FakeEmitter
) -> None:
    clock = FakeClock()
    turns = Turns()
    d = make(dispatchers, [turns.scorer], emitter, clock)
    d.submit(turn("a", 1))
    d.submit(turn("b", 1))
    clock.advance(IDLE / 2)
    d.submit(turn("b", 2))  # b is busy for a while longer
    assert d.flush(timeout=30)
    clock.advance(IDLE * 0.75)  # a has been quiet long enough, b has not
    wait_until(lambda: turns.count() == 1, "a's score")
    assert turns.seen[0].id == "a"
    clock.advance(IDLE)
    wait_until(lambda: turns.count() == 2, "b's score")
    assert [c.last_turn for c in turns.seen] == [1, 2]


def test_sampling_is_decided_once_per_conversation_from_its_id(
    dispatchers: list[LiveDispatcher], emitter: FakeEmitter
) -> None:
    turns = Turns()
    d = make(
        dispatchers,
        [ScorerConfig(turns.scorer, sampling=0.5)],
        emitter,
        conversation_idle_timeout=None,
    )
    ids = [f"conversation-{i}" for i in range(40)]
    for i in (1, 2, 3):
        for cid in ids:
            assert d.sample(f"run-{cid}-{i}", conversation_id=cid).sampled == (
                sample_fraction(cid) < 0.5
            )
            d.submit(turn(cid, i))
    for cid in ids:
        d.end_conversation(cid)
    assert d.flush(timeout=30)
    scored = {c.id for c in turns.seen}
    assert scored == {cid for cid in ids if sample_fraction(cid) < 0.5}
    assert 0 < len(scored) < len(ids)
    assert {c.last_turn for c in turns.seen} == {3}  # every turn of a sampled one


def test_a_conversation_scorer_samples_at_a_rate_only(dispatchers: list[LiveDispatcher]) -> None:
    turns = Turns()
    with pytest.raises(ValueError, match="must be a rate"):
        LiveDispatcher([ScorerConfig(turns.scorer, sampling=lambda run: True)])


def test_a_conversation_at_its_turn_limit_is_scored_then_forgets_its_oldest_half(
    dispatchers: list[LiveDispatcher], emitter: FakeEmitter
) -> None:
    turns = Turns()
    d = make(
        dispatchers,
        [turns.scorer],
        emitter,
        conversation_idle_timeout=None,
        conversation_limits=ConversationLimits(max_turns=4),
    )
    for i in range(1, 6):
        d.submit(turn("long", i))
    d.end_conversation("long")  # nothing left to score: the fifth turn scored it
    assert d.flush(timeout=30)
    (at_limit,) = conversation_results(emitter)
    assert at_limit.turns is not None
    # At the fifth turn: scored over turns 1-5, then turns 1-3 let go.
    assert (at_limit.turns.first, at_limit.turns.last) == (1, 5)
    assert at_limit.flags.get("turns_forgotten") is None
    d.submit(turn("long", 6))
    d.end_conversation("long")
    assert d.flush(timeout=30)
    latest = conversation_results(emitter)[-1]
    assert latest.turns is not None
    assert (latest.turns.first, latest.turns.last) == (4, 6)
    assert latest.flags["turns_forgotten"] == 3
    stats = d.conversation_stats()
    assert stats.turns_forgotten == 3
    assert stats.evaluations == {"turn_limit": 1, "ended": 1}
    assert (stats.open, stats.turns) == (1, 3)


def test_a_long_turn_past_the_character_limit_is_scored_and_let_go(
    dispatchers: list[LiveDispatcher], emitter: FakeEmitter
) -> None:
    turns = Turns()
    d = make(
        dispatchers,
        [turns.scorer],
        emitter,
        conversation_idle_timeout=None,
        conversation_limits=ConversationLimits(max_chars=1000),
    )
    d.submit(Run(input="q", output="x" * 600, conversation_id="c"))
    d.submit(Run(input="q", output="y" * 600, conversation_id="c"))
    assert d.flush(timeout=30)
    (result,) = conversation_results(emitter)
    assert result.turns is not None
    assert result.turns.count == 2
    stats = d.conversation_stats()
    assert stats.evaluations == {"char_limit": 1}
    assert stats.turns == 1
    assert stats.chars <= 1000


def test_the_least_recently_active_conversation_makes_room_and_is_scored_first(
    dispatchers: list[LiveDispatcher], emitter: FakeEmitter
) -> None:
    turns = Turns()
    d = make(
        dispatchers,
        [turns.scorer],
        emitter,
        conversation_idle_timeout=None,
        conversation_limits=ConversationLimits(max_conversations=2),
    )
    d.submit(turn("a", 1))
    d.submit(turn("b", 1))
    d.submit(turn("a", 2))  # a is now the more recent one
    d.submit(turn("c", 1))  # b makes room
    assert d.flush(timeout=30)
    (evicted,) = turns.seen
    assert (evicted.id, evicted.metadata["scored_because"]) == ("b", "evicted")
    stats = d.conversation_stats()
    assert (stats.open, stats.evicted) == (2, 1)
    # b resumes: its turns keep their numbers, and its next score says what it covers. (Its
    # return makes room too: a is evicted and scored, concurrently, so b's score is found
    # by its id, not by its place among the scores.)
    d.submit(turn("b", 2))
    d.end_conversation("b")
    assert d.flush(timeout=30)
    resumed = [seen for seen in turns.seen if seen.id == "b"][-1]
    assert (resumed.id, resumed.first_turn, resumed.last_turn) == ("b", 2, 2)


def test_a_scored_conversation_quiet_past_its_ttl_is_forgotten(
    dispatchers: list[LiveDispatcher], emitter: FakeEmitter
) -> None:
    clock = FakeClock()
    turns = Turns()
    d = make(
        dispatchers, [turns.scorer], emitter, clock, conversation_limits=ConversationLimits(ttl=5)
    )
    d.submit(turn("c", 1))
    assert d.flush(timeout=30)
    clock.advance(IDLE)
    wait_until(lambda: turns.count() == 1, "the score")
    clock.advance(10)
    wait_until(lambda: d.conversation_stats().expired == 1, "the conversation to expire")
    assert d.conversation_stats().open == 0


def test_turns_the_queue_cannot_hold_are_counted(
    dispatchers: list[LiveDispatcher], emitter: FakeEmitter
) -> None:
    turns = Turns()
    turns.release.clear()  # the first evaluation holds the worker's only slot
    d = make(
        dispatchers,
        [ScorerConfig(turns.scorer, max_concurrency=1)],
        emitter,
        conversation_idle_timeout=None,
        max_queue=2,
        max_judge_concurrency=1,
    )
    d.submit(turn("busy", 1))
    d.end_conversation("busy")
    wait_until(lambda: d.stats().in_flight == 1, "the evaluation to start")
    accepted = [d.submit(turn("c", i)) for i in range(1, 6)]
    assert accepted.count(True) == 2
    assert d.conversation_stats().turns_dropped == {"queue_full": 3}
    turns.release.set()
    assert d.flush(timeout=30)


def test_shutdown_scores_the_turns_no_score_covers_yet(emitter: FakeEmitter) -> None:
    turns = Turns()
    d = LiveDispatcher(
        [turns.scorer], emitter=emitter, register_atexit=False, conversation_idle_timeout=3600
    )
    d.submit(turn("a", 1))
    d.submit(turn("b", 1))
    d.end_conversation("b")  # scored already: shutdown does not score it twice
    assert d.flush(timeout=30)
    d.submit(turn("a", 2))
    d.shutdown(timeout=30)
    assert sorted((c.id, c.last_turn) for c in turns.seen) == [("a", 2), ("b", 1)]
    assert d.conversation_stats().evaluations == {"ended": 1, "shutdown": 1}
    stats = d.stats()
    assert stats.sampled == stats.scored == 2


def test_shutdown_counts_what_it_cannot_finish_as_dropped(emitter: FakeEmitter) -> None:
    turns = Turns()
    turns.release.clear()  # every evaluation hangs
    d = LiveDispatcher(
        [turns.scorer], emitter=emitter, register_atexit=False, conversation_idle_timeout=3600
    )
    d.submit(turn("a", 1))
    d.submit(turn("b", 1))
    d.shutdown(timeout=0.5)
    turns.release.set()
    stats = d.stats()
    assert stats.sampled == 2
    assert stats.dropped_by_reason == {"shutdown": 2}
    assert stats.in_flight == stats.queued == 0


def test_record_run_makes_turns_of_its_conversation(
    dispatchers: list[LiveDispatcher], emitter: FakeEmitter
) -> None:
    turns = Turns()
    d = make(dispatchers, [turns.scorer], emitter, conversation_idle_timeout=None)
    for text in ("Where is my parcel?", "And the second one?"):
        with record_run(d, input=text, conversation_id="chat-9") as run:
            run.tool_call("track", {"parcel": 1}, {"at": "Lyon"})
            run.output = "It is in Lyon."
    d.end_conversation("chat-9")
    assert d.flush(timeout=30)
    (conversation,) = turns.seen
    assert [r.input for r in conversation.runs] == ["Where is my parcel?", "And the second one?"]
    assert conversation.runs[0].steps[0].tool_call is not None


def test_open_conversations_cost_no_thread_or_task_each(
    dispatchers: list[LiveDispatcher], emitter: FakeEmitter
) -> None:
    turns = Turns()
    d = make(dispatchers, [turns.scorer], emitter, conversation_idle_timeout=3600)
    d.submit(turn("first", 1))
    assert d.flush(timeout=30)
    threads = threading.active_count()
    for i in range(500):
        d.submit(turn(f"c{i}", 1))
    assert d.flush(timeout=30)
    assert d.conversation_stats().open == 501
    # One heap of timers on the worker: no thread per conversation (anyio's worker threads,
    # which the worker's own waits use, may add one or two).
    assert threading.active_count() <= threads + 2


def test_a_conversation_that_never_goes_quiet_is_scored_at_its_max_age_and_again_at_its_end(
    dispatchers: list[LiveDispatcher], emitter: FakeEmitter
) -> None:
    # Before: a turn every 1.5 s against a 2 s idle timeout, no score in 60 s (nor ever).
    clock = FakeClock()
    turns = Turns()
    idle, turn_every = 2.0, 1.5
    d = make(
        dispatchers,
        [turns.scorer],
        emitter,
        clock,
        conversation_idle_timeout=idle,
        conversation_limits=ConversationLimits(max_age=30.0),
    )
    for i in range(1, 41):  # 60 s of turns, never 2 s apart
        assert d.submit(turn("busy", i))
        assert d.flush(timeout=30)
        clock.advance(turn_every)
        if i == 21:  # 30 s after the first turn: due at its max age, though never quiet
            wait_until(lambda: len(conversation_results(emitter)) == 1, "the max-age score")
    clock.advance(idle)  # then it goes quiet: scored again, covering every turn
    wait_until(
        lambda: any(
            r.turns is not None and r.turns.last == 40 for r in conversation_results(emitter)
        ),
        "the score at its end",
    )
    results = conversation_results(emitter)
    first, last = results[0], results[-1]
    assert first.turns is not None
    assert last.turns is not None
    assert first.turns.first == 1
    assert 20 <= first.turns.last <= 22  # about 30 s in, while the turns kept coming
    assert (last.turns.first, last.turns.last) == (1, 40)
    evaluations = d.conversation_stats().evaluations
    assert evaluations["max_age"] >= 1
    assert evaluations["idle"] == 1
    assert set(evaluations) == {"max_age", "idle"}


def test_max_age_must_be_positive_seconds_or_none() -> None:
    assert ConversationLimits(max_age=None).max_age is None
    for bad in (0, -1.0, float("inf"), float("nan"), True, "60"):
        with pytest.raises(ValueError, match="max_age"):
            ConversationLimits(max_age=bad)  # type: ignore[arg-type]
