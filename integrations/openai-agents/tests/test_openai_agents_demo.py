"""The demo agent on the Agents SDK: the scenario's questions, tools and answers, scored live,
with each run's spans as the demo's trace view reads them."""

from __future__ import annotations

import json
import re
from typing import Any

from _sdk_support import hex_span_id, parent_span_id, spans_named
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from livescore import get_run_context
from livescore.demo import scenario
from livescore.demo._docs import split_sentences
from livescore.live import ScorerConfig
from livescore.scorers import create_hallucination_scorer, create_keyword_coverage_scorer
from livescore.testing import OpenAITestServer
from livescore_openai_agents._demo_agent import build_demo_agent, scripted_model_turn


def judge_double(body: dict[str, Any]) -> Any:
    """Claims are the answer's sentences; a claim is unsupported unless the context has it."""
    prompt = str(body["messages"][-1]["content"])
    if "<claims>" in prompt:
        claims = re.findall(r'<claim index="\d+">(.*?)</claim>', prompt, re.S)
        return {
            "verdicts": [
                {
                    "statement": c,
                    "verdict": "yes" if c == scenario.UNSUPPORTED_CLAIM else "no",
                    "reason": "r",
                }
                for c in claims
            ]
        }
    if "List the factual claims" in prompt:
        text = re.search(r"<output>\n(.*?)\n</output>", prompt, re.S)
        return {"claims": split_sentences(text.group(1) if text else "")}
    return "The score follows from the verdicts."


def test_the_scripted_model_asks_for_a_tool_then_answers_from_its_result() -> None:
    question = scenario.QUESTIONS[0].text
    first = scripted_model_turn({"messages": [{"role": "user", "content": question}]})
    ((_, name, args),) = first.calls
    assert (name, json.loads(args)) == ("search_docs", {"query": "holding period hours Plus plan"})
    result = scenario.search_docs("holding period hours Plus plan")
    second = scripted_model_turn(
        {
            "messages": [
                {"role": "system", "content": scenario.SYSTEM_PROMPT},
                {"role": "user", "content": question},
                {"role": "tool", "tool_call_id": "c", "content": result},
            ]
        }
    )
    assert second.content == scenario.scripted_answer(question, [result])
    assert "72 hours" in second.content


def test_every_question_is_answered_and_scored_under_its_run(
    tracer_provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    with OpenAITestServer(responder=judge_double) as judge_server:
        scorers = [
            ScorerConfig(
                create_hallucination_scorer(model=judge_server.judge(), get_context=get_run_context)
            ),
            ScorerConfig(create_keyword_coverage_scorer()),
        ]
        with build_demo_agent(scorers, tracer_provider=tracer_provider) as demo:
            turns = [demo.ask(q.text) for q in scenario.QUESTIONS]
            assert demo.flush(timeout=30)
            stats = demo.stats()

    assert (stats.sampled, stats.scored, stats.failed) == (10, 10, 0)
    flagged = next(i for i, q in enumerate(scenario.QUESTIONS) if q.adds_unsupported_claim)
    assert turns[flagged].answer.endswith(scenario.UNSUPPORTED_CLAIM)
    order = turns[1]
    ((call_id, (args, result)),) = order.tool_calls.items()
    assert args == {"order_id": "PX-1042"}
    assert json.loads(result)["locker"].startswith("Berlin")
    assert "Friday 18:00" in order.answer

    spans = exporter.get_finished_spans()
    runs = spans_named(spans, "invoke_agent parcelly-support")
    assert len(runs) == 5
    run_ids = {hex_span_id(s) for s in runs}
    tools = spans_named(spans, "execute_tool")
    assert len(tools) == 5
    assert all(parent_span_id(t) in run_ids for t in tools)
    assert call_id in {(t.attributes or {}).get("gen_ai.tool.call.id") for t in tools}
    evaluations = spans_named(spans, "evaluation hallucination")
    assert all(parent_span_id(e) in run_ids for e in evaluations)
    scores = sorted(
        float((e.attributes or {})["gen_ai.evaluation.score.value"]) for e in evaluations
    )  # type: ignore[arg-type]
    assert scores[:-1] == [0.0] * 4
    assert 0 < scores[-1] < 1  # only the answer with the drone claim hallucinates


def test_the_answers_match_the_langchain_demo() -> None:
    from livescore.demo._agent import build_agent

    langchain_agent = build_agent()
    with build_demo_agent([create_keyword_coverage_scorer()]) as demo:
        for question in scenario.QUESTIONS:
            expected = langchain_agent.invoke(
                {"messages": [{"role": "user", "content": question.text}]}
            )["messages"][-1].content
            assert demo.ask(question.text).answer == expected
