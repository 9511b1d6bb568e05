"""The OTLP/HTTP receiver: the SDK's own exporter (protobuf, gzip), OTLP JSON, runs spread
over requests, garbage, caps, the bearer token, back-pressure, and forwarding."""

from __future__ import annotations

import gzip
import json
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from _collect_support import eval_spans, faithfulness, faithfulness_replies, judge_saw
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from livescore.collect import OTLPReceiver, SpanPipeline
from livescore.live import LiveDispatcher
from livescore.otel import OTelEmitter
from livescore.testing import OpenAITestServer
from livescore.traces import AssemblyLimits

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "traces"))
from _trace_support import genai_tool_run, memory_provider, otlp_json


class Scored:
    """A receiver scoring into an in-memory SDK, with a test judge."""

    def __init__(self, judge: OpenAITestServer, **receiver: object) -> None:
        self.scores_provider, self.scores = memory_provider()
        self.dispatcher = LiveDispatcher(
            [faithfulness(judge)],
            emitter=OTelEmitter(tracer_provider=self.scores_provider),
            register_atexit=False,
        )
        limits = receiver.pop("limits", AssemblyLimits(quiet_period=0.2))
        self.pipeline = SpanPipeline(self.dispatcher, limits, finish_on_root=False)  # type: ignore[arg-type]
        self.receiver = OTLPReceiver(self.pipeline, port=0, **receiver).start()  # type: ignore[arg-type]

    @property
    def endpoint(self) -> str:
        return self.receiver.url + "/v1/traces"

    def settle(self) -> None:
        """Wait (bounded) until the pipeline went quiet and the dispatcher scored it all."""
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            self.pipeline.flush(5)
            stats = self.pipeline.stats()
            idle = stats.spans_queued == stats.runs_waiting == 0
            if stats.assembly.traces_open == 0 and idle:
                break
            time.sleep(0.05)
        assert self.dispatcher.flush(20)

    def close(self) -> None:
        self.receiver.stop(5)
        self.pipeline.shutdown(5)
        self.dispatcher.shutdown(5)
        self.scores_provider.shutdown()


@pytest.fixture
def judge() -> Iterator[OpenAITestServer]:
    # Each test scores one run (its three judge calls); a spare set for safety.
    with OpenAITestServer(faithfulness_replies() * 2) as server:
        yield server


def post(
    url: str, body: bytes, content_type: str, **headers: str
) -> tuple[int, bytes, dict[str, str]]:
    request = urllib.request.Request(
        url, data=body, method="POST", headers={"Content-Type": content_type, **headers}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read(), dict(response.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), dict(exc.headers)


def export_run(endpoint: str, *, compression: Compression = Compression.NoCompression) -> None:
    """A hand-instrumented agent in this process exporting with the SDK's OTLP exporter."""
    provider = TracerProvider()
    provider.add_span_processor(
        SimpleSpanProcessor(OTLPSpanExporter(endpoint=endpoint, compression=compression))
    )
    genai_tool_run(provider, question="Weather in Lyon?", answer="It is sunny in Lyon.")
    provider.shutdown()


@pytest.mark.parametrize("compression", [Compression.NoCompression, Compression.Gzip])
def test_the_sdk_exporter_s_run_is_scored_under_its_span(
    judge: OpenAITestServer, compression: Compression
) -> None:
    scored = Scored(judge)
    try:
        export_run(scored.endpoint, compression=compression)
        scored.settle()
        stats = scored.receiver.stats()
        assert stats.requests == {200: 4}  # one request per span (SimpleSpanProcessor)
        assert scored.pipeline.stats().assembly.runs_assembled == 1
        assert judge_saw(judge, "sunny, 24 °C")
    finally:
        scored.close()
    [score] = eval_spans(list(scored.scores.get_finished_spans()))
    assert score.attributes["gen_ai.evaluation.score.value"] == 1.0
    # The parent is the received run span (the run's id is its span id), in its trace.
    assert score.parent is not None
    assert format(score.parent.span_id, "016x") == score.attributes["livescore.run.id"]


def test_otlp_json_spread_over_requests_in_any_order(judge: OpenAITestServer) -> None:
    provider, exporter = memory_provider()
    genai_tool_run(provider, question="Weather in Lyon?", answer="It is sunny in Lyon.")
    spans = list(exporter.get_finished_spans())
    scored = Scored(judge)
    try:
        root_first = [spans[-1], *spans[:-1]]  # the run span before its children
        for span in root_first:
            status, body, headers = post(
                scored.endpoint, json.dumps(otlp_json([span])).encode(), "application/json"
            )
            assert (status, body, headers["Content-Type"]) == (200, b"{}", "application/json")
        scored.settle()
    finally:
        scored.close()
    [score] = eval_spans(list(scored.scores.get_finished_spans()))
    root = spans[-1]
    assert score.context.trace_id == root.context.trace_id
    assert score.parent.span_id == root.context.span_id


def test_garbage_is_answered_400_and_the_receiver_keeps_serving(judge: OpenAITestServer) -> None:
    scored = Scored(judge)
    try:
        assert post(scored.endpoint, b"\xff\xfe garbage", "application/x-protobuf")[0] == 400
        status, body, _ = post(scored.endpoint, b"{not json", "application/json")
        assert status == 400
        assert json.loads(body)["code"] == 3
        assert post(scored.endpoint, b"x", "text/plain")[0] == 415
        assert post(scored.receiver.url + "/v1/metrics", b"", "application/json")[0] == 404
        export_run(scored.endpoint)  # still serving
        scored.settle()
        assert scored.receiver.stats().requests == {400: 2, 415: 1, 404: 1, 200: 4}
    finally:
        scored.close()
    assert len(eval_spans(list(scored.scores.get_finished_spans()))) == 1


def test_bodies_are_capped_even_when_compressed(judge: OpenAITestServer) -> None:
    scored = Scored(judge, max_body_bytes=10_000)
    try:
        bomb = gzip.compress(b"{" + b" " * 1_000_000 + b"}")
        status, _, _ = post(
            scored.endpoint, bomb, "application/json", **{"Content-Encoding": "gzip"}
        )
        assert status == 413
        assert post(scored.endpoint, b"{}", "application/json")[0] == 200
    finally:
        scored.close()


def test_a_bearer_token_is_required_when_set(judge: OpenAITestServer) -> None:
    scored = Scored(judge, token="s3cret")
    try:
        status, _, headers = post(scored.endpoint, b"{}", "application/json")
        assert (status, headers["WWW-Authenticate"]) == (401, "Bearer")
        assert (
            post(scored.endpoint, b"{}", "application/json", Authorization="Bearer nope")[0] == 401
        )
        assert (
            post(scored.endpoint, b"{}", "application/json", Authorization="Bearer s3cret")[0]
            == 200
        )
    finally:
        scored.close()


def test_a_full_pipeline_answers_429_with_retry_after(judge: OpenAITestServer) -> None:
    provider, exporter = memory_provider()
    for n in range(6):
        genai_tool_run(provider, question=f"q{n}?", answer="a.")
    spans = list(exporter.get_finished_spans())
    traces = [spans[i : i + 4] for i in range(0, len(spans), 4)]
    one_trace = sum(len(json.dumps(otlp_json(t))) for t in traces[:1])
    scored = Scored(judge, limits=AssemblyLimits(quiet_period=60, max_bytes=3 * one_trace))
    answers = []
    try:
        for trace in traces:
            answers.append(
                post(scored.endpoint, json.dumps(otlp_json(trace)).encode(), "application/json")
            )
            scored.pipeline.flush(5)  # the worker has taken it: the next request sees it
    finally:
        scored.close()
    statuses = [status for status, _, _ in answers]
    assert statuses[0] == 200
    assert 429 in statuses
    busy = next(headers for status, _, headers in answers if status == 429)
    assert busy["Retry-After"] == "2"
    assert json.loads(next(body for status, body, _ in answers if status == 429))["code"] == 8
    stats = scored.receiver.stats()
    assert stats.spans_accepted + stats.spans_refused == len(spans)
    assembly = scored.pipeline.stats().assembly
    assert assembly.traces_evicted == {}  # refused while full, never evicted
    assert assembly.spans_finished == stats.spans_accepted


def test_forward_passes_requests_on_unchanged(judge: OpenAITestServer) -> None:
    from otlp_receiver import OTLPTestReceiver

    with OTLPTestReceiver() as downstream:
        scored = Scored(judge, forward=downstream.url + "/v1/traces")
        try:
            export_run(scored.endpoint)
            scored.settle()
            deadline = time.monotonic() + 10
            while scored.receiver.stats().forwarded < 4 and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            scored.close()
        assert sorted(s.name for s in downstream.spans) == sorted(
            ["invoke_agent weather", "chat gpt-test", "execute_tool get_weather", "chat gpt-test"]
        )
    assert scored.receiver.stats().forwarded == 4
