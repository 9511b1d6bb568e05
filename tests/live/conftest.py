"""Fixtures for the live dispatcher tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from _live_support import FakeEmitter, Gate

from livescore.live import LiveDispatcher


@pytest.fixture
def emitter() -> FakeEmitter:
    return FakeEmitter()


@pytest.fixture
def gate() -> Iterator[Gate]:
    g = Gate()
    yield g
    g.opened.set()  # never leave a worker spinning after a test


@pytest.fixture
def dispatchers() -> Iterator[list[LiveDispatcher]]:
    """Dispatchers a test creates; shut down (cancelling leftovers) after it."""
    created: list[LiveDispatcher] = []
    yield created
    for d in created:
        d.shutdown(timeout=0)
