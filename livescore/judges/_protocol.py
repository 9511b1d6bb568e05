"""The seam between scorers and the model that judges: the :class:`Judge` protocol."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel

from livescore._errors import LivescoreError

__all__ = (
    "Judge",
    "JudgeConfigError",
    "JudgeError",
    "JudgeReply",
    "JudgeResponseError",
    "JudgeUsage",
    "ModelT",
)

ModelT = TypeVar("ModelT", bound=BaseModel)
T = TypeVar("T")


@dataclass(slots=True)
class JudgeUsage:
    """What judge calls cost: how many, their tokens, and the time spent waiting on them.

    Attributes:
        calls: HTTP requests sent (retries and corrective retries included).
        input_tokens: Prompt tokens the server reported.
        output_tokens: Completion tokens the server reported.
        latency_s: Wall time spent in judge calls, in seconds.
        cached: Replies served from the in-memory cache instead of the server.
    """

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    cached: int = 0

    def add(self, other: JudgeUsage) -> None:
        """Add ``other``'s figures to this one, in place."""
        self.calls += other.calls
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.latency_s += other.latency_s
        self.cached += other.cached

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True, slots=True)
class JudgeReply(Generic[T]):
    """A judge's validated answer and what it cost."""

    value: T
    usage: JudgeUsage = field(default_factory=JudgeUsage)


class JudgeError(LivescoreError):
    """A judge call failed for good (after its retries).

    Attributes:
        error_type: A short, low-cardinality name for the failure (``"timeout"``,
            ``"rate_limited"``, ``"server_error"``, ``"connection_error"``,
            ``"invalid_response"``, ``"config"``…), used as the span's ``error.type``.
        usage: What the failed attempts cost.
    """

    error_type: str = "judge_error"

    def __init__(
        self, message: str, *, error_type: str | None = None, usage: JudgeUsage | None = None
    ) -> None:
        super().__init__(message)
        if error_type is not None:
            self.error_type = error_type
        self.usage = usage or JudgeUsage()


class JudgeConfigError(JudgeError, ValueError):
    """The judge is missing or misconfigured (no model, no API key, unknown provider)."""

    error_type = "config"


class JudgeResponseError(JudgeError):
    """The judge answered, but not with what was asked (broken JSON, schema mismatch)."""

    error_type = "invalid_response"


@runtime_checkable
class Judge(Protocol):
    """A model that answers scorer prompts.

    Implement it to judge with anything: :class:`livescore.judges.OpenAIJudge` speaks the
    OpenAI-compatible API; :class:`livescore.testing.ScriptedJudge` replays fixed answers.
    """

    @property
    def model(self) -> str:
        """The model's name, as it appears on score spans (``gen_ai.request.model``)."""
        ...

    async def generate_object(
        self,
        *,
        system: str,
        prompt: str,
        schema: type[ModelT],
        validate: Callable[[ModelT], None] | None = None,
    ) -> JudgeReply[ModelT]:
        """Ask for an answer that fits ``schema``; validate it locally.

        ``validate`` may raise ``ValueError`` to reject a well-formed but wrong answer (a
        verdict count that does not match the claims); the judge then asks once more with
        the problem spelled out, and raises :class:`JudgeResponseError` if that fails too.
        """
        ...

    async def generate_text(self, *, system: str, prompt: str) -> JudgeReply[str]:
        """Ask for free text."""
        ...
