"""Every exception livescore raises or reads, in one module.

The tree::

    Exception
     ├── LivescoreError              every error livescore raises on purpose
     │    ├── JudgeError             a judge call failed for good (``error_type``)
     │    │    ├── JudgeTimeoutError         "timeout"
     │    │    ├── JudgeRateLimitError       "rate_limited"
     │    │    ├── JudgeServerError          "server_error"
     │    │    ├── JudgeConnectionError      "connection_error"
     │    │    ├── JudgeAuthError            "auth_error"
     │    │    ├── JudgeBadRequestError      "bad_request"
     │    │    ├── JudgeResponseError        "invalid_response"
     │    │    └── JudgeConfigError          "config" (also a ValueError)
     │    ├── ScorerRunError         a scorer step failed (``Scorer.run`` raises it)
     │    ├── BrokerUnavailableError the fleet's broker (Redis) cannot be reached or take jobs
     │    ├── JobTooLargeError       a job over the publisher's size cap (not sent)
     │    ├── BudgetLedgerError      a judge budget's ledger (Redis) cannot answer
     │    ├── OTLPDecodeError        not an OTLP trace export (also a ValueError)
     │    └── DemoConfigError        ``livescore demo`` cannot run as configured
     │
     │   signals: raised by your code, caught by livescore, never reach a user
     ├── NotScorable                 from a scorer step or ``get_context``: skip this run
     ├── SkipRecord                  from ``BatchingSink.prepare``: nothing to deliver
     ├── RetryLater                  from ``BatchingSink.deliver``: try the batch later
     │
     │   internal: never reach a user
     ├── RequestRefused              an HTTP refusal the judge may adapt its request to
     └── UnreadableResponse          a response body past its cap or its deadline
          ├── ResponseTooLarge       (the judge fails ``invalid_response``, a sink
          └── ResponseDeadline        counts the batch failed or retries it)

Each is re-exported where users catch or raise it: the judge errors and
``BudgetLedgerError`` from :mod:`livescore.judges`, ``ScorerRunError`` and ``NotScorable`` from
:mod:`livescore.scoring` (and the root), ``SkipRecord`` and ``RetryLater`` from
:mod:`livescore.sinks`, ``BrokerUnavailableError`` from :mod:`livescore.fleet`,
``OTLPDecodeError`` from :mod:`livescore.traces`, ``DemoConfigError`` from
:mod:`livescore.demo`. Programming errors in arguments stay plain ``TypeError`` /
``ValueError``. Exceptions that never leave the module raising them (the command line's
usage error, the fleet's requeue signal) are private to it.

:func:`exception_message` reads any exception's message, even one whose ``__str__`` raises.

The ``error_type`` strings of the judge errors are what score spans carry as
``error.type`` (users filter dashboards on them), so they never change. This module imports
no HTTP client: the errors are usable without ``openai`` installed.

Example:
    >>> from livescore import JudgeError, LivescoreError, ScorerRunError
    >>> issubclass(ScorerRunError, LivescoreError), issubclass(JudgeError, LivescoreError)
    (True, True)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from livescore._usage import JudgeUsage

if TYPE_CHECKING:
    from livescore.scoring import ScoreResult

__all__ = (
    "BrokerUnavailableError",
    "BudgetLedgerError",
    "DemoConfigError",
    "JobTooLargeError",
    "JudgeAuthError",
    "JudgeBadRequestError",
    "JudgeConfigError",
    "JudgeConnectionError",
    "JudgeError",
    "JudgeRateLimitError",
    "JudgeResponseError",
    "JudgeServerError",
    "JudgeTimeoutError",
    "LivescoreError",
    "NotScorable",
    "OTLPDecodeError",
    "ResponseDeadline",
    "ResponseTooLarge",
    "RetryLater",
    "ScorerRunError",
    "SkipRecord",
    "UnreadableResponse",
    "exception_message",
    "judge_error",
)


class LivescoreError(Exception):
    """Base class of every exception livescore raises on purpose.

    Example:
        >>> from livescore import LivescoreError, ScorerRunError
        >>> issubclass(ScorerRunError, LivescoreError)
        True
    """


# -- the judge ----------------------------------------------------------------------------------


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


# -- scorers, the fleet, the demo ---------------------------------------------------------------


class ScorerRunError(LivescoreError):
    """A scorer step failed (raised by ``Scorer.run``; ``Scorer.score`` never raises).

    Attributes:
        step: The failed step's name (``"get_context"``, ``"preprocess"``, ``"analyze"``,
            ``"generate_score"``, ``"generate_reason"``, ``"input"``).
        result: The partial result, with ``status == "failed"`` and every step that finished.
        error_type: A short failure class, taken from the cause when it is a judge error.

    Example:
        >>> from livescore import create_scorer
        >>> broken = create_scorer(id="broken", description="fails",
        ...                        generate_score=lambda ctx: 1 / 0)
        >>> try:
        ...     broken.run_sync({"input": "q", "output": "a"})
        ... except ScorerRunError as error:
        ...     print(error.step, error.error_type)
        generate_score ZeroDivisionError
    """

    def __init__(self, step: str, result: ScoreResult, cause: BaseException) -> None:
        super().__init__(f"scorer {result.scorer_id!r} failed in step {step!r}: {cause}")
        self.step = step
        self.result = result
        self.error_type = result.error_type or type(cause).__name__


class BrokerUnavailableError(LivescoreError):
    """The broker (Redis) cannot be reached, did not answer in time, or cannot take jobs
    now (out of memory, read-only during a failover).

    Attributes:
        published: From a publisher's ``publish_many``: the positions of the records that
            were enqueued before the broker refused the rest (the others were not).
    """

    def __init__(self, message: str, *, published: tuple[int, ...] = ()) -> None:
        super().__init__(message)
        self.published = published


class JobTooLargeError(LivescoreError):
    """A job record is larger than the publisher's cap (``max_job_bytes``): it is not sent.

    The dispatcher counts the run as dropped (``job_too_large``); it never reaches the agent.

    Attributes:
        size: The record's encoded size in bytes.
        limit: The cap.
    """

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"the job is {size:,} bytes encoded, over the {limit:,}-byte cap")
        self.size = size
        self.limit = limit


class BudgetLedgerError(LivescoreError):
    """A judge budget's ledger cannot answer (its Redis is unreachable).

    A score that cannot reserve is skipped, never run unchecked: a budget fails closed.
    """


class OTLPDecodeError(LivescoreError, ValueError):
    """A payload that is not an OTLP trace export request (the receiver answers 400)."""


class DemoConfigError(LivescoreError):
    """The demo cannot run as configured (a missing integration, a bad option)."""


# -- signals ------------------------------------------------------------------------------------


class NotScorable(Exception):
    """Raise from any step (or ``get_context``) to declare a run not scorable.

    The result then has ``status == "skipped"``, the message as ``reason``, and no score.

    Example:
        >>> def preprocess(ctx):
        ...     if not ctx.context:
        ...         raise NotScorable("no context to judge against")
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class SkipRecord(Exception):
    """Raise from ``BatchingSink.prepare``: this record has nothing to deliver.

    It is counted as ``skipped`` with ``reason`` (``"no_span"``, ``"unscored"``…).

    Example:
        >>> SkipRecord("no_span").reason
        'no_span'
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class RetryLater(Exception):
    """Raise from ``BatchingSink.deliver``: the whole batch may succeed later.

    For a network error, a 5xx or a 429. The batch is tried again with exponential backoff
    (at least ``retry_after`` seconds later when given) until the sink's ``retry_deadline``;
    then each record is counted as failed with ``reason``.

    Example:
        >>> RetryLater("http_503", retry_after=2.0).retry_after
        2.0
    """

    def __init__(
        self, reason: str, retry_after: float | None = None, detail: str | None = None
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after
        self.detail = detail


# -- internal -----------------------------------------------------------------------------------


class RequestRefused(Exception):
    """Internal: an HTTP error the judge's transport does not retry (a 4xx, a refused format).

    The judge may adapt the request and ask again; ``error`` is what to raise when it
    cannot. Carries masked text only. Not exported: it never leaves the judge.
    """

    def __init__(self, status: int, detail: str, error: JudgeError) -> None:
        super().__init__(str(error))
        self.status = status
        self.detail = detail
        self.error = error


class UnreadableResponse(Exception):
    """Internal: the response cannot be read within its bounds (see the subclasses).

    Raised by ``livescore/_http.py`` while the judge's transport or a sink reads a body;
    each turns it into its own failure, so it never reaches a user.
    """


class ResponseTooLarge(UnreadableResponse):
    """The body is larger than the cap, or compressed in a way it cannot be read bounded."""


class ResponseDeadline(UnreadableResponse):
    """The body was still arriving when the request's deadline passed."""


def exception_message(exc: BaseException) -> str:
    """``str(exc)``, or a stand-in when even that raises (a broken ``__str__``).

    Whatever reads an exception that is not its own (the agent's, a tool's, a scorer's)
    reads it through this: one raising ``__str__`` must not lose the run it ended.

    Example:
        >>> class Broken(Exception):
        ...     def __str__(self):
        ...         raise RuntimeError("no message")
        >>> exception_message(ValueError("bad")), exception_message(Broken())
        ('bad', 'Broken (its message could not be read)')
    """
    try:
        text = str(exc)
    except BaseException:  # anything at all: the message is not worth the run
        return f"{type(exc).__name__} (its message could not be read)"
    return text if isinstance(text, str) else type(exc).__name__
