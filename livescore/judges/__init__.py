"""Judges: the models that answer prompt steps. ``"openai/<model>"`` strings resolve here."""

from livescore.judges._openai import OpenAIJudge, resolve_judge
from livescore.judges._protocol import (
    Judge,
    JudgeConfigError,
    JudgeError,
    JudgeReply,
    JudgeResponseError,
    JudgeUsage,
)

__all__ = (
    "Judge",
    "JudgeConfigError",
    "JudgeError",
    "JudgeReply",
    "JudgeResponseError",
    "JudgeUsage",
    "OpenAIJudge",
    "resolve_judge",
)
