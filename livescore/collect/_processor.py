"""``LiveScoringSpanProcessor``: score any OpenTelemetry-instrumented agent in its process."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from livescore.collect._pipeline import PipelineStats, SpanPipeline, dispatcher_backlog
from livescore.live import (
    DEFAULT_CONVERSATION_IDLE_TIMEOUT,
    Dispatcher,
    DispatchStats,
    dispatcher_for,
)
from livescore.traces import AssemblyLimits

if TYPE_CHECKING:
    from opentelemetry._logs import LoggerProvider
    from opentelemetry.trace import TracerProvider

    from livescore._emit import EmitSignal
    from livescore.live import ScorerConfig
    from livescore.otel import ContentCapture
    from livescore.scoring import Scorer
    from livescore.sinks import ScoreSink

__all__ = ("LiveScoringSpanProcessor",)

_log = logging.getLogger("livescore.collect")
# The most a shutdown takes: assembling what is queued, then scoring it.
_SHUTDOWN_S = 10.0


class LiveScoringSpanProcessor:
    """Scores the agent runs an application's spans describe: add it to its tracer provider.

    ``provider.add_span_processor(LiveScoringSpanProcessor(scorers=[...]))``: every agent
    run traced through that provider, by any instrumentation livescore reads (the
    OpenTelemetry GenAI conventions, OpenInference, OpenLLMetry, Langfuse, Logfire…: the
    compatibility table of the "Any agent" page), is assembled from its spans into a
    :class:`~livescore.Run` (input, output, model turns, tool calls with arguments and
    results, retrieved documents, errors, the conversation id) and scored in the
    background. Each score is a span, child of the run's span, on ``tracer_provider`` (the
    global provider by default): pass the same provider the processor is added to.

    A run is the outermost agent span of a trace (``invoke_agent``, OpenInference
    ``AGENT``…); a trace without one is a run when its root span carries an input and an
    output or has model calls beneath it. A trace is assembled when its root span (in this
    process) ends, so a run nested under a longer span of your own (a request span) is
    scored when that span ends.

    ``on_end`` puts the span on a bounded queue and returns (O(1), never raises); a
    thread of the processor's own assembles runs. A burst of runs larger than the
    dispatcher's queue (1,000 by default) waits in the processor, up to 10,000 more runs,
    while the dispatcher scores: a burst of 11,000 runs is scored, not dropped. A trace is
    assembled half a second (``late_span_grace``) after its root ends, so a child ending
    just after it is part of the run. ``shutdown`` takes 10 s at most: spans ending after
    it began are not waited for, what had ended is assembled and scored within it; what it
    cannot finish in time is counted (``trace_stats().spans_dropped_at_shutdown``, the runs
    as dropped, ``"shutdown"``), and those counts are final when it returns (it waits for
    the count of what it gave up; a span queued as it ends is counted by its ``on_end``).
    What it holds is bounded (open traces,
    spans per trace, bytes, age): a trace past a bound is evicted unfinished, counted in
    :meth:`trace_stats` and logged once per reason, and its sampled runs count as dropped
    (``"evicted"``). Spans recorded without content (content capture off) give runs that
    every scorer skips with that reason. Runs whose span ended in an error are dropped
    (``"run_error"``) unless ``score_failed_runs``.

    Args:
        scorers: Scorers (or :class:`~livescore.live.ScorerConfig` with a sampling rate,
            timeout and concurrency) for a dispatcher the processor creates and owns.
        dispatcher: A dispatcher to use instead; give ``scorers`` or ``dispatcher``.
        broker: Score on a worker fleet (``"redis://host:6379/0"``; ``livescore worker``
            processes score the runs).
        sinks: Dashboards each score also goes to, for the dispatcher it creates.
        tracer_provider: Where the score spans go (the dispatcher it creates).
        meter_provider: Where the score metrics go.
        capture_content: What user text the score spans carry: ``"full"``,
            ``"truncated"`` or ``"none"``.
        score_failed_runs: Score runs whose span ended in an error too (``Run.error``).
        max_traces: Open traces held at once.
        max_spans_per_trace: Spans held for one trace.
        max_bytes: Estimated bytes of every held span together.
        max_trace_age: Seconds a trace may stay open: one quiet that long (its root never
            ended here) is assembled from what it has; one still busy past it is evicted.
        max_queued_spans: Ended spans waiting for the processor's thread; past it spans
            are refused and counted.
        logger_provider: For the ``gen_ai.evaluation.result`` events of the dispatcher it
            creates; the global provider by default.
        emit: What the dispatcher it creates makes of each score besides metrics:
            ``"spans"``, ``"events"`` or both (``("spans", "events")``, the default; see
            ``LiveDispatcher(emit=...)``). With ``dispatcher=``, set it on that
            dispatcher's emitter instead.
        late_span_grace: Seconds a trace waits after its root ends for children that end
            after it (work the root started and did not await), so the run is scored with
            them; later ones are dropped as ``late`` (a flush does not wait for it).
        conversation_idle_timeout: For the dispatcher it creates: seconds a conversation
            (the runs sharing ``gen_ai.conversation.id`` or OpenInference's ``session.id``)
            must be quiet before its conversation scorers run.

    Example:
        >>> from livescore.scorers import create_keyword_coverage_scorer
        >>> processor = LiveScoringSpanProcessor(scorers=[create_keyword_coverage_scorer()])
        >>> # provider.add_span_processor(processor)
        >>> processor.shutdown()
    """

    def __init__(
        self,
        scorers: Sequence[Scorer | ScorerConfig] | None = None,
        *,
        dispatcher: Dispatcher | None = None,
        broker: str | None = None,
        sinks: Sequence[ScoreSink] | None = None,
        tracer_provider: TracerProvider | None = None,
        meter_provider: Any = None,
        capture_content: ContentCapture = "full",
        score_failed_runs: bool = False,
        max_traces: int = 10_000,
        max_spans_per_trace: int = 5_000,
        max_bytes: int = 256 * 1024 * 1024,
        max_trace_age: float = 600.0,
        max_queued_spans: int = 100_000,
        logger_provider: LoggerProvider | None = None,
        emit: str | Sequence[EmitSignal] | None = None,
        conversation_idle_timeout: float | None = DEFAULT_CONVERSATION_IDLE_TIMEOUT,
        late_span_grace: float = 0.5,
    ) -> None:
        limits = AssemblyLimits(
            max_traces=max_traces,
            max_spans_per_trace=max_spans_per_trace,
            max_bytes=max_bytes,
            max_trace_age=max_trace_age,
            # In process a trace finishes when its root ends; quiet alone never finishes it.
            quiet_period=max_trace_age,
            late_span_grace=late_span_grace,
        )
        sink, self._owns_dispatcher = dispatcher_for(
            "LiveScoringSpanProcessor",
            scorers,
            dispatcher,
            name="livescore-spans",
            broker=broker,
            sinks=sinks,
            tracer_provider=tracer_provider,
            meter_provider=meter_provider,
            capture_content=capture_content,
            logger_provider=logger_provider,
            emit=emit,
            conversation_idle_timeout=conversation_idle_timeout,
        )
        self.dispatcher: Dispatcher = sink
        self._pipeline = SpanPipeline(
            sink,
            limits,
            finish_on_root=True,
            max_queued_spans=max_queued_spans,
            score_failed_runs=score_failed_runs,
            name="livescore-span-processor",
            # A burst larger than the dispatcher's queue waits here (bounded by
            # max_waiting_runs) while it scores, instead of being dropped as queue_full.
            backlog=dispatcher_backlog(sink),
        )
        # Bound once: on_end is the hot path.
        self._put = self._pipeline.put_span
        self._shut = False
        self._log_records = _LogRecords(self._pipeline.put_log)

    @property
    def log_record_processor(self) -> Any:
        """A processor for the application's logger provider, for the instrumentations that
        write GenAI content as log records instead of span attributes (the contrib
        instrumentations' ``…CAPTURE_MESSAGE_CONTENT=EVENT_ONLY``, Google ADK's ``=true``):
        each record joins the span it names before the run is assembled.

        ``logger_provider.add_log_record_processor(processor.log_record_processor)``

        Example:
            >>> from livescore.scorers import create_keyword_coverage_scorer
            >>> processor = LiveScoringSpanProcessor(scorers=[create_keyword_coverage_scorer()])
            >>> processor.log_record_processor.force_flush()
            True
            >>> processor.shutdown()
        """
        return self._log_records

    # -- the SDK's SpanProcessor interface ---------------------------------------------------

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        """Nothing to do when a span starts."""

    def _on_ending(self, span: Any) -> None:
        """Nothing to do while a span ends (the SDK calls this before :meth:`on_end`)."""

    def on_end(self, span: Any) -> None:
        """Queue the ended span for the processor's thread: O(1), never raises."""
        self._put(span)

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Assemble the spans ended so far and wait for the scores of the finished runs."""
        if self._shut:
            # The dispatcher's own shutdown flushes the provider, and so this processor.
            return True
        return self.flush(timeout_millis / 1000)

    def shutdown(self) -> None:
        """Finish what is held, score it, and stop (the SDK calls this at exit). Idempotent.

        Traces still open are assembled from what they have; the dispatcher the processor
        created is shut down (one passed in is only flushed: its owner stops it).
        """
        if self._shut:
            return
        self._shut = True
        # Spans ending from now on (threads still emitting) are counted, their runs as
        # dropped, not waited for: the drain covers what had ended, and ends.
        self._put = self._pipeline.refuse_span
        # One deadline for the whole shutdown (not one per part): the SDK's shutdown at exit
        # waits on it.
        import time

        deadline = time.monotonic() + _SHUTDOWN_S
        try:
            # The pipeline's share leaves the dispatcher a quarter to score what it holds.
            self._pipeline.shutdown(_SHUTDOWN_S * 0.75)
            left = max(deadline - time.monotonic(), 0.0)
            if self._owns_dispatcher:
                self.dispatcher.shutdown(left)
            else:
                self.dispatcher.flush(left)
        except Exception:
            _log.exception("livescore: the span processor's shutdown failed")

    # -- livescore's side ---------------------------------------------------------------------

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until the runs of traces ended so far are scored; ``False`` on timeout.

        Example:
            >>> # processor.flush(timeout=30.0)
        """
        import time

        deadline = None if timeout is None else time.monotonic() + timeout

        def left() -> float | None:
            return None if deadline is None else max(deadline - time.monotonic(), 0.0)

        if not self._pipeline.flush(timeout):
            return False
        # Runs of a burst wait in the pipeline while the dispatcher's queue is full: hand
        # them over as it makes room, then wait for the last scores.
        while self._pipeline.stats().runs_waiting:
            if not self.dispatcher.flush(left()) or not self._pipeline.flush(left()):
                return False
        return self.dispatcher.flush(left())

    def stats(self) -> DispatchStats:
        """The dispatcher's counters: sampled, scored, failed, skipped, dropped pairs."""
        return self.dispatcher.stats()

    def end_conversation(self, conversation_id: str) -> bool:
        """Score a conversation now instead of when it goes quiet.

        Example:
            >>> # processor.end_conversation("session-42")
        """
        return self.dispatcher.end_conversation(conversation_id)

    def trace_stats(self) -> PipelineStats:
        """What became of the spans: queued, refused, assembled into runs, evicted."""
        return self._pipeline.stats()


class _LogRecords:
    """The SDK's ``LogRecordProcessor`` interface over the span processor's pipeline: each
    record is queued for the processor's thread (bounded, never raises); the processor's own
    shutdown and flush cover what it queued."""

    def __init__(self, put: Any) -> None:
        self._put = put

    def on_emit(self, log_record: Any) -> None:
        """Queue a record for its span (one that names no span or event is counted, dropped)."""
        self._put(log_record)

    emit = on_emit  # the name older SDK releases call

    def shutdown(self) -> None:
        """Nothing of its own to stop: the span processor's shutdown drains the queue."""

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Nothing of its own to flush (records join their trace when the root span ends)."""
        return True
