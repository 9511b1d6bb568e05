"""Judges: the models that answer prompt steps. ``"openai/<model>"`` strings resolve here.

Importing this package does not import ``openai``: it is loaded when the first
:class:`OpenAIJudge` is built.

Example:
    >>> from livescore.judges import resolve_judge
    >>> resolve_judge("openai/llama3.2", base_url="http://127.0.0.1:8080/v1").model
    'llama3.2'
"""

from livescore.judges._errors import (
    JudgeAuthError,
    JudgeBadRequestError,
    JudgeConfigError,
    JudgeConnectionError,
    JudgeError,
    JudgeRateLimitError,
    JudgeResponseError,
    JudgeServerError,
    JudgeTimeoutError,
)
from livescore.judges._openai import DEFAULT_MAX_RESPONSE_BYTES, OpenAIJudge, TransportName
from livescore.judges._protocol import Judge
from livescore.judges._resolve import resolve_judge
from livescore.judges._structured import StructuredOutputMode, forget_server
from livescore.judges._usage import JudgeReply, JudgeUsage

__all__ = (
    "DEFAULT_MAX_RESPONSE_BYTES",
    "Judge",
    "JudgeAuthError",
    "JudgeBadRequestError",
    "JudgeConfigError",
    "JudgeConnectionError",
    "JudgeError",
    "JudgeRateLimitError",
    "JudgeReply",
    "JudgeResponseError",
    "JudgeServerError",
    "JudgeTimeoutError",
    "JudgeUsage",
    "OpenAIJudge",
    "StructuredOutputMode",
    "TransportName",
    "forget_server",
    "resolve_judge",
)
