"""Shared fixtures: async tests run on asyncio through the anyio plugin; a real Phoenix."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def phoenix_url() -> Iterator[str]:
    """A real Arize Phoenix for the whole session (started on first use, ~8 s).

    ``PHOENIX_URL`` points at one already running; otherwise ``.phoenix-venv`` (``make
    phoenix``), ``PHOENIX_BIN`` or a ``phoenix`` on PATH is started in a network namespace
    of its own (see ``tests/phoenix_server.py``). Skipped, with the reason, only where
    Phoenix is not installed or cannot be isolated.
    """
    from phoenix_server import PhoenixUnavailable, running_phoenix

    try:
        context = running_phoenix()
        url = context.__enter__()
    except PhoenixUnavailable as exc:
        pytest.skip(str(exc))
    try:
        yield url
    finally:
        context.__exit__(None, None, None)
