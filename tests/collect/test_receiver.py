"""The OTLP/HTTP receiver: the SDK's own exporter (protobuf, gzip), OTLP JSON, runs spread
over requests, garbage, caps, the bearer token, back-pressure, and forwarding."""

from __future__ import annotations

import base64
import gzip
import json
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _collect_support import CLAIM, eval_spans, faithfulness, faithfulness_replies, judge_saw
from google.protobuf.json_format import MessageToDict
from opentelemetry._logs import LogRecord
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import set_span_in_context

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


# -- /v1/logs: content captured in events ------------------------------------------------------


def _hex_ids(request: dict[str, Any]) -> dict[str, Any]:
    """OTLP JSON writes ids in hex, the protobuf JSON mapping in base64."""
    for resource in request.get("resourceLogs", []):
        for scope in resource.get("scopeLogs", []):
            for record in scope.get("logRecords", []):
                for key in ("traceId", "spanId"):
                    if key in record:
                        record[key] = base64.b64decode(record[key]).hex()
    return request


def run_with_content_in_events() -> tuple[list[ReadableSpan], list[Any]]:
    """A raw tool loop as the contrib instrumentations write it with ``EVENT_ONLY``: an app
    span over two ``chat`` spans without content, each with a
    ``gen_ai.client.inference.operation.details`` log record holding its messages (the
    tool's result a ``tool_call_response`` part of the second call's input)."""
    provider, exporter = memory_provider()
    logger_provider, logs = LoggerProvider(), InMemoryLogRecordExporter()
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    tracer, logger = provider.get_tracer("app"), logger_provider.get_logger("instrumentation")
    question = {"role": "user", "parts": [{"type": "text", "content": "Weather in Lyon?"}]}
    call = {"type": "tool_call", "id": "call_w1", "name": "get_weather", "arguments": {}}
    asked = {"role": "assistant", "parts": [call]}
    result = {"type": "tool_call_response", "id": "call_w1", "response": "sunny, 24 °C"}
    turns = [
        ([question], [asked]),
        (
            [question, asked, {"role": "tool", "parts": [result]}],
            [{"role": "assistant", "parts": [{"type": "text", "content": CLAIM}]}],
        ),
    ]
    with tracer.start_as_current_span("weather-agent"):
        for inputs, outputs in turns:
            with tracer.start_as_current_span(
                "chat m", attributes={"gen_ai.operation.name": "chat"}
            ) as span:
                logger.emit(
                    LogRecord(
                        event_name="gen_ai.client.inference.operation.details",
                        attributes={
                            "gen_ai.input.messages": inputs,
                            "gen_ai.output.messages": outputs,
                        },
                        context=set_span_in_context(span),
                    )
                )
    return list(exporter.get_finished_spans()), list(logs.get_finished_logs())


def logs_body(records: list[Any], encoding: str) -> bytes:
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs

    request = encode_logs(records)
    if encoding == "application/x-protobuf":
        return bytes(request.SerializeToString())
    return json.dumps(_hex_ids(MessageToDict(request))).encode()


def spans_body(spans: list[ReadableSpan], encoding: str) -> bytes:
    if encoding == "application/x-protobuf":
        return bytes(encode_spans(spans).SerializeToString())
    return json.dumps(otlp_json(spans)).encode()


@pytest.mark.parametrize("encoding", ["application/json", "application/x-protobuf"])
@pytest.mark.parametrize("logs_first", [True, False], ids=["logs-first", "spans-first"])
def test_log_records_are_joined_to_their_spans(
    judge: OpenAITestServer, encoding: str, logs_first: bool
) -> None:
    spans, records = run_with_content_in_events()
    scored = Scored(judge)
    try:
        logs_url = scored.receiver.url + "/v1/logs"
        requests = [
            (logs_url, logs_body(records, encoding)),
            (scored.endpoint, spans_body(spans, encoding)),
        ]
        for url, body in requests if logs_first else reversed(requests):
            status, answer, headers = post(
                url, gzip.compress(body), encoding, **{"Content-Encoding": "gzip"}
            )
            assert (status, headers["Content-Type"]) == (200, encoding)
            assert answer in (b"", b"{}")
            scored.pipeline.flush(5)
        scored.settle()
        scored_logs = scored.receiver.stats()
        assembly = scored.pipeline.stats().assembly
    finally:
        scored.close()
    assert (scored_logs.log_records_accepted, scored_logs.log_records_dropped) == (2, 0)
    assert (assembly.events_received, assembly.events_joined, assembly.events_held) == (2, 2, 0)
    assert assembly.runs_assembled == 1
    assert judge_saw(judge, "sunny, 24 °C")  # the tool result, from a log record, is context
    [score] = eval_spans(list(scored.scores.get_finished_spans()))
    root = next(s for s in spans if s.parent is None)
    assert score.parent is not None
    assert score.parent.span_id == root.context.span_id
    assert score.attributes is not None
    assert score.attributes["gen_ai.evaluation.score.value"] == 1.0


def test_log_records_of_no_span_are_counted_and_dropped(judge: OpenAITestServer) -> None:
    plain = {
        "resourceLogs": [
            {
                "scopeLogs": [
                    {
                        "logRecords": [
                            {"body": {"stringValue": "GET /health 200"}},  # no trace
                            {  # a span's plain log line: no event name
                                "traceId": "4bf92f3577b34da6a3ce929d0e0e4736",
                                "spanId": "00f067aa0ba902b7",
                                "body": {"stringValue": "retrying"},
                            },
                        ]
                    }
                ]
            }
        ]
    }
    scored = Scored(judge)
    try:
        status, body, _ = post(
            scored.receiver.url + "/v1/logs", json.dumps(plain).encode(), "application/json"
        )
        assert (status, body) == (200, b"{}")
        stats = scored.receiver.stats()
        assert (stats.log_records_accepted, stats.log_records_dropped) == (0, 2)
        assert scored.pipeline.stats().assembly.traces_open == 0  # nothing held for them
    finally:
        scored.close()


def test_v1_logs_answers_as_v1_traces_does(judge: OpenAITestServer) -> None:
    scored = Scored(judge, token="s3cret", max_body_bytes=10_000)
    url = scored.receiver.url + "/v1/logs"
    auth = {"Authorization": "Bearer s3cret"}
    try:
        status, _, headers = post(url, b"{}", "application/json")
        assert (status, headers["WWW-Authenticate"]) == (401, "Bearer")
        assert post(url, b"x", "text/plain", **auth)[0] == 415
        assert post(url, b"{not json", "application/json", **auth)[0] == 400
        assert post(url, b"\xff\xfe garbage", "application/x-protobuf", **auth)[0] == 400
        bomb = gzip.compress(b"{" + b" " * 1_000_000 + b"}")
        big = post(url, bomb, "application/json", **auth, **{"Content-Encoding": "gzip"})
        assert big[0] == 413
        assert post(url, b"", "application/x-protobuf", **auth)[:2] == (200, b"")
        request = urllib.request.Request(url, method="GET", headers=auth)
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10).close()
        refused.value.close()
        assert refused.value.code == 405
    finally:
        scored.close()
