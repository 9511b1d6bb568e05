"""A LlamaIndex ``FunctionAgent`` traced by OpenInference's LlamaIndex instrumentor, scored
in process by ``LiveScoringSpanProcessor`` and over OTLP/HTTP by ``livescore collect``.

What the spans hold (openinference-instrumentation-llama-index 4.6.1, llama-index-core
0.14.25): the root ``FunctionAgent.run`` CHAIN's ``input.value`` is the workflow's initial
state and its ``output.value`` a Python repr cut at 200 characters
(``StopEvent(result=AgentOutput(response=ChatMessage(…...``); the question and the whole
answer are in the LLM spans' ``llm.input_messages`` / ``llm.output_messages``; the tool
span's ``output.value`` is the serialised ``ToolOutput`` (``raw_output`` is the result).
The model is LlamaIndex's own ``MockFunctionCallingLLM`` with a scripted reply function.
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
    weather,
)
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from otlp_receiver import OTLPTestReceiver

from livescore.collect import LiveScoringSpanProcessor
from livescore.testing import OpenAITestServer
from livescore.traces import assemble_runs, from_readable_span
from livescore.traces._readers import read_span

pytest.importorskip("llama_index.core")
instrumentation = pytest.importorskip("openinference.instrumentation.llama_index")
from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.core.base.llms.types import ToolCallBlock  # noqa: E402
from llama_index.core.llms import ChatMessage, MessageRole  # noqa: E402
from llama_index.core.llms.mock import MockFunctionCallingLLM  # noqa: E402
from openinference.instrumentation import using_session  # noqa: E402

# The versions this test was written against (the dev extra pins them): a release that
# changes what the spans carry fails here first.
PINNED = {"openinference-instrumentation-llama-index": "4.6.1", "llama-index-core": "0.14.25"}
SESSION = "session-llama-index-1"


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return weather(city)


def scripted_model(messages: Any, **kwargs: Any) -> ChatMessage:
    """The model: asks for the weather tool, then answers from its result."""
    if any(m.role == MessageRole.TOOL for m in messages):
        return ChatMessage(role="assistant", content=ANSWER)
    call = ToolCallBlock(
        tool_call_id="call_1", tool_name="get_weather", tool_kwargs={"city": "Lyon"}
    )
    return ChatMessage(role="assistant", blocks=[call])


async def run_agent() -> Any:
    agent = FunctionAgent(
        tools=[get_weather],
        llm=MockFunctionCallingLLM(response_generator=scripted_model),
        system_prompt="Answer with the weather tool.",
    )
    with using_session(SESSION):  # OpenInference's conversation: session.id on every span
        return await agent.run(QUESTION)


@pytest.mark.timeout(180)
# llama-index's workflows read pydantic's deprecated __fields__ while they collect steps.
@pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecatedSince20")
@pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecatedSince211")
def test_a_function_agent_run_traced_by_openinference_is_scored_in_process_and_by_collect(
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
    instrumentor = instrumentation.LlamaIndexInstrumentor()
    with (
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
                answer = asyncio.run(run_agent())
            finally:
                instrumentor.uninstrument()
            assert str(answer) == ANSWER
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
    [root] = [s for s in finished if s.parent is None]
    assert root.name == "FunctionAgent.run"
    assert str((root.attributes or {})["output.value"]).startswith("StopEvent(result=")
    root_output = read_span(from_readable_span(root)).output  # type: ignore[arg-type]
    assert root_output is not None
    assert root_output.quality == "truncated"  # a repr, cut short
    assert run.span_id == format(root.context.span_id, "016x")
    assert run.input == QUESTION
    assert run.output == ANSWER  # the last model answer, not the root's cut repr
    assert assembled.sources["output"].attribute == "llm.output_messages.N.message.content"
    assert "output_truncated" not in run.metadata
    assert run.conversation_id == SESSION
    tools = [(s.name, s.input, s.output) for s in run.steps if s.kind == "tool"]
    assert tools == [("get_weather", {"city": "Lyon"}, weather("Lyon"))]  # ToolOutput's raw_output

    in_process = {s.name: s for s in scores.get_finished_spans()}
    for where in (in_process, collected):
        hallucination = where["evaluation hallucination"]
        coverage = where["evaluation keyword-coverage"]
        for score in (hallucination, coverage):
            parent = getattr(score, "parent_span_id", None) or format(score.parent.span_id, "016x")
            assert parent == run.span_id  # the run's span: FunctionAgent.run
        assert hallucination.attributes["gen_ai.evaluation.score.value"] == 0.5
        assert coverage.attributes["gen_ai.evaluation.score.value"] == 1.0
    record_compat(
        "openinference-instrumentation-llama-index: FunctionAgent",
        f"{PINNED['openinference-instrumentation-llama-index']} "
        f"(llama-index-core {PINNED['llama-index-core']})",
        assembled,
    )
