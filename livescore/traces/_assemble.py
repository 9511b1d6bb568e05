"""From spans to runs: which span is a run, what the run holds, and the bounded buffer of
open traces that the span processor and the OTLP receiver share.

A run is the outermost agent span of a trace (``invoke_agent``, an OpenInference ``AGENT``
span) with everything beneath it; a trace with no agent span is one run when its root
span carries an input and an output (a lone ``chat`` span, a LangChain ``CHAIN`` root).
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from livescore import _attributes as A
from livescore._messages import message_text
from livescore.runs import NOT_SCORABLE_METADATA_KEY, Run, Step, ToolCall
from livescore.traces import _conventions as conv
from livescore.traces._span import SpanRecord

__all__ = (
    "NO_CONTENT_REASON",
    "AssemblyLimits",
    "AssemblyStats",
    "TraceAssembler",
    "build_run",
    "runs_from_spans",
)

_log = logging.getLogger("livescore.traces")

NO_CONTENT_REASON = (
    "the trace records no {what} for this run (its instrumentation captured no message "
    "content): there is no text to score"
)
"""Why a run assembled from content-less spans is skipped (``{what}``: input, output…)."""

INTEGRATION = "otel"


# -- one run -------------------------------------------------------------------------------------


def _order(span: SpanRecord) -> tuple[int, int]:
    return (span.start_ns, span.end_ns)


def build_run(root: SpanRecord, spans: Iterable[SpanRecord]) -> Run:
    """The :class:`~livescore.Run` that ``root`` (a run's span) and its descendants describe.

    ``spans`` may hold the whole trace, in any order: only ``root``'s descendants count.
    The run's ``trace_id`` / ``span_id`` are ``root``'s, so its scores nest under it.

    Example:
        >>> root = SpanRecord("1" * 32, "2" * 16, None, "invoke_agent", 0, 9, {
        ...     "gen_ai.operation.name": "invoke_agent",
        ...     "gen_ai.input.messages": '[{"role": "user", "content": "2+2?"}]',
        ...     "gen_ai.output.messages": '[{"role": "assistant", "content": "4"}]'})
        >>> run = build_run(root, [root])
        >>> run.input, run.output, run.span_id
        ([{'role': 'user', 'content': '2+2?'}], '4', '2222222222222222')
    """
    by_parent: dict[str, list[SpanRecord]] = {}
    for span in spans:
        if span.span_id != root.span_id and span.parent_span_id is not None:
            by_parent.setdefault(span.parent_span_id, []).append(span)
    descendants: list[SpanRecord] = []
    stack = [root.span_id]
    seen = {root.span_id}
    while stack:
        for child in by_parent.get(stack.pop(), ()):
            if child.span_id not in seen:  # a malformed trace may loop
                seen.add(child.span_id)
                descendants.append(child)
                stack.append(child.span_id)
    descendants.sort(key=_order)

    steps: list[Step] = []
    pending: list[ToolCall] = []  # calls models asked for, not yet matched to a tool span
    answer_from_tool: str | None = None
    first_model_input: list[dict[str, Any]] | None = None
    last_model_answer: str | None = None
    last_answer_response_id: str | None = None
    redacted_tools = 0
    for span in descendants:
        kind = conv.span_kind(span)
        if kind == "model":
            messages = conv.input_messages(span)
            if first_model_input is None and messages:
                first_model_input = messages
            out = conv.output_messages(span)
            text = conv.answer_text(out)
            if text is None:
                text = conv.output_value(span) if not out else None
            requested = conv.requested_calls(out)
            pending.extend(requested)
            steps.append(
                Step(
                    kind="model",
                    name=conv.model_name(span) or span.name,
                    input=messages,
                    output=text,
                    tool_calls_requested=requested,
                    error=conv.error_of(span),
                    span_id=span.span_id,
                )
            )
            if text:
                last_model_answer = text
                last_answer_response_id = _response_id(span)
        elif kind == "tool":
            call = conv.tool_call_of(span)
            if call.call_id is None:
                call.call_id = _match(pending, call)
            if call.name in conv.ANSWER_TOOLS:
                if call.ok and call.result is not None:
                    answer_from_tool = message_text(call.result) or str(call.result)
                continue
            if call.args is None and call.result is None and call.error is None:
                redacted_tools += 1
            steps.append(
                Step(
                    kind="tool",
                    name=call.name,
                    input=call.args,
                    output=call.result,
                    tool_call=call,
                    error=call.error,
                    span_id=span.span_id,
                )
            )
        elif kind == "retriever":
            steps.append(
                Step(
                    kind="retriever",
                    name=span.name,
                    input=conv.input_value(span),
                    documents=conv.retrieved_documents(span),
                    error=conv.error_of(span),
                    span_id=span.span_id,
                )
            )
    for index, step in enumerate(steps):
        step.index = index

    run_input: Any = _run_input(root)
    if run_input is None and first_model_input is not None:
        run_input = _user_turn(first_model_input)
    output = _run_output(root)
    if output is None:
        output = answer_from_tool if answer_from_tool is not None else last_model_answer
    metadata: dict[str, Any] = {
        "integration": INTEGRATION,
        "convention": conv.convention_of(root),
        "span_name": root.name,
    }
    if root.service_name:
        metadata["service_name"] = root.service_name
    conversation = conv.conversation_id(root) or next(
        (c for c in (conv.conversation_id(s) for s in descendants) if c), None
    )
    if conversation:
        metadata["conversation_id"] = conversation
    user = root.attributes.get("user.id")
    if isinstance(user, str) and user:
        metadata["user_id"] = user
    error = conv.error_of(root)
    missing = [
        what for what, value in (("input", run_input), ("output", output)) if not _has_text(value)
    ]
    if missing and error is None:
        what = " or ".join(missing)
        if redacted_tools:
            what += " (nor tool arguments or results)"
        metadata[NOT_SCORABLE_METADATA_KEY] = NO_CONTENT_REASON.format(what=what)
    return Run(
        input=run_input,
        output=output,
        run_id=root.span_id,
        trace_id=root.trace_id,
        span_id=root.span_id,
        trace_flags=root.trace_flags,
        name=conv.agent_name(root) or root.name,
        steps=steps,
        error=error,
        metadata=metadata,
        # The evaluated completion: the run span's own, else the model call that answered.
        response_id=_response_id(root) or last_answer_response_id,
    )


def _response_id(span: SpanRecord) -> str | None:
    value = span.attributes.get(A.GEN_AI_RESPONSE_ID)
    return value if isinstance(value, str) and value else None


def _match(pending: list[ToolCall], call: ToolCall) -> str | None:
    """The id of the requested call a tool span ran: same name (and arguments, if any)."""
    fallback = None
    for index, requested in enumerate(pending):
        if requested.name == call.name:
            if requested.args == call.args:
                return pending.pop(index).call_id
            if fallback is None:
                fallback = index
    return pending.pop(fallback).call_id if fallback is not None else None


def _has_text(value: Any) -> bool:
    if value is None:
        return False
    try:
        return bool(message_text(value).strip())
    except TypeError:
        return True


def _user_turn(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The messages up to the first assistant turn: what the user asked (system included)."""
    turn: list[dict[str, Any]] = []
    for message in messages:
        if message.get("role") in ("assistant", "model", "ai", "tool"):
            break
        turn.append({"role": message.get("role"), "content": message.get("content")})
    return turn or None


def _run_input(root: SpanRecord) -> Any:
    messages = conv.input_messages(root)
    if messages:
        return _user_turn(messages) or messages
    text = conv.input_value(root)
    if text is not None:
        return text
    every = conv.all_messages(root)
    return _user_turn(every) if every else None


def _run_output(root: SpanRecord) -> str | None:
    messages = conv.output_messages(root)
    if messages:
        return conv.answer_text(messages)
    text = conv.output_value(root)
    if text is not None:
        return text
    return conv.final_result(root)


def _outermost_runs(spans: dict[str, SpanRecord]) -> list[SpanRecord]:
    """The spans of ``spans`` that are runs (see the module docstring), in start order."""
    candidates = [s for s in spans.values() if conv.is_agent_span(s)]
    if not candidates:
        roots = [
            s
            for s in spans.values()
            if (s.parent_span_id is None or s.parent_span_id not in spans) and conv.has_run_io(s)
        ]
        return sorted(roots, key=_order)
    ids = {s.span_id for s in candidates}
    runs = []
    for span in candidates:
        parent, hops = span.parent_span_id, 0
        nested = False
        while parent is not None and parent in spans and hops < len(spans):
            if parent in ids:
                nested = True
                break
            parent = spans[parent].parent_span_id
            hops += 1
        if not nested:
            runs.append(span)
    return sorted(runs, key=_order)


def runs_from_spans(spans: Iterable[SpanRecord]) -> list[Run]:
    """Every run in a set of ended spans (of one or many traces), in start order.

    Example:
        >>> runs_from_spans([])
        []
    """
    traces: dict[str, dict[str, SpanRecord]] = {}
    for span in spans:
        traces.setdefault(span.trace_id, {})[span.span_id] = span
    runs: list[Run] = []
    for trace in traces.values():
        runs.extend(build_run(root, trace.values()) for root in _outermost_runs(trace))
    return runs


# -- the bounded buffer of open traces --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AssemblyLimits:
    """How much of the open traces is held at most.

    Attributes:
        max_traces: Open traces held at once; past it the oldest is evicted.
        max_spans_per_trace: Spans held for one trace; a trace past it is evicted.
        max_bytes: The estimated bytes of every held span together; past it the oldest
            traces are evicted.
        max_trace_age: Seconds after a trace's first span at which it is evicted unfinished.
        quiet_period: Seconds without a new span after which a trace counts as finished
            (the receiver's rule; the span processor finishes a trace when its root ends).
    """

    max_traces: int = 10_000
    max_spans_per_trace: int = 5_000
    max_bytes: int = 256 * 1024 * 1024
    max_trace_age: float = 600.0
    quiet_period: float = 5.0

    def __post_init__(self) -> None:
        for name in ("max_traces", "max_spans_per_trace", "max_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, not {value!r}")
        for name in ("max_trace_age", "quiet_period"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not value >= 0:
                raise ValueError(f"{name} must be >= 0 seconds, not {value!r}")


@dataclass(slots=True)
class AssemblyStats:
    """What became of the spans and traces a :class:`TraceAssembler` was given.

    Every span received ends as exactly one of: part of a finished trace, dropped (a trace
    not sampled, or one already evicted), evicted with its trace, or still held.

    Attributes:
        spans_received: Spans given to the assembler.
        spans_held: Spans held right now (in open traces).
        bytes_held: Their estimated size.
        traces_open: Traces held right now.
        traces_finished: Traces assembled (their root ended, or they went quiet).
        runs_assembled: Runs built from finished traces.
        traces_without_run: Finished traces in which no span is a run.
        spans_finished: Spans of finished traces.
        spans_dropped: Spans not kept, by reason (``not_sampled``, ``evicted_trace``).
        traces_evicted: Traces evicted unfinished, by reason (``max_traces``, ``max_bytes``,
            ``max_spans_per_trace``, ``max_trace_age``).
        spans_evicted: Spans thrown away with evicted traces.
    """

    spans_received: int = 0
    spans_held: int = 0
    bytes_held: int = 0
    traces_open: int = 0
    traces_finished: int = 0
    runs_assembled: int = 0
    traces_without_run: int = 0
    spans_finished: int = 0
    spans_dropped: dict[str, int] = field(default_factory=dict)
    traces_evicted: dict[str, int] = field(default_factory=dict)
    spans_evicted: int = 0

    def copy(self) -> AssemblyStats:
        """A snapshot."""
        return AssemblyStats(
            self.spans_received,
            self.spans_held,
            self.bytes_held,
            self.traces_open,
            self.traces_finished,
            self.runs_assembled,
            self.traces_without_run,
            self.spans_finished,
            dict(self.spans_dropped),
            dict(self.traces_evicted),
            self.spans_evicted,
        )


class _Trace:
    __slots__ = ("bytes", "first", "last", "looks_like_agent", "spans")

    def __init__(self, now: float) -> None:
        self.spans: dict[str, SpanRecord] = {}
        self.bytes = 0
        self.first = now
        self.last = now
        self.looks_like_agent = False


EvictHook = Callable[[str, str, bool], None]
"""``on_evict(trace_id, reason, looked_like_an_agent_trace)``."""


class TraceAssembler:
    """Holds the spans of open traces, within :class:`AssemblyLimits`, and turns each
    finished trace into runs.

    Not thread-safe: one thread (or a lock) owns it. Each method takes ``now`` (monotonic
    seconds) so that its caller's clock, not a hidden one, decides when a trace is quiet.

    Args:
        limits: The bounds.
        finish_on_root: Finish a trace as soon as its root span arrives (in process, a
            root ends after everything beneath it); otherwise only when it goes quiet.
        keep_trace: Called once per new trace id: ``False`` drops its spans on arrival (a
            trace no scorer samples costs no memory).
        on_evict: Told about every trace evicted unfinished.

    Example:
        >>> assembler = TraceAssembler(AssemblyLimits(quiet_period=0), finish_on_root=True)
        >>> root = SpanRecord("1" * 32, "2" * 16, None, "chat", 0, 9, {
        ...     "gen_ai.operation.name": "chat",
        ...     "gen_ai.input.messages": '[{"role": "user", "content": "Hi"}]',
        ...     "gen_ai.output.messages": '[{"role": "assistant", "content": "Hello"}]'})
        >>> [run.output for run in assembler.add([root], now=0.0)]
        ['Hello']
    """

    def __init__(
        self,
        limits: AssemblyLimits | None = None,
        *,
        finish_on_root: bool = False,
        keep_trace: Callable[[str], bool] | None = None,
        on_evict: EvictHook | None = None,
    ) -> None:
        self.limits = limits or AssemblyLimits()
        self.finish_on_root = finish_on_root
        self._keep = keep_trace
        self._on_evict = on_evict
        self._traces: OrderedDict[str, _Trace] = OrderedDict()  # oldest first
        # Traces already finished, evicted or refused: their late spans are dropped instead
        # of opening a new trace (bounded: the oldest are forgotten).
        self._closed: OrderedDict[str, str] = OrderedDict()
        self._stats = AssemblyStats()
        self._said: set[str] = set()

    def stats(self) -> AssemblyStats:
        """A snapshot of the counts."""
        stats = self._stats.copy()
        stats.traces_open = len(self._traces)
        return stats

    @property
    def bytes_held(self) -> int:
        """The estimated bytes of the spans held now."""
        return self._stats.bytes_held

    def add(self, spans: Iterable[SpanRecord], now: float | None = None) -> list[Run]:
        """Take ended spans; returns the runs of traces they finished (``finish_on_root``)."""
        now = time.monotonic() if now is None else now
        limits = self.limits
        stats = self._stats
        runs: list[Run] = []
        for span in spans:
            stats.spans_received += 1
            trace_id = span.trace_id
            trace = self._traces.get(trace_id)
            if trace is None:
                closed = self._closed.get(trace_id)
                if closed is not None:
                    # A finished trace stays finished: a late span of it is not a new one.
                    self._drop_span("late" if closed == "finished" else closed)
                    continue
                if self._keep is not None and not self._keep(trace_id):
                    self._close(trace_id, "not_sampled")
                    self._drop_span("not_sampled")
                    continue
                trace = self._traces[trace_id] = _Trace(now)
                if len(self._traces) > limits.max_traces:
                    self._evict(next(iter(self._traces)), "max_traces")
            if span.span_id in trace.spans:
                self._drop_span("duplicate")
                continue
            size = span.size
            trace.spans[span.span_id] = span
            trace.bytes += size
            trace.last = now
            stats.spans_held += 1
            stats.bytes_held += size
            if not trace.looks_like_agent and conv.span_kind(span) is not None:
                trace.looks_like_agent = True
            if len(trace.spans) > limits.max_spans_per_trace:
                self._evict(trace_id, "max_spans_per_trace")
                continue
            while stats.bytes_held > limits.max_bytes and self._traces:
                self._evict(next(iter(self._traces)), "max_bytes")
            if self.finish_on_root and span.is_root and trace_id in self._traces:
                # At once, not after the batch: a large batch of whole traces must not hold
                # them all open (and evict them) before their roots are looked at.
                runs.extend(self._finish(trace_id))
        return runs

    def collect(self, now: float | None = None) -> list[Run]:
        """Finish the traces quiet for ``quiet_period``; evict those past ``max_trace_age``."""
        now = time.monotonic() if now is None else now
        limits = self.limits
        quiet: list[str] = []
        old: list[str] = []
        for trace_id, trace in self._traces.items():
            if now - trace.last >= limits.quiet_period:
                quiet.append(trace_id)
            elif now - trace.first >= limits.max_trace_age:
                old.append(trace_id)
        for trace_id in old:
            self._evict(trace_id, "max_trace_age")
        runs: list[Run] = []
        for trace_id in quiet:
            runs.extend(self._finish(trace_id))
        return runs

    def drain(self) -> list[Run]:
        """Finish every open trace now (at shutdown: what is held is all there will be)."""
        runs: list[Run] = []
        for trace_id in list(self._traces):
            runs.extend(self._finish(trace_id))
        return runs

    def next_deadline(self) -> float | None:
        """The monotonic time at which :meth:`collect` next has work, ``None`` if never."""
        if not self._traces:
            return None
        limits = self.limits
        return min(
            min(t.last + limits.quiet_period, t.first + limits.max_trace_age)
            for t in self._traces.values()
        )

    # -- internals ------------------------------------------------------------------------

    def _drop_span(self, reason: str) -> None:
        dropped = self._stats.spans_dropped
        dropped[reason] = dropped.get(reason, 0) + 1

    def _close(self, trace_id: str, how: str) -> None:
        self._closed[trace_id] = how
        self._closed.move_to_end(trace_id)
        while len(self._closed) > 4 * self.limits.max_traces:
            self._closed.popitem(last=False)

    def _release(self, trace_id: str) -> _Trace:
        trace = self._traces.pop(trace_id)
        self._stats.spans_held -= len(trace.spans)
        self._stats.bytes_held -= trace.bytes
        return trace

    def _evict(self, trace_id: str, reason: str) -> None:
        trace = self._release(trace_id)
        self._close(trace_id, "evicted_trace")
        stats = self._stats
        stats.traces_evicted[reason] = stats.traces_evicted.get(reason, 0) + 1
        stats.spans_evicted += len(trace.spans)
        if reason not in self._said:
            self._said.add(reason)
            _log.warning(
                "livescore: a trace was evicted unfinished (%s; %d span(s)); its runs are not "
                "scored (logged once per reason; see stats().traces_evicted)",
                reason,
                len(trace.spans),
            )
        if self._on_evict is not None:
            try:
                self._on_evict(trace_id, reason, trace.looks_like_agent)
            except Exception:
                _log.exception("livescore: the eviction hook raised")

    def _finish(self, trace_id: str) -> list[Run]:
        trace = self._release(trace_id)
        self._close(trace_id, "finished")
        stats = self._stats
        stats.traces_finished += 1
        stats.spans_finished += len(trace.spans)
        try:
            roots = _outermost_runs(trace.spans)
            runs = [build_run(root, trace.spans.values()) for root in roots]
        except Exception:
            # A bug in assembly costs this trace, counted, never the caller.
            _log.exception("livescore: could not assemble a run from trace %s", trace_id)
            runs = []
        if not runs:
            stats.traces_without_run += 1
        stats.runs_assembled += len(runs)
        return runs
