"""Shared pieces of the livescore-openai-agents tests: agents on a scripted model server,
tools, a recording scorer, a Dispatcher spy and span helpers."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio.to_thread
from agents import (
    Agent,
    Model,
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    Runner,
    function_tool,
)
from openai import AsyncOpenAI
from opentelemetry.sdk.trace import ReadableSpan

from livescore import Run, Scorer, StepContext, create_scorer, get_run_context
from livescore.testing import OpenAITestServer, Reply

ModelApi = Literal["chat_completions", "responses"]
Entry = Literal["run", "run_sync", "run_streamed"]

WEATHER = {"city": "Paris", "temp_c": 21, "sky": "sunny"}
QUESTION = "What is the weather in Paris?"
ANSWER = "It is 21°C and sunny in Paris."


@function_tool
def get_weather(city: str) -> dict[str, Any]:
    """Current weather for a city."""
    return {**WEATHER, "city": city}


@function_tool
def flaky_forecast(city: str) -> str:
    """A forecast tool whose failure the SDK reports to the model (the run goes on)."""
    raise ValueError(f"no forecast for {city}")


@function_tool(failure_error_function=None)
def broken_forecast(city: str) -> str:
    """A forecast tool whose failure ends the run."""
    raise ValueError(f"forecast service down for {city}")


class ScriptedModels:
    """The SDK's real OpenAI model classes, talking to the test server; closes its clients.

    Each client is closed on the event loop that used it (an unclosed one warns when it is
    collected, after its loop is gone).
    """

    def __init__(self, server: OpenAITestServer) -> None:
        self.server = server
        self._clients: list[AsyncOpenAI] = []

    def __call__(self, api: ModelApi = "chat_completions") -> Model:
        client = AsyncOpenAI(base_url=self.server.base_url, api_key="test-key", max_retries=0)
        self._clients.append(client)
        if api == "responses":
            return OpenAIResponsesModel("scripted-model", client)
        return OpenAIChatCompletionsModel("scripted-model", client)

    async def aclose(self) -> None:
        clients, self._clients = self._clients, []
        for client in clients:
            await client.close()


def weather_agent(
    models: ScriptedModels, api: ModelApi = "chat_completions", **kwargs: Any
) -> Agent[Any]:
    """An agent with the weather tools on the test server's scripted model."""
    kwargs.setdefault("tools", [get_weather, flaky_forecast, broken_forecast])
    kwargs.setdefault("instructions", "Answer weather questions with the tools.")
    return Agent(name=kwargs.pop("name", "weather-agent"), model=models(api), **kwargs)


def weather_turns(call_id: str = "call_w1") -> list[Reply]:
    """The model's script for one weather run: a tool call, then the answer."""
    return [Reply.tool_calls(("get_weather", {"city": "Paris"}), ids=[call_id]), Reply.text(ANSWER)]


async def run_agent(
    agent: Agent[Any], question: str, entry: Entry, models: ScriptedModels, **kwargs: Any
) -> Any:
    """Run ``agent`` through one of the Runner's entry points; returns the final output."""
    if entry == "run":
        return (await Runner.run(agent, question, **kwargs)).final_output
    if entry == "run_streamed":
        streamed = Runner.run_streamed(agent, question, **kwargs)
        async for _ in streamed.stream_events():
            pass
        return streamed.final_output

    def in_a_thread() -> Any:
        # run_sync drives the thread's default loop and leaves it open: close the clients
        # there, on the loop their connections belong to, then the loop itself.
        output = Runner.run_sync(agent, question, **kwargs).final_output
        policy = asyncio.get_event_loop_policy()
        loop = policy.get_event_loop()
        loop.run_until_complete(models.aclose())
        loop.close()
        policy.set_event_loop(None)
        return output

    return await anyio.to_thread.run_sync(in_a_thread)


@dataclass
class Recorded:
    """What a recording scorer saw: one StepContext per score, in arrival order."""

    contexts: list[StepContext] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def runs(self) -> list[Run]:
        with self.lock:
            return [ctx.run for ctx in self.contexts]


def recording_scorer(recorded: Recorded, scorer_id: str = "recorder") -> Scorer:
    """A code scorer that keeps every StepContext it scores (context: the run's own)."""

    def generate_score(ctx: StepContext) -> float:
        with recorded.lock:
            recorded.contexts.append(ctx)
        return 1.0

    return create_scorer(
        id=scorer_id,
        description="Records what it scores",
        get_context=get_run_context,
        generate_score=generate_score,
    )


@dataclass(frozen=True)
class SpyDecision:
    key: str | None
    sampled: bool


@dataclass
class SpySink:
    """A Dispatcher test double: records what the processor asks and hands over."""

    sampled: bool = True
    fail_sample: bool = False
    keys: list[str | None] = field(default_factory=list)
    submitted: list[tuple[Run, Any]] = field(default_factory=list)
    dropped: list[tuple[Any, str]] = field(default_factory=list)
    flushes: int = 0
    shutdowns: int = 0

    def sample(self, key: str | None) -> SpyDecision:
        if self.fail_sample:
            raise RuntimeError("sampling exploded")
        self.keys.append(key)
        return SpyDecision(key, self.sampled)

    def submit(self, run: Run, decision: Any = None) -> bool:
        self.submitted.append((run, decision))
        return True

    def drop(self, decision: Any, reason: str) -> None:
        self.dropped.append((decision, reason))

    def flush(self, timeout: float | None = None) -> bool:
        self.flushes += 1
        return True

    def shutdown(self, timeout: float | None = None) -> None:
        self.shutdowns += 1

    def stats(self) -> dict[str, int]:
        return {"submitted": len(self.submitted), "dropped": len(self.dropped)}

    @property
    def runs(self) -> list[Run]:
        return [run for run, _ in self.submitted]

    @property
    def reasons(self) -> list[str]:
        return [reason for _, reason in self.dropped]


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
