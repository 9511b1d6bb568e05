"""The OpenAI Agents SDK traced by OpenInference's instrumentor, scored in process by
``LiveScoringSpanProcessor`` and over OTLP/HTTP by ``livescore collect``.

livescore's own Agents SDK integration (integrations/openai-agents) is not involved: these
are the instrumentor's spans only. The model is the SDK's real Chat Completions model
talking to the OpenAI-compatible test server.
"""

from __future__ import annotations

import asyncio
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from _collect_process import stop
from _compat import record_compat
from _instrumentation_support import (
    ANSWER,
    QUESTION,
    assert_judged,
    hallucination_replies,
    scorers,
    start_judged_collect,
    tool_results,
    weather,
)
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from otlp_receiver import OTLPTestReceiver

from livescore.collect import LiveScoringSpanProcessor
from livescore.testing import OpenAITestServer, Reply
from livescore.traces import assemble_runs, from_readable_span

agents = pytest.importorskip("agents")
instrumentation = pytest.importorskip("openinference.instrumentation.openai_agents")
from openai import AsyncOpenAI  # noqa: E402

# The versions this test was written against (the dev extra pins them): a release that
# changes what the spans carry fails here first.
PINNED = {"openai-agents": "0.24.0", "openinference-instrumentation-openai-agents": "2.6.0"}


@agents.function_tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return weather(city)


async def run_agent(llm: OpenAITestServer) -> Any:
    client = AsyncOpenAI(base_url=llm.base_url, api_key="test-key", max_retries=0)
    try:
        agent = agents.Agent(
            name="weather-agent",
            instructions="Answer weather questions with the tool.",
            model=agents.OpenAIChatCompletionsModel("scripted-model", client),
            tools=[get_weather],
        )
        return (await agents.Runner.run(agent, QUESTION)).final_output
    finally:
        await client.close()


@pytest.mark.timeout(180)
def test_an_agents_sdk_run_traced_by_openinference_is_scored_in_process_and_by_collect(
    tmp_path: Path,
) -> None:
    for package, pinned in PINNED.items():
        assert version(package) == pinned, f"{package} {version(package)} is not the one tested"
    provider = TracerProvider()
    spans = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    # The in-process scores go to a provider of their own, so that livescore collect only
    # receives the agent's spans.
    score_provider = TracerProvider()
    scores = InMemorySpanExporter()
    score_provider.add_span_processor(SimpleSpanProcessor(scores))
    instrumentor = instrumentation.OpenAIAgentsInstrumentor()
    script = [
        Reply.tool_calls(("get_weather", {"city": "Lyon"}), ids=["call_1"]),
        Reply.text(ANSWER),
    ]
    with (
        OpenAITestServer(script) as llm,
        OpenAITestServer(hallucination_replies()) as judge,
        OpenAITestServer(hallucination_replies()) as collect_judge,
        OTLPTestReceiver() as backend,
    ):
        collect, url = start_judged_collect(tmp_path, collect_judge, backend.url)
        try:
            provider.add_span_processor(
                SimpleSpanProcessor(OTLPSpanExporter(endpoint=url + "/v1/traces", timeout=30))
            )
            processor = LiveScoringSpanProcessor(scorers(judge), tracer_provider=score_provider)
            provider.add_span_processor(processor)
            # Exclusive (the default): the SDK's own exporter to OpenAI is replaced.
            instrumentor.instrument(tracer_provider=provider)
            try:
                assert asyncio.run(run_agent(llm)) == ANSWER
            finally:
                instrumentor.uninstrument()
                agents.set_trace_processors([])
            assert processor.flush(60)
            processor.shutdown()
        finally:
            code, err = stop(collect)
        assert code == 0, err
        assert "runs 1: submitted 1" in err, err
        assert_judged(judge)
        assert_judged(collect_judge)
        collected = {s.name: s for s in backend.spans}
    provider.shutdown()
    score_provider.shutdown()

    finished = list(spans.get_finished_spans())
    [assembled] = assemble_runs(from_readable_span(s) for s in finished)
    run = assembled.run
    assert run.input == QUESTION
    assert run.output == ANSWER
    assert tool_results(run) == [("get_weather", weather("Lyon"))]

    in_process = {s.name: s for s in scores.get_finished_spans()}
    for where in (in_process, collected):
        hallucination = where["evaluation hallucination"]
        coverage = where["evaluation keyword-coverage"]
        for score in (hallucination, coverage):
            parent = getattr(score, "parent_span_id", None) or format(score.parent.span_id, "016x")
            assert parent == run.span_id  # the run's span: OpenInference's AGENT span
        assert hallucination.attributes["gen_ai.evaluation.score.value"] == 0.5
        assert coverage.attributes["gen_ai.evaluation.score.value"] == 1.0
    record_compat(
        "openinference-instrumentation-openai-agents",
        f"{PINNED['openinference-instrumentation-openai-agents']} "
        f"(openai-agents {PINNED['openai-agents']})",
        assembled,
    )
