"""A raw OpenAI tool loop traced by OpenLIT, in a process of its own (``.openlit-venv``).

Run by test_instrumentation_openlit.py with: the scripted model's base URL, ``livescore
collect``'s base URL, and a file to write the spans to (an OTLP protobuf
``ExportTraceServiceRequest``, for the test to assemble). OpenLIT exports to ``livescore
collect`` itself (``otlp_endpoint``), with content capture on, no metrics, no GPU stats,
and a local pricing file (by default it fetches one from GitHub). livescore is not
installed here: openlit needs ``openai<3``, livescore ``openai>=3``.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Sequence

QUESTION = "What is the weather in Lyon?"


def main(llm_url: str, collect_url: str, spans_file: str, tool_result: str) -> None:
    import openlit
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.trace.export import (
        SimpleSpanProcessor,
        SpanExporter,
        SpanExportResult,
    )

    caught: list[ReadableSpan] = []

    class Catch(SpanExporter):
        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            caught.extend(spans)
            return SpanExportResult.SUCCESS

    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as pricing:
        json.dump({"chat": {}, "embeddings": {}, "images": {}, "audio": {}}, pricing)
    openlit.init(
        service_name="weather-app",
        otlp_endpoint=collect_url,
        disable_batch=True,
        capture_message_content=True,
        disable_metrics=True,
        collect_gpu_stats=False,
        pricing_json=pricing.name,
    )
    provider = trace.get_tracer_provider()
    provider.add_span_processor(SimpleSpanProcessor(Catch()))  # type: ignore[attr-defined]

    import openai

    def get_weather(city: str) -> str:
        return tool_result.replace("Lyon", city)

    tools = [
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
    client = openai.OpenAI(base_url=llm_url, api_key="test-key", max_retries=0)
    tracer = trace.get_tracer("weather-app")
    with tracer.start_as_current_span("answer weather question") as root:
        messages: list[dict[str, object]] = [{"role": "user", "content": QUESTION}]
        while True:
            reply = client.chat.completions.create(
                model="scripted-model", messages=messages, tools=tools
            )
            message = reply.choices[0].message
            if not message.tool_calls:
                answer = message.content
                break
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                result = get_weather(**json.loads(call.function.arguments))
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    client.close()
    provider.force_flush()  # type: ignore[attr-defined]
    with open(spans_file, "wb") as out:
        out.write(encode_spans(caught).SerializeToString())
    print(json.dumps({"answer": answer, "root": format(root.get_span_context().span_id, "016x")}))
    provider.shutdown()  # type: ignore[attr-defined]


if __name__ == "__main__":
    main(*sys.argv[1:5])
