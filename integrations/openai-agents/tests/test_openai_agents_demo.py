"""``livescore demo --runtime openai-agents``: the scenario on a real Agents SDK agent,
scored live, shown and exported like the LangChain demo."""

from __future__ import annotations

import io
import json
import re
from typing import Any

import pytest
from _sdk_support import hex_span_id, parent_span_id, spans_named
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from rich.console import Console

from livescore.demo import DemoConfigError, DemoOptions, DemoSetup, ToolOutput, run_demo
from livescore.demo._runtime import demo_runtimes, load_demo_agent
from livescore.demo._scenario import QUESTIONS, UNSUPPORTED_CLAIM, scripted_turn, search_docs
from livescore.scorers import create_keyword_coverage_scorer
from livescore.testing import OpenAITestServer
from livescore_openai_agents._demo_agent import scripted_model_reply, start_demo_agent


@pytest.fixture(autouse=True)
def _no_configured_models(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("LIVESCORE_JUDGE_MODEL", "LIVESCORE_AGENT_MODEL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def judge_double(body: dict[str, Any]) -> Any:
    """Claims are the answer's sentences; only the drone claim is unsupported."""
    prompt = str(body["messages"][-1]["content"])
    if "<claims>" in prompt:
        claims = re.findall(r'<claim index="\d+">(.*?)</claim>', prompt, re.S)
        return {
            "verdicts": [
                {"statement": c, "verdict": "yes" if "drone" in c else "no", "reason": "r"}
                for c in claims
            ]
        }
    if "List the factual claims" in prompt:
        found = re.search(r"<output>\n(.*?)\n</output>", prompt, re.S)
        text = found.group(1) if found else ""
        return {"claims": [s for s in re.split(r"(?<=\.)\s+", text) if s.strip()]}
    return "The score is what it is because of the drone claim."


def test_the_runtime_is_registered_for_the_demo() -> None:
    assert "openai-agents" in demo_runtimes()
    assert load_demo_agent("openai-agents") is start_demo_agent


def test_the_scripted_model_plays_the_scenarios_turns() -> None:
    question = QUESTIONS[0].text
    first = scripted_model_reply({"messages": [{"role": "user", "content": question}]})
    ((_, name, args),) = first.calls
    assert (name, json.loads(args)) == ("search_docs", {"query": "holding period hours Plus plan"})
    result = search_docs("holding period hours Plus plan")
    second = scripted_model_reply(
        {
            "messages": [
                {"role": "system", "content": "…"},
                {"role": "user", "content": question},
                {"role": "assistant", "tool_calls": [{"id": "c"}]},
                {"role": "tool", "tool_call_id": "c", "content": result},
            ]
        }
    )
    assert second.content == scripted_turn(question, [ToolOutput(result)])
    assert "72 hours" in second.content


def test_the_demo_runs_the_scenario_on_the_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, width=220, no_color=True, highlight=False)
    exporter = InMemorySpanExporter()
    with OpenAITestServer(responder=judge_double) as judge_server:
        code = run_demo(
            DemoOptions(model=judge_server.judge(), runtime="openai-agents"),
            console=console,
            span_exporters=[exporter],
        )
    out = buffer.getvalue()

    assert code == 0, out
    assert out.count("invoke_agent parcelly-support") == 5
    assert 'execute_tool get_order_status({"order_id": "PX-1042"})' in out
    assert "sampled 10 · scored 10 · failed 0 · skipped 0 · dropped 0" in out
    assert UNSUPPORTED_CLAIM in out
    spans = exporter.get_finished_spans()
    runs = {hex_span_id(s) for s in spans_named(spans, "invoke_agent parcelly-support")}
    assert len(runs) == 5
    tools = spans_named(spans, "execute_tool")
    assert len(tools) == 5
    assert all(parent_span_id(t) in runs for t in tools)
    hallucination = spans_named(spans, "evaluation hallucination")
    assert all(parent_span_id(e) in runs for e in hallucination)
    scores = sorted(float(e.attributes["gen_ai.evaluation.score.value"]) for e in hallucination)  # type: ignore[index, arg-type]
    assert scores[:4] == [0.0] * 4
    assert 0 < scores[4] < 1  # the answer with the drone claim


def test_the_answers_match_the_langchain_demo() -> None:
    langchain = load_demo_agent("langchain")(DemoSetup([create_keyword_coverage_scorer()], None))
    sdk = start_demo_agent(DemoSetup([create_keyword_coverage_scorer()], None))
    try:
        for question in QUESTIONS:
            on_sdk, on_langchain = sdk.ask(question.text), langchain.ask(question.text)
            assert on_sdk.answer == on_langchain.answer
            ((sdk_args, sdk_result),) = on_sdk.tool_calls.values()
            ((lc_args, lc_result),) = on_langchain.tool_calls.values()
            assert sdk_args == lc_args
            assert sdk_result == lc_result  # the same text the model read
    finally:
        sdk.shutdown(10)
        langchain.shutdown(10)


def test_a_bad_agent_model_is_a_clear_error() -> None:
    setup = DemoSetup([create_keyword_coverage_scorer()], None, agent_model="anthropic/x")
    with pytest.raises(DemoConfigError, match="openai/<model>"):
        start_demo_agent(setup)
    with pytest.raises(DemoConfigError, match="OPENAI_API_KEY"):
        start_demo_agent(DemoSetup([create_keyword_coverage_scorer()], None, "openai/gpt-4o"))
