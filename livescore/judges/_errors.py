"""Judge errors: one class per kind of failure, each naming its ``error_type``.

The ``error_type`` strings are what score spans carry as ``error.type`` (users filter
dashboards on them), so they never change; the classes let code ``except`` one kind.
This module imports no HTTP client: the errors are usable without ``openai`` installed.
"""

from __future__ import annotations

from livescore._errors import LivescoreError
from livescore.judges._usage import JudgeUsage

__all__ = (
    "JudgeAuthError",
    "JudgeBadRequestError",
    "JudgeConfigError",
    "JudgeConnectionError",
    "JudgeError",
    "JudgeRateLimitError",
    "JudgeResponseError",
    "JudgeServerError",
    "JudgeTimeoutError",
    "judge_error",
)


class JudgeError(LivescoreError):
    """A judge call failed for good (after its retries).

    Catch it to handle every judge failure, or one of its subclasses for one kind.

    Attributes:
        error_type: A short, low-cardinality name for the failure, used as the span's
            ``error.type``: ``"timeout"``, ``"rate_limited"``, ``"server_error"``,
            ``"connection_error"``, ``"auth_error"``, ``"bad_request"``,
            ``"invalid_response"``, ``"config"``; ``"judge_error"`` when unspecified.
        usage: What the failed attempts cost.
        status_code: The HTTP status of the last failed attempt, if it got one.

    Example:
        >>> from livescore.judges import JudgeError, JudgeRateLimitError
        >>> error = JudgeRateLimitError("judge m: HTTP 429 (after 4 attempts)")
        >>> isinstance(error, JudgeError), error.error_type
        (True, 'rate_limited')
    """

    error_type: str = "judge_error"

    def __init__(
        self,
        message: str,
        *,
        error_type: str | None = None,
        usage: JudgeUsage | None = None,
        status_code: int | None = None,
    ) -> None:
        super().__init__(message)
        if error_type is not None:
            self.error_type = error_type
        self.usage = usage or JudgeUsage()
        self.status_code = status_code


class JudgeTimeoutError(JudgeError):
    """The judge did not answer within its timeout (or answered HTTP 408)."""

    error_type = "timeout"


class JudgeRateLimitError(JudgeError):
    """The judge kept answering HTTP 429 (rate limited or out of quota)."""

    error_type = "rate_limited"


class JudgeServerError(JudgeError):
    """The judge kept failing on its side (HTTP 5xx, or 409)."""

    error_type = "server_error"


class JudgeConnectionError(JudgeError):
    """The judge could not be reached, or dropped the connection."""

    error_type = "connection_error"


class JudgeAuthError(JudgeError):
    """The judge refused the credentials (HTTP 401 or 403). Not retried."""

    error_type = "auth_error"


class JudgeBadRequestError(JudgeError):
    """The judge refused the request itself (another HTTP 4xx). Not retried."""

    error_type = "bad_request"


class JudgeResponseError(JudgeError):
    """The judge answered, but not with what was asked.

    A body that is not JSON (an HTML error page), a response over the size cap, broken
    JSON in the answer, or an answer that breaks the schema even after a corrective retry.
    """

    error_type = "invalid_response"


class JudgeConfigError(JudgeError, ValueError):
    """The judge is missing or misconfigured (no model, no API key, unknown provider)."""

    error_type = "config"


_BY_TYPE: dict[str, type[JudgeError]] = {
    cls.error_type: cls
    for cls in (
        JudgeTimeoutError,
        JudgeRateLimitError,
        JudgeServerError,
        JudgeConnectionError,
        JudgeAuthError,
        JudgeBadRequestError,
        JudgeResponseError,
        JudgeConfigError,
    )
}


def judge_error(
    error_type: str,
    message: str,
    *,
    usage: JudgeUsage | None = None,
    status_code: int | None = None,
) -> JudgeError:
    """The error of the class that ``error_type`` names (plain :class:`JudgeError` if none).

    Example:
        >>> type(judge_error("timeout", "judge m: timed out after 30s")).__name__
        'JudgeTimeoutError'
    """
    cls = _BY_TYPE.get(error_type)
    if cls is None:
        return JudgeError(message, error_type=error_type, usage=usage, status_code=status_code)
    return cls(message, usage=usage, status_code=status_code)


class RequestRefused(Exception):
    """Internal: an HTTP error the transport does not retry (a 4xx, a refused format).

    The judge may adapt the request and ask again; ``error`` is what to raise when it
    cannot. Carries masked text only. Not exported: it never leaves the judge.
    """

    def __init__(self, status: int, detail: str, error: JudgeError) -> None:
        super().__init__(str(error))
        self.status = status
        self.detail = detail
        self.error = error
