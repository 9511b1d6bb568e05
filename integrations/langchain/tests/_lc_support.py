"""Shared pieces of the livescore-langchain tests: tools, agents, scorers, a Dispatcher spy."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langchain_core.tools import ToolException, tool
from opentelemetry.sdk.trace import ReadableSpan

from livescore import Run, Scorer, StepContext, create_scorer, extract_tool_results
from livescore.live import DispatchStats, SamplingDecision, ScorerConfig

WEATHER = {"city": "Paris", "temp_c": 21, "sky": "sunny"}
ANSWER = "It is 21°C and sunny in Paris."
QUESTION = {"messages": [{"role": "user", "content": "What is the weather in Paris?"}]}


@tool
def get_weather(city: str) -> dict[str, Any]:
    """Current weather for a city."""
    return {**WEATHER, "city": city}


@tool
def broken_forecast(city: str) -> str:
    """A forecast tool that always fails."""
    raise ValueError(f"forecast service down for {city}")


@tool
def flaky_forecast(city: str) -> str:
    """A forecast tool that reports its failure to the model instead of raising."""
    raise ToolException(f"no forecast for {city}")


flaky_forecast.handle_tool_error = True  # the ToolException becomes an error ToolMessage


def weather_call(call_id: str = "call_1", tool_name: str = "get_weather") -> AIMessage:
    return AIMessage(
        content="", tool_calls=[{"name": tool_name, "args": {"city": "Paris"}, "id": call_id}]
    )


def weather_agent(*extra_turns: Any, delay: float = 0.0, name: str | None = None) -> Any:
    """A real create_agent agent: one weather tool call, then the answer."""
    from livescore_langchain.testing import ScriptedChatModel

    model = ScriptedChatModel(responses=[weather_call(), *extra_turns, ANSWER], delay=delay)
    return create_agent(model, tools=[get_weather, broken_forecast, flaky_forecast], name=name)


def tool_contexts(run: Run, step: Any) -> list[str]:
    return [result.to_context() for result in extract_tool_results(run)]


@dataclass
class Recorded:
    """What a recording scorer saw: one StepContext per score, in arrival order."""

    contexts: list[StepContext] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def runs(self) -> list[Run]:
        return [ctx.run for ctx in self.contexts]


def recording_scorer(recorded: Recorded, scorer_id: str = "recorder", score: float = 1.0) -> Scorer:
    """A code scorer that keeps every StepContext it scores (get_context: tool results)."""

    def generate_score(ctx: StepContext) -> float:
        with recorded.lock:
            recorded.contexts.append(ctx)
        return score

    return create_scorer(
        id=scorer_id,
        description="Records what it scores",
        get_context=tool_contexts,
        generate_score=generate_score,
    )


def _spy_scorers() -> tuple[ScorerConfig, ...]:
    scorer = create_scorer(id="spy", description="Never runs", generate_score=lambda ctx: 1.0)
    return (ScorerConfig(scorer),)


@dataclass
class SpySink:
    """A Dispatcher test double: records what the handler asks and hands over.

    Its decisions are real :class:`~livescore.live.SamplingDecision` objects, sampled (by one
    scorer that never runs) or not.
    """

    sampled: bool = True
    keys: list[str | None] = field(default_factory=list)
    submitted: list[tuple[Run, SamplingDecision | None]] = field(default_factory=list)
    dropped: list[tuple[SamplingDecision, str]] = field(default_factory=list)
    started: threading.Event = field(default_factory=threading.Event)
    scorers: tuple[ScorerConfig, ...] = field(default_factory=_spy_scorers)

    def sample(self, key: str | None) -> SamplingDecision:
        self.keys.append(key)
        self.started.set()
        return SamplingDecision(key, self.scorers if self.sampled else ())

    def submit(self, run: Run, decision: SamplingDecision | None = None) -> bool:
        self.submitted.append((run, decision))
        return True

    def drop(self, decision: SamplingDecision, reason: str) -> None:
        self.dropped.append((decision, reason))

    def flush(self, timeout: float | None = None) -> bool:
        return True

    def shutdown(self, timeout: float | None = None) -> None:
        return None

    def stats(self) -> DispatchStats:
        return DispatchStats()  # it scores nothing

    @property
    def runs(self) -> list[Run]:
        return [run for run, _ in self.submitted]


def spans_named(spans: Sequence[ReadableSpan], prefix: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name.startswith(prefix)]


def hex_span_id(span: ReadableSpan) -> str:
    assert span.context is not None
    return format(span.context.span_id, "016x")


def hex_trace_id(span: ReadableSpan) -> str:
    assert span.context is not None
    return format(span.context.trace_id, "032x")


def parent_span_id(span: ReadableSpan) -> str | None:
    return format(span.parent.span_id, "016x") if span.parent is not None else None
