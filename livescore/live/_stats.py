"""What happened to every sampled (run, scorer) pair: :class:`DispatchStats`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ("Counts", "DispatchStats", "ScorerStats", "total_stats")


@dataclass(frozen=True, slots=True)
class ScorerStats:
    """Counts for one scorer. The unit is one (run, scorer) pair.

    ``sampled == scored + failed + skipped + dropped + handed_off + queued + in_flight``
    always holds; after a successful :meth:`LiveDispatcher.flush`,
    ``queued == in_flight == 0``.

    Attributes:
        sampled: Pairs the sampling picked and the dispatcher saw (submitted or dropped).
        scored: Pairs that produced a score.
        failed: Pairs whose scorer failed (judge error, timeout, a step that raised).
        skipped: Pairs the scorer declared not scorable.
        dropped: Pairs never scored: queue full, shutdown, evicted by an integration.
        handed_off: Pairs an executor handed to another process (a broker's workers),
            which scores them and counts how each ends.
        queued: Pairs waiting in the queue.
        in_flight: Pairs the worker has taken and not finished.
        dropped_by_reason: ``dropped`` split by reason (``"queue_full"``, ``"shutdown"``…).
        failed_by_type: ``failed`` split by ``error.type`` (``"timeout"``…).
    """

    sampled: int = 0
    scored: int = 0
    failed: int = 0
    skipped: int = 0
    dropped: int = 0
    handed_off: int = 0
    queued: int = 0
    in_flight: int = 0
    dropped_by_reason: Mapping[str, int] = field(default_factory=dict)
    failed_by_type: Mapping[str, int] = field(default_factory=dict)

    @property
    def finished(self) -> int:
        """Pairs that reached an end state here (scored, failed, skipped, dropped, handed off)."""
        return self.scored + self.failed + self.skipped + self.dropped + self.handed_off


@dataclass(frozen=True, slots=True)
class DispatchStats(ScorerStats):
    """A consistent snapshot of a dispatcher's counts, totalled over scorers.

    The unit is one (run, scorer) pair: a run sampled by two scorers counts twice. Every
    sampled pair ends as exactly one of scored, failed, skipped or dropped, so
    ``sampled == scored + failed + skipped + dropped + queued + in_flight`` at all times
    with the in-process executor. An executor that hands jobs to another process (a
    broker) ends its pairs here as ``handed_off``; the workers there count each one as
    scored, failed, skipped or dropped on the same ``livescore.runs`` metric, so across the
    fleet ``sampled = scored + failed + skipped + dropped`` once the workers are done, and
    here ``sampled == scored + failed + skipped + dropped + handed_off + queued +
    in_flight``.

    Attributes:
        sampled: Pairs sampled.
        scored: Pairs scored.
        failed: Pairs failed.
        skipped: Pairs skipped (not scorable).
        dropped: Pairs dropped (never scored).
        handed_off: Pairs handed to another process (scored and counted there).
        queued: Pairs waiting in the queue.
        in_flight: Pairs being scored.
        dropped_by_reason: ``dropped`` by reason.
        failed_by_type: ``failed`` by ``error.type``.
        by_scorer: The same counts per scorer id.
        emit_errors: Exceptions an emitter raised (the scores still count; see the log).

    Example:
        >>> stats = DispatchStats()
        >>> stats.sampled == stats.finished + stats.queued + stats.in_flight
        True
    """

    # The totals are ScorerStats' fields (and its ``finished``); then what only a
    # dispatcher has.
    by_scorer: Mapping[str, ScorerStats] = field(default_factory=dict)
    emit_errors: int = 0


class Counts:
    """Mutable counts of one scorer; guarded by the dispatcher's lock."""

    __slots__ = (
        "dropped",
        "dropped_by_reason",
        "failed",
        "failed_by_type",
        "handed_off",
        "in_flight",
        "queued",
        "sampled",
        "scored",
        "skipped",
    )

    def __init__(self) -> None:
        self.sampled = 0
        self.scored = 0
        self.failed = 0
        self.skipped = 0
        self.dropped = 0
        self.handed_off = 0
        self.queued = 0
        self.in_flight = 0
        self.dropped_by_reason: dict[str, int] = {}
        self.failed_by_type: dict[str, int] = {}

    def snapshot(self) -> ScorerStats:
        return ScorerStats(
            sampled=self.sampled,
            scored=self.scored,
            failed=self.failed,
            skipped=self.skipped,
            dropped=self.dropped,
            handed_off=self.handed_off,
            queued=self.queued,
            in_flight=self.in_flight,
            dropped_by_reason=dict(self.dropped_by_reason),
            failed_by_type=dict(self.failed_by_type),
        )


def total_stats(per_scorer: Mapping[str, ScorerStats], emit_errors: int) -> DispatchStats:
    """Add up the per-scorer counts."""
    dropped: dict[str, int] = {}
    failed: dict[str, int] = {}
    for s in per_scorer.values():
        for k, v in s.dropped_by_reason.items():
            dropped[k] = dropped.get(k, 0) + v
        for k, v in s.failed_by_type.items():
            failed[k] = failed.get(k, 0) + v
    values = list(per_scorer.values())
    return DispatchStats(
        sampled=sum(s.sampled for s in values),
        scored=sum(s.scored for s in values),
        failed=sum(s.failed for s in values),
        skipped=sum(s.skipped for s in values),
        dropped=sum(s.dropped for s in values),
        handed_off=sum(s.handed_off for s in values),
        queued=sum(s.queued for s in values),
        in_flight=sum(s.in_flight for s in values),
        dropped_by_reason=dropped,
        failed_by_type=failed,
        by_scorer=dict(per_scorer),
        emit_errors=emit_errors,
    )
