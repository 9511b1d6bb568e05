"""A LangChain v1 ``create_agent`` (a LangGraph graph) traced by OpenInference's LangChain
instrumentor, scored in process by ``LiveScoringSpanProcessor`` and over OTLP/HTTP by
``livescore collect``.

What the spans hold (openinference-instrumentation-langchain 0.1.80): the root ``LangGraph``
CHAIN's ``input.value`` is the graph's input (``{"messages": [{"role": "user", …}]}``) beside
a content-less ``llm.input_messages.0.message.role = user``; the tool span's
``input.value`` is the tool's one argument, bare (``Lyon``), and its ``output.value`` the
serialised ``ToolMessage``. The model is ``ChatOpenAI`` talking to the OpenAI-compatible
test server.
"""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

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

pytest.importorskip("langchain.agents")
pytest.importorskip("langchain_openai")
instrumentation = pytest.importorskip("openinference.instrumentation.langchain")
from langchain.agents import create_agent  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402

# The version this test was written against (the dev extra pins it): a release that changes
# what the spans carry fails here first.
PINNED = "0.1.80"
THREAD = "thread-langgraph-1"


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return weather(city)


@pytest.mark.timeout(180)
def test_a_create_agent_run_traced_by_openinference_is_scored_in_process_and_by_collect(
    tmp_path: Path,
) -> None:
    assert version("openinference-instrumentation-langchain") == PINNED
    provider = TracerProvider()
    spans = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    # The in-process scores go to a provider of their own, so that livescore collect only
    # receives the agent's spans.
    score_provider = TracerProvider()
    scores = InMemorySpanExporter()
    score_provider.add_span_processor(SimpleSpanProcessor(scores))
    instrumentor = instrumentation.LangChainInstrumentor()
    call = Reply.tool_calls(("get_weather", {"city": "Lyon"}), ids=["call_1"])
    with (
        OpenAITestServer([call, Reply.text(ANSWER)]) as llm,
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
            instrumentor.instrument(tracer_provider=provider)
            try:
                model = ChatOpenAI(
                    model="scripted-model", base_url=llm.base_url, api_key="test", max_retries=0
                )
                agent = create_agent(
                    model, tools=[get_weather], system_prompt="Answer with the weather tool."
                )
                state = agent.invoke(
                    {"messages": [{"role": "user", "content": QUESTION}]},
                    # LangGraph's conversation: the thread, which OpenInference calls session.id
                    config={"configurable": {"thread_id": THREAD}},
                )
            finally:
                instrumentor.uninstrument()
            assert state["messages"][-1].content == ANSWER
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
    assert run.input == QUESTION  # the graph's input, not the content-less message list
    assert run.output == ANSWER
    assert run.conversation_id == THREAD
    tools = [(s.name, s.input, s.output) for s in run.steps if s.kind == "tool"]
    # The result is the ToolMessage's content; the arguments the model's call (the span has
    # the bare "Lyon").
    assert tools == [("get_weather", {"city": "Lyon"}, weather("Lyon"))]
    [root] = [s for s in finished if s.parent is None]
    assert root.name == "LangGraph"
    assert run.span_id == format(root.context.span_id, "016x")

    in_process = {s.name: s for s in scores.get_finished_spans()}
    for where in (in_process, collected):
        hallucination = where["evaluation hallucination"]
        coverage = where["evaluation keyword-coverage"]
        for score in (hallucination, coverage):
            parent = getattr(score, "parent_span_id", None) or format(score.parent.span_id, "016x")
            assert parent == run.span_id  # the run's span: the LangGraph root
        assert hallucination.attributes["gen_ai.evaluation.score.value"] == 0.5
        assert coverage.attributes["gen_ai.evaluation.score.value"] == 1.0
    record_compat(
        "openinference-instrumentation-langchain: LangChain create_agent",
        f"{PINNED} (langchain 1.x create_agent, a LangGraph graph)",
        assembled,
    )
