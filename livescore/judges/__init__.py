"""Judges: the models that answer prompt steps. ``"openai/<model>"`` strings resolve here.

Example:
    >>> from livescore.judges import resolve_judge
    >>> resolve_judge("openai/llama3.2", base_url="http://127.0.0.1:8080/v1").model
    'llama3.2'
"""

from livescore.judges._openai import (
    OpenAIJudge,
    StructuredOutputMode,
    forget_server,
    resolve_judge,
)
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
    "StructuredOutputMode",
    "forget_server",
    "resolve_judge",
)
