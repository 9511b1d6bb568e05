"""A one-agent, one-task CrewAI crew, traced by OpenInference's CrewAI and OpenAI
instrumentors and exported over OTLP/HTTP, in a process of its own.

Run by test_instrumentation_crewai.py with ``.crewai-venv``'s Python (``make crewai``):
crewai 1.15 needs ``openai<3`` and livescore ``openai>=3``, so livescore is not installed
beside it; this script imports only CrewAI, the instrumentors and the OpenTelemetry SDK.

Its one argument is a JSON object: ``model_url`` (an OpenAI-compatible test server),
``traces_endpoint`` (``livescore collect``'s ``/v1/traces``), ``spans_file`` (where to
write every span, as the protobuf ``ExportTraceServiceRequest`` the exporter sends, for the
test to assemble), ``task`` (the task's description, with a ``{city}`` placeholder),
``city``, ``tool_result`` (what the tool returns for Lyon), ``session`` and
``instrument_openai`` (whether the model calls are traced too). Prints one JSON
object: the crew's answer, the ids of the crew's and the task's spans, the versions run.
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

from openinference.instrumentation import using_session
from openinference.instrumentation.crewai import CrewAIInstrumentor
from openinference.instrumentation.openai import OpenAIInstrumentor
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

PACKAGES = (
    "crewai",
    "openinference-instrumentation-crewai",
    "openinference-instrumentation-openai",
)


def main(config: dict[str, Any]) -> None:
    provider = TracerProvider()
    caught = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(caught))
    exporter = OTLPSpanExporter(endpoint=config["traces_endpoint"], timeout=30)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    # CrewAI's own spans (kickoff, tasks, tools) and the model calls its native OpenAI
    # provider makes (without the OpenAI instrumentor a run has no model turns).
    CrewAIInstrumentor().instrument(tracer_provider=provider)
    if config["instrument_openai"]:
        OpenAIInstrumentor().instrument(tracer_provider=provider)

    from crewai import LLM, Agent, Crew, Task
    from crewai.tools import tool

    @tool("get_weather")
    def get_weather(city: str) -> str:
        """Get the current weather of a city."""
        return str(config["tool_result"]).replace("Lyon", city)

    llm = LLM(model="openai/test-model", base_url=config["model_url"], api_key="test-key")
    forecaster = Agent(
        role="Forecaster",
        goal="Tell people the weather",
        backstory="You read weather stations.",
        tools=[get_weather],
        llm=llm,
        allow_delegation=False,
        max_iter=3,
    )
    task = Task(description=config["task"], expected_output="One sentence.", agent=forecaster)
    # A name of its own: the kickoff span is "{name}.kickoff" (else "Crew_{uuid}.kickoff").
    crew = Crew(name="weather-crew", agents=[forecaster], tasks=[task], tracing=False)
    with using_session(config["session"]):  # session.id on every span of the run
        answer = str(crew.kickoff(inputs={"city": config["city"]}))
    provider.force_flush()
    spans = list(caught.get_finished_spans())
    Path(config["spans_file"]).write_bytes(encode_spans(spans).SerializeToString())
    crew_span = next(s for s in spans if (s.attributes or {}).get("crew_tasks"))
    task_span = next(
        s for s in spans if (s.attributes or {}).get("openinference.span.kind") == "AGENT"
    )
    print(
        json.dumps(
            {
                "answer": answer,
                "trace_id": format(crew_span.context.trace_id, "032x"),
                "crew_span": format(crew_span.context.span_id, "016x"),
                "task_span": format(task_span.context.span_id, "016x"),
                "span_names": sorted({s.name for s in spans}),
                "versions": {package: version(package) for package in PACKAGES},
            }
        )
    )
    provider.shutdown()


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
