"""A Strands agent scored by LiveScoringSpanProcessor, in a process of its own.

Run by test_span_processor_strands.py: Strands traces through the global tracer provider
and instruments Python's threading on first use, which must not leak into other tests.
Prints one JSON object: the agent span's ids, the score spans' parents and values, what
the judge was sent, and the processor's counts; writes the agent's spans to the file named
by its argument, as OTLP JSON (the Collector's file exporter form), for the test to assemble.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _collect_support import (
    CLAIM,
    eval_spans,
    faithfulness,
    faithfulness_replies,
    judge_saw,
)

from livescore.collect import LiveScoringSpanProcessor
from livescore.testing import OpenAITestServer, Reply


def otlp_json(spans: Any) -> dict[str, Any]:
    """The spans as one OTLP JSON request (ids in hex; the protobuf mapping writes base64)."""
    request = MessageToDict(encode_spans(spans))
    for resource in request.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if span.get(key):
                        span[key] = base64.b64decode(span[key]).hex()
    return request


def main(spans_file: str) -> None:
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    from strands import Agent, tool
    from strands.models.openai import OpenAIModel

    @tool
    def get_weather(city: str) -> str:
        """Get the weather of a city."""
        return f"sunny in {city}, 24 °C"

    script = [Reply.tool_calls(("get_weather", {"city": "Lyon"}), ids=["c1"]), Reply.text(CLAIM)]
    with OpenAITestServer(script) as llm, OpenAITestServer(faithfulness_replies()) as judge:
        processor = LiveScoringSpanProcessor(
            scorers=[faithfulness(judge)], tracer_provider=provider
        )
        provider.add_span_processor(processor)
        model = OpenAIModel(
            client_args={"api_key": "test", "base_url": llm.base_url}, model_id="test-model"
        )
        agent = Agent(model=model, tools=[get_weather], name="weather", callback_handler=None)
        answer = str(agent("What is the weather in Lyon?")).strip()
        flushed = processor.flush(30)
        processor.shutdown()
        saw_tool_result = judge_saw(judge, "sunny in Lyon, 24 °C")
    spans = list(exporter.get_finished_spans())
    root = next(s for s in spans if s.name == "invoke_agent weather")
    scores = eval_spans(spans)
    agent_spans = [s for s in spans if s not in scores]
    Path(spans_file).write_text(json.dumps(otlp_json(agent_spans)) + "\n", encoding="utf-8")
    print(
        json.dumps(
            {
                "answer": answer,
                "flushed": flushed,
                "agent_span": format(root.context.span_id, "016x"),
                "score_parents": [format(s.parent.span_id, "016x") for s in scores if s.parent],
                "score_values": [s.attributes.get("gen_ai.evaluation.score.value") for s in scores],
                "judge_saw_tool_result": saw_tool_result,
                "scored": processor.stats().scored,
            }
        )
    )
    provider.shutdown()


if __name__ == "__main__":
    main(sys.argv[1])
