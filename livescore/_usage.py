"""What a judge call returns and costs: :class:`JudgeReply` and :class:`JudgeUsage`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

__all__ = ("JudgeReply", "JudgeUsage")

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
        shared: Answers reused from another scorer's identical request on the same run
            (:class:`livescore.scoring.RunMemo`): no call, no tokens, paid for once by the
            scorer that asked first.

    Example:
        >>> usage = JudgeUsage(calls=1, input_tokens=120, output_tokens=8)
        >>> usage.add(JudgeUsage(calls=1, input_tokens=30, output_tokens=2))
        >>> usage.calls, usage.total_tokens
        (2, 160)
    """

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    cached: int = 0
    shared: int = 0

    def add(self, other: JudgeUsage) -> None:
        """Add ``other``'s figures to this one, in place."""
        self.calls += other.calls
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.latency_s += other.latency_s
        self.cached += other.cached
        self.shared += other.shared

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True, slots=True)
class JudgeReply(Generic[T]):
    """A judge's validated answer and what it cost.

    Example:
        >>> JudgeReply("It is sunny.", JudgeUsage(calls=1)).usage.calls
        1
    """

    value: T
    usage: JudgeUsage = field(default_factory=JudgeUsage)
