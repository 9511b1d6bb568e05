"""Fixtures the judge tests share: no OpenAI settings from the environment, and each test
run on both HTTP transports under the ``openai`` client."""

from __future__ import annotations

import pytest

from livescore.judges import _transport


@pytest.fixture
def no_openai_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.fixture(params=["aiohttp", "httpx"])
def http_transport(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The test runs once per transport: aiohttp (the default on asyncio) and httpx."""
    if request.param == "httpx":
        monkeypatch.setattr(_transport, "aiohttp_installed", lambda: False)
    elif not _transport.aiohttp_installed():
        pytest.skip("aiohttp is not installed")
    return str(request.param)
