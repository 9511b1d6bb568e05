"""What a judge call returns and costs: :class:`JudgeReply`, :class:`JudgeUsage`, and
:func:`format_usd`, how a cost is shown."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

__all__ = ("JudgeReply", "JudgeUsage", "format_usd")

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
        cached_input_tokens: The part of ``input_tokens`` the server reported as served
            from its prompt cache (``usage.prompt_tokens_details.cached_tokens``), billed
            lower by providers that cache.
        cost_usd: What the calls cost in US dollars, when the judge knows its price
            (:class:`livescore.judges.Price`); ``None`` when it does not.

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
    cached_input_tokens: int = 0
    cost_usd: float | None = None

    def add(self, other: JudgeUsage) -> None:
        """Add ``other``'s figures to this one, in place (a cost adds to a known cost, or
        becomes the cost when this one has none)."""
        self.calls += other.calls
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.latency_s += other.latency_s
        self.cached += other.cached
        self.shared += other.shared
        self.cached_input_tokens += other.cached_input_tokens
        if other.cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + other.cost_usd

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


def format_usd(value: float | None) -> str:
    """A judge cost as shown in reports and on the command line: four significant digits.

    Example:
        >>> format_usd(0.00123456), format_usd(12.5), format_usd(None)
        ('$0.001235', '$12.50', '–')
    """
    if value is None:
        return "–"
    if value >= 1 or value == 0:
        return f"${value:,.2f}"
    return f"${value:.4g}" if value >= 0.0001 else f"${value:.2e}"
