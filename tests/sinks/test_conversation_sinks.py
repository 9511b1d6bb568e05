"""A conversation's score where the dashboards keep session scores: a Langfuse score with
``sessionId``, a Phoenix session annotation; each score of a conversation kept beside the
others."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from _sink_support import TRACE_ID, make_record, span_id
from score_api_doubles import LangfuseTestReceiver, PhoenixAnnotationsTestDouble

from livescore.scoring import CoveredTurns
from livescore.sinks import LangfuseSink, PhoenixSink


def covered(last: int, conversation_id: str = "chat-9") -> CoveredTurns:
    return CoveredTurns(conversation_id, 1, last, tuple(f"r{i}" for i in range(1, last + 1)))


@pytest.fixture
def receiver() -> Iterator[LangfuseTestReceiver]:
    with LangfuseTestReceiver() as double:
        yield double


def test_langfuse_gets_a_session_score_per_evaluation(receiver: LangfuseTestReceiver) -> None:
    sink = LangfuseSink(
        public_key="pk", secret_key="sk", base_url=receiver.url, initial_backoff=0.01
    )
    sink.send(make_record(3, scorer_id="knowledge-retention", score=1.0, turns=covered(3)))
    sink.send(make_record(4, scorer_id="knowledge-retention", score=0.5, turns=covered(4)))
    assert sink.flush(10)
    sink.shutdown(5)
    first, second = receiver.scores()
    for score in (first, second):
        assert score["sessionId"] == "chat-9"
        assert "traceId" not in score  # a session's score, not a trace's
        assert score["name"] == "knowledge-retention"
    assert first["id"] != second["id"]  # the second is kept beside the first
    assert (first["value"], second["value"]) == (1.0, 0.5)
    meta = second["metadata"]
    assert meta["gen_ai.conversation.id"] == "chat-9"
    assert meta["livescore.conversation.turns"] == 4
    assert meta["livescore.conversation.last_trace_id"] == TRACE_ID
    assert meta["livescore.conversation.last_span_id"] == span_id(4)


def test_phoenix_gets_a_session_annotation_per_evaluation_once_the_session_exists() -> None:
    with PhoenixAnnotationsTestDouble() as phoenix:
        phoenix.spans = {span_id(1)}
        sink = PhoenixSink(phoenix.url, initial_backoff=0.01, max_backoff=0.05)
        sink.send(make_record(1))  # a run's score: a span annotation, as before
        sink.send(make_record(3, scorer_id="turns", score=3.0, turns=covered(3)))
        # The session is not ingested yet: the session annotation waits for it.
        deadline = time.monotonic() + 10
        while not any(r.path == "/v1/session_annotations" for r in phoenix.requests):
            assert time.monotonic() < deadline
            time.sleep(0.01)
        with phoenix.lock:
            phoenix.sessions.add("chat-9")
        sink.send(make_record(4, scorer_id="turns", score=4.0, turns=covered(4)))
        assert sink.flush(10)
        sink.shutdown(5)
        assert len(phoenix.annotations) == 1
        assert sorted(phoenix.session_annotations) == [
            ("turns", "chat-9", "livescore:chat-9:1-3"),
            ("turns", "chat-9", "livescore:chat-9:1-4"),
        ]
        annotation = phoenix.session_annotations[("turns", "chat-9", "livescore:chat-9:1-4")]
        assert annotation["result"]["score"] == 4.0
        assert annotation["metadata"]["livescore.conversation.last_span_id"] == span_id(4)
        assert sink.stats().sent == 3
