"""The span processor reads a run's conversation from its spans (``gen_ai.conversation.id``,
OpenInference's ``session.id``) and scores the conversation when it goes quiet."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from livescore import StepContext, create_scorer
from livescore.otel import LiveScoringSpanProcessor
from livescore.runs import Conversation


def _messages(role: str, text: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


@pytest.fixture
def traced() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


def test_turns_sharing_a_conversation_id_are_scored_together_once_quiet(traced) -> None:
    provider, _exporter = traced
    seen: list[Conversation] = []
    lock = threading.Lock()

    def generate_score(ctx: StepContext) -> float:
        assert ctx.conversation is not None
        with lock:
            seen.append(ctx.conversation)
        return float(len(ctx.conversation.runs))

    turns = create_scorer(
        id="turns", description="turns", level="conversation", generate_score=generate_score
    )
    processor = LiveScoringSpanProcessor(
        scorers=[turns], tracer_provider=provider, conversation_idle_timeout=0.3
    )
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("hand-instrumented-agent")
    for i, key in enumerate(["gen_ai.conversation.id", "gen_ai.conversation.id", "session.id"]):
        with tracer.start_as_current_span(
            "invoke_agent support",
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                key: "conv-1",
                "gen_ai.input.messages": _messages("user", f"question {i}"),
                "gen_ai.output.messages": _messages("assistant", f"answer {i}"),
            },
        ):
            pass
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with lock:
            if seen:
                break
        time.sleep(0.02)
    processor.shutdown()
    (conversation,) = seen
    assert conversation.id == "conv-1"
    assert [run.output for run in conversation.runs] == ["answer 0", "answer 1", "answer 2"]
    assert processor.stats().by_scorer["turns"].scored == 1
