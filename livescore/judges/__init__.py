"""Judges: the models that answer prompt steps. ``"openai/<model>"`` strings resolve here.

Importing this package does not import ``openai``: it is loaded when the first
:class:`OpenAIJudge` is built.

To write a judge of your own, implement :class:`Judge`; :func:`ask_for_object` gives it the
same parsing, validation and single corrective retry as :class:`OpenAIJudge` (an ``ask``
function returning an :class:`Answer` for a list of :data:`Message` is all it needs), and
:func:`classify_with_object` answers :meth:`Judge.classify` from a structured answer.

Example:
    >>> from livescore.judges import resolve_judge
    >>> resolve_judge("openai/llama3.2", base_url="http://127.0.0.1:8080/v1").model
    'llama3.2'
"""

from livescore.judges._classify import Classification, ask_to_classify, classify_with_object
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
from livescore.judges._gate import RequestGate, current_request_gate, use_request_gate
from livescore.judges._openai import DEFAULT_MAX_RESPONSE_BYTES, OpenAIJudge, TransportName
from livescore.judges._protocol import Judge, ModelT
from livescore.judges._redaction import redact_url
from livescore.judges._resolve import resolve_judge
from livescore.judges._structured import Answer, Message, StructuredOutputMode, forget_server
from livescore.judges._usage import JudgeReply, JudgeUsage
from livescore.judges._validation import ask_for_object

__all__ = (
    "DEFAULT_MAX_RESPONSE_BYTES",
    "Answer",
    "Classification",
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
    "Message",
    "ModelT",
    "OpenAIJudge",
    "RequestGate",
    "StructuredOutputMode",
    "TransportName",
    "ask_for_object",
    "ask_to_classify",
    "classify_with_object",
    "current_request_gate",
    "forget_server",
    "redact_url",
    "resolve_judge",
    "use_request_gate",
)
