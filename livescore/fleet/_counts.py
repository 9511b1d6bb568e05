"""What a fleet worker counts: :class:`WorkerStats`, changed under one lock, and the
errors its emitter raised."""

from __future__ import annotations

import collections
import logging
import threading
from dataclasses import dataclass, field

from livescore.scoring import ScoreResult

__all__ = ("WorkerCounts", "WorkerStats")

_log = logging.getLogger("livescore.fleet")

_WINDOWS_KEPT = 10_000


@dataclass(slots=True)
class WorkerStats:
    """What one worker process did (its OpenTelemetry metrics say the same per scorer).

    Attributes:
        jobs: Deliveries handled to the end (acknowledged).
        scored, failed, skipped, dropped: How the pairs this worker ended ended (counted
            once their spans were exported and the pairs marked done).
        duplicates: Pairs skipped because another delivery had already ended them, or held
            them past the wait.
        requeued: Deliveries handed back to the queue (at shutdown, or past the export
            deadline).
        export_handbacks: Of those, the deliveries handed back because their spans could
            not be exported within ``export_deadline``.
        fenced: Pairs whose claim had lapsed by their commit (this worker was frozen or cut
            off past its heartbeat timeout and another worker took them over): their scores
            were discarded here, never exported nor counted.
        late_exports: Pairs whose span left but whose claim another worker had taken by the
            time of the mark (a freeze longer than the fence, right after the export): a
            duplicate span, counted once, by the other worker.
        dead_letters: Messages moved to the dead-letter set (undecodable, not a job, or
            failing every time).
        failed_by_type: Failed pairs by ``error.type``.
        loop_cpu_s: CPU seconds of the scoring loop's thread (scorers, judge calls,
            emission), set when the worker stops.
        commit_windows_s: For recent commits, the seconds from the export's start to the
            marks' write: a worker killed within it leaves pairs exported but not marked
            (scored again: the one duplicate window left). Up to 10,000 kept.
    """

    jobs: int = 0
    scored: int = 0
    failed: int = 0
    skipped: int = 0
    dropped: int = 0
    duplicates: int = 0
    requeued: int = 0
    export_handbacks: int = 0
    fenced: int = 0
    late_exports: int = 0
    dead_letters: int = 0
    failed_by_type: dict[str, int] = field(default_factory=dict)
    loop_cpu_s: float = 0.0
    commit_windows_s: collections.deque[float] = field(
        default_factory=lambda: collections.deque(maxlen=_WINDOWS_KEPT)
    )


class WorkerCounts:
    """The worker's :class:`WorkerStats`, changed from many threads under one lock, and the
    number of times its emitter raised (the first one logged).

    Example:
        >>> from livescore.scoring import ScoreResult
        >>> counts = WorkerCounts(WorkerStats())
        >>> counts.add(jobs=1, duplicates=2)
        >>> counts.result(ScoreResult(run_id="r", scorer_id="s", status="failed",
        ...                           error_type="timeout"))
        >>> counts.stats.jobs, counts.stats.duplicates, counts.stats.failed_by_type
        (1, 2, {'timeout': 1})
    """

    def __init__(self, stats: WorkerStats) -> None:
        self.stats = stats
        self.emit_errors = 0
        self._lock = threading.Lock()

    def add(self, **counts: int) -> None:
        """Add to the :class:`WorkerStats` counters named, together."""
        with self._lock:
            for name, count in counts.items():
                setattr(self.stats, name, getattr(self.stats, name) + count)

    def result(self, result: ScoreResult) -> None:
        """One more pair committed with ``result``: scored, skipped or failed (by type)."""
        with self._lock:
            if result.status == "scored":
                self.stats.scored += 1
            elif result.status == "skipped":
                self.stats.skipped += 1
            else:
                self.stats.failed += 1
                kind = result.error_type or "error"
                self.stats.failed_by_type[kind] = self.stats.failed_by_type.get(kind, 0) + 1

    def commit(self, window_s: float, late_exports: int) -> None:
        """One more commit: its window (export to marks), and its pairs exported late."""
        with self._lock:
            self.stats.commit_windows_s.append(window_s)
            self.stats.late_exports += late_exports

    def emit_failed(self) -> None:
        """The emitter raised: count it, and log the first time (with the traceback)."""
        with self._lock:
            self.emit_errors += 1
            first = self.emit_errors == 1
        if first:
            _log.exception("livescore worker: the emitter raised (logged once)")
