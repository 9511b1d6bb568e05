"""End to end over HTTP: a create_agent agent, the hallucination scorer, the test judge server."""

from __future__ import annotations

from collections.abc import Callable

from _lc_support import (
    ANSWER,
    QUESTION,
    hex_span_id,
    parent_span_id,
    spans_named,
    tool_contexts,
    weather_agent,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from livescore.otel import attributes as attrs
from livescore.scorers import create_hallucination_scorer
from livescore.testing import OpenAITestServer, Reply
from livescore_langchain import LiveScoringHandler

MakeHandler = Callable[..., LiveScoringHandler]

CLAIMS = ["It is 21°C in Paris.", "It is sunny in Paris."]
GROUNDED = {
    "claims": CLAIMS,
    "verdicts": [
        {"statement": CLAIMS[0], "verdict": "no", "reason": "The weather tool says 21."},
        {"statement": CLAIMS[1], "verdict": "no", "reason": "The weather tool says sunny."},
    ],
    "reason": "Both claims come from the weather tool.",
}


def test_the_judge_sees_the_tool_result_and_the_score_lands_under_the_run(
    make_handler: MakeHandler, exporter: InMemorySpanExporter
) -> None:
    with OpenAITestServer([GROUNDED]) as server:
        scorer = create_hallucination_scorer(
            model=server.judge(), get_context=tool_contexts, judge_mode="one_call"
        )
        handler = make_handler([scorer], name="weather-agent")

        result = weather_agent().invoke(QUESTION, config={"callbacks": [handler]})

        assert handler.flush(timeout=30)
        (request,) = server.requests
    prompt = str(request["messages"][-1]["content"])
    assert '"tool": "get_weather"' in prompt
    assert "sunny" in prompt
    assert ANSWER in prompt
    assert result["messages"][-1].content == ANSWER
    spans = exporter.get_finished_spans()
    (agent,) = spans_named(spans, "invoke_agent")
    (evaluation,) = spans_named(spans, "evaluation")
    assert parent_span_id(evaluation) == hex_span_id(agent)
    assert evaluation.attributes is not None
    assert evaluation.attributes[attrs.GEN_AI_EVALUATION_NAME] == "hallucination"
    assert evaluation.attributes[attrs.GEN_AI_EVALUATION_SCORE_VALUE] == 0.0
    assert "weather tool" in str(evaluation.attributes[attrs.GEN_AI_EVALUATION_EXPLANATION])
    assert handler.stats().scored == 1


def test_a_judge_fault_is_a_failed_score_and_the_agent_is_untouched(
    make_handler: MakeHandler, exporter: InMemorySpanExporter
) -> None:
    with OpenAITestServer(responder=lambda body: Reply.server_error(500)) as server:
        scorer = create_hallucination_scorer(
            model=server.judge(max_retries=0), get_context=tool_contexts, judge_mode="one_call"
        )
        handler = make_handler([scorer])

        result = weather_agent().invoke(QUESTION, config={"callbacks": [handler]})

        assert handler.flush(timeout=30)
    assert result["messages"][-1].content == ANSWER
    stats = handler.stats()
    assert (stats.sampled, stats.failed) == (1, 1)
    (evaluation,) = spans_named(exporter.get_finished_spans(), "evaluation")
    assert evaluation.attributes is not None
    assert attrs.ERROR_TYPE in evaluation.attributes
    assert attrs.GEN_AI_EVALUATION_SCORE_VALUE not in evaluation.attributes
