"""The fleet's conversations in a real Redis server: turns kept once, the due set and its
leases, end requests, the bounds and the ttl (the store and its timer, without workers)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from livescore import Run
from livescore.fleet._conversations import ConversationStore, ConversationTimer, evaluation_id
from livescore.runs import Conversation
from livescore.testing import RedisTestServer


@pytest.fixture
def store(redis_server: RedisTestServer) -> Iterator[ConversationStore]:
    client = redis.Redis.from_url(redis_server.url)
    try:
        yield ConversationStore(client)
    finally:
        client.close()


def _add(
    store: ConversationStore,
    conversation_id: str,
    number: int,
    *,
    idle: float | None = 0.0,
    limits: dict[str, Any] | None = None,
) -> int:
    run = Run(
        input=f"question {number}",
        output=f"answer {number}",
        run_id=f"{conversation_id}-{number}",
        conversation_id=conversation_id,
    )
    turn: dict[str, Any] = {
        "id": conversation_id,
        "idle_timeout": idle,
        "scorers": [{"id": "turns", "sample_rate": 1.0}],
    }
    if limits is not None:
        turn["limits"] = limits
    parent = {"trace_id": f"{number:032x}", "span_id": f"{number:016x}"}
    return store.add_turn(turn, run.to_dict(), parent)


def _meta(store: ConversationStore, conversation_id: str) -> dict[str, str]:
    raw = store.client.hgetall(f"livescore:fleet:conv:{conversation_id}")
    return {k.decode(): v.decode() for k, v in raw.items()}  # type: ignore[union-attr]


def test_a_turn_delivered_twice_is_kept_once(store: ConversationStore) -> None:
    assert _add(store, "c", 1) == 1
    assert _add(store, "c", 1) == 0
    assert _add(store, "c", 2) == 2
    assert _meta(store, "c")["count"] == "2"


def test_a_quiet_conversation_is_taken_once_published_and_settled(
    store: ConversationStore,
) -> None:
    _add(store, "c", 1)
    _add(store, "c", 2)
    assert store.take_due(lease=30) == [("c", 2)]
    # Leased: another worker's timer does not take it meanwhile.
    assert store.take_due(lease=30) == []
    record = store.evaluation("c", 2)
    assert record is not None
    assert record["id"] == evaluation_id("c", 2)
    assert record["parent"] == {"trace_id": f"{2:032x}", "span_id": f"{2:016x}"}
    assert record["scorers"] == [{"id": "turns", "sample_rate": 1.0}]
    conversation = Conversation.from_dict(record["conversation"])
    assert [r.run_id for r in conversation.runs] == ["c-1", "c-2"]
    assert conversation.metadata["scored_because"] == "idle"
    store.settle("c", 2)
    assert store.client.zscore("livescore:fleet:conv:due", "c") is None
    # It resumes: due again, its evaluation covers every turn.
    _add(store, "c", 3)
    assert store.take_due(lease=30) == [("c", 3)]


def test_a_taker_that_dies_lets_its_lease_lapse(store: ConversationStore) -> None:
    _add(store, "c", 1)
    assert store.take_due(lease=0) == [("c", 1)]
    # Never settled (its worker died): the next look takes it again, for the same job id.
    assert store.take_due(lease=30) == [("c", 1)]


def test_an_evaluation_taken_before_a_new_turn_covers_the_turns_it_was_taken_with(
    store: ConversationStore,
) -> None:
    _add(store, "c", 1)
    taken = store.take_due(lease=30)
    _add(store, "c", 2, idle=3600.0)
    record = store.evaluation(*taken[0])
    assert record is not None
    assert record["id"] == evaluation_id("c", 1)
    assert len(record["conversation"]["runs"]) == 1
    store.settle("c", 1)
    # The second turn is not covered: the conversation stays on the timer.
    assert store.client.zscore("livescore:fleet:conv:due", "c") is not None


def test_end_makes_a_conversation_due_unless_every_turn_is_covered(
    store: ConversationStore,
) -> None:
    _add(store, "c", 1, idle=None)
    assert store.end("c")
    assert store.take_due(lease=30) == [("c", 1)]
    record = store.evaluation("c", 1)
    assert record is not None
    assert record["conversation"]["metadata"]["scored_because"] == "ended"
    store.settle("c", 1)
    assert not store.end("c")
    assert not store.end("never-seen")


def test_without_an_idle_timeout_a_conversation_is_due_when_its_ttl_passes(
    store: ConversationStore,
) -> None:
    before = store.client.time()
    _add(store, "c", 1, idle=None, limits={"max_turns": 100, "max_chars": 100_000, "ttl": 60})
    after = store.client.time()
    due = store.client.zscore("livescore:fleet:conv:due", "c")
    assert due is not None
    assert before[0] * 1000 + 60_000 <= due <= (after[0] + 1) * 1000 + 60_000
    assert _meta(store, "c")["why"] == "ttl"
    # The keys outlive the moment it is due, so that its evaluation can still read them.
    assert store.client.pttl("livescore:fleet:conv:c") > 60_000


def test_a_conversation_past_its_turn_bound_is_due_at_once_then_forgets_its_oldest_half(
    store: ConversationStore,
) -> None:
    limits = {"max_turns": 2, "max_chars": 100_000, "ttl": 3600}
    for number in (1, 2, 3):
        _add(store, "c", number, idle=3600.0, limits=limits)
    assert _meta(store, "c")["why"] == "turn_limit"
    assert store.take_due(lease=30) == [("c", 3)]
    record = store.evaluation("c", 3)
    assert record is not None
    assert len(record["conversation"]["runs"]) == 3
    store.settle("c", 3)
    assert store.client.llen("livescore:fleet:conv:c:turns") == 1
    _add(store, "c", 4, idle=0.0, limits=limits)
    assert store.take_due(lease=30) == [("c", 4)]
    record = store.evaluation("c", 4)
    assert record is not None
    later = Conversation.from_dict(record["conversation"])
    assert (later.first_turn, later.last_turn) == (3, 4)
    assert later.metadata["turns_forgotten"] == 2
    assert record["id"] == evaluation_id("c", 4)


def test_the_timer_publishes_each_due_conversation_once(store: ConversationStore) -> None:
    published: list[Any] = []
    timer = ConversationTimer(store, published.append, lease=30)
    _add(store, "a", 1)
    _add(store, "b", 1)
    _add(store, "b", 2)
    assert timer.tick() == 2
    assert timer.tick() == 0
    assert sorted(r["id"] for r in published) == [evaluation_id("a", 1), evaluation_id("b", 2)]


def _redis_ms(store: ConversationStore) -> int:
    seconds, micros = store.client.time()  # type: ignore[misc]
    return int(seconds) * 1000 + int(micros) // 1000


def test_a_conversation_that_never_goes_quiet_is_due_at_its_max_age_and_again_at_its_end(
    store: ConversationStore,
) -> None:
    # A 60 s idle timeout no test waits out, a max age of 0.3 s.
    limits = {"max_turns": 100, "max_chars": 100_000, "ttl": 3600, "max_age": 0.3}
    _add(store, "c", 1, idle=60.0, limits=limits)
    assert store.take_due(lease=30) == []  # neither quiet nor old yet
    start = time.monotonic()
    while not (taken := store.take_due(lease=30)):
        assert time.monotonic() - start < 30, "never due at its max age"
        time.sleep(0.05)
    assert taken == [("c", 1)]
    _add(store, "c", 2, idle=60.0, limits=limits)  # a turn while its evaluation is made
    record = store.evaluation("c", 1)
    assert record is not None
    assert record["conversation"]["metadata"]["scored_because"] == "max_age"
    before = _redis_ms(store)
    store.settle("c", 1)
    after = _redis_ms(store)
    # The turn that came since is due at its own max age (not at once, not in 60 s).
    due = store.client.zscore("livescore:fleet:conv:due", "c")
    assert due is not None
    assert before + 300 <= due <= after + 300
    assert store.end("c")  # it ends: due now, covering every turn
    assert store.take_due(lease=30) == [("c", 2)]
    record = store.evaluation("c", 2)
    assert record is not None
    assert record["conversation"]["metadata"]["scored_because"] == "ended"
