"""The worker-side :class:`~livescore.live.JobHandle` of one delivery, and what each pair's
end carries to the commit that fences, exports, marks and counts it."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from livescore.live import ScoringJob
from livescore.otel import Emitter
from livescore.runs import Run, TraceParent
from livescore.scoring import ScoreResult

__all__ = ("EmitArgs", "EndedPair", "Slice", "WorkerJob")


@dataclass(frozen=True, slots=True)
class EmitArgs:
    """One score as an emitter takes it (made once, handed to each emitter at its moment)."""

    run: Run
    result: ScoreResult
    sample_rate: float | None
    source: str
    scorer_version: str | None
    start_time_ns: int | None
    parent: TraceParent | None

    def to(self, emitter: Emitter) -> None:
        emitter.emit(
            self.run,
            self.result,
            sample_rate=self.sample_rate,
            source=self.source,
            scorer_version=self.scorer_version,
            start_time_ns=self.start_time_ns,
            parent=self.parent,
        )


@dataclass(slots=True)
class EndedPair:
    """One pair's end on its way through a commit: fence, export, mark, count."""

    handle: WorkerJob
    scorer_id: str
    status: str
    result: ScoreResult
    emit: EmitArgs | None  # None: a dropped pair (no span)
    drop_reason: str | None = None
    spans: list[Any] = field(default_factory=list)
    fenced_until: float = 0.0  # monotonic; 0: not fenced yet
    failing_since: float | None = None  # monotonic: its first failed export
    event_sent: bool = False  # its gen_ai.evaluation.result event was handed to the SDK


class WorkerJob:
    """The worker-side :class:`~livescore.live.JobHandle` of one delivery.

    Each pair's first end goes to ``on_end`` (which makes its span, held, and queues it for
    the next commit in one step); the job is settled when every pair was committed (marked
    done, or found ended elsewhere).
    """

    def __init__(
        self,
        on_end: Callable[[EndedPair], None],
        job_id: str,
        owner: str,
        job: ScoringJob,
        rates: Sequence[float | None],
        source: str,
        reply_to: str | None,
    ) -> None:
        self._on_end = on_end
        self.job_id = job_id
        self.owner = owner
        self._job = job
        self._rates = tuple(rates)
        self._source = source
        self.reply_to = reply_to
        self._lock = threading.Lock()
        self.statuses: dict[str, str] = {}
        self.claimed = frozenset(c.scorer_id for c in job.scorers)
        self.settled_ids: set[str] = set()
        self._closed = False
        self.settled = threading.Event()
        self.abandoned = threading.Event()
        """Set by the commit thread once the job is handed back (claims released)."""
        if not self.claimed:
            self.settled.set()

    @property
    def job(self) -> ScoringJob:
        return self._job

    def close(self) -> dict[str, str]:
        """Refuse every later report (the job goes back to the queue); what ended so far."""
        with self._lock:
            self._closed = True
            return dict(self.statuses)

    def settle(self, scorer_id: str) -> None:
        """The pair was committed (called by the commit)."""
        with self._lock:
            self.settled_ids.add(scorer_id)
            if self.settled_ids >= self.claimed:
                self.settled.set()

    def _end(self, index: int, status: str) -> str | None:
        with self._lock:
            if self._closed or not 0 <= index < len(self._job.scorers):
                return None
            sid = self._job.scorers[index].scorer_id
            if sid in self.statuses:
                return None  # reported twice: the first report wins
            self.statuses[sid] = status
            return sid

    def finish(self, index: int, result: ScoreResult, *, start_time_ns: int | None = None) -> None:
        sid = self._end(index, result.status)
        if sid is None:
            return
        config = self._job.scorers[index]
        emit = EmitArgs(
            run=self._job.run,
            result=result,
            sample_rate=self._rates[index],
            source=self._source,
            scorer_version=config.scorer.version,
            start_time_ns=start_time_ns,
            parent=self._job.parent,
        )
        self._on_end(EndedPair(self, sid, result.status, result, emit))

    def drop(self, reason: str, index: int | None = None) -> None:
        indices = range(len(self._job.scorers)) if index is None else (index,)
        for i in indices:
            sid = self._end(i, "dropped")
            if sid is None:
                continue
            result = ScoreResult(
                run_id=self._job.run.run_id,
                scorer_id=sid,
                status="failed",
                error=f"dropped on the worker ({reason})",
                error_type=reason,
            )
            self._on_end(EndedPair(self, sid, "dropped", result, None, drop_reason=reason))

    def hand_off(self, index: int | None = None) -> None:
        # Nothing hands a job on from a worker; a report like this is a bug, counted.
        self.drop("handed_off_on_worker", index)


class Slice:
    """The executor's view of a delivery: only the pairs it scores (same order, first)."""

    def __init__(self, handle: WorkerJob, job: ScoringJob) -> None:
        self._handle = handle
        self._job = job

    @property
    def job(self) -> ScoringJob:
        return self._job

    def finish(self, index: int, result: ScoreResult, *, start_time_ns: int | None = None) -> None:
        self._handle.finish(index, result, start_time_ns=start_time_ns)

    def drop(self, reason: str, index: int | None = None) -> None:
        if index is None:
            for i in range(len(self._job.scorers)):
                self._handle.drop(reason, i)
        else:
            self._handle.drop(reason, index)

    def hand_off(self, index: int | None = None) -> None:
        self.drop("handed_off_on_worker", index)
