"""A Google ADK agent, traced by ADK's own telemetry, in a process of its own (``.adk-venv``).

Run by test_instrumentation_google_adk.py: google-adk pins the OpenTelemetry packages below
the dev extra's, and ADK traces through the global tracer and logger providers. Arguments:
the judge's base URL (in-process scoring, or ``-`` for none), ``livescore collect``'s base URL
(or ``-``), and a file for the spans and log records (OTLP JSON lines, as the Collector's
file exporter writes them). The content settings come from the environment the test gives.
Prints one JSON object: the answer, the run's span, the in-process score spans, the
session id.
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry import _logs, trace
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _instrumentation_support import ANSWER, QUESTION, weather

from livescore.collect import LiveScoringSpanProcessor
from livescore.judges import OpenAIJudge
from livescore.scorers import (
    create_hallucination_scorer,
    create_keyword_coverage_scorer,
)


def hex_ids(request: dict[str, Any]) -> dict[str, Any]:
    """OTLP JSON writes ids in hex, the protobuf JSON mapping in base64."""
    for resource in request.get("resourceSpans", []) + request.get("resourceLogs", []):
        for scope in resource.get("scopeSpans", []) + resource.get("scopeLogs", []):
            for item in scope.get("spans", []) + scope.get("logRecords", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if item.get(key):
                        item[key] = base64.b64decode(item[key]).hex()
    return request


async def run_agent() -> tuple[str, str]:
    from google.adk.agents import LlmAgent
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_request import LlmRequest
    from google.adk.models.llm_response import LlmResponse
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    class ScriptedLlm(BaseLlm):
        """A test double of the model: asks for the weather tool, then answers."""

        async def generate_content_async(
            self, llm_request: LlmRequest, stream: bool = False
        ) -> AsyncGenerator[LlmResponse, None]:
            answered = any(
                part.function_response is not None
                for content in llm_request.contents
                for part in content.parts or ()
            )
            if answered:
                part = types.Part(text=ANSWER)
            else:
                part = types.Part(
                    function_call=types.FunctionCall(
                        id="call_1", name="get_weather", args={"city": "Lyon"}
                    )
                )
            yield LlmResponse(
                content=types.Content(role="model", parts=[part]),
                usage_metadata=types.GenerateContentResponseUsageMetadata(
                    prompt_token_count=40, candidates_token_count=10, total_token_count=50
                ),
            )

    def get_weather(city: str) -> str:
        """Current weather for a city."""
        return weather(city)

    agent = LlmAgent(
        name="weather_agent",
        model=ScriptedLlm(model="scripted-model"),
        instruction="Answer weather questions with the tool.",
        tools=[get_weather],
    )
    runner = InMemoryRunner(agent=agent, app_name="weather-app")
    session = await runner.session_service.create_session(app_name="weather-app", user_id="u1")
    answer = ""
    message = types.Content(role="user", parts=[types.Part(text=QUESTION)])
    async for event in runner.run_async(user_id="u1", session_id=session.id, new_message=message):
        for part in (event.content.parts if event.content else None) or ():
            if part.text and event.is_final_response():
                answer += part.text
    await runner.close()
    return answer, session.id


def main(judge_url: str, collect_url: str, out_file: str) -> None:
    provider = TracerProvider()
    spans = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    logger_provider = LoggerProvider()
    logs = InMemoryLogRecordExporter()
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    if collect_url != "-":
        provider.add_span_processor(
            SimpleSpanProcessor(OTLPSpanExporter(endpoint=collect_url + "/v1/traces"))
        )
        logger_provider.add_log_record_processor(
            SimpleLogRecordProcessor(OTLPLogExporter(endpoint=collect_url + "/v1/logs"))
        )
    # In-process scores go to a provider of their own: livescore collect receives only ADK's.
    score_provider = TracerProvider()
    scores = InMemorySpanExporter()
    score_provider.add_span_processor(SimpleSpanProcessor(scores))
    processor = None
    if judge_url != "-":
        judge = OpenAIJudge(
            "test-model",
            base_url=judge_url,
            api_key="test-key",
            timeout=5.0,
            backoff_base=0.01,
            circuit_failures=None,
        )
        processor = LiveScoringSpanProcessor(
            [create_hallucination_scorer(model=judge), create_keyword_coverage_scorer()],
            tracer_provider=score_provider,
        )
        provider.add_span_processor(processor)
        # ADK's content in log records (=true) joins its spans in process too.
        logger_provider.add_log_record_processor(processor.log_record_processor)
    trace.set_tracer_provider(provider)
    _logs.set_logger_provider(logger_provider)

    answer, session_id = asyncio.run(run_agent())

    stats: dict[str, Any] = {}
    if processor is not None:
        assert processor.flush(60)
        processor.shutdown()
        found = processor.stats()
        stats = {"scored": found.scored, "skipped": found.skipped, "sampled": found.sampled}
    provider.force_flush()
    logger_provider.force_flush()
    finished = spans.get_finished_spans()
    lines = [hex_ids(MessageToDict(encode_spans(finished)))]
    records = logs.get_finished_logs()
    if records:
        lines.append(hex_ids(MessageToDict(encode_logs(records))))
    Path(out_file).write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    print(
        json.dumps(
            {
                "answer": answer,
                "session_id": session_id,
                "log_records": [r.log_record.event_name for r in records],
                "scores": [
                    {
                        "name": s.name,
                        "parent": format(s.parent.span_id, "016x") if s.parent else None,
                        "attributes": dict(s.attributes or {}),
                    }
                    for s in scores.get_finished_spans()
                ],
                "stats": stats,
            },
            default=str,
        )
    )
    provider.shutdown()
    logger_provider.shutdown()
    score_provider.shutdown()


if __name__ == "__main__":
    main(*sys.argv[1:4])
