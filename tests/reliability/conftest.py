"""Fixtures for the reliability suite: the real OTel SDK with in-memory exporters."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from _reliability_support import MakeHandler
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from livescore_langchain import LiveScoringHandler


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
def metric_reader() -> InMemoryMetricReader:
    return InMemoryMetricReader()


@pytest.fixture
def meter_provider(metric_reader: InMemoryMetricReader) -> Iterator[MeterProvider]:
    provider = MeterProvider(metric_readers=[metric_reader])
    yield provider
    provider.shutdown()


@pytest.fixture
def make_handler(
    tracer_provider: TracerProvider, meter_provider: MeterProvider
) -> Iterator[MakeHandler]:
    """Handlers on the test's providers (no globals); shut down after the test."""
    created: list[LiveScoringHandler] = []

    def make(scorers: Any = None, **kwargs: Any) -> LiveScoringHandler:
        kwargs.setdefault("tracer_provider", tracer_provider)
        if "dispatcher" not in kwargs:
            kwargs.setdefault("meter_provider", meter_provider)
        handler = LiveScoringHandler(scorers, **kwargs)
        created.append(handler)
        return handler

    yield make
    for handler in created:
        handler.shutdown(timeout=5)
