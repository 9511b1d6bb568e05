"""An agent traced by OpenLLMetry (``traceloop-sdk``), in a process of its own: scored there
by ``LiveScoringSpanProcessor`` and exported over OTLP/HTTP to ``livescore collect``.

Run by test_instrumentation_traceloop.py with ``.traceloop-venv``'s Python (``make
traceloop``: traceloop-sdk pins the OpenTelemetry packages apart from the dev extra).
``Traceloop.init`` also sets the global tracer provider and instruments threading and every
library it finds, which must not leak into other tests.

The agent is plain code: an ``@agent`` function running a raw ``openai`` client's tool loop
(OpenLLMetry's OpenAI instrumentation traces each call) with a ``@tool`` function, in a
conversation set as an association property. Arguments: the model's and the judge's base
URLs, the collector's ``/v1/traces`` URL (or ``-`` for none). Prints one JSON object: the
answer, the spans (as ``SpanRecord`` fields) and the in-process score spans.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from openai import OpenAI
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from traceloop.sdk import Traceloop
from traceloop.sdk.decorators import agent, tool

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _instrumentation_support import QUESTION, weather

from livescore.collect import LiveScoringSpanProcessor
from livescore.judges import OpenAIJudge
from livescore.scorers import create_hallucination_scorer, create_keyword_coverage_scorer
from livescore.traces import from_readable_span

CONVERSATION = "weather-session-1"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]


@tool(name="get_weather")
def get_weather(city: str) -> str:
    return weather(city)


def make_agent(client: OpenAI) -> Any:
    @agent(name="weather-agent")
    def weather_agent(question: str) -> str:
        messages: list[Any] = [
            {"role": "system", "content": "Answer weather questions with the tool."},
            {"role": "user", "content": question},
        ]
        for _ in range(4):
            reply = client.chat.completions.create(
                model="scripted-model", messages=messages, tools=TOOLS
            )
            message = reply.choices[0].message
            if not message.tool_calls:
                return message.content or ""
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                result = get_weather(**json.loads(call.function.arguments))
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
        raise RuntimeError("the model never answered")

    return weather_agent


def main(llm_url: str, judge_url: str, collect_url: str) -> None:
    judge = OpenAIJudge(
        "test-model",
        base_url=judge_url,
        api_key="test-key",
        timeout=5.0,
        backoff_base=0.01,
        circuit_failures=None,
    )
    # The scores go to a provider of their own, so that livescore collect only receives the
    # agent's spans.
    score_provider = TracerProvider()
    scores = InMemorySpanExporter()
    score_provider.add_span_processor(SimpleSpanProcessor(scores))
    processor = LiveScoringSpanProcessor(
        [create_hallucination_scorer(model=judge), create_keyword_coverage_scorer()],
        tracer_provider=score_provider,
    )
    spans = InMemorySpanExporter()
    exporter: SpanExporter = (
        OTLPSpanExporter(endpoint=collect_url, timeout=30) if collect_url != "-" else spans
    )
    # The exporter replaces Traceloop's cloud (api_endpoint is never called with one; a
    # loopback address all the same); disable_batch: a SimpleSpanProcessor.
    Traceloop.init(
        app_name="weather-app",
        api_endpoint="http://127.0.0.1:9",
        exporter=exporter,
        disable_batch=True,
        telemetry_enabled=False,
    )
    # Traceloop.init installed its tracer provider as the global one: what a user adds the
    # span processor to.
    provider = trace.get_tracer_provider()
    if collect_url != "-":
        provider.add_span_processor(SimpleSpanProcessor(spans))  # type: ignore[attr-defined]
    provider.add_span_processor(processor)  # type: ignore[attr-defined]
    client = OpenAI(base_url=llm_url, api_key="test-key", max_retries=0)
    Traceloop.set_association_properties({"session_id": CONVERSATION})
    answer = make_agent(client)(QUESTION)
    client.close()
    flushed = processor.flush(60)
    processor.shutdown()
    score_spans = [
        {
            "name": s.name,
            "parent": format(s.parent.span_id, "016x") if s.parent else None,
            "value": (s.attributes or {}).get("gen_ai.evaluation.score.value"),
            "skip_reason": (s.attributes or {}).get("livescore.skip_reason"),
        }
        for s in scores.get_finished_spans()
    ]
    records = [from_readable_span(s) for s in spans.get_finished_spans()]
    print(
        json.dumps(
            {
                "answer": answer,
                "flushed": flushed,
                "spans": [dataclasses.asdict(r) for r in records if r is not None],
                "scores": score_spans,
            },
            default=list,
        )
    )
    score_provider.shutdown()


if __name__ == "__main__":
    main(*sys.argv[1:4])
