"""The dispatcher's counts: per scorer (:meth:`~livescore.live.LiveDispatcher.stats`) and the
metric deltas the worker hands to the emitter, so the agent's thread never pays for a meter
call (an SDK ``Counter.add`` costs ~10 µs)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING

from livescore.live._stats import Counts, DispatchStats, total_stats

if TYPE_CHECKING:
    from livescore.otel import Emitter

__all__ = ("Tally",)

_log = logging.getLogger("livescore.live")

_SAMPLED, _DROPPED, _HANDED_OFF = "sampled", "dropped", "handed_off"


class Tally:
    """Counts per scorer, and the metric deltas counted but not yet reported.

    Methods named ``*_locked`` run under ``lock`` (the dispatcher's); :meth:`report` and
    :meth:`emit_failed` take it themselves, and run outside it.

    Example:
        >>> import threading
        >>> from livescore.otel import OTelEmitter
        >>> tally = Tally(["s"], OTelEmitter(), threading.Lock())
        >>> tally.sampled_locked("s"); tally.dropped_locked("s", "queue_full")
        >>> tally.snapshot_locked().dropped_by_reason
        {'queue_full': 1}
        >>> tally.report()
        True
    """

    def __init__(self, scorer_ids: Iterable[str], emitter: Emitter, lock: threading.Lock) -> None:
        self._emitter = emitter
        self._lock = lock
        self._counts: dict[str, Counts] = {sid: Counts() for sid in scorer_ids}
        self._pending: dict[tuple[str, str, str | None], int] = {}
        # Held while reporting (taken before the lock, never inside it): a flush waits for
        # a report in progress on the worker instead of returning before it lands.
        self._report_lock = threading.Lock()
        self._emit_errors = 0
        self._logged_emit_error = False

    def of(self, scorer_id: str) -> Counts:
        """The counts of one scorer (under the lock)."""
        counts = self._counts.get(scorer_id)
        if counts is None:  # a decision made by another dispatcher's scorers
            counts = self._counts[scorer_id] = Counts()
        return counts

    def _add(self, kind: str, scorer_id: str, reason: str | None) -> None:
        key = (kind, scorer_id, reason)
        self._pending[key] = self._pending.get(key, 0) + 1

    def sampled_locked(self, scorer_id: str) -> None:
        """One more sampled pair."""
        self.of(scorer_id).sampled += 1
        self._add(_SAMPLED, scorer_id, None)

    def dropped_locked(self, scorer_id: str, reason: str) -> None:
        """One more dropped pair, by ``reason`` (the pair's queued or in-flight count is the
        caller's)."""
        counts = self.of(scorer_id)
        counts.dropped += 1
        counts.dropped_by_reason[reason] = counts.dropped_by_reason.get(reason, 0) + 1
        self._add(_DROPPED, scorer_id, reason)

    def handed_off_locked(self, scorer_id: str) -> None:
        """One more pair handed to another process."""
        self.of(scorer_id).handed_off += 1
        self._add(_HANDED_OFF, scorer_id, None)

    def snapshot_locked(self) -> DispatchStats:
        """A consistent snapshot of the counts."""
        per_scorer = {sid: c.snapshot() for sid, c in self._counts.items()}
        return total_stats(per_scorer, self._emit_errors)

    def report(self, timeout: float | None = None) -> bool:
        """Hand the pending deltas to the emitter (outside the lock).

        Returns ``False`` only when another thread's report did not end within ``timeout``.
        """
        if not self._report_lock.acquire(timeout=-1 if timeout is None else max(timeout, 0)):
            return False
        try:
            with self._lock:
                if not self._pending:  # the common case on the worker: nothing to report
                    return True
                pending, self._pending = self._pending, {}
            for (kind, scorer_id, reason), count in pending.items():
                # One failed call costs its own deltas, not the others'; a broken emitter
                # costs a log line and a count, never a run.
                try:
                    if kind == _SAMPLED:
                        self._emitter.record_sampled(scorer_id, count)
                    elif kind == _HANDED_OFF:
                        self._emitter.record_handed_off(scorer_id, count)
                    else:
                        self._emitter.record_dropped(scorer_id, reason or "dropped", count)
                except Exception:
                    self.emit_failed()
            return True
        finally:
            self._report_lock.release()

    def emit_failed(self) -> None:
        """The emitter raised: count it, and log the first time (with the traceback)."""
        with self._lock:
            self._emit_errors += 1
            first = not self._logged_emit_error
            self._logged_emit_error = True
        if first:
            _log.exception("livescore: the emitter raised (logged once; see stats().emit_errors)")
