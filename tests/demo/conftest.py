"""Every demo test runs without the caller's model settings: the demo reads them first."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_configured_models(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "LIVESCORE_JUDGE_MODEL",
        "LIVESCORE_AGENT_MODEL",
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)
