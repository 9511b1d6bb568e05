"""The OTLP logs path end to end: a live score's gen_ai.evaluation.result event leaves
through the SDK's OTLP/HTTP log exporter and arrives at an OTLP receiver on 127.0.0.1,
beside the trace it belongs to."""

from __future__ import annotations

from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from otlp_receiver import OTLPTestReceiver

from livescore import Run, create_scorer
from livescore.live import LiveDispatcher
from livescore.otel import OTelEmitter


def test_live_scores_arrive_as_events_over_otlp_parented_to_the_run_span() -> None:
    def boom(ctx: object) -> float:
        raise RuntimeError("the scorer broke")

    good = create_scorer(
        id="short", description="1 when short", generate_score=lambda ctx: 1.0, version="2"
    )
    bad = create_scorer(id="broken", description="always fails", generate_score=boom)
    resource = Resource.create({"service.name": "agent-under-test"})
    with OTLPTestReceiver() as backend:
        tracer_provider = TracerProvider(resource=resource)
        tracer_provider.add_span_processor(
            BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{backend.url}/v1/traces"))
        )
        logger_provider = LoggerProvider(resource=resource)
        logger_provider.add_log_record_processor(
            BatchLogRecordProcessor(OTLPLogExporter(endpoint=f"{backend.url}/v1/logs"))
        )
        dispatcher = LiveDispatcher(
            [good, bad],
            emitter=OTelEmitter(tracer_provider=tracer_provider, logger_provider=logger_provider),
            register_atexit=False,
        )
        with tracer_provider.get_tracer("agent").start_as_current_span("invoke_agent bot") as s:
            ctx = s.get_span_context()
            run = Run(
                input="hi",
                output="hello",
                run_id="run-7",
                trace_id=format(ctx.trace_id, "032x"),
                span_id=format(ctx.span_id, "016x"),
                response_id="chatcmpl-7",
            )
        assert dispatcher.submit(run)
        assert dispatcher.flush(timeout=20)
        dispatcher.shutdown(timeout=5)
        tracer_provider.shutdown()
        logger_provider.shutdown()  # exports what is batched

    events = {e.attributes["gen_ai.evaluation.name"]: e for e in backend.events()}
    for event in events.values():
        print(event.line())  # what a backend reading the events gets
    assert set(events) == {"short", "broken"}
    run_span = next(sp for sp in backend.spans if sp.name == "invoke_agent bot")
    evaluation_ids = {sp.span_id for sp in backend.spans if sp.name.startswith("evaluation ")}
    for event in events.values():
        assert event.trace_id == run_span.trace_id
        assert event.span_id == run_span.span_id
        assert event.span_id not in evaluation_ids
        assert event.scope == "livescore"
        assert event.service_name == "agent-under-test"
        assert event.attributes["gen_ai.response.id"] == "chatcmpl-7"
    short = events["short"]
    assert short.attributes["gen_ai.evaluation.score.value"] == 1.0
    assert isinstance(short.attributes["gen_ai.evaluation.score.value"], float)  # a double
    assert short.attributes["livescore.scorer.version"] == "2"
    assert short.attributes["livescore.status"] == "scored"
    assert short.severity_number == 9  # INFO
    broken = events["broken"]
    assert broken.attributes["error.type"] == "RuntimeError"
    assert broken.attributes["livescore.failed_step"] == "generate_score"
    assert "gen_ai.evaluation.score.value" not in broken.attributes
    assert broken.severity_number == 13  # WARN
    assert broken.body == "evaluation broken failed: RuntimeError"
