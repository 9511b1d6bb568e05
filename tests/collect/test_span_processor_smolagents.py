"""smolagents through its OpenInference instrumentor, scored by the span processor.

The agent's model is smolagents' own OpenAI client talking to the OpenAI-compatible test
server, so the LLM spans are the instrumentor's real output.
"""

from __future__ import annotations

import pytest
from _collect_support import CLAIM, eval_spans, faithfulness, faithfulness_replies, judge_saw
from _compat import record_compat
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from livescore.collect import LiveScoringSpanProcessor
from livescore.testing import OpenAITestServer, Reply
from livescore.traces import assemble_runs, from_readable_span

smolagents = pytest.importorskip("smolagents")
instrumentation = pytest.importorskip("openinference.instrumentation.smolagents")
from importlib.metadata import version  # noqa: E402

from smolagents import tool  # noqa: E402

# The versions the dev extra pins: a release that changes the spans fails here first.
PINNED = {"smolagents": "1.26.0", "openinference-instrumentation-smolagents": "0.1.43"}


def test_the_pinned_versions_are_installed() -> None:
    assert {name: version(name) for name in PINNED} == PINNED


@tool
def get_weather(city: str) -> str:
    """Get the weather of a city.

    Args:
        city: The city.
    """
    return f"sunny in {city}, 24 °C"


def test_a_smolagents_tool_run_is_scored_under_its_agent_span() -> None:
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = instrumentation.SmolagentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        script = [
            Reply.tool_calls(("get_weather", {"city": "Lyon"}), ids=["c1"]),
            Reply.tool_calls(("final_answer", {"answer": CLAIM}), ids=["c2"]),
        ]
        with OpenAITestServer(script) as llm, OpenAITestServer(faithfulness_replies()) as judge:
            processor = LiveScoringSpanProcessor(
                scorers=[faithfulness(judge)], tracer_provider=provider
            )
            provider.add_span_processor(processor)
            model = smolagents.OpenAIServerModel(
                model_id="test-model", api_base=llm.base_url, api_key="test"
            )
            agent = smolagents.ToolCallingAgent(
                tools=[get_weather], model=model, max_steps=4, verbosity_level=0
            )
            assert agent.run("What is the weather in Lyon?") == CLAIM
            assert processor.flush(30)
            processor.shutdown()
            assert judge_saw(judge, "sunny in Lyon, 24 °C")
            assert not judge_saw(judge, '"tool": "final_answer"')  # the answer is not evidence
    finally:
        instrumentor.uninstrument()
        provider.shutdown()
    spans = list(exporter.get_finished_spans())
    agent_span = next(
        s for s in spans if (s.attributes or {}).get("openinference.span.kind") == "AGENT"
    )
    [score] = eval_spans(spans)
    assert score.parent is not None
    assert score.parent.span_id == agent_span.context.span_id
    assert score.attributes["gen_ai.evaluation.score.value"] == 1.0
    [assembled] = assemble_runs(from_readable_span(s) for s in spans if s is not score)
    assert assembled.run.input == "What is the weather in Lyon?"
    assert assembled.run.output == CLAIM
    record_compat(
        "openinference-instrumentation-smolagents",
        f"{PINNED['openinference-instrumentation-smolagents']} (smolagents {PINNED['smolagents']})",
        assembled,
    )
