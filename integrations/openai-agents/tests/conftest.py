"""Fixtures for the livescore-openai-agents tests: the real OTel SDK with in-memory
exporters, the SDK's tracing with no processor but the test's (nothing leaves the machine),
and a real OpenAI-compatible server on 127.0.0.1 playing the agent's model."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
from _sdk_support import ScriptedModels
from agents import set_trace_processors
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from livescore.testing import OpenAITestServer
from livescore_openai_agents import LiveScoringProcessor


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _sdk_tracing_isolated() -> Iterator[None]:
    # Replaces the SDK's default processor (OpenAI's exporter): no network, and no
    # processor of an earlier test sees this test's runs.
    set_trace_processors([])
    yield
    set_trace_processors([])


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def tracer_provider(exporter: InMemorySpanExporter) -> Iterator[TracerProvider]:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider
    provider.shutdown()


@pytest.fixture
def meter_provider() -> Iterator[MeterProvider]:
    provider = MeterProvider(metric_readers=[InMemoryMetricReader()])
    yield provider
    provider.shutdown()


@pytest.fixture
def model_server() -> Iterator[OpenAITestServer]:
    with OpenAITestServer() as server:
        yield server


@pytest.fixture
async def models(model_server: OpenAITestServer) -> AsyncIterator[ScriptedModels]:
    scripted = ScriptedModels(model_server)
    yield scripted
    await scripted.aclose()


@pytest.fixture
def make_processor(
    tracer_provider: TracerProvider, meter_provider: MeterProvider
) -> Iterator[Callable[..., LiveScoringProcessor]]:
    """Build processors on the test's providers and register them with the SDK."""
    created: list[LiveScoringProcessor] = []

    def make(scorers: Any = None, *, register: bool = True, **kwargs: Any) -> LiveScoringProcessor:
        if "dispatcher" not in kwargs:
            kwargs.setdefault("meter_provider", meter_provider)
        kwargs.setdefault("tracer_provider", tracer_provider)
        processor = LiveScoringProcessor(scorers, **kwargs)
        created.append(processor)
        if register:
            set_trace_processors([processor])
        return processor

    yield make
    set_trace_processors([])
    for processor in created:
        processor.shutdown(timeout=5)
