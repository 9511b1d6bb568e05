"""PLACEHOLDER: being written (OpenAI-compatible judge). Replaced before any commit lands."""

from __future__ import annotations

from typing import Any

from livescore.judges._protocol import Judge, JudgeConfigError


class OpenAIJudge:
    def __init__(self, model: str, **kwargs: Any) -> None:
        raise JudgeConfigError("not written yet")


def resolve_judge(model: str | Judge, **kwargs: Any) -> Judge:
    if isinstance(model, Judge):
        return model
    raise JudgeConfigError("not written yet")
