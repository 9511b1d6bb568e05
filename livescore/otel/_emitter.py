"""Scores as OpenTelemetry data: an evaluation span and a ``gen_ai.evaluation.result``
event per score, plus metrics.

Only ``opentelemetry-api`` is used: the application owns the SDK, its providers and its
exporters (OpenTelemetry's rule for libraries). Without an SDK every call is a no-op.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Literal, Protocol, runtime_checkable

from opentelemetry import _logs, metrics, trace
from opentelemetry._logs import LogRecord, SeverityNumber
from opentelemetry.context import Context
from opentelemetry.trace import (
    INVALID_SPAN,
    Link,
    NonRecordingSpan,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
)

from livescore._emit import DEFAULT_EMIT, EmitSignal, parse_emit
from livescore._version import __version__
from livescore.otel import attributes as A
from livescore.otel._context import parent_span_context
from livescore.runs import Run, TraceParent
from livescore.scoring import ScoreResult

__all__ = (
    "ContentCapture",
    "Emitter",
    "OTelEmitter",
    "QueueDepthSource",
    "run_span_context",
)

ContentCapture = Literal["full", "truncated", "none"]
"""What user-derived text (explanations, error messages, skip reasons) scores carry."""

# Scores are usually in [0, 1]; the SDK's default buckets (0, 5, 10, ...) would put every
# score in one bucket.
_SCORE_BUCKETS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0, 5.0, 10.0)
_LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
_CALIBRATION_ATTRIBUTES = (
    A.LIVESCORE_CALIBRATION,
    A.LIVESCORE_CALIBRATION_THRESHOLD,
    A.LIVESCORE_CALIBRATION_PROBABILITY,
)

# A logging warning, not warnings.warn: it is raised on the scoring thread, where a warning's
# source line would point into livescore, and the library reports every runtime condition
# (drops, failed sinks) through logging, which applications already route.
_log = logging.getLogger("livescore.otel")
_nowhere_lock = threading.Lock()
_nowhere_warned = False  # once per process, whatever the number of emitters

QueueDepthSource = Callable[[], Iterable[tuple[int, dict[str, str]]]]
"""A function that reports ``(depth, attributes)`` pairs for the queue-depth gauge."""


@runtime_checkable
class Emitter(Protocol):
    """Where live scores and counts go: everything a dispatcher calls. :class:`OTelEmitter`
    is the default.

    A dispatcher calls ``emit`` once per finished score, on its worker thread (or the thread
    an executor finishes the score on); ``record_sampled``, ``record_dropped`` and
    ``record_handed_off`` with batched counts (``count`` may exceed 1) from its worker, or
    from ``flush``/``shutdown`` — never on the agent's submitting thread;
    ``observe_queue_depth`` once, when it is created; ``flush`` at shutdown and when a
    SIGTERM handler flushes before the process ends. None of them may block for long, and
    an exception from any of them costs a log line and ``stats().emit_errors``, never a
    score.
    """

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
        """Publish one finished score (scored, failed or skipped).

        ``parent`` is the span the score nests under (the run's span, or the span current
        when the run was submitted); ``None`` falls back to the run's own ids.
        """
        ...

    def record_sampled(self, scorer_id: str, count: int = 1) -> None:
        """Count (run, scorer) pairs that sampling picked."""
        ...

    def record_dropped(self, scorer_id: str, reason: str, count: int = 1) -> None:
        """Count (run, scorer) pairs that will never be scored, and why."""
        ...

    def record_handed_off(self, scorer_id: str, count: int = 1) -> None:
        """Count pairs an executor handed to another process, which counts how they end."""
        ...

    def observe_queue_depth(self, source: QueueDepthSource) -> None:
        """Report a dispatcher's queue depth (``source`` returns ``(depth, attributes)``)."""
        ...

    def flush(self, timeout: float | None = None) -> bool:
        """Push out what the emitter buffers, within ``timeout`` seconds; ``False`` if not."""
        ...


def run_span_context(run: Run) -> SpanContext | None:
    """The span context of the span that represents ``run`` (``None`` when it has none).

    The ids are normalised (upper case, a ``0x`` prefix). The context is marked local
    (``is_remote=False``): in-process, the run's span was created by this same process; a
    job rebuilt on a worker carries a remote :class:`~livescore.runs.TraceParent` instead.

    Example:
        >>> from livescore import Run
        >>> ctx = run_span_context(Run(trace_id="4BF92F3577B34DA6A3CE929D0E0E4736",
        ...                            span_id="00f067aa0ba902b7"))
        >>> ctx is not None and ctx.is_valid
        True
    """
    parent = TraceParent.of_run(run)
    return parent_span_context(parent) if parent is not None else None


class OTelEmitter:
    """Publish scores as OpenTelemetry spans, events and metrics (``opentelemetry-api`` only).

    Spans (``"spans"`` in ``emit``): each score becomes an ``evaluation {scorer id}`` span,
    a child of the run's span (the ``parent`` given to :meth:`emit`, else ``run.trace_id``
    / ``run.span_id``) with one link to it (a conversation's score: a child of its last
    covered turn's span, with a link to every covered turn's span, ``gen_ai.conversation.id``,
    OpenInference's ``session.id`` and the ``livescore.conversation.*`` turns it covers),
    carrying the GenAI ``gen_ai.evaluation.*`` attributes, ``livescore.*`` extras, the
    scorer's own ``ScoreResult.attributes`` (claim counts, truncation…), the OpenInference
    ``evaluations.0.evaluation.*`` attributes and a ``gen_ai.evaluation.result`` span event.
    A run without a span gets a root span in a new trace, findable by ``livescore.run.id``.
    A run whose trace is not sampled (scored only when the dispatcher's
    ``score_unsampled_traces=True``) gets a root span in a new trace too, linked to the
    run's span and carrying ``livescore.run.trace_id``: as a child of an unsampled span, a
    ``ParentBased`` sampler (the SDK's default) would drop it; as a new root, your sampler
    decides for it afresh.

    Events (``"events"`` in ``emit``): each scored or failed score also becomes a
    ``gen_ai.evaluation.result`` log record through the Logs API, as the GenAI semantic
    conventions define it: its trace and span ids are the run's span (not the evaluation
    span), its attributes ``gen_ai.evaluation.name``, ``gen_ai.evaluation.score.value``,
    ``gen_ai.evaluation.score.label``, ``gen_ai.evaluation.explanation``,
    ``gen_ai.response.id`` (the run's ``response_id``) and, for a failed score,
    ``error.type`` (and no score), plus ``livescore.*`` extras. A skipped score is not an
    evaluation result: it has no event (its span and the ``livescore.runs`` counter record
    it).

    Metrics (meter ``livescore``, always): ``livescore.score`` (histogram),
    ``livescore.runs`` (counter by ``livescore.status``), ``livescore.judge.latency``
    (histogram, seconds), ``livescore.judge.tokens`` (counter by ``gen_ai.token.type``),
    ``livescore.judge.cost`` (counter, USD, by scorer and judge model, for judges with a
    price) and ``livescore.queue.depth`` (gauge). A score a judge budget could not pay counts
    as skipped with ``livescore.reason = "budget_exhausted"``.

    Args:
        tracer_provider: Where spans go; the global provider by default (resolved lazily,
            so an SDK set up after this emitter still receives the spans).
        meter_provider: Where metrics go; the global provider by default.
        capture_content: ``"full"`` keeps explanations, error messages, skip reasons and
            the text values of scorers' attributes; ``"truncated"`` cuts them to
            ``max_content_chars``; ``"none"`` leaves them out (they can quote user data).
            Scores, labels, counts and flags are always kept.
        max_content_chars: The cut for ``"truncated"``.
        logger_provider: Where events go; the global ``LoggerProvider`` by default
            (resolved lazily, like the tracer provider).
        emit: ``"spans"``, ``"events"`` or both (the default), as a tuple or as
            ``"spans,events"``.
        semconv_proposals: Also set the attributes of open GenAI convention proposals
            whose names are settled enough: ``gen_ai.evaluation.evaluator.id``,
            ``.evaluator.version`` and ``.evaluator.type`` (PR #359 of
            semantic-conventions-genai) and ``gen_ai.evaluation.target`` (the agent's name,
            as pydantic-evals emits it). Off by default: they may still be renamed.

    Example:
        >>> from livescore import Run, ScoreResult
        >>> emitter = OTelEmitter(capture_content="truncated", max_content_chars=200)
        >>> emitter.emit(Run(run_id="r1"), ScoreResult(run_id="r1", scorer_id="demo",
        ...              score=1.0), sample_rate=1.0)
        >>> OTelEmitter(emit="events").signals
        ('events',)
    """

    def __init__(
        self,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: metrics.MeterProvider | None = None,
        capture_content: ContentCapture = "full",
        max_content_chars: int = 1000,
        *,
        logger_provider: _logs.LoggerProvider | None = None,
        emit: str | Iterable[EmitSignal] = DEFAULT_EMIT,
        semconv_proposals: bool = False,
    ) -> None:
        self.signals: tuple[EmitSignal, ...] = parse_emit(emit)
        """What each score becomes besides metrics: ``"spans"``, ``"events"`` or both."""
        self.semconv_proposals = bool(semconv_proposals)
        if capture_content not in ("full", "truncated", "none"):
            raise ValueError(
                f"capture_content must be 'full', 'truncated' or 'none', not {capture_content!r}"
            )
        if isinstance(max_content_chars, bool) or not isinstance(max_content_chars, int):
            raise TypeError("max_content_chars must be an int")
        if max_content_chars < 1:
            raise ValueError(f"max_content_chars must be at least 1, not {max_content_chars}")
        self.capture_content: ContentCapture = capture_content
        self.max_content_chars = max_content_chars
        self._tracer_provider = tracer_provider
        self._meter_provider = meter_provider
        self._logger_provider = logger_provider
        self._spans = "spans" in self.signals
        self._events = "events" in self.signals
        # Whether the first live score still has to check that it reaches an SDK provider.
        self._check_destination = True
        self._tracer = trace.get_tracer(
            A.INSTRUMENTATION_SCOPE, __version__, tracer_provider=tracer_provider
        )
        self._logger = _logs.get_logger(
            A.INSTRUMENTATION_SCOPE, __version__, logger_provider=logger_provider
        )
        meter = metrics.get_meter(
            A.INSTRUMENTATION_SCOPE, __version__, meter_provider=meter_provider
        )
        self._meter = meter
        self._score = meter.create_histogram(
            A.METRIC_SCORE,
            unit="1",
            description="Score values of live scores, per scorer",
            explicit_bucket_boundaries_advisory=_SCORE_BUCKETS,
        )
        self._runs = meter.create_counter(
            A.METRIC_RUNS,
            unit="{run}",
            description="(run, scorer) pairs by outcome: sampled, scored, failed, skipped, dropped",
        )
        self._judge_latency = meter.create_histogram(
            A.METRIC_JUDGE_LATENCY,
            unit="s",
            description="Time one score spent waiting on its judge calls",
            explicit_bucket_boundaries_advisory=_LATENCY_BUCKETS,
        )
        self._judge_tokens = meter.create_counter(
            A.METRIC_JUDGE_TOKENS,
            unit="{token}",
            description="Tokens the judge consumed, by gen_ai.token.type",
        )
        self._judge_cost = meter.create_counter(
            A.METRIC_JUDGE_COST,
            unit="USD",
            description="What judge calls cost in US dollars, by scorer and judge model",
        )
        self._queue_sources: list[weakref.ref[Any] | Callable[[], Any]] = []
        self._queue_lock = threading.Lock()
        self._queue_gauge: Any = None

    # -- counts (batched by the dispatcher, off the agent's thread) -------------------------

    def record_sampled(self, scorer_id: str, count: int = 1) -> None:
        """Count ``count`` (run, scorer) pairs that sampling picked."""
        self._runs.add(count, {A.LIVESCORE_SCORER_ID: scorer_id, A.LIVESCORE_STATUS: "sampled"})

    def record_dropped(self, scorer_id: str, reason: str, count: int = 1) -> None:
        """Count ``count`` pairs that will never be scored, with the reason."""
        self._runs.add(
            count,
            {
                A.LIVESCORE_SCORER_ID: scorer_id,
                A.LIVESCORE_STATUS: "dropped",
                A.LIVESCORE_REASON: reason,
            },
        )

    def record_handed_off(self, scorer_id: str, count: int = 1) -> None:
        """Count ``count`` pairs handed to another process (which counts how they end)."""
        self._runs.add(count, {A.LIVESCORE_SCORER_ID: scorer_id, A.LIVESCORE_STATUS: "handed_off"})

    def flush(self, timeout: float | None = None) -> bool:
        """Force-flush the tracer, logger and meter providers (SDK ones; API ones have
        nothing).

        A dispatcher calls it at shutdown and from the SIGTERM handler, so scores still in
        a ``BatchSpanProcessor`` leave before the process does. It never shuts a provider
        down: the providers belong to the application.

        Returns:
            ``False`` when a provider did not finish within ``timeout``.
        """
        deadline = None if timeout is None else time.monotonic() + max(timeout, 0.0)
        # The tracer provider even without "spans": callers count on this flush to export
        # the run spans of the same provider before sinks annotate them.
        providers: list[Any] = [self._tracer_provider or trace.get_tracer_provider()]
        if self._events:
            providers.append(self._logger_provider or _logs.get_logger_provider())
        providers.append(self._meter_provider or metrics.get_meter_provider())
        done = True
        for provider in providers:
            # force_flush is SDK API, not OTel API: the API's no-op providers lack it.
            force_flush = getattr(provider, "force_flush", None)
            if not callable(force_flush):
                continue
            millis = 30_000 if deadline is None else max(deadline - time.monotonic(), 0.0) * 1000
            done = bool(force_flush(int(millis))) and done
        return done

    # -- queue depth gauge ----------------------------------------------------------------

    def observe_queue_depth(self, source: QueueDepthSource) -> None:
        """Report a queue's depth on the ``livescore.queue.depth`` gauge.

        ``source`` returns ``(depth, attributes)`` pairs; a bound method is held weakly, so
        registering a dispatcher does not keep it alive.
        """
        ref: weakref.ref[Any] | Callable[[], Any]
        try:
            ref = weakref.WeakMethod(source)  # type: ignore[arg-type]
        except TypeError:
            ref = _strong(source)
        with self._queue_lock:
            self._queue_sources.append(ref)
            if self._queue_gauge is None:
                self._queue_gauge = self._meter.create_observable_gauge(
                    A.METRIC_QUEUE_DEPTH,
                    callbacks=[self._observe_queues],
                    unit="{run}",
                    description="Runs waiting in a live dispatcher's queue",
                )

    def _observe_queues(self, options: metrics.CallbackOptions) -> Iterator[metrics.Observation]:
        with self._queue_lock:
            sources = [ref() for ref in self._queue_sources]
            self._queue_sources = [
                ref for ref, fn in zip(self._queue_sources, sources, strict=True) if fn is not None
            ]
        for fn in sources:
            if fn is None:
                continue
            for depth, attrs in fn():
                yield metrics.Observation(depth, attrs)

    # -- scores ----------------------------------------------------------------------------

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
        """Publish one score as an evaluation span (with its span event), a
        ``gen_ai.evaluation.result`` event and metrics, as ``emit`` chose.

        Args:
            run: The scored run; its trace and span ids place the span unless ``parent``
                is given.
            result: The score (any status).
            sample_rate: The rate that sampled the run (``None`` for a predicate), so
                dashboards can re-weight.
            source: ``"live"`` or ``"eval"``.
            scorer_version: Recorded as ``livescore.scorer.version``.
            start_time_ns: When scoring started (epoch ns); ``now - result.duration_s`` by
                default. The span ends now, and the event is timed now.
            parent: The span to nest under, and the span the event is parented to (the
                dispatcher passes the job's parent: the run's span, or the span current at
                submit).
        """
        if self._check_destination and source == "live":
            # Once per emitter, on the scoring thread: the global providers are resolved
            # lazily, so an SDK set up after this emitter was made still counts.
            self._check_destination = False
            _warn_if_nowhere(self)
        end_ns = time.time_ns()
        if start_time_ns is None:
            start_time_ns = end_ns - int(max(result.duration_s, 0.0) * 1e9)
        if parent is None:
            parent = TraceParent.of_run(run)
        if self._spans:
            self._emit_span(
                run, result, parent, sample_rate, source, scorer_version, start_time_ns, end_ns
            )
        self._emit_metrics(result)
        if self._events and result.status != "skipped":
            self._emit_event(run, result, parent, sample_rate, source, scorer_version, end_ns)

    def _emit_event(
        self,
        run: Run,
        result: ScoreResult,
        parent: TraceParent | None,
        sample_rate: float | None,
        source: str,
        scorer_version: str | None,
        end_ns: int,
    ) -> None:
        attrs = self._event_attributes(run, result, sample_rate, source, scorer_version)
        # The record takes its trace and span ids from this context's span: the run's span.
        # Without one, an explicit invalid span: an empty context would fall back to
        # whatever span is current on this thread.
        span = NonRecordingSpan(parent_span_context(parent)) if parent else INVALID_SPAN
        failed = result.status == "failed"
        self._logger.emit(
            LogRecord(
                timestamp=end_ns,
                context=trace.set_span_in_context(span, Context()),
                severity_number=SeverityNumber.WARN if failed else SeverityNumber.INFO,
                severity_text="WARN" if failed else "INFO",
                body=_event_body(result),
                attributes=attrs,
                event_name=A.GEN_AI_EVALUATION_RESULT_EVENT,
            )
        )

    def _event_attributes(
        self,
        run: Run,
        result: ScoreResult,
        sample_rate: float | None,
        source: str,
        scorer_version: str | None,
    ) -> dict[str, Any]:
        # The convention's attributes first, then what a reader of the event needs to
        # trust or re-weight it. The scorer's own facts stay on the span.
        attrs: dict[str, Any] = {A.GEN_AI_EVALUATION_NAME: result.scorer_id}
        if result.status == "scored":
            if result.score is not None:
                attrs[A.GEN_AI_EVALUATION_SCORE_VALUE] = float(result.score)
            if result.label is not None:
                attrs[A.GEN_AI_EVALUATION_SCORE_LABEL] = result.label
            explanation = self._content(result.reason)
            if explanation:
                attrs[A.GEN_AI_EVALUATION_EXPLANATION] = explanation
        if run.response_id:
            attrs[A.GEN_AI_RESPONSE_ID] = run.response_id
        if result.status == "failed":
            attrs[A.ERROR_TYPE] = result.error_type or "error"
        attrs[A.LIVESCORE_STATUS] = result.status
        attrs[A.LIVESCORE_RUN_ID] = run.run_id
        attrs[A.LIVESCORE_SOURCE] = source
        if scorer_version is not None:
            attrs[A.LIVESCORE_SCORER_VERSION] = scorer_version
        if sample_rate is not None:
            attrs[A.LIVESCORE_SAMPLE_RATE] = float(sample_rate)
        if result.status == "failed":
            if result.failed_step:
                attrs[A.LIVESCORE_FAILED_STEP] = result.failed_step
            message = self._content(result.error)
            if message:
                attrs[A.LIVESCORE_ERROR_MESSAGE] = message
        self._judge_attributes(result, attrs)
        self._proposal_attributes(run, result, scorer_version, attrs)
        return attrs

    def _judge_attributes(self, result: ScoreResult, attrs: dict[str, Any]) -> None:
        if result.judge_model:
            attrs[A.LIVESCORE_JUDGE_MODEL] = result.judge_model
        # Which calibration set the label: on the event too, and never withheld as content
        # (an id and two numbers, no user text).
        for name in _CALIBRATION_ATTRIBUTES:
            value = result.attributes.get(name)
            if value is not None:
                attrs[name] = value
        usage = result.usage
        if usage.calls:
            attrs[A.LIVESCORE_JUDGE_CALLS] = usage.calls
            attrs[A.LIVESCORE_JUDGE_INPUT_TOKENS] = usage.input_tokens
            attrs[A.LIVESCORE_JUDGE_OUTPUT_TOKENS] = usage.output_tokens

    def _proposal_attributes(
        self, run: Run, result: ScoreResult, scorer_version: str | None, attrs: dict[str, Any]
    ) -> None:
        if not self.semconv_proposals:
            return
        attrs[A.GEN_AI_EVALUATION_EVALUATOR_ID] = result.scorer_id
        if scorer_version is not None:
            attrs[A.GEN_AI_EVALUATION_EVALUATOR_VERSION] = scorer_version
        # A scorer with a judge names its model on every result, failed ones included.
        attrs[A.GEN_AI_EVALUATION_EVALUATOR_TYPE] = (
            A.EVALUATOR_TYPE_LLM_JUDGE if result.judge_model else A.EVALUATOR_TYPE_DETERMINISTIC
        )
        if run.name:
            attrs[A.GEN_AI_EVALUATION_TARGET] = run.name

    def _emit_span(
        self,
        run: Run,
        result: ScoreResult,
        parent: TraceParent | None,
        sample_rate: float | None,
        source: str,
        scorer_version: str | None,
        start_ns: int,
        end_ns: int,
    ) -> None:
        attrs = self._span_attributes(run, result, sample_rate, source, scorer_version)
        links: list[Link] = []
        context = Context()  # no run span to hang the score on: a root span, found by run id
        if result.turns is not None:
            # A conversation's score links to every turn it covers (its parent, the last
            # turn's span, is linked below).
            linked = {(parent.trace_id, parent.span_id)} if parent is not None else set()
            for turn in result.turns.spans:
                if turn is not None and (turn.trace_id, turn.span_id) not in linked:
                    linked.add((turn.trace_id, turn.span_id))
                    links.append(Link(parent_span_context(turn)))
        if parent is not None:
            span_context = parent_span_context(parent)
            links.append(Link(span_context))
            if parent.sampled:
                context = trace.set_span_in_context(NonRecordingSpan(span_context))
            else:
                # A child of an unsampled span is dropped by ParentBased samplers: a root of
                # its own, linked to the run's span, that names the run's trace.
                attrs[A.LIVESCORE_RUN_TRACE_ID] = parent.trace_id
        span = self._tracer.start_span(
            f"{A.OPERATION_EVALUATION} {result.scorer_id}",
            context=context,
            kind=SpanKind.INTERNAL,
            attributes=attrs,
            links=links,
            start_time=start_ns,
        )
        event: dict[str, Any] = {A.GEN_AI_EVALUATION_NAME: result.scorer_id}
        for key in (
            A.GEN_AI_EVALUATION_SCORE_VALUE,
            A.GEN_AI_EVALUATION_SCORE_LABEL,
            A.GEN_AI_EVALUATION_EXPLANATION,
            A.ERROR_TYPE,
        ):
            if key in attrs:
                event[key] = attrs[key]
        span.add_event(A.GEN_AI_EVALUATION_RESULT_EVENT, event, timestamp=end_ns)
        if result.status == "failed":
            error_type = result.error_type or "error"
            message = self._content(result.error)
            span.set_status(
                Status(StatusCode.ERROR, f"{error_type}: {message}" if message else error_type)
            )
        span.end(end_time=end_ns)

    def _span_attributes(
        self,
        run: Run,
        result: ScoreResult,
        sample_rate: float | None,
        source: str,
        scorer_version: str | None,
    ) -> dict[str, Any]:
        # The scorer's own facts first, so that a name the emitter sets itself wins. Their
        # text values may quote user data: content capture applies to them too.
        attrs: dict[str, Any] = {}
        for key, value in result.attributes.items():
            if isinstance(value, str):
                text = self._content(value)
                if text is not None:
                    attrs[key] = text
            else:
                attrs[key] = value
        attrs |= {
            A.GEN_AI_OPERATION_NAME: A.OPERATION_EVALUATION,
            A.GEN_AI_EVALUATION_NAME: result.scorer_id,
            A.OPENINFERENCE_SPAN_KIND: A.OPENINFERENCE_KIND_EVALUATOR,
            A.OPENINFERENCE_EVAL_NAME: result.scorer_id,
            A.LIVESCORE_SCORER_ID: result.scorer_id,
            A.LIVESCORE_STATUS: result.status,
            A.LIVESCORE_RUN_ID: run.run_id,
            A.LIVESCORE_SOURCE: source,
            A.LIVESCORE_DURATION: float(result.duration_s),
        }
        if scorer_version is not None:
            attrs[A.LIVESCORE_SCORER_VERSION] = scorer_version
        turns = result.turns
        if turns is not None:
            attrs[A.GEN_AI_CONVERSATION_ID] = turns.conversation_id
            attrs[A.OPENINFERENCE_SESSION_ID] = turns.conversation_id
            attrs[A.LIVESCORE_CONVERSATION_TURNS] = turns.count
            attrs[A.LIVESCORE_CONVERSATION_FIRST_TURN] = turns.first
            attrs[A.LIVESCORE_CONVERSATION_LAST_TURN] = turns.last
            if turns.first > 1:
                attrs[A.LIVESCORE_CONVERSATION_TURNS_FORGOTTEN] = turns.first - 1
        if sample_rate is not None:
            attrs[A.LIVESCORE_SAMPLE_RATE] = float(sample_rate)
        if result.score is not None:
            attrs[A.GEN_AI_EVALUATION_SCORE_VALUE] = float(result.score)
            attrs[A.OPENINFERENCE_EVAL_SCORE] = float(result.score)
        if result.label is not None:
            attrs[A.GEN_AI_EVALUATION_SCORE_LABEL] = result.label
            attrs[A.OPENINFERENCE_EVAL_LABEL] = result.label
        if result.status == "scored":
            explanation = self._content(result.reason)
            if explanation:
                attrs[A.GEN_AI_EVALUATION_EXPLANATION] = explanation
                attrs[A.OPENINFERENCE_EVAL_EXPLANATION] = explanation
        elif result.status == "skipped":
            skip = self._content(result.reason)
            if skip:
                attrs[A.LIVESCORE_SKIP_REASON] = skip
        else:
            attrs[A.ERROR_TYPE] = result.error_type or "error"
            if result.failed_step:
                attrs[A.LIVESCORE_FAILED_STEP] = result.failed_step
        self._judge_attributes(result, attrs)
        if result.usage.calls:
            attrs[A.LIVESCORE_JUDGE_LATENCY] = float(result.usage.latency_s)
        if run.response_id:
            attrs[A.GEN_AI_RESPONSE_ID] = run.response_id
        self._proposal_attributes(run, result, scorer_version, attrs)
        return attrs

    def _content(self, text: str | None) -> str | None:
        if not text or self.capture_content == "none":
            return None
        if self.capture_content == "truncated" and len(text) > self.max_content_chars:
            return text[: self.max_content_chars - 1] + "…"
        return text

    def _emit_metrics(self, result: ScoreResult) -> None:
        scorer = {A.LIVESCORE_SCORER_ID: result.scorer_id}
        outcome: dict[str, str] = {**scorer, A.LIVESCORE_STATUS: result.status}
        if result.status == "failed":
            outcome[A.ERROR_TYPE] = result.error_type or "error"
        elif result.attributes.get(A.LIVESCORE_JUDGE_BUDGET_EXHAUSTED) is True:
            outcome[A.LIVESCORE_REASON] = "budget_exhausted"
        self._runs.add(1, outcome)
        if result.status == "scored" and result.score is not None:
            self._score.record(
                float(result.score), {**scorer, A.GEN_AI_EVALUATION_NAME: result.scorer_id}
            )
        usage = result.usage
        if usage.calls:
            judge = dict(scorer)
            if result.judge_model:
                judge[A.LIVESCORE_JUDGE_MODEL] = result.judge_model
            self._judge_latency.record(float(usage.latency_s), judge)
            if usage.input_tokens:
                self._judge_tokens.add(usage.input_tokens, {**judge, A.GEN_AI_TOKEN_TYPE: "input"})
            if usage.output_tokens:
                self._judge_tokens.add(
                    usage.output_tokens, {**judge, A.GEN_AI_TOKEN_TYPE: "output"}
                )
            if usage.cost_usd:
                self._judge_cost.add(float(usage.cost_usd), judge)


# The API's stand-ins: the proxies until an application sets a provider, the no-ops when it
# asks for none. By class name: ProxyLoggerProvider is not exported by the API.
_API_DEFAULT_PROVIDERS = frozenset(
    {
        "ProxyTracerProvider",
        "NoOpTracerProvider",
        "_DefaultTracerProvider",
        "ProxyLoggerProvider",
        "NoOpLoggerProvider",
    }
)


def _is_api_default(provider: object) -> bool:
    """Whether ``provider`` is the OpenTelemetry API's stand-in (no SDK configured)."""
    cls = type(provider)
    return cls.__module__.startswith("opentelemetry.") and cls.__name__ in _API_DEFAULT_PROVIDERS


def _warn_if_nowhere(emitter: OTelEmitter) -> None:
    """Say once per process that live scores reach no SDK provider, and the call that fixes it.

    A provider given to the emitter counts as configured (a no-op one is a choice), and a
    score that reaches either signal's provider goes somewhere. Live scores only: an
    offline evaluation returns its results to the caller.
    """
    global _nowhere_warned
    if _nowhere_warned:
        return
    spans_lost = emitter._spans and (
        emitter._tracer_provider is None and _is_api_default(trace.get_tracer_provider())
    )
    events_lost = emitter._events and (
        emitter._logger_provider is None and _is_api_default(_logs.get_logger_provider())
    )
    if (emitter._spans and not spans_lost) or (emitter._events and not events_lost):
        return
    with _nowhere_lock:
        if _nowhere_warned:
            return
        _nowhere_warned = True
    if emitter._spans:
        _log.warning(
            "livescore: scores are being made, but no OpenTelemetry SDK tracer provider is "
            "set, so their evaluation spans go nowhere; set one before scoring: "
            "opentelemetry.trace.set_tracer_provider(TracerProvider()) (from "
            "opentelemetry.sdk.trace, with an exporter). Said once per process."
        )
    else:
        _log.warning(
            "livescore: scores are being made, but no OpenTelemetry SDK logger provider is "
            "set, so their gen_ai.evaluation.result events go nowhere; set one before "
            "scoring: opentelemetry._logs.set_logger_provider(LoggerProvider()) (from "
            "opentelemetry.sdk._logs, with an exporter). Said once per process."
        )


def _event_body(result: ScoreResult) -> str:
    """A short, readable line for log viewers; scores and labels only, never user text."""
    if result.status == "failed":
        return f"evaluation {result.scorer_id} failed: {result.error_type or 'error'}"
    score = "none" if result.score is None else f"{result.score:g}"
    label = f" ({result.label})" if result.label else ""
    return f"evaluation {result.scorer_id} = {score}{label}"


def _strong(fn: Callable[[], Any]) -> Callable[[], Any]:
    # Same call shape as a weakref: calling it returns the callable.
    return lambda: fn
