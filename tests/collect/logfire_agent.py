"""An OpenAI Agents SDK run traced by ``logfire.instrument_openai_agents()``, in a process
of its own: scored there by ``LiveScoringSpanProcessor`` and exported over OTLP/HTTP to
``livescore collect``.

Run by test_instrumentation_logfire.py: importing Logfire patches ``os._exit`` and
configuring it wraps the global propagator and instruments the executors, which must not
leak into other tests. Arguments: the model API (``chat_completions`` or ``responses``),
the judge's base URL, the collector's ``/v1/traces`` URL. Prints one JSON object: the
answer, the agent's spans (as ``SpanRecord`` fields) and the in-process score spans.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import logfire
from agents import (
    Agent,
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    RunConfig,
    Runner,
    function_tool,
    set_trace_processors,
)
from openai import AsyncOpenAI
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _instrumentation_support import ANSWER, QUESTION, weather

from livescore.collect import LiveScoringSpanProcessor
from livescore.judges import OpenAIJudge
from livescore.scorers import create_hallucination_scorer, create_keyword_coverage_scorer
from livescore.testing import OpenAITestServer, Reply
from livescore.traces import from_readable_span

CONVERSATION = "thread-logfire-1"


@function_tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return weather(city)


async def run_agent(llm: OpenAITestServer, api: str) -> Any:
    client = AsyncOpenAI(base_url=llm.base_url, api_key="test-key", max_retries=0)
    model_class = OpenAIResponsesModel if api == "responses" else OpenAIChatCompletionsModel
    try:
        agent = Agent(
            name="weather-agent",
            instructions="Answer weather questions with the tool.",
            model=model_class("scripted-model", client),
            tools=[get_weather],
        )
        config = RunConfig(group_id=CONVERSATION)  # the conversation: the SDK's group id
        return (await Runner.run(agent, QUESTION, run_config=config)).final_output
    finally:
        await client.close()


def main(api: str, judge_url: str, collect_url: str) -> None:
    set_trace_processors([])  # the SDK's own exporter to OpenAI: nothing leaves the machine
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
    exporter = OTLPSpanExporter(endpoint=collect_url, timeout=30)
    logfire.configure(
        send_to_logfire=False,
        console=False,
        additional_span_processors=[
            SimpleSpanProcessor(spans),
            SimpleSpanProcessor(exporter),
            processor,
        ],
    )
    logfire.instrument_openai_agents()
    call = Reply.tool_calls(("get_weather", {"city": "Lyon"}), ids=["call_1"])
    script = [call, Reply.text(ANSWER)]
    with OpenAITestServer(script) as llm:
        answer = asyncio.run(run_agent(llm, api))
    flushed = processor.flush(60)
    processor.shutdown()
    logfire.force_flush()
    score_spans = [
        {
            "name": s.name,
            "parent": format(s.parent.span_id, "016x") if s.parent else None,
            "value": (s.attributes or {}).get("gen_ai.evaluation.score.value"),
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
    logfire.shutdown()
    score_provider.shutdown()


if __name__ == "__main__":
    main(*sys.argv[1:4])
