"""The Agents SDK trace processor that records runs and hands them to the live dispatcher.

Hot-path rules: the SDK calls its trace processors synchronously,
on the agent's own thread and event loop, for every span. So each callback here only
records references into a small per-run record, never blocks and never raises; the
finished run is handed to the dispatcher with an O(1) ``submit`` when it ends.

What a run is: one ``Runner.run`` / ``run_sync`` / ``run_streamed`` call, which the SDK
traces as a *task* span. Everything under it belongs to the run: every agent it hands off
to, and agents called as tools (a nested ``Runner.run`` inside a function span, one
*level* deeper). Two runs inside one ``with trace(...)`` block are two runs. When task
spans are switched off (``TracingConfig(include_task_and_turn_spans=False)``), the trace
is the run.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, cast

from agents.tracing import (
    AgentSpanData,
    FunctionSpanData,
    GenerationSpanData,
    GuardrailSpanData,
    HandoffSpanData,
    ResponseSpanData,
    Span,
    Trace,
    TracingProcessor,
)
from opentelemetry import trace
from opentelemetry.trace import Span as OTelSpan
from opentelemetry.trace import TracerProvider

from livescore.live import (
    Dispatcher,
    DispatchStats,
    EmitRunSpans,
    dispatcher_for,
    is_scoring,
)
from livescore.otel import (
    ContentCapture,
    current_span,
    end_span,
    span_ids,
    start_agent_span,
    start_tool_span,
)
from livescore.otel import attributes as attrs
from livescore.runs import NOT_SCORABLE_METADATA_KEY, Run, Step, ToolCall
from livescore_openai_agents import _capture, _spans

if TYPE_CHECKING:
    from opentelemetry._logs import LoggerProvider

    from livescore.live import ScorerConfig
    from livescore.otel import EmitSignal
    from livescore.scoring import Scorer
    from livescore.sinks import ScoreSink

__all__ = ("NO_CONTENT_REASON", "LiveScoringProcessor")

logger = logging.getLogger("livescore_openai_agents")


NO_CONTENT_REASON = (
    "the Agents SDK recorded no content for this run (trace_include_sensitive_data=False): "
    "there is no text to score"
)
"""Why a run traced without its content is skipped by every scorer."""

_INSTRUMENTATION_SCOPE = "livescore_openai_agents"
_INTEGRATION = "openai-agents"


class _OpenRun:
    """What the processor keeps about one run while it is live."""

    __slots__ = (
        "agent_named",
        "check_openinference",
        "decision",
        "error",
        "evicted",
        "handoffs",
        "input",
        "key",
        "last",
        "metadata",
        "name",
        "open_steps",
        "pending_calls",
        "redacted",
        "response_ids",
        "sampled",
        "sdk_trace_id",
        "span",
        "span_id",
        "spans",
        "started",
        "steps",
        "tool_spans",
        "trace_flags",
        "trace_id",
        "trace_level",
    )

    def __init__(self, key: str, sdk_trace_id: str, name: str | None, trace_level: bool) -> None:
        self.key = key  # the task span's id, or the trace's id for a trace-level run
        self.sdk_trace_id = sdk_trace_id
        self.name = name
        self.agent_named = name is not None
        self.trace_level = trace_level
        self.started = time.monotonic()
        self.decision: Any = None
        self.sampled = False
        self.evicted = False
        self.spans: set[str] = set()  # open SDK spans of this run
        self.steps: list[Step] = []
        self.open_steps: dict[str, Step] = {}
        self.pending_calls: list[ToolCall] = []  # requested by a model turn, not yet run
        self.last: Step | None = None  # the run's last own step; None after a handoff
        self.input: Any = None
        self.error: str | None = None
        self.redacted = False
        self.handoffs: list[dict[str, str | None]] = []
        self.metadata: dict[str, Any] = {}
        self.span: OTelSpan | None = None  # livescore's own invoke_agent span, to end
        self.tool_spans: dict[str, OTelSpan] = {}
        # Responses API turns: the response id of each model step, by the step's id().
        self.response_ids: dict[int, str] = {}
        self.trace_id: str | None = None
        self.span_id: str | None = None
        self.trace_flags = 1
        self.check_openinference = False


P = ParamSpec("P")


def _never_raises(
    method: Callable[Concatenate[LiveScoringProcessor, P], None],
) -> Callable[Concatenate[LiveScoringProcessor, P], None]:
    """Run a callback so that no exception ever reaches the SDK (or the agent)."""
    where = method.__name__

    @functools.wraps(method)
    def guarded(self: LiveScoringProcessor, /, *args: P.args, **kwargs: P.kwargs) -> None:
        try:
            method(self, *args, **kwargs)
        except Exception:
            self._fault(where)

    return guarded


class LiveScoringProcessor(TracingProcessor):
    """Scores OpenAI Agents SDK runs live: ``add_trace_processor(LiveScoringProcessor(...))``.

    For every run (``Runner.run``, ``run_sync`` or ``run_streamed``) it decides sampling
    once at the start, records a small :class:`~livescore.Run` from the SDK's trace (the
    user's input, each model turn, tool calls with arguments and results, handoffs between
    agents, errors, the final answer) and, when the run ends, hands it to a
    :class:`~livescore.live.LiveDispatcher` that scores it on its own worker thread. The
    agent never waits for a judge; a callback never raises into the SDK.

    Each score becomes an OpenTelemetry span, child of the span that represents the run:
    the span current when the run started (OpenInference's Agents SDK instrumentation,
    Logfire, or your own span), else an ``invoke_agent {name}`` span the processor opens
    itself, with an ``execute_tool`` child per tool call (see ``emit_run_spans``).

    Runs the SDK traced without content (``trace_include_sensitive_data=False``) are
    skipped by every scorer with that reason, never scored on empty text; runs that raised
    or were cancelled are counted as dropped with reason ``"run_error"``.

    Args:
        scorers: Scorers (or :class:`~livescore.live.ScorerConfig` with a sampling rate,
            timeout and concurrency) for a dispatcher the processor creates and owns.
        dispatcher: A dispatcher to use instead (share one across integrations); give
            ``scorers`` or ``dispatcher``, not both.
        broker: Score on a worker fleet instead of in this process: the broker's URL
            (``"redis://host:6379/0"``; needs ``livescore-ai[fleet]`` and ``livescore
            worker`` processes; see ``LiveDispatcher(broker=...)``).
        sinks: Dashboards each score also goes to (:class:`~livescore.sinks.PhoenixSink`,
            :class:`~livescore.sinks.LangfuseSink`), for the dispatcher it creates.
        name: The agent's name (``gen_ai.agent.name``, ``Run.name``); the name of the
            run's first agent by default.
        max_open_runs: Most runs recorded at once; past it the oldest is evicted.
        open_run_ttl: Seconds after which a run that never ended is evicted.
        tracer_provider: For the processor's own spans and the dispatcher it creates; the
            global provider by default.
        meter_provider: For the metrics of the dispatcher it creates.
        emit_run_spans: ``"auto"`` (default): open an ``invoke_agent`` span only when no
            other span represents the run; ``"always"``; or ``"never"``.
        capture_content: What the scores' spans of the dispatcher it creates (and the
            processor's own error statuses) carry of user text: ``"full"``,
            ``"truncated"`` or ``"none"``.
        score_failed_runs: Hand runs that ended in an error (the run raised, was cancelled,
            or stopped without an answer) to the scorers too, with ``Run.error`` set and
            no output. By default they are counted as dropped with reason ``"run_error"``.
        logger_provider: For the ``gen_ai.evaluation.result`` events of the dispatcher it
            creates; the global provider by default.
        emit: What the dispatcher it creates makes of each score besides metrics:
            ``"spans"``, ``"events"`` or both (``("spans", "events")``, the default; see
            ``LiveDispatcher(emit=...)``). With ``dispatcher=``, set it on that
            dispatcher's emitter instead.

    Example:
        >>> from livescore.scorers import create_keyword_coverage_scorer
        >>> processor = LiveScoringProcessor(scorers=[create_keyword_coverage_scorer()])
        >>> # from agents import add_trace_processor; add_trace_processor(processor)
        >>> processor.shutdown()
    """

    def __init__(
        self,
        scorers: Sequence[Scorer | ScorerConfig] | None = None,
        *,
        dispatcher: Dispatcher | None = None,
        broker: str | None = None,
        sinks: Sequence[ScoreSink] | None = None,
        name: str | None = None,
        max_open_runs: int = 1000,
        open_run_ttl: float = 600.0,
        tracer_provider: TracerProvider | None = None,
        meter_provider: Any = None,
        emit_run_spans: EmitRunSpans = "auto",
        capture_content: ContentCapture = "full",
        score_failed_runs: bool = False,
        logger_provider: LoggerProvider | None = None,
        emit: str | Sequence[EmitSignal] | None = None,
    ) -> None:
        if emit_run_spans not in ("auto", "always", "never"):
            raise ValueError(
                f"emit_run_spans must be 'auto', 'always' or 'never', not {emit_run_spans!r}"
            )
        if not isinstance(max_open_runs, int) or max_open_runs < 1:
            raise ValueError(f"max_open_runs must be a positive int, not {max_open_runs!r}")
        if not open_run_ttl > 0:
            raise ValueError(f"open_run_ttl must be positive seconds, not {open_run_ttl!r}")
        if name is not None and (not isinstance(name, str) or not name):
            raise ValueError("name must be a non-empty string")
        dispatcher, self._owns_dispatcher = dispatcher_for(
            "LiveScoringProcessor",
            scorers,
            dispatcher,
            name=f"livescore-openai-agents:{name}" if name else "livescore",
            broker=broker,
            sinks=sinks,
            tracer_provider=tracer_provider,
            meter_provider=meter_provider,
            capture_content=capture_content,
            logger_provider=logger_provider,
            emit=emit,
        )
        self.dispatcher: Dispatcher = dispatcher
        self.name = name
        self.score_failed_runs = score_failed_runs
        self.max_open_runs = max_open_runs
        self.open_run_ttl = float(open_run_ttl)
        self.emit_run_spans: EmitRunSpans = emit_run_spans
        # The processor's own spans follow the same content policy as the scores' spans.
        self._end_span = functools.partial(end_span, capture=capture_content)
        self._tracer = trace.get_tracer(_INSTRUMENTATION_SCOPE, tracer_provider=tracer_provider)
        self._lock = threading.Lock()
        self._runs: OrderedDict[str, _OpenRun] = OrderedDict()  # oldest first
        self._evicted: OrderedDict[str, _OpenRun] = OrderedDict()
        # Every open SDK span of a recorded run -> (its run, nesting level, its kind). A
        # span whose parent is here belongs to that run; agents called as tools run one
        # level deeper.
        self._spans: dict[str, tuple[_OpenRun, int, str]] = {}
        self._trace_runs: dict[str, _OpenRun] = {}  # runs keyed by trace (no task spans)
        self._traces: OrderedDict[str, Trace] = OrderedDict()  # open traces, for metadata
        self.callback_errors = 0
        """Callbacks that failed inside the processor (logged at debug, never raised)."""
        self.evicted_runs = 0
        """Runs evicted because they never ended in time or the cap was reached."""

    # -- public ---------------------------------------------------------------------------

    @property
    def open_runs(self) -> int:
        """How many runs are being recorded right now."""
        return len(self._runs)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every run handed over so far is scored; ``False`` on timeout.

        Example:
            >>> # processor.flush(timeout=30.0)
        """
        return self.dispatcher.flush(timeout)

    def force_flush(self, timeout: float | None = None) -> None:
        """The SDK's flush (``agents.flush_traces()``): wait for the scores of ended runs."""
        self.dispatcher.flush(timeout)

    def shutdown(self, timeout: float | None = None) -> None:
        """Stop the dispatcher the processor created (a dispatcher passed in is only
        flushed: its owner stops it). The SDK calls this at interpreter exit. Idempotent.
        """
        if self._owns_dispatcher:
            self.dispatcher.shutdown(timeout)
        else:
            self.dispatcher.flush(timeout)

    def stats(self) -> DispatchStats:
        """The dispatcher's counters: sampled, scored, failed, skipped, dropped runs."""
        return self.dispatcher.stats()

    # -- the SDK's callbacks (hot path) ---------------------------------------------------

    @_never_raises
    def on_trace_start(self, trace: Trace) -> None:
        traces = self._traces
        traces[trace.trace_id] = trace
        if len(traces) > 2 * self.max_open_runs:  # traces that never end: forget the oldest
            with self._lock:
                while len(traces) > self.max_open_runs:
                    traces.popitem(last=False)

    @_never_raises
    def on_trace_end(self, trace: Trace) -> None:
        self._traces.pop(trace.trace_id, None)
        run = self._trace_runs.get(trace.trace_id)
        if run is not None:
            self._finish(run, None)

    # Span kinds are told apart by ``span_data.type`` (a plain string) rather than
    # isinstance: the SDK's span data classes are ABCs, whose isinstance checks cost about a
    # microsecond each, several times per event.

    @_never_raises
    def on_span_start(self, span: Span[Any]) -> None:
        data = span.span_data
        kind = data.type
        parent = span.parent_id
        entry = self._spans.get(parent) if parent is not None else None
        if entry is None:  # outside every recorded run: does a run start here?
            if kind == "task":
                run = self._start_run(span.span_id, span.trace_id, trace_level=False)
            elif kind == "agent":
                run = self._trace_runs.get(span.trace_id)
                if run is None:  # no task spans: the trace is the run
                    run = self._start_run(span.trace_id, span.trace_id, trace_level=True)
            else:
                return
            if run is None:
                return
            level = 0
        else:
            run, level, parent_kind = entry
            if parent_kind == "function" and (kind == "task" or kind == "agent"):
                level += 1  # an agent called as a tool
        self._spans[span.span_id] = (run, level, kind)
        run.spans.add(span.span_id)
        if run.evicted:
            return
        if kind == "generation" or kind == "response":
            if run.sampled:
                name = cast(GenerationSpanData, data).model if kind == "generation" else None
                step = Step(kind="model", name=name or "model")
                run.steps.append(step)
                run.open_steps[span.span_id] = step
                if level == 0:
                    run.last = step
        elif kind == "function":
            tool = cast(FunctionSpanData, data).name
            tool_span = None
            if run.span is not None:
                tool_span = start_tool_span(self._tracer, tool, None, run.span)
                run.tool_spans[span.span_id] = tool_span
            if run.sampled:
                step = Step(kind="tool", name=tool, tool_call=ToolCall(name=tool))
                if tool_span is not None:
                    step.span_id = span_ids(tool_span)[1]
                run.steps.append(step)
                run.open_steps[span.span_id] = step
                if level == 0:
                    run.last = step
        elif kind == "agent" and level == 0:
            self._agent_started(run, cast(AgentSpanData, data).name)

    @_never_raises
    def on_span_end(self, span: Span[Any]) -> None:
        entry = self._spans.pop(span.span_id, None)
        if entry is None:
            return
        run, level, kind = entry
        run.spans.discard(span.span_id)
        if run.evicted:
            tool_span = run.tool_spans.pop(span.span_id, None)
            if tool_span is not None:
                self._end_span(tool_span, "the run was evicted", error_type="evicted")
            return
        data = span.span_data
        if kind == "generation":
            generation = cast(GenerationSpanData, data)
            step = run.open_steps.pop(span.span_id, None)
            if step is not None:
                turn = _capture.generation_turn(generation)
                self._model_ended(run, level, step, span, generation.input, turn)
                step.name = generation.model or step.name
                self._note_redaction(run, span, generation.usage, generation.output)
        elif kind == "response":
            response = cast(ResponseSpanData, data)
            step = run.open_steps.pop(span.span_id, None)
            if step is not None:
                turn = _capture.response_turn(response)
                self._model_ended(run, level, step, span, response.input, turn)
                if response.response is not None:
                    step.name = response.response.model or step.name
                    if run.sampled and isinstance(response.response.id, str):
                        run.response_ids[id(step)] = response.response.id
                self._note_redaction(run, span, response.usage, response.response)
        elif kind == "function":
            self._tool_ended(run, span, cast(FunctionSpanData, data))
        elif kind == "handoff":
            handoff = cast(HandoffSpanData, data)
            if run.sampled:
                run.handoffs.append({"from": handoff.from_agent, "to": handoff.to_agent})
            if level == 0:
                run.last = None  # the next agent must answer
        elif kind == "agent":
            if level == 0 and span.error and run.error is None:
                run.error = _capture.error_text(span.error)
        elif kind == "guardrail":
            guardrail = cast(GuardrailSpanData, data)
            if level == 0 and guardrail.triggered and run.error is None:
                run.error = f"guardrail {guardrail.name!r} tripped"
        elif kind == "task" and span.span_id == run.key:
            self._finish(run, _capture.error_text(span.error))

    # -- recording internals ---------------------------------------------------------------

    def _fault(self, where: str) -> None:
        # Never raise into the agent: count, and leave a trace for whoever debugs it.
        self.callback_errors += 1
        logger.debug(
            "livescore: %s failed; the run's record may be incomplete", where, exc_info=True
        )

    def _start_run(self, key: str, sdk_trace_id: str, *, trace_level: bool) -> _OpenRun | None:
        if is_scoring():  # a judge that is itself an Agents SDK agent is never scored
            return None
        run = _OpenRun(key, sdk_trace_id, self.name, trace_level)
        external = current_span()
        if external is not None and _spans.is_openinference_span(external):
            check_again = False
        else:
            check_again = _spans.openinference_active()
        own: OTelSpan | None = None
        if self.emit_run_spans == "always" or (
            self.emit_run_spans == "auto" and external is None and not check_again
        ):
            # Named after the first agent once it starts, unless the processor has a name.
            own = start_agent_span(self._tracer, self.name or "agent", external)
        run.trace_id, run.span_id, run.trace_flags = span_ids(own or external)
        run.span = own
        run.check_openinference = check_again and own is None
        # Decided once, from the trace id when there is one, before anything is recorded.
        decision = self.dispatcher.sample(run.trace_id or sdk_trace_id)
        run.decision = decision
        run.sampled = bool(getattr(decision, "sampled", False))
        if run.sampled:
            run.metadata = _trace_metadata(self._traces.get(sdk_trace_id))
        evicted = self._register(run)
        for old in evicted:
            self._evict(old)
        return run

    def _agent_started(self, run: _OpenRun, agent: str) -> None:
        if run.sampled:
            agents = run.metadata.setdefault("agents", [])
            if agent not in agents:
                agents.append(agent)
        if not run.agent_named:
            run.agent_named = True
            run.name = agent
            if run.span is not None:
                run.span.update_name(f"{attrs.OPERATION_INVOKE_AGENT} {agent}")
                run.span.set_attribute(attrs.GEN_AI_AGENT_NAME, agent)

    def _model_ended(
        self,
        run: _OpenRun,
        level: int,
        step: Step,
        span: Span[Any],
        model_input: Any,
        message: dict[str, Any] | None,
    ) -> None:
        step.input = model_input
        step.output = message
        step.tool_calls_requested = _capture.requested_calls(message)
        run.pending_calls.extend(step.tool_calls_requested)
        if span.error:
            step.error = _capture.error_text(span.error)
        if level == 0 and run.input is None and model_input is not None:
            run.input = model_input  # the conversation the run started from

    def _note_redaction(self, run: _OpenRun, span: Span[Any], usage: Any, recorded: Any) -> None:
        # The call completed (the SDK records usage for every completed call) but its
        # content was not kept: the SDK runs with trace_include_sensitive_data=False.
        if usage is not None and recorded is None and not span.error:
            run.redacted = True

    def _tool_ended(self, run: _OpenRun, span: Span[Any], data: FunctionSpanData) -> None:
        error = _capture.error_text(span.error)
        step = run.open_steps.pop(span.span_id, None)
        args = _capture.tool_arguments(data.input)
        call_id = self._match_call(run, data.name, args) if step is not None else None
        tool_span = run.tool_spans.pop(span.span_id, None)
        if tool_span is not None:
            if call_id:
                tool_span.set_attribute(attrs.GEN_AI_TOOL_CALL_ID, call_id)
            self._end_span(tool_span, error, error_type="tool_error")
        if step is None or step.tool_call is None:
            return
        call = step.tool_call
        call.args = step.input = args
        call.call_id = call_id
        if error is not None:
            call.error = step.error = error
        else:
            call.result = step.output = data.output
            if data.input is None and data.output is None:
                run.redacted = True

    def _match_call(self, run: _OpenRun, name: str, args: Any) -> str | None:
        """The id of the requested call a function span runs: same name and arguments."""
        pending = run.pending_calls
        fallback = None
        for index, call in enumerate(pending):
            if call.name == name:
                if call.args == args:
                    return pending.pop(index).call_id
                if fallback is None:
                    fallback = index
        return pending.pop(fallback).call_id if fallback is not None else None

    def _register(self, run: _OpenRun) -> list[_OpenRun]:
        evicted: list[_OpenRun] = []
        now = time.monotonic()
        with self._lock:
            runs = self._runs
            while runs:
                oldest = next(iter(runs.values()))
                if len(runs) < self.max_open_runs and now - oldest.started < self.open_run_ttl:
                    break
                runs.popitem(last=False)
                evicted.append(oldest)
            runs[run.key] = run
            if run.trace_level:
                self._trace_runs[run.sdk_trace_id] = run
            for old in evicted:
                old.evicted = True
                old.steps, old.open_steps, old.pending_calls = [], {}, []
                self._evicted[old.key] = old
                if old.trace_level:
                    self._trace_runs.pop(old.sdk_trace_id, None)
            # The open spans of evicted runs keep mapping to them (so their children never
            # pose as new runs), up to a bound: past it the oldest evicted run is forgotten.
            while len(self._evicted) > self.max_open_runs:
                _, gone = self._evicted.popitem(last=False)
                self._forget(gone)
        return evicted

    def _forget(self, run: _OpenRun) -> None:
        spans = self._spans
        for span_id in run.spans:
            spans.pop(span_id, None)
        run.spans = set()
        if run.trace_level:
            self._trace_runs.pop(run.sdk_trace_id, None)

    def _evict(self, run: _OpenRun) -> None:
        self.evicted_runs += 1
        self._end_spans(run, "the run never ended in time", error_type="evicted")
        if run.sampled:
            self.dispatcher.drop(run.decision, "evicted")

    def _end_spans(
        self, run: _OpenRun, error: str | None, *, error_type: str | None = None
    ) -> None:
        for tool_span in run.tool_spans.values():  # tools the run never saw end
            if error is None:
                self._end_span(tool_span, "the run ended first", error_type="unfinished")
            else:
                self._end_span(tool_span, error, error_type=error_type or "run_error")
        run.tool_spans = {}
        if run.span is not None:
            self._end_span(run.span, error, error_type=error_type or "run_error")
            run.span = None

    def _finish(self, run: _OpenRun, error: str | None) -> None:
        with self._lock:
            if self._runs.pop(run.key, None) is None:
                if self._evicted.pop(run.key, None) is not None:
                    self._forget(run)
                return
            self._forget(run)
        error = error or run.error
        if error is None and run.open_steps:
            error = "the run ended while a step was still running (cancelled)"
        answer: str | None = None
        if error is None and run.sampled and not run.redacted:
            answer, error = _final_answer(run.last)
        self._end_spans(run, error)
        if not run.sampled:
            return
        if run.check_openinference:
            # livescore ran before OpenInference: its span for the run is current only now.
            span = current_span()
            if _spans.is_openinference_span(span):
                run.trace_id, run.span_id, run.trace_flags = span_ids(span)
        if error is not None and not self.score_failed_runs:
            self.dispatcher.drop(run.decision, "run_error")
            return
        self.dispatcher.submit(self._build(run, answer, error), run.decision)

    def _build(self, run: _OpenRun, answer: str | None, error: str | None) -> Run:
        steps = run.steps
        for index, step in enumerate(steps):
            step.index = index
        metadata = run.metadata
        metadata["integration"] = _INTEGRATION
        metadata["sdk_trace_id"] = run.sdk_trace_id
        if run.handoffs:
            metadata["handoffs"] = run.handoffs
        if run.redacted:
            metadata[NOT_SCORABLE_METADATA_KEY] = NO_CONTENT_REASON
        return Run(
            input=_capture.user_messages(run.input),
            output=answer,
            run_id=run.key,
            trace_id=run.trace_id,
            span_id=run.span_id,
            trace_flags=run.trace_flags,
            name=run.name,
            steps=steps,
            error=error,
            metadata=metadata,
            # The response that answered (Responses API), for the evaluation events.
            response_id=run.response_ids.get(id(run.last)) if answer is not None else None,
        )


def _final_answer(last: Step | None) -> tuple[str | None, str | None]:
    """``(answer, error)``: what the run answered, or why it ended without an answer.

    A run answers with its last own model turn (text, no tool calls), or with a tool's
    result when the agent stops at a tool (``tool_use_behavior``). The SDK marks few of the
    errors it raises on its spans (a reused tool-call id, a refusal, a cancellation between
    turns leave none), so a run that ends on anything else ended without an answer.
    """
    if last is None:
        return None, "the run ended without an answer"
    if last.kind == "tool":
        call = last.tool_call
        if call is None or not call.ok:
            return None, "the run ended on a failed tool call"
        # As the SDK's final output (text for an agent whose output type is text).
        return str(call.result), None
    answer = _capture.answer_text(last.output)
    if answer is not None:
        return answer, None
    if last.tool_calls_requested:
        return None, "the run ended before running the tools its last model turn asked for"
    return None, "the run ended without an answer (its last model turn said nothing)"


def _trace_metadata(trace: Trace | None) -> dict[str, Any]:
    """What the trace says about the run: its workflow name, group and your metadata."""
    if trace is None:
        return {}
    metadata: dict[str, Any] = {}
    extra = getattr(trace, "metadata", None)
    if isinstance(extra, dict):
        metadata.update(extra)
    metadata["workflow_name"] = trace.name
    group_id = getattr(trace, "group_id", None)
    if group_id:
        metadata["group_id"] = group_id
    return metadata
