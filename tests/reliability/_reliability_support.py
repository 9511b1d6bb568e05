"""Shared pieces of the reliability suite: a real agent, a scripted judge, span readers."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import ToolException, tool
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan

from livescore import Run, extract_tool_results
from livescore.otel import attributes as A
from livescore.testing import Reply, ReplyLike
from livescore_langchain import LiveScoringHandler
from livescore_langchain.testing import ScriptedChatModel

MakeHandler = Callable[..., LiveScoringHandler]
"""The ``make_handler`` fixture: handlers on the test's providers."""

QUESTION = "What is the weather in Paris?"
ANSWER = "It is 21°C and sunny in Paris."
WEATHER = {"city": "Paris", "temp_c": 21, "sky": "sunny"}

# Judge options that keep retries and timeouts short: the faults are real, the waits small.
FAST_JUDGE: dict[str, Any] = {
    "timeout": 0.5,
    "max_retries": 2,
    "backoff_base": 0.01,
    "backoff_max": 0.02,
    "retry_after_max": 0.2,
}


@tool
def get_weather(city: str) -> dict[str, Any]:
    """Current weather for a city."""
    return {**WEATHER, "city": city}


@tool
def broken_forecast(city: str) -> str:
    """A forecast tool that always fails (the agent raises)."""
    raise ValueError(f"forecast service down for {city}")


@tool
def flaky_forecast(city: str) -> str:
    """A forecast tool that reports its failure to the model instead of raising."""
    raise ToolException(f"no forecast for {city}")


flaky_forecast.handle_tool_error = True


def tool_call(name: str = "get_weather", call_id: str = "call_1", **args: Any) -> AIMessage:
    """A model turn that calls one tool."""
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


def weather_agent(
    answer: str = ANSWER, *, turns: Sequence[Any] | None = None, tools: Sequence[Any] = ()
) -> Any:
    """A real ``create_agent`` agent: one weather tool call, then ``answer``."""
    script = list(turns) if turns is not None else [tool_call(city="Paris"), answer]
    model = ScriptedChatModel(responses=script)
    return create_agent(model, tools=[get_weather, broken_forecast, flaky_forecast, *tools])


def question(text: str = QUESTION) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


def tool_contexts(run: Run, step: Any) -> list[str]:
    """``get_context``: the run's tool results, as the judge's ground truth."""
    return [result.to_context() for result in extract_tool_results(run)]


def transcript(result: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    """What the agent returned, without the ids LangChain makes up per run."""
    out: list[tuple[Any, ...]] = []
    for message in result["messages"]:
        assert isinstance(message, BaseMessage)
        calls = [(c["name"], c["args"], c["id"]) for c in getattr(message, "tool_calls", [])]
        out.append((message.type, message.content, calls, getattr(message, "tool_call_id", None)))
    return out


# -- a judge that answers the hallucination scorer's three requests -------------------------


def schema_name(body: Mapping[str, Any]) -> str | None:
    """The structured-output schema a judge request asks for (``None`` for free text)."""
    response_format = body.get("response_format") or {}
    if response_format.get("type") == "json_schema":
        return str(response_format["json_schema"]["name"])
    return None


def user_prompt(body: Mapping[str, Any]) -> str:
    return str(body["messages"][1]["content"])


def system_prompt(body: Mapping[str, Any]) -> str:
    return str(body["messages"][0]["content"])


def claims_in(prompt: str) -> list[str]:
    return re.findall(r'<claim index="\d+">(.*?)</claim>', prompt, re.DOTALL)


def grounded_reply(
    body: Mapping[str, Any], claims: Sequence[str] = ("It is 21°C in Paris.",)
) -> ReplyLike:
    """A well-formed answer to any of the hallucination scorer's requests: all grounded."""
    name = schema_name(body)
    if name == "ExtractedClaims":
        return {"claims": list(claims)}
    if name == "ClaimVerdicts":
        return {
            "verdicts": [
                {"statement": c, "verdict": "no", "reason": "The weather tool says so."}
                for c in claims_in(user_prompt(body))
            ]
        }
    if name == "OneCallAnswer":
        return {
            "claims": list(claims),
            "verdicts": [
                {"statement": c, "verdict": "no", "reason": "The weather tool says so."}
                for c in claims
            ],
            "reason": "Every claim comes from the weather tool.",
        }
    return Reply.text("The score is 0 because every claim is backed by the weather tool.")


# -- reading what was exported ------------------------------------------------------------------


def evaluation_spans(
    spans: Iterable[ReadableSpan], scorer_id: str | None = None
) -> list[ReadableSpan]:
    found: list[ReadableSpan] = []
    for span in spans:
        attrs = span.attributes or {}
        if attrs.get(A.GEN_AI_OPERATION_NAME) != A.OPERATION_EVALUATION:
            continue
        if scorer_id is None or attrs.get(A.LIVESCORE_SCORER_ID) == scorer_id:
            found.append(span)
    return found


def only_evaluation(spans: Iterable[ReadableSpan], scorer_id: str) -> ReadableSpan:
    (span,) = evaluation_spans(spans, scorer_id)
    return span


def attributes(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def exported_text(span: ReadableSpan) -> str:
    """Everything an exporter would send of ``span``, as one searchable string."""
    parts: list[Any] = [span.name, dict(span.attributes or {}), span.status.description]
    for event in span.events:
        parts += [event.name, dict(event.attributes or {})]
    for link in span.links:
        parts.append(dict(link.attributes or {}))
    parts.append(dict(span.resource.attributes))
    return json.dumps(parts, default=str, ensure_ascii=False)


def metric_points(reader: InMemoryMetricReader, name: str) -> list[tuple[dict[str, Any], float]]:
    """``(attributes, value)`` of every data point of the metric ``name``."""
    data = reader.get_metrics_data()
    points: list[tuple[dict[str, Any], float]] = []
    if data is None:
        return points
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == name:
                    for point in metric.data.data_points:
                        points.append((dict(point.attributes or {}), float(point.value)))  # type: ignore[union-attr]
    return points
