"""An agent traced by the Langfuse SDK (``@observe``, ``langfuse.openai``), in a process of
its own: scored there by ``LiveScoringSpanProcessor`` and exported over OTLP/HTTP to
``livescore collect``, while Langfuse's own exporter still gets every span.

Run by test_instrumentation_langfuse.py: ``Langfuse()`` installs the global tracer provider,
keeps one client per public key for the life of the process, starts background threads and
registers an exit handler, which must not leak into other tests. No Langfuse server is
involved: the SDK's exporter is an in-memory one (``span_exporter=``) standing in for it, and
its host is a loopback address.

The agent is plain code: an ``@observe(as_type="agent")`` function running the OpenAI
client's tool loop through ``langfuse.openai`` (a generation per call) with an
``@observe(as_type="tool")`` function, in a session set by ``propagate_attributes``.
Arguments: the model's and the judge's base URLs, the collector's ``/v1/traces`` URL (or
``-`` for none).
Prints one JSON object: the answer, the spans (as ``SpanRecord`` fields), the in-process
score spans and how many spans Langfuse's own exporter got.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from langfuse import Langfuse, observe, propagate_attributes
from langfuse.openai import OpenAI
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _instrumentation_support import QUESTION, weather

from livescore.collect import LiveScoringSpanProcessor
from livescore.judges import OpenAIJudge
from livescore.scorers import create_hallucination_scorer, create_keyword_coverage_scorer
from livescore.traces import from_readable_span

SESSION = "weather-session-1"
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


@observe(as_type="tool", name="get_weather")
def get_weather(city: str) -> str:
    return weather(city)


def make_agent(client: Any) -> Any:
    @observe(as_type="agent", name="weather-agent")
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
                return str(message.content or "")
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
    to_langfuse = InMemorySpanExporter()  # stands in for the Langfuse server
    langfuse = Langfuse(
        public_key="pk-lf-test",
        secret_key="sk-lf-test",
        base_url="http://127.0.0.1:9",
        span_exporter=to_langfuse,
    )
    # Langfuse() installed its tracer provider as the global one (there was none): what a
    # user adds livescore's span processor, or an exporter to livescore collect, to.
    provider = trace.get_tracer_provider()
    spans = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(spans))  # type: ignore[attr-defined]
    if collect_url != "-":
        otlp = OTLPSpanExporter(endpoint=collect_url, timeout=30)
        provider.add_span_processor(SimpleSpanProcessor(otlp))  # type: ignore[attr-defined]
    provider.add_span_processor(processor)  # type: ignore[attr-defined]
    client = OpenAI(base_url=llm_url, api_key="test-key", max_retries=0)
    with propagate_attributes(session_id=SESSION):
        answer = make_agent(client)(QUESTION)
    client.close()
    flushed = processor.flush(60)
    processor.shutdown()
    langfuse.flush()
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
                "sent_to_langfuse": len(to_langfuse.get_finished_spans()),
            },
            default=list,
        )
    )
    langfuse.shutdown()
    score_provider.shutdown()


if __name__ == "__main__":
    main(*sys.argv[1:4])
