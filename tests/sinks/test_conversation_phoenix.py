"""A conversation's score into a real Arize Phoenix (the pinned 20.26.1): its evaluation span
files the last turn's trace under the conversation's session, and the sink's session
annotation lands on that session."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from phoenix_server import get_json

from livescore import Run, create_scorer
from livescore.live import LiveDispatcher
from livescore.otel import OTelEmitter
from livescore.sinks import PhoenixSink

pytestmark = pytest.mark.phoenix


def _hex(value: int, digits: int) -> str:
    return format(value, f"0{digits}x")


def test_a_conversation_score_is_a_session_annotation_in_phoenix(phoenix_url: str) -> None:
    conversation_id = f"chat-{uuid.uuid4().hex[:12]}"
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(f"{phoenix_url}/v1/traces")))
    tracer = provider.get_tracer("agent")
    turns = create_scorer(
        id="turns",
        description="turns",
        level="conversation",
        generate_score=lambda ctx: float(len(ctx.conversation.runs)),
    )
    sink = PhoenixSink(phoenix_url, initial_backoff=0.2, retry_deadline=120)
    dispatcher = LiveDispatcher(
        [turns],
        emitter=OTelEmitter(tracer_provider=provider),
        sinks=[sink],
        register_atexit=False,
        conversation_idle_timeout=None,
    )
    for i in range(2):
        with tracer.start_as_current_span(f"invoke_agent support {i}") as span:
            ctx = span.get_span_context()
            dispatcher.submit(
                Run(
                    input=f"question {i}",
                    output=f"answer {i}",
                    trace_id=_hex(ctx.trace_id, 32),
                    span_id=_hex(ctx.span_id, 16),
                    conversation_id=conversation_id,
                )
            )
    assert dispatcher.end_conversation(conversation_id)
    assert dispatcher.flush(timeout=60)
    dispatcher.shutdown(timeout=30)  # flushes the emitter, then the sink
    assert sink.flush(120)
    stats = sink.stats()
    assert stats.sent == 1, stats
    found: list[dict[str, Any]] = []
    deadline = time.monotonic() + 60
    while not found and time.monotonic() < deadline:
        found = get_json(
            f"{phoenix_url}/v1/projects/default/session_annotations"
            f"?session_ids={conversation_id}&limit=10"
        )["data"]
        if not found:
            time.sleep(0.25)
    (annotation,) = found
    assert annotation["name"] == "turns"
    assert annotation["result"]["score"] == 2.0
    assert annotation["identifier"] == f"livescore:{conversation_id}:1-2"
    sink.shutdown(5)
    provider.shutdown()
