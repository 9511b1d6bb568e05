"""A raw ``openai`` tool loop (how many teams build agents) under an app's own span,
instrumented by the OpenTelemetry contrib ``opentelemetry-instrumentation-openai-v2``.

Its spans are ``chat`` spans only: no agent span (the app's root span carries no GenAI
attribute) and no ``execute_tool`` span (the tool's result exists only as a
``tool_call_response`` part of the next ``chat`` call's input). Where the messages are
depends on ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``:

- ``SPAN_ONLY``: ``gen_ai.input.messages`` / ``gen_ai.output.messages`` on the spans;
- ``EVENT_ONLY``: the same keys on ``gen_ai.client.inference.operation.details`` LOG
  RECORDS, which reach ``livescore collect`` on ``/v1/logs`` and are joined to their span;
- unset, or ``true`` (which this version reads as an invalid mode: no content): nothing to
  score, and the skip reason names the setting.

The model is the OpenAI-compatible test server; the app exports with the SDK's own OTLP
exporters to a real ``livescore collect`` process, whose hallucination judge is a second
test server.
"""

from __future__ import annotations

import base64
import json
import os
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from _collect_process import stop
from _compat import record_compat
from _instrumentation_support import (
    ANSWER,
    MARKER,
    QUESTION,
    TOOL_RESULT,
    assert_judged,
    hallucination_replies,
    scorers,
    start_judged_collect,
    weather,
)
from google.protobuf.json_format import MessageToDict
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from otlp_receiver import OTLPTestReceiver

from livescore.collect import LiveScoringSpanProcessor
from livescore.runs import NOT_SCORABLE_METADATA_KEY
from livescore.testing import OpenAITestServer, Reply
from livescore.traces import AssembledRun, assemble_runs, read_spans

instrumentation = pytest.importorskip(
    "opentelemetry.instrumentation.openai_v2",
    reason="opentelemetry-instrumentation-openai-v2 is not installed (pip install -e '.[dev]')",
)
openai = pytest.importorskip("openai")

# The versions these spans were read from: a new one that moves the content fails here.
# util-genai is pinned too: openai-v2 2.4b0 asks for any >=0.4b0, but 1.2b0 and later lack
# the module it imports (opentelemetry.util.genai.instruments).
OPENAI_V2 = "2.4b0"
UTIL_GENAI = "1.1b0"
INSTRUMENTATION = "OpenTelemetry contrib openai-v2 (raw `openai` loop)"
CONTENT = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
ROOT = "weather-agent"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather of a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]


def test_the_pinned_versions_are_the_ones_installed() -> None:
    assert version("opentelemetry-instrumentation-openai-v2") == OPENAI_V2
    assert version("opentelemetry-util-genai") == UTIL_GENAI


@pytest.fixture
def capture(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Sets the content mode (read at each call) and clears what the app would inherit."""
    for name in (CONTENT, "OTEL_INSTRUMENTATION_GENAI_EMIT_EVENT", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")

    def set_mode(mode: str | None) -> None:
        if mode is not None:
            monkeypatch.setenv(CONTENT, mode)

    return set_mode


def run_agent(llm: OpenAITestServer, tracer_provider: Any, logger_provider: Any) -> str:
    """The app: its own root span over a hand-written tool loop; returns the answer."""
    instrumentor = instrumentation.OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=tracer_provider, logger_provider=logger_provider)
    try:
        client = openai.OpenAI(base_url=llm.base_url, api_key="test-key", max_retries=0)
        tracer = tracer_provider.get_tracer("weather-app")
        with client, tracer.start_as_current_span(ROOT):
            messages: list[dict[str, Any]] = [{"role": "user", "content": QUESTION}]
            while True:
                reply = client.chat.completions.create(
                    model="test-model", messages=messages, tools=TOOLS
                )
                message = reply.choices[0].message
                if not message.tool_calls:
                    return str(message.content)
                messages.append(message.model_dump(exclude_none=True))
                for call in message.tool_calls:
                    city = json.loads(call.function.arguments)["city"]
                    messages.append(
                        {"role": "tool", "tool_call_id": call.id, "content": weather(city)}
                    )
    finally:
        instrumentor.uninstrument()


def script() -> list[Any]:
    return [Reply.tool_calls(("get_weather", {"city": "Lyon"}), ids=["call_w1"]), ANSWER]


def memory_providers() -> tuple[TracerProvider, InMemorySpanExporter, LoggerProvider, Any]:
    tracer_provider, spans = TracerProvider(), InMemorySpanExporter()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    logger_provider, logs = LoggerProvider(), InMemoryLogRecordExporter()
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    return tracer_provider, spans, logger_provider, logs


def stored(tmp_path: Path, spans: InMemorySpanExporter, logs: Any) -> AssembledRun:
    """The run, from the spans and log records written as the Collector's file exporter
    writes them (one file, resourceSpans and resourceLogs lines): what ``livescore eval
    --traces`` reads."""
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    lines = [_hex_ids(MessageToDict(encode_spans(spans.get_finished_spans())))]
    records = logs.get_finished_logs()
    if records:
        lines.append(_hex_ids(MessageToDict(encode_logs(records))))
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    found, rejected, problems = read_spans(path)
    assert (rejected, problems) == (0, [])
    [assembled] = assemble_runs(found)
    return assembled


def _hex_ids(request: dict[str, Any]) -> dict[str, Any]:
    """OTLP JSON writes ids in hex, the protobuf JSON mapping in base64."""
    for resource in request.get("resourceSpans", []) + request.get("resourceLogs", []):
        for scope in resource.get("scopeSpans", []) + resource.get("scopeLogs", []):
            for item in scope.get("spans", []) + scope.get("logRecords", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in item:
                        item[key] = base64.b64decode(item[key]).hex()
    return request


def assert_the_run(assembled: AssembledRun) -> None:
    run = assembled.run
    assert run.input == QUESTION  # the user's own question, from the first chat span
    assert run.output == ANSWER  # the whole answer, from the last chat span
    [tool] = [step for step in run.steps if step.kind == "tool"]
    assert (tool.name, tool.output) == ("get_weather", TOOL_RESULT)  # a tool-role message
    assert run.name == ROOT


@pytest.mark.timeout(240)
@pytest.mark.parametrize(
    ("mode", "where"),
    [
        ("SPAN_ONLY", "content on spans"),
        ("EVENT_ONLY", "content in log records"),
    ],
)
def test_livescore_collect_scores_the_loop_under_the_app_span(
    capture: Any, tmp_path: Path, mode: str, where: str
) -> None:
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    capture(mode)
    tracer_provider, spans, logger_provider, logs = memory_providers()
    with (
        OTLPTestReceiver() as backend,
        OpenAITestServer(script()) as llm,
        OpenAITestServer(hallucination_replies()) as judge,
    ):
        process, url = start_judged_collect(tmp_path, judge, backend.url)
        try:
            tracer_provider.add_span_processor(
                SimpleSpanProcessor(OTLPSpanExporter(endpoint=url + "/v1/traces"))
            )
            logger_provider.add_log_record_processor(
                SimpleLogRecordProcessor(OTLPLogExporter(endpoint=url + "/v1/logs"))
            )
            assert run_agent(llm, tracer_provider, logger_provider) == ANSWER
            tracer_provider.shutdown()
            logger_provider.shutdown()
        finally:
            code, err = stop(process)
        assert code == 0, err
        assert "runs 1: submitted 1" in err, err
        if mode == "EVENT_ONLY":
            assert "log records accepted 2" in err, err  # one details event per chat call
        assert_judged(judge)
        [root] = [s for s in spans.get_finished_spans() if s.name == ROOT]
        [score] = [s for s in backend.spans if s.name == "evaluation hallucination"]
    assert score.trace_id == format(root.context.trace_id, "032x")
    assert score.parent_span_id == format(root.context.span_id, "016x")
    assert score.attributes["gen_ai.evaluation.score.value"] == 0.5
    if mode == "SPAN_ONLY":
        assert not logs.get_finished_logs()  # nothing in events: spans only
    else:
        chat = [s for s in spans.get_finished_spans() if s.name != ROOT]
        assert not any("gen_ai.input.messages" in (s.attributes or {}) for s in chat)
        assert {r.log_record.event_name for r in logs.get_finished_logs()} == {
            "gen_ai.client.inference.operation.details"
        }
    assembled = stored(tmp_path, spans, logs)
    assert_the_run(assembled)
    record_compat(
        f"{INSTRUMENTATION}, {where}",
        f"{OPENAI_V2} (util-genai {UTIL_GENAI})",
        assembled,
        f"`{CONTENT}={mode}`"
        + ("; export the log records to `/v1/logs`" if mode == "EVENT_ONLY" else ""),
    )


@pytest.mark.timeout(120)
@pytest.mark.parametrize("mode", ["SPAN_ONLY", "EVENT_ONLY"])
def test_the_span_processor_scores_the_loop(capture: Any, mode: str) -> None:
    """Content on spans, or in log records given to its log record processor."""
    capture(mode)
    tracer_provider, spans, logger_provider, _ = memory_providers()
    with (
        OpenAITestServer(script()) as llm,
        OpenAITestServer(hallucination_replies()) as judge,
    ):
        processor = LiveScoringSpanProcessor(
            scorers=scorers(judge), tracer_provider=tracer_provider
        )
        tracer_provider.add_span_processor(processor)
        logger_provider.add_log_record_processor(processor.log_record_processor)
        try:
            assert run_agent(llm, tracer_provider, logger_provider) == ANSWER
            assert processor.flush(60)
            stats = processor.stats()
        finally:
            processor.shutdown()
            tracer_provider.shutdown()
            logger_provider.shutdown()
        assert_judged(judge)
    assert stats.scored == 2, stats  # hallucination and keyword coverage
    [root] = [s for s in spans.get_finished_spans() if s.name == ROOT]
    [score] = [s for s in spans.get_finished_spans() if s.name == "evaluation hallucination"]
    assert score.parent is not None
    assert score.parent.span_id == root.context.span_id
    assert score.attributes is not None
    assert score.attributes["gen_ai.evaluation.score.value"] == 0.5
    assert MARKER in TOOL_RESULT


@pytest.mark.timeout(120)
@pytest.mark.parametrize("mode", [None, "true"])
def test_without_content_capture_the_run_is_skipped_naming_the_setting(
    capture: Any, tmp_path: Path, mode: str | None
) -> None:
    capture(mode)
    tracer_provider, spans, logger_provider, logs = memory_providers()
    with OpenAITestServer(script()) as llm:
        assert run_agent(llm, tracer_provider, logger_provider) == ANSWER
    tracer_provider.shutdown()
    logger_provider.shutdown()
    assert not logs.get_finished_logs()
    run = stored(tmp_path, spans, logs).run
    assert (run.input, run.output) == (None, None)
    reason = run.metadata[NOT_SCORABLE_METADATA_KEY]
    assert "captured no message content" in reason, reason
    assert f"{CONTENT}=SPAN_ONLY" in reason, reason  # not "=true": this version ignores it
    assert os.environ.get(CONTENT) == mode


@pytest.mark.timeout(120)
def test_livescore_eval_reads_the_log_records_beside_the_traces(
    capture: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    from livescore.cli import main

    capture("EVENT_ONLY")
    tracer_provider, spans, logger_provider, logs = memory_providers()
    with OpenAITestServer(script()) as llm:
        assert run_agent(llm, tracer_provider, logger_provider) == ANSWER
    tracer_provider.shutdown()
    logger_provider.shutdown()
    traces_file, logs_file, out = (tmp_path / n for n in ("t.jsonl", "l.jsonl", "out.jsonl"))
    traces_file.write_text(
        json.dumps(_hex_ids(MessageToDict(encode_spans(spans.get_finished_spans())))) + "\n"
    )
    logs_file.write_text(
        json.dumps(_hex_ids(MessageToDict(encode_logs(logs.get_finished_logs())))) + "\n"
    )
    argv = ["eval", "--traces", str(traces_file), "--scorer", "keyword-coverage", "--quiet"]
    assert main([*argv, "--logs", str(logs_file), "--out", str(out)]) == 0, capsys.readouterr()
    [result] = [json.loads(line) for line in out.read_text().splitlines()]
    assert result["span_id"] == format(
        next(s for s in spans.get_finished_spans() if s.name == ROOT).context.span_id, "016x"
    )
    assert (result["input"], result["output"]) == (QUESTION, ANSWER)
    assert result["scores"]["keyword-coverage"]["status"] == "scored"
    # Without the log records, the same spans hold no content: the run is skipped.
    assert main([*argv, "--out", str(out)]) == 1  # no item could be scored
    [result] = [json.loads(line) for line in out.read_text().splitlines()]
    assert result["output"] is None
    capsys.readouterr()
    assert main(["eval", str(traces_file), "--logs", str(logs_file), "--quiet"]) == 2
    assert "--logs goes with --traces" in capsys.readouterr().err
