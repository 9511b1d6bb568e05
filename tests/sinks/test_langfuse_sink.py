"""LangfuseSink through the real ``langfuse`` SDK client, against a loopback test double.

Langfuse's server (Postgres, ClickHouse, Redis and its own services) cannot run here, so
:class:`LangfuseTestReceiver` records what the SDK sends to ``POST /api/public/scores``.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator

import pytest
from _sink_support import TRACE_ID, make_record, span_id
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from score_api_doubles import LangfuseTestReceiver, Reply

from livescore.sinks import LangfuseSink


@pytest.fixture
def receiver() -> Iterator[LangfuseTestReceiver]:
    with LangfuseTestReceiver() as double:
        yield double


@pytest.fixture
def langfuse_env(monkeypatch: pytest.MonkeyPatch, receiver: LangfuseTestReceiver) -> None:
    for name in ("LANGFUSE_HOST", "LANGFUSE_TRACING_ENVIRONMENT", "LANGFUSE_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", "pk-lf-test")
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", "sk-lf-test")
    monkeypatch.setenv("LANGFUSE_BASE_URL", receiver.url)


def make_sink(**options: object) -> LangfuseSink:
    defaults: dict[str, object] = {"initial_backoff": 0.01, "max_backoff": 0.05}
    return LangfuseSink(**(defaults | options))  # type: ignore[arg-type]


def test_each_score_becomes_a_langfuse_score_on_the_runs_trace_and_observation(
    receiver: LangfuseTestReceiver, langfuse_env: None
) -> None:
    sink = make_sink(environment="staging")
    sink.send(make_record(1))
    sink.send(
        make_record(
            2, scorer_id="keyword-coverage", score=0.8, label=None, reason=None, judge_model=None
        )
    )
    assert sink.flush(10)
    sink.shutdown(5)

    (request,) = receiver.requests
    assert (request.method, request.path) == ("POST", "/api/public/scores")
    assert receiver.basic_auth(request) == ("pk-lf-test", "sk-lf-test")
    assert request.headers["x-langfuse-sdk-name"] == "python"
    assert request.headers["x-langfuse-public-key"] == "pk-lf-test"
    judged, code = receiver.scores()
    assert judged["traceId"] == TRACE_ID
    assert judged["observationId"] == span_id(1)
    assert judged["name"] == "hallucination"
    assert judged["value"] == 0.25
    assert judged["dataType"] == "NUMERIC"
    assert judged["comment"] == "low: One claim is not in the tool results."
    assert judged["environment"] == "staging"
    assert judged["metadata"]["label"] == "low"
    assert judged["metadata"]["livescore.judge.model"] == "judge-model"
    assert judged["metadata"]["livescore.judge.input_tokens"] == 300
    assert uuid.UUID(judged["id"])  # deterministic: the same on a retry
    assert code["observationId"] == span_id(2)
    assert (code["name"], code["value"]) == ("keyword-coverage", 0.8)
    assert "comment" not in code
    assert sink.stats().sent == 2


def test_5xx_is_retried_with_the_same_score_ids(
    receiver: LangfuseTestReceiver, langfuse_env: None
) -> None:
    receiver.scripted = [Reply(500, {"message": "db down"})]
    sink = make_sink()
    sink.send(make_record(1))
    assert sink.flush(10)
    sink.shutdown(5)
    first, second = (r.body for r in receiver.requests)
    assert first == second  # same ids: Langfuse upserts, nothing is counted twice
    assert sink.stats().sent == 1


def test_an_authentication_error_fails_at_once_and_is_logged_once(
    receiver: LangfuseTestReceiver, langfuse_env: None, caplog: pytest.LogCaptureFixture
) -> None:
    receiver.scripted = [Reply(401, {"message": "Invalid credentials"})] * 2
    sink = make_sink(max_batch=1, flush_interval=0)
    with caplog.at_level(logging.DEBUG, logger="livescore.sinks"):
        sink.send(make_record(1))
        sink.send(make_record(2))
        assert sink.flush(10)
    sink.shutdown(5)
    assert len(receiver.requests) == 2
    assert sink.stats().failed_by_reason == {"http_401": 2}
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1
    assert "Invalid credentials" in warned[0]


def test_scores_langfuse_rejects_in_a_partial_answer_are_counted_as_failed(
    receiver: LangfuseTestReceiver, langfuse_env: None
) -> None:
    receiver.scripted = [
        Reply(207, {"accepted": 2, "rejected": 1, "errors": [{"message": "bad value"}]})
    ]
    sink = make_sink(flush_interval=60)
    for n in (1, 2, 3):
        sink.send(make_record(n))
    assert sink.flush(10)
    sink.shutdown(5)
    stats = sink.stats()
    assert (stats.sent, stats.failed, stats.failed_by_reason) == (2, 1, {"rejected": 1})


def test_unscored_and_spanless_scores_are_skipped(
    receiver: LangfuseTestReceiver, langfuse_env: None
) -> None:
    sink = make_sink()
    sink.send(make_record(1, status="failed", error="timeout"))
    sink.send(make_record(2, parent=False))
    assert sink.flush(10)
    sink.shutdown(5)
    assert sink.stats().skipped_by_reason == {"unscored": 1, "no_span": 1}
    assert receiver.requests == []


def test_the_sink_never_touches_the_applications_tracing(
    receiver: LangfuseTestReceiver, langfuse_env: None
) -> None:
    # Langfuse() would register a global tracer provider, or add its span processor to
    # yours; the sink creates no Langfuse() client.
    before = trace.get_tracer_provider()
    app_provider = TracerProvider()
    processors = list(app_provider._active_span_processor._span_processors)
    sink = make_sink()
    sink.send(make_record(1))
    with app_provider.get_tracer("app").start_as_current_span("invoke_agent app"):
        pass
    assert sink.flush(10)
    sink.shutdown(5)
    app_provider.shutdown()
    assert trace.get_tracer_provider() is before
    assert list(app_provider._active_span_processor._span_processors) == processors
    assert {r.path for r in receiver.requests} == {"/api/public/scores"}


def test_a_langfuse_api_client_can_be_given(receiver: LangfuseTestReceiver) -> None:
    from langfuse.api import LangfuseAPI

    api = LangfuseAPI(base_url=receiver.url, username="pk-given", password="sk-given")
    sink = make_sink(client=api)
    sink.send(make_record(1))
    assert sink.flush(10)
    sink.shutdown(5)
    assert receiver.basic_auth(receiver.requests[0]) == ("pk-given", "sk-given")


def test_missing_keys_are_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LANGFUSE_PUBLIC_KEY", raising=False)
    monkeypatch.delenv("LANGFUSE_SECRET_KEY", raising=False)
    with pytest.raises(ValueError, match="LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY"):
        LangfuseSink()
    with pytest.raises(TypeError, match=r"langfuse\.Langfuse"):
        LangfuseSink(client=object())
