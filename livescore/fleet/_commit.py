"""A fleet worker's commits: each pair that ended is fenced, exported, marked done and
counted, in that order, by one thread (the export barrier's).

A pair's end makes its span, held by the span hold, and queues the pair. A commit takes
every pair queued since the last one: it holds their claims in Redis for the export's
length (the *fence*; a pair whose claim another delivery took is discarded, never
exported), exports their events and spans, marks them done where their claims are still
this delivery's, and only then counts them (metrics, sinks). A score is counted once, by
the worker whose span left.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from livescore._emit import EmitSignal
from livescore.fleet._barrier import ExportBarrier
from livescore.fleet._counts import WorkerCounts
from livescore.fleet._job_handle import EndedPair, WorkerJob
from livescore.otel import Emitter
from livescore.sinks import ScoreSink, with_sinks

if TYPE_CHECKING:
    from livescore.fleet._ledger import Ledger
    from livescore.fleet._otel_env import SpanHold
    from livescore.fleet._redis import OutageLog

__all__ = ("Commits", "Emitters", "export_budget", "fence_seconds", "make_emitters")

_log = logging.getLogger("livescore.fleet")


def export_budget(span_hold: SpanHold | None) -> float:
    """The longest an export of the held spans may take, in seconds."""
    return float(getattr(span_hold, "export_timeout", 10.0)) if span_hold is not None else 10.0


def fence_seconds(span_hold: SpanHold | None) -> float:
    """How long a commit's fence holds a pair: an export's longest time and a margin."""
    return 2 * export_budget(span_hold) + 10.0


@dataclass(frozen=True, slots=True)
class Emitters:
    """Where a worker's scores go, one emitter per moment of a pair's commit.

    Attributes:
        counts: Metrics and sinks, once the pair is marked done. A custom emitter is
            this one alone: it gets each score (spans and counts) when the pair ends.
        sinks: The sinks in ``counts``, flushed after each commit.
        spans: The score's span, at the pair's end (held until its commit exports it);
            ``None`` with a custom emitter.
        events: The ``gen_ai.evaluation.result`` event, at the commit that exports the
            span (a fenced pair's never leaves); ``None`` when events are not emitted.
    """

    counts: Emitter
    sinks: tuple[ScoreSink, ...] = ()
    spans: Emitter | None = None
    events: Emitter | None = None


def make_emitters(
    given: Emitter | None,
    sinks: Sequence[ScoreSink],
    signals: Sequence[EmitSignal],
    semconv_proposals: bool,
) -> Emitters:
    """The worker's emitters: ``given`` (with the sinks) alone, or three default ones on
    the global providers (``signals`` says whether spans and events are made)."""
    if given is not None:
        return Emitters(with_sinks(given, sinks), tuple(sinks))
    from opentelemetry.metrics import NoOpMeterProvider
    from opentelemetry.trace import NoOpTracerProvider

    from livescore.otel import OTelEmitter

    spans = OTelEmitter(
        meter_provider=NoOpMeterProvider(),
        tracer_provider=None if "spans" in signals else NoOpTracerProvider(),
        emit="spans",
        semconv_proposals=semconv_proposals,
    )
    events = (
        OTelEmitter(
            meter_provider=NoOpMeterProvider(),
            tracer_provider=NoOpTracerProvider(),
            emit="events",
            semconv_proposals=semconv_proposals,
        )
        if "events" in signals
        else None
    )
    counts = OTelEmitter(
        tracer_provider=NoOpTracerProvider(), emit="spans", semconv_proposals=semconv_proposals
    )
    return Emitters(with_sinks(counts, sinks), tuple(sinks), spans, events)


class Commits:
    """The pairs that ended, from their end to their count (see the module's docstring).

    :meth:`add` runs on any thread; :meth:`commit`, on the export barrier's thread, which
    runs it again by itself until it succeeds.

    Args:
        ledger: The worker's ledger (claims, fences, marks).
        counts: Where the committed pairs are counted.
        emitters: The worker's emitters (:func:`make_emitters`).
        outages: Where Redis outages are said (once each).
        span_hold: The span processor that holds the worker's spans until a commit exports
            them; without it, a commit force-flushes the tracer provider (spans cannot be
            fenced, and a crash between another flush and the commit can duplicate a
            score).
        export_deadline: Seconds a job's spans may keep failing to export before the job
            goes back to the queue, its scores discarded.
    """

    def __init__(
        self,
        ledger: Ledger,
        counts: WorkerCounts,
        emitters: Emitters,
        outages: OutageLog,
        span_hold: SpanHold | None,
        export_deadline: float,
    ) -> None:
        self._ledger = ledger
        self._outages = outages
        self._hold = span_hold
        self.fence_s: float = fence_seconds(span_hold)
        """How long a commit's fence holds a pair (:func:`fence_seconds`)."""
        self._export_deadline = export_deadline
        self._counts = counts
        self._emitters = emitters
        self._lock = threading.Lock()  # span emission + queueing of a pair, vs a commit
        self._pending: list[EndedPair] = []
        self._abandon: list[WorkerJob] = []
        # Owned by the commit thread: pairs not exported yet, and exported but not marked.
        self._held: list[EndedPair] = []
        self._exported: list[EndedPair] = []
        self._untagged: list[Any] = []
        self._export_failing = False
        self._window_start = 0.0
        self.barrier = ExportBarrier(self.commit)

    def add(self, pair: EndedPair) -> None:
        """Make one pair's span (held with it) and queue the pair for the next commit,
        atomically with respect to commits."""
        emitters = self._emitters
        with self._lock:
            if pair.emit is not None:
                try:
                    if emitters.spans is None:
                        pair.emit.to(emitters.counts)  # a custom emitter: everything now
                    elif self._hold is not None:
                        with self._hold.capture(pair.spans):
                            pair.emit.to(emitters.spans)
                    else:
                        pair.emit.to(emitters.spans)
                except Exception:
                    self._counts.emit_failed()
            self._pending.append(pair)
        self.barrier.request()

    def abandon(self, handle: WorkerJob) -> None:
        """Have the next commit hand ``handle`` back (see :meth:`_abandon_now`)."""
        with self._lock:
            self._abandon.append(handle)
        self.barrier.request()

    def wait(self) -> None:
        """Wait for a commit that starts now: the pairs ended so far are committed, if they
        can be."""
        barrier = self.barrier
        if not barrier.wait(barrier.timeout + 1.0):
            _log.warning("livescore worker: a commit did not finish in time")

    def stop(self) -> None:
        """Stop the commit thread once a commit in progress ended."""
        self.barrier.stop()

    def commit(self, timeout: float) -> bool:
        """Commit the pairs that ended since the last commit (on the export barrier's
        thread): fence their claims, export their spans, mark them done, count them.

        A pair whose claim another delivery took is discarded (never exported). When the
        export fails, the pairs wait for the next commit (the barrier retries) and their
        jobs stay unacknowledged; past ``export_deadline``, their jobs go back to the queue.
        When Redis fails after the export, the marks are written by a later commit,
        without exporting again. A worker killed between the export and the marks (one
        Redis round trip, :attr:`WorkerStats.commit_windows_s`) leaves those pairs
        exported but not marked: scored again, the one duplicate left.

        Returns:
            ``False`` while something is left to commit.
        """
        from livescore.fleet._redis import outage_reason

        with self._lock:
            self._held.extend(self._pending)
            self._pending = []
            abandon, self._abandon = self._abandon, []
            if self._hold is not None:
                self._untagged.extend(self._hold.take())
        for handle in abandon:
            self._abandon_now(handle)
        try:
            if not self._mark_exported():
                return False
            if not self._held and not self._untagged:
                return True
            self._fence()
            exported = self._export(timeout)
            if exported is None:
                return False
            if not exported:
                self._export_failed()
                return False
            return self._mark_exported()
        except Exception as exc:
            reason = outage_reason(exc)
            if reason is None:
                _log.exception("livescore worker: a commit failed; retrying")
            else:
                self._outages.down(reason, "scores wait to be marked done")
            return False

    def _fence(self) -> None:
        """Hold the claims of the pairs about to be exported for :attr:`fence_s`, in Redis,
        so that no other delivery can take them while the export runs; discard the pairs
        whose claims another delivery has taken."""
        now = time.monotonic()
        budget = export_budget(self._hold) + 1.0
        need = [p for p in self._held if p.fenced_until < now + budget]
        if not need:
            return
        sent = time.monotonic()
        held = self._ledger.fence(
            [(p.handle.job_id, p.scorer_id, p.handle.owner) for p in need], seconds=self.fence_s
        )
        lost: set[int] = set()
        for pair, mine in zip(need, held, strict=True):
            if mine:
                # Measured from before the call: the fence ends no earlier than this.
                pair.fenced_until = sent + self.fence_s
            else:
                lost.add(id(pair))
        if not lost:
            return
        gone = [p for p in self._held if id(p) in lost]
        self._held = [p for p in self._held if id(p) not in lost]
        self._counts.add(fenced=len(gone))
        _log.warning(
            "livescore worker: %d score(s) discarded: their claims lapsed (this worker was "
            "frozen or cut off past its heartbeat timeout) and another worker took them over",
            len(gone),
        )
        for pair in gone:
            pair.handle.settle(pair.scorer_id)

    def _export(self, timeout: float) -> bool | None:
        """Export the spans of the held pairs (and any others held); ``None`` when a fence
        ran out before the export could start (the next commit fences again)."""
        hold = self._hold
        self._window_start = time.monotonic()
        if self._emitters.spans is None:
            # A custom emitter delivers (and counted) its scores itself: flushed, not held.
            if not self._emitters.counts.flush(timeout):
                self._counts.emit_failed()
            exported = True
        else:
            if hold is not None and any(p.fenced_until <= self._window_start for p in self._held):
                return None
            if not self._export_events(timeout):
                return False
            if hold is None:
                exported = _force_flush_traces(timeout)
            else:
                spans = [s for p in self._held for s in p.spans] + self._untagged
                exported = hold.export(spans)
        if exported:
            self._untagged = []
            self._exported.extend(self._held)
            self._held = []
            if self._export_failing:
                self._export_failing = False
                _log.warning("livescore worker: spans export again")
        return exported

    def _export_events(self, timeout: float) -> bool:
        """Hand the held pairs' ``gen_ai.evaluation.result`` events to the SDK (once each)
        and flush them, before their spans: a failed flush is a failed export (the events
        are made again by the retry, so they leave at least once, like the spans)."""
        emitter = self._emitters.events
        if emitter is None:
            return True
        for pair in self._held:
            if pair.emit is not None and not pair.event_sent:
                pair.event_sent = True
                try:
                    pair.emit.to(emitter)
                except Exception:
                    self._counts.emit_failed()
        if _force_flush_logs(timeout):
            return True
        for pair in self._held:
            pair.event_sent = False
        return False

    def _export_failed(self) -> None:
        """The collector refused or did not answer: keep the pairs; past the deadline, hand
        their jobs back to the queue."""
        now = time.monotonic()
        if not self._export_failing:
            self._export_failing = True
            _log.warning(
                "livescore worker: the spans could not be exported (the collector refuses or "
                "does not answer); %d job(s) wait, unacknowledged, and the export is retried "
                "(after %.0f s a job goes back to the queue)",
                len({id(p.handle) for p in self._held}),
                self._export_deadline,
            )
        expired: dict[int, WorkerJob] = {}
        for pair in self._held:
            if pair.failing_since is None:
                pair.failing_since = now
            elif now - pair.failing_since > self._export_deadline:
                expired[id(pair.handle)] = pair.handle
        if expired:
            _log.warning(
                "livescore worker: %d job(s) could not export their spans for %.0f s; they "
                "go back to the queue, their scores discarded",
                len(expired),
                self._export_deadline,
            )
        for handle in expired.values():
            handle.close()
            self._abandon_now(handle)

    def _mark_exported(self) -> bool:
        """Mark the exported pairs done (each only where its claim is still this
        delivery's), then count them; ``False`` if Redis did not take the marks."""
        from livescore.fleet._ledger import Mark

        if not self._exported:
            return True
        pairs = self._exported
        outcomes = self._ledger.mark(
            [
                Mark(
                    p.handle.job_id,
                    p.scorer_id,
                    p.handle.owner,
                    p.status,
                    p.handle.reply_to,
                    p.result if p.handle.reply_to else None,
                )
                for p in pairs
            ]
        )
        window = time.monotonic() - self._window_start
        self._exported = []
        late = 0
        for pair, outcome in zip(pairs, outcomes, strict=True):
            if outcome == "marked":
                self._count(pair)
            else:
                late += 1
            pair.handle.settle(pair.scorer_id)
        self._counts.commit(window, late)
        if late:
            _log.warning(
                "livescore worker: %d score(s) were exported after another worker took them "
                "over (a freeze longer than the fence): a duplicate span each, counted once",
                late,
            )
        self._flush_counts()
        return True

    def _count(self, pair: EndedPair) -> None:
        """The pair is committed: count it once (metrics, sinks, stats)."""
        emitter = self._emitters.counts
        if pair.drop_reason is not None:
            self._counts.add(dropped=1)
            try:
                emitter.record_dropped(pair.scorer_id, pair.drop_reason)
            except Exception:
                self._counts.emit_failed()
            return
        self._counts.result(pair.result)
        if self._emitters.spans is not None and pair.emit is not None:
            try:
                pair.emit.to(emitter)  # metrics and sinks (its spans go nowhere)
            except Exception:
                self._counts.emit_failed()

    def _flush_counts(self) -> None:
        """Push out the counts of what was just marked (a crash after an acknowledgement
        must not lose them)."""
        timeout = 5.0
        try:
            if self._hold is None and self._emitters.spans is None:
                self._emitters.counts.flush(timeout)
                return
            from opentelemetry import metrics

            force_flush = getattr(metrics.get_meter_provider(), "force_flush", None)
            if callable(force_flush):
                force_flush(int(timeout * 1000))
            for sink in self._emitters.sinks:
                try:
                    sink.flush(timeout)
                except Exception:
                    _log.exception("livescore: sink %r raised from flush()", sink.name)
        except Exception:
            self._counts.emit_failed()

    def _abandon_now(self, handle: WorkerJob) -> None:
        """Hand ``handle`` back (commit thread): drop its pairs not exported (their spans
        never leave), release its claims on pairs not exported, and tell its thread."""
        handle.close()
        self._held = [p for p in self._held if p.handle is not handle]
        keep = set(handle.settled_ids) | {p.scorer_id for p in self._exported if p.handle is handle}
        release = sorted(handle.claimed - keep)
        try:
            self._ledger.release(handle.job_id, release, owner=handle.owner)
        except Exception:
            # Redis is away: the claims lapse with this worker's heartbeat, or expire.
            _log.debug("releasing claims failed", exc_info=True)
        handle.abandoned.set()


def _force_flush_traces(timeout: float) -> bool:
    from opentelemetry import trace

    force_flush = getattr(trace.get_tracer_provider(), "force_flush", None)
    return bool(force_flush(int(timeout * 1000))) if callable(force_flush) else True


def _force_flush_logs(timeout: float) -> bool:
    from opentelemetry import _logs

    force_flush = getattr(_logs.get_logger_provider(), "force_flush", None)
    return bool(force_flush(int(timeout * 1000))) if callable(force_flush) else True
