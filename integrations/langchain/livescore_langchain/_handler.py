"""The LangChain callback handler that records runs and hands them to the live dispatcher.

Hot-path rules (REFERENCE.md, DESIGN.md decision 3): a sync ``run_inline`` handler costs
microseconds per event, where an async handler costs tens to hundreds and makes LangChain
wait for every task it starts. So every callback here only records references into a small
per-run record, never blocks, never raises, and the finished run is handed to the
dispatcher (an O(1) ``submit``) at root end.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import (
    BaseMessage,
    BaseMessageChunk,
    ToolMessage,
    convert_to_messages,
    message_chunk_to_message,
)
from langchain_core.outputs import ChatGeneration, LLMResult
from opentelemetry import trace
from opentelemetry.trace import Span, TracerProvider

from livescore.live import is_scoring
from livescore.otel import ContentCapture
from livescore.otel import attributes as attrs
from livescore.runs import Run, Step, ToolCall
from livescore_langchain import _spans

if TYPE_CHECKING:
    from langchain_core.documents import Document

    from livescore.live import ScorerConfig
    from livescore.scoring import Scorer

__all__ = ("EmitRunSpans", "LiveScoringHandler", "RunSink")

logger = logging.getLogger("livescore_langchain")

EmitRunSpans = Literal["auto", "always", "never"]
"""When livescore opens its own ``invoke_agent`` span for a run: ``"auto"`` only when no
other span represents it (no OpenInference span, no current span), ``"always"``, or
``"never"``."""

_INSTRUMENTATION_SCOPE = "livescore_langchain"
_VERSION = "0.1.0"


class _Decision(Protocol):
    @property
    def sampled(self) -> bool: ...


class RunSink(Protocol):
    """Where the handler hands finished runs: a :class:`livescore.live.LiveDispatcher`."""

    def sample(self, key: str | None) -> Any:
        """Decide once, at root start, whether the run is scored (``.sampled``)."""
        ...

    def submit(self, run: Run, decision: Any = None) -> bool:
        """Hand a finished, sampled run over (O(1), never raises)."""
        ...

    def drop(self, decision: Any, reason: str) -> None:
        """Account for a sampled run that will never be submitted."""
        ...

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every accepted run is scored."""
        ...

    def shutdown(self, timeout: float | None = None) -> None:
        """Flush, then stop."""
        ...

    def stats(self) -> Any:
        """Counters of sampled, scored, failed, skipped and dropped runs."""
        ...


class _OpenRun:
    """What the handler keeps about one root run while it is live."""

    __slots__ = (
        "check_openinference",
        "children",
        "decision",
        "input",
        "metadata",
        "name",
        "open_steps",
        "run_id",
        "sampled",
        "span",
        "span_id",
        "started",
        "steps",
        "tool_spans",
        "trace_flags",
        "trace_id",
    )

    def __init__(self, run_id: UUID, name: str, decision: Any, sampled: bool) -> None:
        self.run_id = run_id
        self.name = name
        self.decision = decision
        self.sampled = sampled
        self.started = time.monotonic()
        self.input: Any = None
        self.metadata: dict[str, Any] = {}
        self.steps: list[Step] = []
        self.open_steps: dict[UUID, Step] = {}
        self.children: list[UUID] = []
        self.span: Span | None = None  # livescore's own invoke_agent span, to end
        self.tool_spans: dict[UUID, Span] = {}
        self.trace_id: str | None = None
        self.span_id: str | None = None
        self.trace_flags = 1
        self.check_openinference = False


_NOT_A_CHILD: Any = object()  # the parent is unknown: the run is a root
_IGNORED: Any = object()  # a child of an evicted root, or of nothing the handler records


class LiveScoringHandler(BaseCallbackHandler):
    """Scores LangChain and LangGraph runs live: pass it in ``config={"callbacks": [...]}``.

    For every root run (the outermost run the handler sees: an agent, a chain, a model
    call) it decides sampling once at start, records a small :class:`~livescore.Run`
    (input, output, model turns, tool calls with arguments and results, retrievals,
    errors) and, when the run ends, hands it to a
    :class:`~livescore.live.LiveDispatcher` that scores it on its own worker thread. The
    agent never waits for a judge; a callback never raises into the agent.

    Each score becomes an OpenTelemetry span, child of the span that represents the run:
    OpenInference's span for the run when its LangChain instrumentation is active, else the
    span current when the run started, else an ``invoke_agent {name}`` span the handler
    opens itself (see ``emit_run_spans``).

    Args:
        scorers: Scorers (or :class:`~livescore.live.ScorerConfig` with a sampling rate,
            timeout and concurrency) for a dispatcher the handler creates and owns.
        dispatcher: A dispatcher to use instead (share one across handlers); give
            ``scorers`` or ``dispatcher``, not both.
        name: The agent's name (``gen_ai.agent.name``, ``Run.name``); the root run's
            name (``create_agent(name=...)``, or ``"LangGraph"``) by default.
        per_step: Score every model turn that answers the user (text and no tool calls) as
            its own step, instead of the run once. Each answering turn is scored once; the
            final answer is one of them, so nothing is scored twice.
        max_open_runs: Most runs recorded at once; past it the oldest is evicted.
        open_run_ttl: Seconds after which a run that never ended is evicted.
        tracer_provider: For the handler's own spans and the dispatcher it creates; the
            global provider by default.
        meter_provider: For the metrics of the dispatcher it creates.
        emit_run_spans: ``"auto"`` (default): open an ``invoke_agent`` span (with
            ``execute_tool`` children) only when no other span represents the run;
            ``"always"``; or ``"never"``.
        capture_content: What the scores' spans of the dispatcher it creates carry of
            explanations and claims: ``"full"``, ``"truncated"`` or ``"none"``.
        score_failed_runs: Hand runs that ended in an error (the agent raised, was
            cancelled, a stream was abandoned) to the scorers too, with ``Run.error`` set
            and no output. By default they are counted as dropped with reason
            ``"run_error"`` instead: an answer that never came has nothing to judge.

    Example:
        >>> from livescore.scorers import create_keyword_coverage_scorer
        >>> handler = LiveScoringHandler(scorers=[create_keyword_coverage_scorer()])
        >>> # agent.invoke({"messages": [...]}, config={"callbacks": [handler]})
        >>> handler.shutdown()
    """

    # Called inline on the agent's thread or loop: a thread-pool hop costs 60-100 µs per
    # event and an async handler makes LangChain wait for the tasks it starts.
    run_inline: bool = True
    raise_error: bool = False

    def __init__(
        self,
        scorers: Sequence[Scorer | ScorerConfig] | None = None,
        *,
        dispatcher: RunSink | None = None,
        name: str | None = None,
        per_step: bool = False,
        max_open_runs: int = 1000,
        open_run_ttl: float = 600.0,
        tracer_provider: TracerProvider | None = None,
        meter_provider: Any = None,
        emit_run_spans: EmitRunSpans = "auto",
        capture_content: ContentCapture = "full",
        score_failed_runs: bool = False,
    ) -> None:
        if (scorers is None) == (dispatcher is None):
            raise ValueError("give LiveScoringHandler either scorers=[...] or dispatcher=...")
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
        if dispatcher is None:
            assert scorers is not None
            dispatcher = _make_dispatcher(
                scorers,
                name=name,
                tracer_provider=tracer_provider,
                meter_provider=meter_provider,
                capture_content=capture_content,
            )
        self.dispatcher: RunSink = dispatcher
        self.name = name
        self.per_step = per_step
        self.score_failed_runs = score_failed_runs
        self.max_open_runs = max_open_runs
        self.open_run_ttl = float(open_run_ttl)
        self.emit_run_spans: EmitRunSpans = emit_run_spans
        # The handler's own spans follow the same content policy as the scores' spans.
        self._end_span = functools.partial(_spans.end_span, capture=capture_content)
        self._tracer = trace.get_tracer(
            _INSTRUMENTATION_SCOPE, _VERSION, tracer_provider=tracer_provider
        )
        self._lock = threading.Lock()
        self._roots: OrderedDict[UUID, _OpenRun] = OrderedDict()  # oldest first
        self._evicted: OrderedDict[UUID, _OpenRun] = OrderedDict()
        self._root_of: dict[UUID, UUID] = {}  # every run id seen -> its root's run id
        self._guarded = True  # ignore callbacks while is_scoring() (off for capture_run)
        self.callback_errors = 0
        """Callbacks that failed inside the handler (logged at debug, never raised)."""
        self.evicted_runs = 0
        """Runs evicted because they never ended in time or the cap was reached."""

    # -- public ---------------------------------------------------------------------------

    @property
    def open_runs(self) -> int:
        """How many root runs are being recorded right now."""
        return len(self._roots)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every run handed over so far is scored; ``False`` on timeout.

        Example:
            >>> # handler.flush(timeout=30.0)
        """
        return self.dispatcher.flush(timeout)

    def shutdown(self, timeout: float | None = None) -> None:
        """Flush and stop the dispatcher (also when it was passed in). Idempotent."""
        self.dispatcher.shutdown(timeout)

    def stats(self) -> Any:
        """The dispatcher's counters: sampled, scored, failed, skipped, dropped runs."""
        return self.dispatcher.stats()

    # LangChain skips handlers for events they ignore, before any call. (Not ignore_agent:
    # it also gates the tool events.)
    @property
    def ignore_retry(self) -> bool:
        return True

    @property
    def ignore_custom_event(self) -> bool:
        return True

    # -- chains ------------------------------------------------------------------------------

    def on_chain_start(
        self,
        serialized: dict[str, Any],
        inputs: dict[str, Any],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        try:
            if self._guarded and is_scoring():
                return
            if self._link(run_id, parent_run_id) is _NOT_A_CHILD:
                name = kwargs.get("name") or _serialized_name(serialized) or "chain"
                self._start_root(run_id, name, inputs, metadata, tags, model_input=False)
        except Exception:
            self._fault("on_chain_start")

    def on_chain_end(
        self,
        outputs: dict[str, Any],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        try:
            if run_id in self._roots or run_id in self._evicted:
                self._finish(run_id, _normalize_output(outputs), None)
        except Exception:
            self._fault("on_chain_end")

    def on_chain_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        try:
            if run_id in self._roots or run_id in self._evicted:
                self._finish(run_id, None, error)
        except Exception:
            self._fault("on_chain_error")

    # -- models ------------------------------------------------------------------------------

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        try:
            prompt: Any = messages[0] if messages else []
            self._model_start(serialized, prompt, run_id, parent_run_id, tags, metadata, kwargs)
        except Exception:
            self._fault("on_chat_model_start")

    def on_llm_start(
        self,
        serialized: dict[str, Any],
        prompts: list[str],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        try:
            prompt: Any = prompts[0] if prompts else ""
            self._model_start(serialized, prompt, run_id, parent_run_id, tags, metadata, kwargs)
        except Exception:
            self._fault("on_llm_start")

    def on_llm_end(
        self,
        response: LLMResult,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        try:
            run = self._run_of(run_id)
            if run is None:
                return
            output = _generation_output(response)
            step = run.open_steps.pop(run_id, None)
            if step is not None:
                step.output = output
                step.tool_calls_requested = _requested_calls(output)
            if run_id == run.run_id:
                self._finish(run_id, output, None)
        except Exception:
            self._fault("on_llm_end")

    def on_llm_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        try:
            run = self._run_of(run_id)
            if run is None:
                return
            step = run.open_steps.pop(run_id, None)
            if step is not None:
                step.error = _error_text(error)
            if run_id == run.run_id:
                self._finish(run_id, None, error)
        except Exception:
            self._fault("on_llm_error")

    # -- tools -------------------------------------------------------------------------------

    def on_tool_start(
        self,
        serialized: dict[str, Any],
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        inputs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        try:
            if self._guarded and is_scoring():
                return
            run = self._link(run_id, parent_run_id)
            if not isinstance(run, _OpenRun):
                return  # a tool called on its own is not an agent run
            name = kwargs.get("name") or _serialized_name(serialized) or "tool"
            call_id = kwargs.get("tool_call_id")
            step_span_id = None
            if run.span is not None:
                span = _spans.start_tool_span(self._tracer, name, call_id, run.span)
                run.tool_spans[run_id] = span
                step_span_id = _spans.span_ids(span)[1]
            if run.sampled:
                args = inputs if inputs is not None else input_str
                step = Step(
                    kind="tool",
                    name=name,
                    input=args,
                    tool_call=ToolCall(name=name, call_id=call_id, args=args),
                    span_id=step_span_id,
                )
                run.steps.append(step)
                run.open_steps[run_id] = step
        except Exception:
            self._fault("on_tool_start")

    def on_tool_end(
        self,
        output: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        try:
            run = self._run_of(run_id)
            if run is None:
                return
            # Inside an agent a tool's result arrives as the ToolMessage the model sees
            # (dicts already JSON text); called directly, as the raw value.
            error: str | None = None
            result = output
            call_id = None
            if isinstance(output, ToolMessage):
                result, call_id = output.content, output.tool_call_id
                if output.status == "error":
                    error = _content_text(output.content) or "tool error"
            span = run.tool_spans.pop(run_id, None)
            if span is not None:
                if call_id:  # known only now when the tool was called without one
                    span.set_attribute(attrs.GEN_AI_TOOL_CALL_ID, call_id)
                self._end_span(span, error, error_type="tool_error")
            step = run.open_steps.pop(run_id, None)
            if step is not None and step.tool_call is not None:
                step.output = output
                call = step.tool_call
                call.call_id = call.call_id or call_id
                if error is None:
                    call.result = result
                else:
                    call.error = step.error = error
        except Exception:
            self._fault("on_tool_end")

    def on_tool_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        try:
            run = self._run_of(run_id)
            if run is None:
                return
            span = run.tool_spans.pop(run_id, None)
            if span is not None:
                self._end_span(span, error)
            step = run.open_steps.pop(run_id, None)
            if step is not None:
                step.error = _error_text(error)
                if step.tool_call is not None:
                    step.tool_call.error = step.error
        except Exception:
            self._fault("on_tool_error")

    # -- retrievers --------------------------------------------------------------------------

    def on_retriever_start(
        self,
        serialized: dict[str, Any],
        query: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        try:
            if self._guarded and is_scoring():
                return
            run = self._link(run_id, parent_run_id)
            if isinstance(run, _OpenRun) and run.sampled:
                name = kwargs.get("name") or _serialized_name(serialized) or "retriever"
                step = Step(kind="retriever", name=name, input=query)
                run.steps.append(step)
                run.open_steps[run_id] = step
        except Exception:
            self._fault("on_retriever_start")

    def on_retriever_end(
        self,
        documents: Sequence[Document],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        try:
            run = self._run_of(run_id)
            step = run.open_steps.pop(run_id, None) if run is not None else None
            if step is not None:
                step.documents = [str(getattr(d, "page_content", d)) for d in documents]
        except Exception:
            self._fault("on_retriever_end")

    def on_retriever_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        try:
            run = self._run_of(run_id)
            step = run.open_steps.pop(run_id, None) if run is not None else None
            if step is not None:
                step.error = _error_text(error)
        except Exception:
            self._fault("on_retriever_error")

    # -- recording internals ---------------------------------------------------------------

    def _fault(self, where: str) -> None:
        # Never raise into the agent: count, and leave a trace for whoever debugs it.
        self.callback_errors += 1
        logger.debug(
            "livescore: %s failed; the run's record may be incomplete", where, exc_info=True
        )

    def _link(self, run_id: UUID, parent_run_id: UUID | None) -> Any:
        """Record ``run_id`` under its parent's root; return the open root, or a marker."""
        if parent_run_id is None:
            return _NOT_A_CHILD
        root_id = self._root_of.get(parent_run_id)
        if root_id is None:
            # Unknown parent: the agent runs inside something the handler never saw (a
            # runnable invoked without it, a parent it ignored): this run is a root.
            return _NOT_A_CHILD
        self._root_of[run_id] = root_id
        run = self._roots.get(root_id)
        if run is None:
            evicted = self._evicted.get(root_id)
            if evicted is not None:
                evicted.children.append(run_id)
            return _IGNORED
        run.children.append(run_id)
        return run

    def _run_of(self, run_id: UUID) -> _OpenRun | None:
        root_id = self._root_of.get(run_id)
        return self._roots.get(root_id) if root_id is not None else None

    def _model_start(
        self,
        serialized: dict[str, Any] | None,
        prompt: Any,
        run_id: UUID,
        parent_run_id: UUID | None,
        tags: list[str] | None,
        metadata: dict[str, Any] | None,
        kwargs: Mapping[str, Any],
    ) -> None:
        if self._guarded and is_scoring():
            return
        run = self._link(run_id, parent_run_id)
        name = _model_name(serialized, metadata, kwargs)
        if run is _NOT_A_CHILD:  # a model called on its own is a run of one turn
            run = self._start_root(run_id, name, prompt, metadata, tags, model_input=True)
        if isinstance(run, _OpenRun) and run.sampled:
            step = Step(kind="model", name=name, input=prompt)
            run.steps.append(step)
            run.open_steps[run_id] = step

    def _start_root(
        self,
        run_id: UUID,
        name: str,
        inputs: Any,
        metadata: dict[str, Any] | None,
        tags: list[str] | None,
        *,
        model_input: bool,
    ) -> _OpenRun:
        agent_name = self.name or name
        external, check_openinference = self._external_span(run_id)
        own: Span | None = None
        if self.emit_run_spans == "always" or (
            self.emit_run_spans == "auto" and external is None and not check_openinference
        ):
            own = _spans.start_agent_span(self._tracer, agent_name, external)
        trace_id, span_id, flags = _spans.span_ids(own or external)
        # Decided once, from the trace id when there is one, before any heavy capture.
        decision = self.dispatcher.sample(trace_id or str(run_id))
        run = _OpenRun(run_id, agent_name, decision, bool(getattr(decision, "sampled", False)))
        run.span = own
        run.trace_id, run.span_id, run.trace_flags = trace_id, span_id, flags
        run.check_openinference = check_openinference and own is None
        if run.sampled:
            run.input = _normalize_input(inputs, model_input=model_input)
            run.metadata = _root_metadata(metadata, tags)
        evicted = self._register(run)
        for old in evicted:
            self._evict(old)
        return run

    def _external_span(self, run_id: UUID) -> tuple[Span | None, bool]:
        """The span another instrumentation made for the run, and whether to look again."""
        if _spans.openinference_active():
            span = _spans.openinference_span(run_id)
            if span is not None:
                return span, False
            # OpenInference's tracer is not inline: on async runs it starts its span after
            # this callback. Look again at root end (before it ends its span); until then
            # the current span, its parent-to-be, stands in (same trace, same sampling key).
            return _spans.current_span(), True
        return _spans.current_span(), False

    def _register(self, run: _OpenRun) -> list[_OpenRun]:
        evicted: list[_OpenRun] = []
        now = time.monotonic()
        with self._lock:
            roots = self._roots
            while roots:
                oldest = next(iter(roots.values()))
                if len(roots) < self.max_open_runs and now - oldest.started < self.open_run_ttl:
                    break
                roots.popitem(last=False)
                evicted.append(oldest)
            roots[run.run_id] = run
            self._root_of[run.run_id] = run.run_id
            for old in evicted:
                old.steps, old.open_steps = [], {}
                self._evicted[old.run_id] = old
            # Children of evicted runs keep mapping to them (so they never pose as roots),
            # up to a bound: past it the oldest evicted run's map entries go.
            while len(self._evicted) > self.max_open_runs:
                _, gone = self._evicted.popitem(last=False)
                self._forget(gone)
        return evicted

    def _forget(self, run: _OpenRun) -> None:
        root_of = self._root_of
        for child in run.children:
            root_of.pop(child, None)
        root_of.pop(run.run_id, None)

    def _evict(self, run: _OpenRun) -> None:
        self.evicted_runs += 1
        self._end_spans(run, "the run never ended in time", error_type="evicted")
        if run.sampled:
            self.dispatcher.drop(run.decision, "evicted")

    def _end_spans(
        self,
        run: _OpenRun,
        error: BaseException | str | None,
        *,
        error_type: str | None = None,
    ) -> None:
        for span in run.tool_spans.values():  # tools the run never saw end
            if error is None:
                self._end_span(span, "the run ended first", error_type="unfinished")
            else:
                self._end_span(span, error, error_type=error_type)
        run.tool_spans = {}
        if run.span is not None:
            self._end_span(run.span, error, error_type=error_type)
            run.span = None

    def _finish(self, run_id: UUID, output: Any, error: BaseException | None) -> None:
        with self._lock:
            run = self._roots.pop(run_id, None)
            if run is None:
                evicted = self._evicted.pop(run_id, None)
                if evicted is not None:
                    self._forget(evicted)
                return
            self._forget(run)
        self._end_spans(run, error)
        if not run.sampled:
            return
        if run.check_openinference:
            span = _spans.openinference_span(run_id)
            if span is not None:
                run.trace_id, run.span_id, run.trace_flags = _spans.span_ids(span)
        if error is not None and not self.score_failed_runs:
            self.dispatcher.drop(run.decision, "run_error")
            return
        record = self._build(run, output, error)
        if self.per_step:
            self._submit_steps(record, run.decision)
        else:
            self.dispatcher.submit(record, run.decision)

    def _build(self, run: _OpenRun, output: Any, error: BaseException | None) -> Run:
        steps = run.steps
        for index, step in enumerate(steps):
            step.index = index
        metadata = run.metadata
        metadata["integration"] = "langchain"
        return Run(
            input=run.input,
            output=output,
            run_id=str(run.run_id),
            trace_id=run.trace_id,
            span_id=run.span_id,
            trace_flags=run.trace_flags,
            name=run.name,
            steps=steps,
            error=_error_text(error) if error is not None else None,
            metadata=metadata,
        )

    def _submit_steps(self, run: Run, decision: Any) -> None:
        answering = [s for s in run.steps if s.kind == "model" and _answers_user(s.output)]
        if not answering or run.error is not None:
            self.dispatcher.submit(run, decision)
            return
        for step in answering:
            self.dispatcher.submit(step_run(run, step), decision)


def step_run(run: Run, step: Step) -> Run:
    """The run as it stood when ``step`` answered: what a per-step score judges.

    Its steps end with ``step`` (so ``run.final_step`` is that turn and ``get_context``
    sees only the tool results it could build on), its output is that turn's message, and
    ``metadata["step_index"]`` says which turn it is.
    """
    return Run(
        input=run.input,
        output=step.output,
        run_id=f"{run.run_id}:{step.index}",
        trace_id=run.trace_id,
        span_id=run.span_id,
        trace_flags=run.trace_flags,
        name=run.name,
        steps=run.steps[: step.index + 1],
        metadata={**run.metadata, "step_index": step.index, "root_run_id": run.run_id},
    )


# -- reading LangChain values ------------------------------------------------------------------


def _make_dispatcher(
    scorers: Sequence[Scorer | ScorerConfig],
    *,
    name: str | None,
    tracer_provider: TracerProvider | None,
    meter_provider: Any,
    capture_content: ContentCapture,
) -> RunSink:
    from livescore.live import LiveDispatcher
    from livescore.otel import OTelEmitter

    emitter = OTelEmitter(
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        capture_content=capture_content,
    )
    dispatcher: RunSink = LiveDispatcher(
        scorers, emitter=emitter, name=f"livescore-langchain:{name}" if name else "livescore"
    )
    return dispatcher


def _serialized_name(serialized: Mapping[str, Any] | None) -> str | None:
    if not serialized:
        return None
    name = serialized.get("name")
    if isinstance(name, str) and name:
        return name
    ids = serialized.get("id")
    if isinstance(ids, list) and ids:
        return str(ids[-1])
    return None


def _model_name(
    serialized: Mapping[str, Any] | None,
    metadata: Mapping[str, Any] | None,
    kwargs: Mapping[str, Any],
) -> str:
    if metadata:
        model = metadata.get("ls_model_name")
        if isinstance(model, str) and model:
            return model
    return str(kwargs.get("name") or _serialized_name(serialized) or "model")


def _error_text(error: BaseException) -> str:
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p if isinstance(p, str) else str(p.get("text", "")) for p in content]
        return "\n".join(p for p in parts if p)
    return str(content)


def _normalize_input(inputs: Any, *, model_input: bool) -> Any:
    # Keep references (no copies on the hot path); only shapes scorers cannot read, such as
    # ("user", "hi") tuples, become message objects.
    value = inputs
    if isinstance(value, Mapping) and "messages" in value:
        value = value["messages"]
    elif model_input or isinstance(value, str):
        return value
    if isinstance(value, Sequence) and not isinstance(value, str):
        if all(isinstance(m, BaseMessage) for m in value):
            return list(value)
        try:
            return convert_to_messages(value)
        except Exception:
            return list(value)
    return value


def _normalize_output(outputs: Any) -> Any:
    if isinstance(outputs, Mapping) and "messages" in outputs:
        messages = outputs["messages"]
        return list(messages) if isinstance(messages, Sequence) else messages
    if isinstance(outputs, BaseMessageChunk):
        return message_chunk_to_message(outputs)
    return outputs


def _root_metadata(metadata: Mapping[str, Any] | None, tags: list[str] | None) -> dict[str, Any]:
    out = dict(metadata) if metadata else {}
    if tags:
        out["tags"] = list(tags)
    return out


def _generation_output(response: LLMResult) -> Any:
    generations = response.generations
    if not generations or not generations[0]:
        return None
    generation = generations[0][0]
    if isinstance(generation, ChatGeneration):
        message = generation.message
        if isinstance(message, BaseMessageChunk):
            # A streamed turn: a chunk's type ("AIMessageChunk") is not a role readers know.
            return message_chunk_to_message(message)
        return message
    return generation.text


def _requested_calls(output: Any) -> list[ToolCall]:
    calls = getattr(output, "tool_calls", None) or ()
    return [
        ToolCall(name=str(c.get("name", "")), call_id=c.get("id"), args=c.get("args"))
        for c in calls
        if isinstance(c, Mapping)
    ]


def _answers_user(output: Any) -> bool:
    if not isinstance(output, BaseMessage) or output.type != "ai":
        return False
    if getattr(output, "tool_calls", None):
        return False
    return bool(_content_text(output.content).strip())
