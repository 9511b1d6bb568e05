"""Fixtures for the OpenTelemetry tests: the real SDK with in-memory exporters."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from _otel_support import InMemoryOTel


@pytest.fixture
def otel() -> Iterator[InMemoryOTel]:
    sdk = InMemoryOTel.create()
    yield sdk
    sdk.shutdown()
