"""PhoenixSink against a loopback test double of Phoenix's span-annotation API.

The real Phoenix is exercised end to end in tests/demo/test_demo_phoenix.py; here the
double lets each answer (404 for a span not ingested yet, 401, 503) be forced.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from _sink_support import make_record, span_id
from score_api_doubles import PhoenixAnnotationsTestDouble, Recorded, Reply

from livescore.sinks import PhoenixSink
from livescore.sinks._phoenix import phoenix_endpoint, phoenix_headers


@pytest.fixture
def phoenix() -> Iterator[PhoenixAnnotationsTestDouble]:
    with PhoenixAnnotationsTestDouble() as double:
        yield double


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "PHOENIX_ENDPOINT",
        "PHOENIX_COLLECTOR_ENDPOINT",
        "PHOENIX_API_KEY",
        "PHOENIX_CLIENT_HEADERS",
    ):
        monkeypatch.delenv(name, raising=False)


def make_sink(url: str, **options: object) -> PhoenixSink:
    defaults: dict[str, object] = {"initial_backoff": 0.01, "max_backoff": 0.05}
    return PhoenixSink(url, **(defaults | options))  # type: ignore[arg-type]


def test_each_score_becomes_an_annotation_on_the_runs_span(
    phoenix: PhoenixAnnotationsTestDouble, clean_env: None
) -> None:
    phoenix.spans = {span_id(1), span_id(2)}
    sink = make_sink(phoenix.url)
    sink.send(make_record(1))
    sink.send(
        make_record(
            2,
            scorer_id="keyword-coverage",
            score=0.8,
            label="high",
            reason="Covered 4 of 5 keywords.",
            judge_model=None,
        )
    )
    assert sink.flush(10)
    sink.shutdown(5)

    (request,) = [r for r in phoenix.requests if r.path == "/v1/span_annotations"]
    assert request.query == {"sync": ["true"]}
    assert request.headers["content-type"] == "application/json"
    judged, code = request.body["data"]
    assert judged == {
        "span_id": span_id(1),
        "name": "hallucination",
        "annotator_kind": "LLM",
        "result": {
            "score": 0.25,
            "label": "low",
            "explanation": "One claim is not in the tool results.",
        },
        "metadata": {
            "livescore.status": "scored",
            "livescore.run.id": "r1",
            "livescore.source": "live",
            "livescore.duration_s": 0.5,
            "livescore.scorer.version": "2",
            "livescore.sample_rate": 0.5,
            "livescore.judge.model": "judge-model",
            "livescore.judge.calls": 2,
            "livescore.judge.input_tokens": 300,
            "livescore.judge.output_tokens": 40,
            "livescore.judge.latency_s": 0.4,
            "livescore.claims.total": 4,
            "livescore.claims.hallucinated": 1,
        },
        "identifier": "livescore:r1",
    }
    assert code["annotator_kind"] == "CODE"
    assert code["name"] == "keyword-coverage"
    assert code["result"] == {
        "score": 0.8,
        "label": "high",
        "explanation": "Covered 4 of 5 keywords.",
    }
    assert "livescore.judge.model" not in code["metadata"]
    assert set(phoenix.annotations) == {
        ("hallucination", span_id(1), "livescore:r1"),
        ("keyword-coverage", span_id(2), "livescore:r2"),
    }
    assert sink.stats().sent == 2


def test_a_span_phoenix_has_not_ingested_yet_is_retried_the_others_go_at_once(
    phoenix: PhoenixAnnotationsTestDouble,
) -> None:
    phoenix.spans = {span_id(1)}
    posts: list[int] = []

    def ingest_later(request: Recorded) -> None:
        posts.append(len(request.body["data"]))
        if len(posts) == 4:  # the run's span arrives after two refusals
            phoenix.spans.add(span_id(2))

    phoenix.on_post = ingest_later
    sink = make_sink(phoenix.url, flush_interval=60)
    sink.send(make_record(1))
    sink.send(make_record(2))
    assert sink.flush(10)
    sink.shutdown(5)
    # the batch of two is refused for span 2; span 1's annotation is re-sent alone at once;
    # span 2's waits, is refused again, then lands
    assert posts == [2, 1, 1, 1]
    assert set(phoenix.annotations) == {
        ("hallucination", span_id(1), "livescore:r1"),
        ("hallucination", span_id(2), "livescore:r2"),
    }
    retried = [b for b in phoenix.posted_batches() if b[0]["span_id"] == span_id(2)]
    assert len({(b[0]["name"], b[0]["identifier"]) for b in retried}) == 1  # same upsert key
    assert sink.stats().sent == 2


def test_a_span_that_never_arrives_fails_at_the_deadline(
    phoenix: PhoenixAnnotationsTestDouble, caplog: pytest.LogCaptureFixture
) -> None:
    # Long enough for a few tries on a loaded machine; the deadline is what is tested.
    sink = make_sink(phoenix.url, retry_deadline=1.5)
    sink.send(make_record(7))
    with caplog.at_level(logging.WARNING, logger="livescore.sinks"):
        assert sink.flush(10)
    sink.shutdown(5)
    stats = sink.stats()
    assert (stats.sent, stats.failed) == (0, 1)
    assert stats.failed_by_reason == {"span_not_found": 1}
    assert len(phoenix.posted_batches()) >= 3
    assert any(span_id(7) in r.getMessage() for r in caplog.records)


def test_5xx_is_retried_and_4xx_fails_at_once_with_phoenixs_message(
    phoenix: PhoenixAnnotationsTestDouble, caplog: pytest.LogCaptureFixture
) -> None:
    phoenix.spans = {span_id(1), span_id(2)}
    phoenix.scripted = [Reply(503, "busy"), Reply(200, {"data": []})]
    sink = make_sink(phoenix.url, max_batch=1, flush_interval=0)
    sink.send(make_record(1))
    assert sink.flush(10)
    assert len(phoenix.posted_batches()) == 2
    phoenix.scripted = [Reply(401, "Invalid token")]
    with caplog.at_level(logging.WARNING, logger="livescore.sinks"):
        sink.send(make_record(2))
        assert sink.flush(10)
    sink.shutdown(5)
    assert len(phoenix.posted_batches()) == 3  # no retry of the 401
    stats = sink.stats()
    assert (stats.sent, stats.failed, stats.failed_by_reason) == (1, 1, {"http_401": 1})
    assert any("Invalid token" in r.getMessage() for r in caplog.records)


def test_an_unreachable_phoenix_counts_failures_and_never_raises(clean_env: None) -> None:
    with PhoenixAnnotationsTestDouble() as gone:
        url = gone.url  # a loopback port with nobody listening once the block ends
    sink = make_sink(url, retry_deadline=0.2, timeout=1)
    sink.send(make_record(1))
    assert sink.flush(10)
    sink.shutdown(1)
    assert sink.stats().failed_by_reason == {"connection_error": 1}


def test_failed_and_skipped_scores_are_skipped_unless_asked_for(
    phoenix: PhoenixAnnotationsTestDouble,
) -> None:
    phoenix.spans = {span_id(1), span_id(2)}
    failed = make_record(1, status="failed", error="judge timed out", error_type="timeout")
    skipped = make_record(2, status="skipped", reason="no context to judge against")
    quiet = make_sink(phoenix.url)
    quiet.send(failed)
    quiet.send(skipped)
    assert quiet.flush(10)
    quiet.shutdown(5)
    assert quiet.stats().skipped_by_reason == {"unscored": 2}
    assert phoenix.posted_batches() == []

    loud = make_sink(phoenix.url, include_unscored=True)
    loud.send(failed)
    loud.send(skipped)
    assert loud.flush(10)
    loud.shutdown(5)
    (batch,) = phoenix.posted_batches()
    assert [a["result"] for a in batch] == [
        {"label": "failed", "explanation": "judge timed out"},
        {"label": "skipped", "explanation": "no context to judge against"},
    ]
    assert batch[0]["metadata"]["error.type"] == "timeout"
    assert batch[0]["metadata"]["livescore.failed_step"] == "analyze"
    assert batch[1]["metadata"]["livescore.status"] == "skipped"


def test_runs_without_a_span_or_of_unsampled_traces_are_skipped(
    phoenix: PhoenixAnnotationsTestDouble,
) -> None:
    sink = make_sink(phoenix.url)
    sink.send(make_record(1, parent=False))
    sink.send(make_record(2, trace_flags=0))
    assert sink.flush(10)
    sink.shutdown(5)
    assert sink.stats().skipped_by_reason == {"no_span": 1, "trace_not_sampled": 1}
    assert phoenix.requests == []


def test_capture_content_none_keeps_explanations_out(
    phoenix: PhoenixAnnotationsTestDouble,
) -> None:
    phoenix.spans = {span_id(1)}
    sink = make_sink(phoenix.url, capture_content="none")
    sink.send(make_record(1))
    assert sink.flush(10)
    sink.shutdown(5)
    (batch,) = phoenix.posted_batches()
    assert batch[0]["result"] == {"score": 0.25, "label": "low"}


def test_configured_like_phoenixs_clients(
    phoenix: PhoenixAnnotationsTestDouble, monkeypatch: pytest.MonkeyPatch, clean_env: None
) -> None:
    phoenix.spans = {span_id(1)}
    monkeypatch.setenv("PHOENIX_COLLECTOR_ENDPOINT", f"{phoenix.url}/v1/traces")
    monkeypatch.setenv("PHOENIX_API_KEY", "px-key")
    monkeypatch.setenv("PHOENIX_CLIENT_HEADERS", "x-team=search%20quality,x-env=ci")
    sink = PhoenixSink()
    assert sink.endpoint == phoenix.url
    sink.send(make_record(1))
    assert sink.flush(10)
    sink.shutdown(5)
    headers = phoenix.requests[0].headers
    assert headers["authorization"] == "Bearer px-key"
    assert headers["x-team"] == "search quality"
    assert headers["x-env"] == "ci"


def test_endpoint_and_header_resolution(monkeypatch: pytest.MonkeyPatch, clean_env: None) -> None:
    assert phoenix_endpoint() == "http://localhost:6006"
    monkeypatch.setenv("PHOENIX_COLLECTOR_ENDPOINT", "http://collector:6006/")
    assert phoenix_endpoint() == "http://collector:6006"
    monkeypatch.setenv("PHOENIX_ENDPOINT", "https://phoenix.example/team")
    assert phoenix_endpoint() == "https://phoenix.example/team"
    assert phoenix_endpoint("http://127.0.0.1:1/v1/traces") == "http://127.0.0.1:1"
    with pytest.raises(ValueError, match="http"):
        phoenix_endpoint("grpc://127.0.0.1:4317")
    # an explicit authorization header wins over the API key
    assert phoenix_headers("k", {"Authorization": "Basic x"}) == {"Authorization": "Basic x"}
    assert phoenix_headers() == {}


def test_one_annotation_phoenix_refuses_fails_alone(
    phoenix: PhoenixAnnotationsTestDouble,
) -> None:
    phoenix.spans = {span_id(1), span_id(2), span_id(3)}
    sink = make_sink(phoenix.url, flush_interval=60)
    sink.send(make_record(1))
    sink.send(make_record(2, scorer_id="note"))  # a name Phoenix reserves: 400
    sink.send(make_record(3))
    sink.send(make_record(4, score=float("nan")))  # JSON has no NaN: never sent
    assert sink.flush(10)
    sink.shutdown(5)
    assert [len(b) for b in phoenix.posted_batches()] == [3, 1, 1, 1]
    assert set(phoenix.annotations) == {
        ("hallucination", span_id(1), "livescore:r1"),
        ("hallucination", span_id(3), "livescore:r3"),
    }
    stats = sink.stats()
    assert stats.sent == 2
    assert stats.failed_by_reason == {"http_400": 1}
    assert stats.skipped_by_reason == {"invalid_score": 1}
