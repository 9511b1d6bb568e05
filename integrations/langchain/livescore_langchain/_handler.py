"""The LangChain callback handler that records runs and hands them to the live dispatcher.

Hot-path rules: a sync ``run_inline`` handler costs
microseconds per event, where an async handler costs tens to hundreds and makes LangChain
wait for every task it starts. So every callback here only records references into a small
per-run record, never blocks, never raises, and the finished run is handed to the
dispatcher (an O(1) ``submit``) at root end.

Two things are said once: every callback runs inside one never-raising block
(:class:`_NeverRaises`), and every start event passes one gate
(:meth:`LiveScoringHandler._starting`) that says which open run it belongs to, if any.
``python bench/handler_callbacks.py`` measures what each callback costs.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final
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
from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import Span, TracerProvider

from livescore.live import (
    DEFAULT_CONVERSATION_IDLE_TIMEOUT,
    Dispatcher,
    DispatchStats,
    EmitRunSpans,
    SamplingDecision,
    conversation_id_of,
    dispatcher_for,
    is_scoring,
    sample_turn,
)
from livescore.otel import ContentCapture
from livescore.otel import attributes as attrs
from livescore.runs import Run, Step, ToolCall
from livescore_langchain import _spans
from livescore_langchain._version import __version__

if TYPE_CHECKING:
    from langchain_core.documents import Document
    from opentelemetry._logs import LoggerProvider

    from livescore.live import ScorerConfig
    from livescore.otel import EmitSignal
    from livescore.scoring import Scorer
    from livescore.sinks import ScoreSink

__all__ = ("LiveScoringHandler",)

logger = logging.getLogger("livescore_langchain")


_INSTRUMENTATION_SCOPE = "livescore_langchain"


class _NeverRaises:
    """The one place a callback's failure stops: each callback's body runs in ``with`` it.

    An exception from the body is counted and logged at debug level with its traceback
    (the run's record may be incomplete), never raised into the agent. A ``BaseException``
    that is not an ``Exception`` (``KeyboardInterrupt``, a task's ``CancelledError``) is
    the agent's own business and passes through.

    A ``with`` block rather than a decorator because of the hot path: a generic
    ``(*args, **kwargs)`` wrapper re-packs LangChain's keyword arguments on every event
    (about 300 ns here, a third of what a callback itself costs), entering this block about
    90 ns; the callback's name for the log comes from the traceback, on failure only.
    """

    __slots__ = ("failures",)

    def __init__(self) -> None:
        self.failures = 0

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        if exc_type is None or not issubclass(exc_type, Exception):
            return False
        self.failures += 1
        where = tb.tb_frame.f_code.co_name if tb is not None else "a callback"
        logger.debug(
            "livescore: %s failed; the run's record may be incomplete",
            where,
            exc_info=exc,
        )
        return True


class _OpenRun:
    """What the handler keeps about one root run while it is live."""

    __slots__ = (
        "check_openinference",
        "children",
        "conversation_id",
        "decision",
        "input",
        "key",
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

    def __init__(self, run_id: UUID, name: str, decision: SamplingDecision) -> None:
        self.run_id = run_id
        self.key = run_id.int
        self.name = name
        self.decision = decision
        self.sampled = decision.sampled
        self.started = time.monotonic()
        self.input: Any = None
        self.metadata: dict[str, Any] = {}
        self.steps: list[Step] = []
        self.open_steps: dict[int, Step] = {}  # keyed by run_id.int, as the handler's maps
        self.children: list[int] = []
        self.span: Span | None = None  # livescore's own invoke_agent span, to end
        self.tool_spans: dict[int, Span] = {}
        self.trace_id: str | None = None
        self.span_id: str | None = None
        self.trace_flags = 1
        self.check_openinference = False
        self.conversation_id: str | None = None

    def forget_content(self) -> None:
        """Drop what the run recorded (it will never be submitted), keeping its ids."""
        self.steps, self.open_steps = [], {}


class _NewRoot:
    """The gate's answer for an event with no parent the handler knows: it starts a run."""

    __slots__ = ()


_NEW_ROOT: Final = _NewRoot()


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

    Conversations: a run's conversation id is the ``thread_id`` LangGraph puts in the
    run's metadata (``config={"configurable": {"thread_id": ...}}``), or a
    ``conversation_id``, ``thread_id`` or ``session_id`` you put in
    ``config={"metadata": {...}}``: conversation scorers among ``scorers`` judge the runs
    that share it when the conversation goes quiet (``conversation_idle_timeout``) or
    ends (:meth:`end_conversation`).

    Fork safety: a child process forked while the handler is in use gets a fresh lock (a
    parent's thread that held it does not exist there) and leaves the runs open at the
    fork to the parent, which ends, scores and counts them.

    Args:
        scorers: Scorers (or :class:`~livescore.live.ScorerConfig` with a sampling rate,
            timeout and concurrency) for a dispatcher the handler creates and owns.
        dispatcher: A dispatcher to use instead (share one across handlers); give
            ``scorers`` or ``dispatcher``, not both.
        broker: Score on a worker fleet: the broker's URL (``"redis://host:6379/0"``).
            Sampled runs are published as jobs from the dispatcher's thread and scored by
            ``livescore worker`` processes (``livescore-ai[fleet]``); see
            :class:`livescore.fleet.BrokerExecutor`. Only with ``scorers``.
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
        sinks: Dashboards each score also goes to, for the dispatcher it creates
            (:class:`~livescore.sinks.PhoenixSink`, :class:`~livescore.sinks.LangfuseSink`;
            see ``LiveDispatcher(sinks=...)``). With ``dispatcher=``, give the sinks to
            that dispatcher instead.
        score_failed_runs: Hand runs that ended in an error (the agent raised, was
            cancelled, a stream was abandoned) to the scorers too, with ``Run.error`` set
            and no output. By default they are counted as dropped with reason
            ``"run_error"`` instead: an answer that never came has nothing to judge.
        ignore_scorer_calls: Ignore the LangChain runs a live scorer starts (a judge that
            is itself a LangChain model), so a judge's call is never recorded as an agent
            run (see :func:`livescore.live.is_scoring`). On by default;
            :func:`~livescore_langchain.capture_run` turns it off, since nothing it records
            offline is a judge's call.
        logger_provider: For the ``gen_ai.evaluation.result`` events of the dispatcher it
            creates; the global provider by default.
        emit: What the dispatcher it creates makes of each score besides metrics:
            ``"spans"``, ``"events"`` or both (``("spans", "events")``, the default; see
            ``LiveDispatcher(emit=...)``). With ``dispatcher=``, set it on that
            dispatcher's emitter instead.
        conversation_idle_timeout: For the dispatcher it creates: seconds a conversation
            must be quiet before its conversation scorers run (see
            ``LiveDispatcher(conversation_idle_timeout=)``).

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
        dispatcher: Dispatcher | None = None,
        broker: str | None = None,
        name: str | None = None,
        per_step: bool = False,
        max_open_runs: int = 1000,
        open_run_ttl: float = 600.0,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
        emit_run_spans: EmitRunSpans = "auto",
        capture_content: ContentCapture = "full",
        score_failed_runs: bool = False,
        ignore_scorer_calls: bool = True,
        sinks: Sequence[ScoreSink] | None = None,
        logger_provider: LoggerProvider | None = None,
        emit: str | Sequence[EmitSignal] | None = None,
        conversation_idle_timeout: float | None = DEFAULT_CONVERSATION_IDLE_TIMEOUT,
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
        # shutdown() stops the dispatcher whoever made it (documented).
        dispatcher, owned = dispatcher_for(
            "LiveScoringHandler",
            scorers,
            dispatcher,
            name=f"livescore-langchain:{name}" if name else "livescore",
            broker=broker,
            sinks=sinks,
            tracer_provider=tracer_provider,
            meter_provider=meter_provider,
            capture_content=capture_content,
            logger_provider=logger_provider,
            emit=emit,
            conversation_idle_timeout=conversation_idle_timeout,
        )
        self.dispatcher: Dispatcher = dispatcher
        self.name = name
        self.per_step = per_step
        self.score_failed_runs = score_failed_runs
        self.ignore_scorer_calls = ignore_scorer_calls
        self.max_open_runs = max_open_runs
        self.open_run_ttl = float(open_run_ttl)
        self.emit_run_spans: EmitRunSpans = emit_run_spans
        # The handler's own spans follow the same content policy as the scores' spans.
        self._end_span = functools.partial(_spans.end_span, capture=capture_content)
        self._tracer = trace.get_tracer(
            _INSTRUMENTATION_SCOPE, __version__, tracer_provider=tracer_provider
        )
        self._never_raises = _NeverRaises()
        self._lock = threading.Lock()
        # Keyed by a run id's 128-bit int: a UUID's __hash__ and __eq__ are Python code, and
        # these maps are read several times per event.
        self._roots: OrderedDict[int, _OpenRun] = OrderedDict()  # oldest first
        self._evicted: OrderedDict[int, _OpenRun] = OrderedDict()
        self._root_of: dict[int, int] = {}  # every run seen -> its root's key
        self.evicted_runs = 0
        """Runs evicted because they never ended in time or the cap was reached."""
        _HANDLERS.add(self)
        if owned:
            # A handler made per request and dropped without shutdown() (a common pattern)
            # would leave its dispatcher's threads running for good (three a handler): once
            # nobody holds the handler, its dispatcher finishes what it was given and stops.
            release = weakref.finalize(self, _release_dispatcher, dispatcher)
            release.atexit = False  # at exit, the dispatcher's own exit hook does it

    # -- public ---------------------------------------------------------------------------

    @property
    def open_runs(self) -> int:
        """How many root runs are being recorded right now."""
        return len(self._roots)

    @property
    def callback_errors(self) -> int:
        """Callbacks that failed inside the handler (logged at debug, never raised)."""
        return self._never_raises.failures

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every run handed over so far is scored; ``False`` on timeout.

        Example:
            >>> # handler.flush(timeout=30.0)
        """
        return self.dispatcher.flush(timeout)

    def shutdown(self, timeout: float | None = None) -> None:
        """Flush and stop the dispatcher (also when it was passed in). Idempotent."""
        self.dispatcher.shutdown(timeout)

    def end_conversation(self, conversation_id: str) -> bool:
        """Score a conversation now instead of when it goes quiet (the user closed it).

        Example:
            >>> # handler.end_conversation("thread-42")
        """
        return self.dispatcher.end_conversation(conversation_id)

    def stats(self) -> DispatchStats:
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
        with self._never_raises:
            if self._starting(run_id, parent_run_id) is _NEW_ROOT:
                name = kwargs.get("name") or _serialized_name(serialized) or "chain"
                self._start_root(run_id, name, inputs, metadata, tags, model_input=False)

    def on_chain_end(
        self,
        outputs: dict[str, Any],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        with self._never_raises:
            key = run_id.int
            if key in self._roots or key in self._evicted:
                output = _normalize_output(outputs)
                self._finish(key, output, None, inputs=kwargs.get("inputs"))

    def on_chain_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        with self._never_raises:
            key = run_id.int
            if key in self._roots or key in self._evicted:
                self._finish(key, None, error, inputs=kwargs.get("inputs"))

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
        with self._never_raises:
            prompt: Any = messages[0] if messages else []
            self._model_start(serialized, prompt, run_id, parent_run_id, tags, metadata, kwargs)

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
        with self._never_raises:
            prompt: Any = prompts[0] if prompts else ""
            self._model_start(serialized, prompt, run_id, parent_run_id, tags, metadata, kwargs)

    def on_llm_end(
        self,
        response: LLMResult,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        with self._never_raises:
            key = run_id.int
            run = self._run_of(key)
            if run is None:
                return
            output = None
            if run.sampled:  # an unsampled run records nothing: skip reading the reply
                output = _generation_output(response)
                step = run.open_steps.pop(key, None)
                if step is not None:
                    step.output = output
                    step.tool_calls_requested = _requested_calls(output)
            if key == run.key:
                self._finish(key, output, None)

    def on_llm_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        with self._never_raises:
            key = run_id.int
            run = self._run_of(key)
            if run is None:
                return
            step = run.open_steps.pop(key, None)
            if step is not None:
                step.error = _error_text(error)
            if key == run.key:
                self._finish(key, None, error)

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
        with self._never_raises:
            run = self._starting(run_id, parent_run_id)
            if not isinstance(run, _OpenRun):
                return  # a tool called on its own is not an agent run
            if run.span is None and not run.sampled:
                return  # nothing to record and no span to open
            name = kwargs.get("name") or _serialized_name(serialized) or "tool"
            call_id = kwargs.get("tool_call_id")
            step_span_id = None
            if run.span is not None:
                span = _spans.start_tool_span(self._tracer, name, call_id, run.span)
                run.tool_spans[run_id.int] = span
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
                run.open_steps[run_id.int] = step

    def on_tool_end(
        self,
        output: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        with self._never_raises:
            key = run_id.int
            run = self._run_of(key)
            if run is None:
                return
            span = run.tool_spans.pop(key, None)
            step = run.open_steps.pop(key, None)
            if span is None and step is None:
                return  # an unsampled run without its own spans
            # Inside an agent a tool's result arrives as the ToolMessage the model sees
            # (dicts already JSON text); called directly, as the raw value.
            error: str | None = None
            result = output
            call_id = None
            if isinstance(output, ToolMessage):
                result, call_id = output.content, output.tool_call_id
                if output.status == "error":
                    error = _content_text(output.content) or "tool error"
            if span is not None:
                if call_id:  # known only now when the tool was called without one
                    span.set_attribute(attrs.GEN_AI_TOOL_CALL_ID, call_id)
                self._end_span(span, error, error_type="tool_error")
            if step is not None and step.tool_call is not None:
                step.output = output
                call = step.tool_call
                call.call_id = call.call_id or call_id
                if error is None:
                    call.result = result
                else:
                    call.error = step.error = error

    def on_tool_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        with self._never_raises:
            key = run_id.int
            run = self._run_of(key)
            if run is None:
                return
            span = run.tool_spans.pop(key, None)
            if span is not None:
                self._end_span(span, error)
            step = run.open_steps.pop(key, None)
            if step is not None:
                step.error = _error_text(error)
                if step.tool_call is not None:
                    step.tool_call.error = step.error

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
        with self._never_raises:
            run = self._starting(run_id, parent_run_id)
            if isinstance(run, _OpenRun) and run.sampled:
                name = kwargs.get("name") or _serialized_name(serialized) or "retriever"
                step = Step(kind="retriever", name=name, input=query)
                run.steps.append(step)
                run.open_steps[run_id.int] = step

    def on_retriever_end(
        self,
        documents: Sequence[Document],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        with self._never_raises:
            key = run_id.int
            run = self._run_of(key)
            step = run.open_steps.pop(key, None) if run is not None else None
            if step is not None:
                step.documents = [str(getattr(d, "page_content", d)) for d in documents]

    def on_retriever_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        with self._never_raises:
            key = run_id.int
            run = self._run_of(key)
            step = run.open_steps.pop(key, None) if run is not None else None
            if step is not None:
                step.error = _error_text(error)

    # -- recording internals ---------------------------------------------------------------

    def _starting(self, run_id: UUID, parent_run_id: UUID | None) -> _OpenRun | _NewRoot | None:
        """The one gate of every start event: the open run ``run_id`` belongs to.

        Returns the open root run it is part of (and records it there), ``_NEW_ROOT`` when
        it has no parent the handler knows (it starts a run of its own), or ``None`` when
        it is ignored: part of a run that was evicted or belongs to the parent process, or
        started by a live scorer (a judge that is itself a LangChain model). Only would-be
        roots ask :func:`is_scoring`: a child of a recorded run is the agent's own.
        """
        if parent_run_id is not None:
            root = self._root_of.get(parent_run_id.int)
            if root is not None:
                key = run_id.int
                self._root_of[key] = root
                run = self._roots.get(root)
                if run is not None:
                    run.children.append(key)
                    return run
                evicted = self._evicted.get(root)
                if evicted is not None:
                    evicted.children.append(key)
                return None
            # Unknown parent: the agent runs inside something the handler never saw (a
            # runnable invoked without it, a parent it ignored): this run is a root.
        if self.ignore_scorer_calls and is_scoring():
            return None
        return _NEW_ROOT

    def _run_of(self, key: int) -> _OpenRun | None:
        """The open root run that the run ``key`` (a root or a recorded child) belongs to."""
        root = self._root_of.get(key)
        return self._roots.get(root) if root is not None else None

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
        run = self._starting(run_id, parent_run_id)
        if run is None or (isinstance(run, _OpenRun) and not run.sampled):
            return  # ignored, or part of a run that records nothing
        name = _model_name(serialized, metadata, kwargs)
        if isinstance(run, _NewRoot):  # a model called on its own is a run of one turn
            run = self._start_root(run_id, name, prompt, metadata, tags, model_input=True)
        if run.sampled:
            step = Step(kind="model", name=name, input=prompt)
            run.steps.append(step)
            run.open_steps[run_id.int] = step

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
        conversation_id = conversation_id_of(metadata)
        # Decided once, from the trace id when there is one, before any heavy capture (and
        # from the conversation id, for the conversation scorers).
        decision = sample_turn(self.dispatcher, trace_id or str(run_id), conversation_id)
        run = _OpenRun(run_id, agent_name, decision)
        run.conversation_id = conversation_id
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
            roots[run.key] = run
            self._root_of[run.key] = run.key
            for old in evicted:
                old.forget_content()
                self._evicted[old.key] = old
            self._trim_evicted()
        return evicted

    def _trim_evicted(self) -> None:
        # Children of evicted runs keep mapping to them (so they never pose as roots), up
        # to a bound: past it the oldest evicted run's map entries go. Callers hold the lock.
        while len(self._evicted) > self.max_open_runs:
            _, gone = self._evicted.popitem(last=False)
            self._forget(gone)

    def _forget(self, run: _OpenRun) -> None:
        root_of = self._root_of
        for child in run.children:
            root_of.pop(child, None)
        root_of.pop(run.key, None)

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

    def _finish(
        self, key: int, output: Any, error: BaseException | None, *, inputs: Any = None
    ) -> None:
        """End the root run ``key``: end its spans, then submit it or count it as dropped.

        ``inputs``: the run's input as its end event gives it. A streamed chain starts with
        a placeholder (``{"input": ""}``) and says what it was given only at the end.
        """
        with self._lock:
            run = self._roots.pop(key, None)
            if run is None:
                evicted = self._evicted.pop(key, None)
                if evicted is not None:
                    self._forget(evicted)
                return
            self._forget(run)
        self._end_spans(run, error)
        if not run.sampled:
            return
        if inputs is not None:
            run.input = _normalize_input(inputs, model_input=False)
        if run.check_openinference:
            span = _spans.openinference_span(run.run_id)
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
            conversation_id=run.conversation_id,
        )

    def _submit_steps(self, run: Run, decision: SamplingDecision) -> None:
        answering = [s for s in run.steps if s.kind == "model" and _answers_user(s.output)]
        if not answering or run.error is not None:
            self.dispatcher.submit(run, decision)
            return
        last = answering[-1]
        for step in answering:
            # The run is one turn of its conversation: the last answer stands for it.
            turn = step_run(run, step)
            if step is not last:
                turn.conversation_id = None
            self.dispatcher.submit(turn, decision)

    def _after_fork_in_child(self) -> None:
        # A thread of the parent may have held the lock at the fork; it does not exist
        # here, so the copy would stay locked and hang the first run to end. The runs open
        # at the fork are the parent's (it ends, scores and counts them): the child only
        # remembers them as gone, so their remaining events here are ignored instead of
        # being taken for new runs, and ends none of their spans.
        self._lock = threading.Lock()
        for run in self._roots.values():
            run.forget_content()
            run.tool_spans, run.span = {}, None
            self._evicted[run.key] = run
        self._roots.clear()
        self._trim_evicted()
        # The child's counts are its own, as its dispatcher's are.
        self._never_raises = _NeverRaises()
        self.evicted_runs = 0


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
        conversation_id=run.conversation_id,
    )


# -- reading LangChain values ------------------------------------------------------------------


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
    try:
        text = str(error)
    except Exception:  # a broken __str__ must not lose the run it ended
        text = "(its message could not be read)"
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p if isinstance(p, str) else str(p.get("text", "")) for p in content]
        return "\n".join(p for p in parts if p)
    return str(content)


def _normalize_input(inputs: Any, *, model_input: bool) -> Any:
    # Record what the run was given, by reference (no copies of the payload on the hot
    # path): a chain's input dict, a string, message objects and role/content dicts are
    # kept as they are, since scorers read all of them. Only shapes scorers cannot read,
    # such as ("user", "hi") tuples or bare strings in a message list, become messages.
    value = inputs
    if isinstance(value, Mapping) and "messages" in value:
        value = value["messages"]
    elif model_input or isinstance(value, str):
        return value
    if isinstance(value, Sequence) and not isinstance(value, str):
        if all(isinstance(m, BaseMessage | Mapping) for m in value):
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


# -- fork safety ---------------------------------------------------------------------------------

# Every handler, held weakly (a handler is never kept alive for this): each gets a fresh lock
# in a forked child, as every LiveDispatcher does.
_HANDLERS: weakref.WeakSet[LiveScoringHandler] = weakref.WeakSet()

_RELEASE_TIMEOUT_S = 30.0
"""Seconds the dispatcher of a dropped handler gets to finish the scores it was given."""


def _release_dispatcher(dispatcher: Dispatcher) -> None:
    """Shut down the dispatcher of a handler nobody holds, on a thread of its own: the
    garbage collector may run this on the agent's thread, which must never wait."""
    threading.Thread(
        target=dispatcher.shutdown,
        args=(_RELEASE_TIMEOUT_S,),
        name="livescore-langchain-release",
        daemon=True,
    ).start()


def _after_fork_in_child() -> None:
    for handler in list(_HANDLERS):
        handler._after_fork_in_child()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
