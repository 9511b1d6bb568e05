"""Shared fixtures: async tests run on asyncio through the anyio plugin; a real Phoenix; a
loopback port that refuses connections."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

# A real Phoenix takes ~8 s to start on a quiet machine and over a minute on a loaded 2-core
# one; the test that starts it (the session fixture's first user) gets that time on top of
# the suite's per-test timeout.
PHOENIX_TEST_TIMEOUT_S = 300


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("phoenix") and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(PHOENIX_TEST_TIMEOUT_S))


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


@pytest.fixture
def refused_url() -> Iterator[str]:
    """``http://127.0.0.1:PORT``, a loopback port that refuses every connection.

    The port is bound but not listening, and held for the test, so no other test's server
    can take it meanwhile.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
        held.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{held.getsockname()[1]}"


@pytest.fixture(autouse=True)
def _judge_cache_of_its_own(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``livescore eval`` caches judge answers on disk by default: each test (and the
    commands it starts) gets an empty cache of its own, so a test server reusing an earlier
    one's port never serves that test's answers."""
    monkeypatch.setenv("LIVESCORE_CACHE", str(tmp_path_factory.mktemp("judge-cache")))
