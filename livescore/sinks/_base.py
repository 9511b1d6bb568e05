"""The sink seam: what a dashboard score sink receives, and the emitter that feeds sinks.

The OpenTelemetry evaluation span stays the primary output of every score. Sinks add to it:
each finished score is also handed to every sink (a Phoenix span annotation, a Langfuse
score…), off the agent's path. :class:`SinkEmitter` wraps any :class:`~livescore.otel.Emitter`
so that every place that emits scores (the live dispatcher, ``run_evals``, a fleet worker)
feeds its sinks the same way, through the one ``emit`` call it already makes.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from livescore.runs import Run, TraceParent
from livescore.scoring import ScoreResult

if TYPE_CHECKING:
    from livescore.otel import Emitter, QueueDepthSource

__all__ = ("ScoreRecord", "ScoreSink", "SinkEmitter", "with_sinks")

_log = logging.getLogger("livescore.sinks")


@dataclass(frozen=True, slots=True)
class ScoreRecord:
    """One finished score, as a sink receives it.

    Attributes:
        run: The scored run.
        result: The score (scored, failed or skipped).
        parent: The span that represents the run (the one the evaluation span nests
            under and a dashboard annotates); ``None`` when the run has no span.
        sample_rate: The sampling rate that picked the run (``1.0`` in evals).
        source: ``"live"``, ``"eval"`` or ``"worker"``.
        scorer_version: The scorer's version.
    """

    run: Run
    result: ScoreResult
    parent: TraceParent | None
    sample_rate: float | None
    source: str
    scorer_version: str | None


@runtime_checkable
class ScoreSink(Protocol):
    """A place besides OpenTelemetry where scores go (a dashboard's score API).

    ``send`` runs on the thread that finished the score (a dispatcher's worker, an eval
    loop, a fleet worker): it must be O(1), never block and never raise — queue the record
    and deliver it in batches on a thread of the sink's own, with retries, counting what
    fails. ``flush`` delivers what is queued within ``timeout``; ``shutdown`` flushes and
    releases the sink's resources.
    """

    @property
    def name(self) -> str:
        """A short name for logs and metrics (``"phoenix"``, ``"langfuse"``)."""
        ...

    def send(self, record: ScoreRecord) -> None:
        """Queue one finished score for delivery. O(1); never blocks, never raises."""
        ...

    def flush(self, timeout: float | None = None) -> bool:
        """Deliver what is queued; ``False`` when ``timeout`` ran out first."""
        ...

    def shutdown(self, timeout: float | None = None) -> None:
        """Flush within ``timeout``, then stop; later ``send`` calls are counted and dropped."""
        ...


class SinkEmitter:
    """An :class:`~livescore.otel.Emitter` that emits through another and feeds sinks.

    Every call goes to the wrapped emitter first (the evaluation span stays primary), then
    each finished score is sent to every sink. A sink that raises costs a log line, never
    the score or the other sinks.

    Args:
        emitter: The emitter that publishes spans and metrics.
        sinks: Where each finished score goes too.

    Example:
        >>> from livescore.otel import OTelEmitter
        >>> emitter = SinkEmitter(OTelEmitter(), [])
        >>> emitter.sinks
        ()
    """

    def __init__(self, emitter: Emitter, sinks: Sequence[ScoreSink]) -> None:
        for sink in sinks:
            if not isinstance(sink, ScoreSink):
                raise TypeError(f"a sink needs name, send, flush and shutdown; got {sink!r}")
        self.emitter = emitter
        self.sinks: tuple[ScoreSink, ...] = tuple(sinks)

    def __repr__(self) -> str:
        names = ", ".join(s.name for s in self.sinks)
        return f"SinkEmitter({self.emitter!r}, sinks=[{names}])"

    def emit(
        self,
        run: Run,
        result: ScoreResult,
        *,
        sample_rate: float | None,
        source: str = "live",
        scorer_version: str | None = None,
        start_time_ns: int | None = None,
        parent: TraceParent | None = None,
    ) -> None:
        """Emit the score through the wrapped emitter, then send it to every sink."""
        try:
            self.emitter.emit(
                run,
                result,
                sample_rate=sample_rate,
                source=source,
                scorer_version=scorer_version,
                start_time_ns=start_time_ns,
                parent=parent,
            )
        finally:
            # The span's fate does not decide the sinks': a score the exporter lost can
            # still reach the dashboard's score API.
            record = ScoreRecord(
                run=run,
                result=result,
                parent=parent if parent is not None else TraceParent.of_run(run),
                sample_rate=sample_rate,
                source=source,
                scorer_version=scorer_version,
            )
            for sink in self.sinks:
                try:
                    sink.send(record)
                except Exception:
                    _log.exception("livescore: sink %r raised from send()", sink.name)

    def record_sampled(self, scorer_id: str, count: int = 1) -> None:
        """Forwarded to the wrapped emitter."""
        self.emitter.record_sampled(scorer_id, count)

    def record_dropped(self, scorer_id: str, reason: str, count: int = 1) -> None:
        """Forwarded to the wrapped emitter."""
        self.emitter.record_dropped(scorer_id, reason, count)

    def record_handed_off(self, scorer_id: str, count: int = 1) -> None:
        """Forwarded to the wrapped emitter."""
        self.emitter.record_handed_off(scorer_id, count)

    def observe_queue_depth(self, source: QueueDepthSource) -> None:
        """Forwarded to the wrapped emitter."""
        self.emitter.observe_queue_depth(source)

    def flush(self, timeout: float | None = None) -> bool:
        """Flush the wrapped emitter and every sink, sharing ``timeout`` between them."""
        import time

        deadline = None if timeout is None else time.monotonic() + max(timeout, 0.0)

        def left() -> float | None:
            return None if deadline is None else max(deadline - time.monotonic(), 0.0)

        done = self.emitter.flush(left())
        for sink in self.sinks:
            try:
                done = sink.flush(left()) and done
            except Exception:
                _log.exception("livescore: sink %r raised from flush()", sink.name)
                done = False
        return done


def with_sinks(emitter: Emitter, sinks: Sequence[ScoreSink] | None) -> Emitter:
    """``emitter`` itself when there are no sinks, else a :class:`SinkEmitter` around it.

    The one way every entry point (``LiveDispatcher(sinks=)``, ``run_evals(sinks=)``, the
    fleet worker) attaches sinks.

    Example:
        >>> from livescore.otel import OTelEmitter
        >>> base = OTelEmitter()
        >>> with_sinks(base, None) is base
        True
    """
    if not sinks:
        return emitter
    return SinkEmitter(emitter, sinks)
