"""Fixtures for the livescore-langchain tests: the real OTel SDK with in-memory exporters."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from livescore_langchain import LiveScoringHandler, uninstrument


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


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
def make_handler(
    tracer_provider: TracerProvider, meter_provider: MeterProvider
) -> Iterator[Callable[..., LiveScoringHandler]]:
    """Build handlers on the test's providers (no globals); shut down after the test."""
    created: list[LiveScoringHandler] = []

    def make(scorers: Any = None, **kwargs: Any) -> LiveScoringHandler:
        if "dispatcher" not in kwargs:
            kwargs.setdefault("tracer_provider", tracer_provider)
            kwargs.setdefault("meter_provider", meter_provider)
        elif "tracer_provider" not in kwargs:
            kwargs["tracer_provider"] = tracer_provider
        handler = LiveScoringHandler(scorers, **kwargs)
        created.append(handler)
        return handler

    yield make
    uninstrument()
    for handler in created:
        handler.shutdown(timeout=5)
