"""Spans in the OTLP JSON form the Collector's file exporter writes, from real SDK spans.

The Python SDK ships no JSON exporter, so the SDK's own protobuf encoder makes the request
and the protobuf JSON mapping writes it, with the ids turned to hex as the OTLP
specification (and the Collector) writes them.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

GENAI_INPUT = "gen_ai.input.messages"
GENAI_OUTPUT = "gen_ai.output.messages"


def otlp_json(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    """One ``ExportTraceServiceRequest`` in OTLP JSON (hex ids, camelCase, int64 strings)."""
    request = MessageToDict(encode_spans(spans))
    for resource_spans in request.get("resourceSpans", []):
        for scope_spans in resource_spans.get("scopeSpans", []):
            for span in scope_spans.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64decode(span[key]).hex()
    return request


def otlp_json_line(spans: Sequence[ReadableSpan]) -> str:
    return json.dumps(otlp_json(spans))


def memory_provider() -> tuple[TracerProvider, InMemorySpanExporter]:
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def user(text: str) -> str:
    return json.dumps([{"role": "user", "parts": [{"type": "text", "content": text}]}])


def assistant(text: str) -> str:
    return json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": text}]}])


def genai_tool_run(provider: TracerProvider, *, question: str, answer: str) -> None:
    """A tool-using agent run in the GenAI conventions, as a hand-instrumented agent writes
    it: invoke_agent > chat (asks for the tool) > execute_tool > chat (answers)."""
    tracer = provider.get_tracer("hand-instrumented-agent")
    with tracer.start_as_current_span(
        "invoke_agent weather",
        attributes={
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "weather",
            "gen_ai.conversation.id": "conv-1",
            GENAI_INPUT: user(question),
            GENAI_OUTPUT: assistant(answer),
        },
    ):
        call = [
            {"type": "tool_call", "id": "c1", "name": "get_weather", "arguments": {"city": "Lyon"}}
        ]
        with tracer.start_as_current_span(
            "chat gpt-test",
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "gpt-test",
                "gen_ai.response.id": "chatcmpl-asks-for-the-tool",
                GENAI_INPUT: user(question),
                GENAI_OUTPUT: json.dumps([{"role": "assistant", "parts": call}]),
            },
        ):
            pass
        with tracer.start_as_current_span(
            "execute_tool get_weather",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.call.id": "c1",
                "gen_ai.tool.call.arguments": '{"city": "Lyon"}',
                "gen_ai.tool.call.result": "sunny, 24 °C",
            },
        ):
            pass
        with tracer.start_as_current_span(
            "chat gpt-test",
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "gpt-test",
                "gen_ai.response.id": "chatcmpl-answers",
                GENAI_OUTPUT: assistant(answer),
            },
        ):
            pass
