"""Live scoring for hand-written agents: record a run in a ``with`` block, score it at exit.

Many agents are a plain tool loop on the ``openai`` client, with no framework to hook
into. :func:`record_run` gives them what the integrations give LangChain and the Agents
SDK: the same :class:`~livescore.Run` (input, model turns, tool calls with arguments and
results, retrievals, the output), the same span rules (the span current at the start
represents the run, else an ``invoke_agent`` span with ``execute_tool`` children), the
same sampling (once, at the start, from the trace id) and the same accounting (a block that
raises is a dropped ``run_error``). Everything it does at exit is an O(1) ``submit``.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from opentelemetry import context as otel_context
from opentelemetry import trace

from livescore._errors import exception_message
from livescore._version import __version__
from livescore.live._integration import sample_turn
from livescore.otel import (
    ContentCapture,
    current_span,
    end_span,
    span_ids,
    start_agent_span,
    start_tool_span,
)
from livescore.runs import Run, Step, ToolCall

if TYPE_CHECKING:
    from opentelemetry.trace import Span, TracerProvider

    from livescore.live._dispatcher import LiveDispatcher
    from livescore.live._sampling import SamplingDecision

__all__ = ("RunRecorder", "record_run")

_log = logging.getLogger("livescore.live")

EmitRunSpan = Literal["auto", "always", "never"]


class RunRecorder:
    """One run of a hand-written agent, recorded while it happens (see :func:`record_run`).

    Record what the agent does with :meth:`tool_call`, :meth:`model_turn` and
    :meth:`retrieval`, and set :attr:`output` to the answer. When the run is not sampled
    the recording methods do nothing (they cost a method call). They never raise.

    Attributes:
        output: The agent's answer; set it before the block ends.
        metadata: JSON-safe extras that travel with the run (user ids, tags).
        conversation_id: The conversation the run is a turn of (``Run.conversation_id``).
        sampled: Whether any scorer will score this run (or its conversation).
        run_id: The run's id (``livescore.run.id`` on its scores).
    """

    def __init__(
        self,
        dispatcher: LiveDispatcher,
        *,
        input: Any,
        name: str | None,
        metadata: Mapping[str, Any] | None,
        emit_run_span: EmitRunSpan,
        tracer_provider: TracerProvider | None,
        capture_content: ContentCapture,
        score_failed_runs: bool,
        conversation_id: str | None = None,
    ) -> None:
        if emit_run_span not in ("auto", "always", "never"):
            raise ValueError(
                f"emit_run_span must be 'auto', 'always' or 'never', not {emit_run_span!r}"
            )
        self.dispatcher = dispatcher
        self.input = input
        self.name = name
        self.output: Any = None
        self.metadata: dict[str, Any] = dict(metadata or {})
        self.conversation_id = None if conversation_id is None else str(conversation_id)
        self.run_id = uuid.uuid4().hex
        self.sampled = False
        self._emit = emit_run_span
        self._tracer = trace.get_tracer("livescore", __version__, tracer_provider=tracer_provider)
        self._capture: ContentCapture = capture_content
        self._score_failed_runs = score_failed_runs
        self._steps: list[Step] = []
        self._decision: SamplingDecision | None = None
        self._span: Span | None = None  # the invoke_agent span this recorder opened
        self._token: object | None = None
        self._ids: tuple[str | None, str | None, int] = (None, None, 1)
        self._entered = False

    # -- recording ---------------------------------------------------------------------

    def tool_call(
        self,
        name: str,
        args: Any = None,
        result: Any = None,
        *,
        call_id: str | None = None,
        error: BaseException | str | None = None,
    ) -> None:
        """Record a tool call that ran: its arguments and result (or its error).

        A successful call's result is ground truth for the run (``get_run_context``); a
        failed one is kept as a failed step, never as evidence. With the recorder's own
        ``invoke_agent`` span, the call also gets an ``execute_tool`` span.

        Example:
            >>> # run.tool_call("get_weather", {"city": "Paris"}, {"temp_c": 21}, call_id="c1")
        """
        try:
            error_text = _error_text(error) if error is not None else None
            span_id = None
            if self._span is not None:
                tool_span = start_tool_span(self._tracer, name, call_id, self._span)
                span_id = span_ids(tool_span)[1]
                end_span(tool_span, error, error_type="tool_error", capture=self._capture)
            if not self.sampled:
                return
            call = ToolCall(name=name, call_id=call_id, args=args, error=error_text)
            if error_text is None:
                call.result = result
            self._steps.append(
                Step(
                    kind="tool",
                    name=name,
                    input=args,
                    output=result if error_text is None else None,
                    tool_call=call,
                    error=error_text,
                    span_id=span_id,
                )
            )
        except Exception:
            _log.debug("livescore: recording a tool call failed", exc_info=True)

    def model_turn(
        self,
        input: Any,
        output: Any,
        *,
        name: str = "model",
        tool_calls: Sequence[ToolCall] = (),
    ) -> None:
        """Record one model call: the messages it got and the message it returned.

        Optional: the run's ``output`` is what run-level scores judge. Record turns when a
        scorer reads them (say, which tools the model asked for).

        Example:
            >>> # run.model_turn(messages, {"role": "assistant", "content": "Hi"}, name="gpt-4o")
        """
        if not self.sampled:
            return
        step = Step(kind="model", name=name, input=input, output=output)
        step.tool_calls_requested = list(tool_calls)
        self._steps.append(step)

    def retrieval(self, query: str, documents: Sequence[str], *, name: str = "retriever") -> None:
        """Record a document retrieval: the documents are ground truth for the run.

        Example:
            >>> # run.retrieval("refund policy", ["Refunds are paid within 14 days."])
        """
        if not self.sampled:
            return
        self._steps.append(
            Step(kind="retriever", name=name, input=query, documents=[str(d) for d in documents])
        )

    # -- the block -----------------------------------------------------------------------

    def __enter__(self) -> RunRecorder:
        if self._entered:
            raise RuntimeError("a RunRecorder records one run: use a new record_run() block")
        self._entered = True
        try:
            self._start()
        except Exception:
            _log.debug("livescore: starting a recorded run failed", exc_info=True)
        return self

    def _start(self) -> None:
        external = current_span()
        if self._emit == "always" or (self._emit == "auto" and external is None):
            self._span = start_agent_span(self._tracer, self.name or "agent", external)
            # A with block is a real scope: make the run's span current inside it, so what
            # the agent calls (an instrumented openai client, your own spans) nests under it.
            self._token = otel_context.attach(trace.set_span_in_context(self._span))
        self._ids = span_ids(self._span or external)
        trace_id = self._ids[0]
        self._decision = sample_turn(self.dispatcher, trace_id or self.run_id, self.conversation_id)
        self.sampled = self._decision.sampled

    def __exit__(self, kind: object, exc: BaseException | None, tb: object) -> None:
        try:
            self._finish(exc)
        except Exception:
            _log.debug("livescore: finishing a recorded run failed", exc_info=True)

    def _finish(self, exc: BaseException | None) -> None:
        if self._token is not None:
            with contextlib.suppress(Exception):  # detached in another context: nothing to do
                otel_context.detach(self._token)  # type: ignore[arg-type]
            self._token = None
        error = _error_text(exc) if exc is not None else None
        if self._span is not None:
            end_span(self._span, exc, error_type="run_error", capture=self._capture)
            self._span = None
        decision = self._decision
        if decision is None or not self.sampled:
            return
        if error is not None and not self._score_failed_runs:
            self.dispatcher.drop(decision, "run_error")
            return
        if error is None and self.output is None:
            _log.warning(
                "livescore: record_run(%r) ended without an output (set run.output); "
                "the run is not scored",
                self.name,
            )
            self.dispatcher.drop(decision, "no_output")
            return
        for index, step in enumerate(self._steps):
            step.index = index
        trace_id, span_id, flags = self._ids
        metadata = self.metadata
        metadata.setdefault("integration", "plain")
        run = Run(
            input=self.input,
            output=self.output,
            run_id=self.run_id,
            trace_id=trace_id,
            span_id=span_id,
            trace_flags=flags,
            name=self.name,
            steps=self._steps,
            error=error,
            metadata=metadata,
            conversation_id=self.conversation_id,
        )
        self.dispatcher.submit(run, decision)


def record_run(
    dispatcher: LiveDispatcher,
    *,
    input: Any,
    name: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    emit_run_span: EmitRunSpan = "auto",
    tracer_provider: TracerProvider | None = None,
    capture_content: ContentCapture = "full",
    score_failed_runs: bool = False,
    conversation_id: str | None = None,
) -> RunRecorder:
    """Record one run of a hand-written agent and submit it for live scoring at the end.

    Use it as a ``with`` block around the agent's work. At the start it decides sampling
    (once, from the trace id) and finds the span that represents the run: the span current
    there, else an ``invoke_agent {name}`` span it opens and makes current for the block.
    Inside, record tool calls, model turns and retrievals and set ``run.output``. At the
    end the run goes to ``dispatcher`` (O(1), never blocks); a block that raises counts as
    dropped with reason ``"run_error"`` (the exception goes on to your code untouched), and
    a block that never set ``output`` as dropped with reason ``"no_output"``.

    Args:
        dispatcher: The :class:`~livescore.live.LiveDispatcher` that scores the run.
        input: What the user asked (text or chat messages).
        name: The agent's name (``Run.name``, ``gen_ai.agent.name``).
        metadata: JSON-safe extras that travel with the run.
        emit_run_span: ``"auto"`` (open an ``invoke_agent`` span only when no span is
            current), ``"always"`` or ``"never"``.
        tracer_provider: For the ``invoke_agent`` and ``execute_tool`` spans; the global
            provider by default.
        capture_content: What those spans' error statuses carry of user text.
        score_failed_runs: Submit runs whose block raised too, with ``Run.error`` set.
        conversation_id: The conversation (chat thread, session) this run is a turn of:
            the dispatcher's conversation scorers judge the turns that share it, once the
            conversation goes quiet (``LiveDispatcher(conversation_idle_timeout=)``) or
            ends (``dispatcher.end_conversation(id)``).

    Example:
        >>> from livescore.live import LiveDispatcher
        >>> from livescore.scorers import create_keyword_coverage_scorer
        >>> dispatcher = LiveDispatcher([create_keyword_coverage_scorer()], register_atexit=False)
        >>> with record_run(dispatcher, input="Weather in Paris?", name="weather") as run:
        ...     run.tool_call("get_weather", {"city": "Paris"}, {"sky": "sunny"})
        ...     run.output = "It is sunny in Paris."
        >>> dispatcher.flush(timeout=10)
        True
        >>> dispatcher.stats().scored
        1
        >>> dispatcher.shutdown()
    """
    return RunRecorder(
        dispatcher,
        input=input,
        name=name,
        metadata=metadata,
        emit_run_span=emit_run_span,
        tracer_provider=tracer_provider,
        capture_content=capture_content,
        score_failed_runs=score_failed_runs,
        conversation_id=conversation_id,
    )


def _error_text(error: BaseException | str) -> str:
    if isinstance(error, str):
        return error
    text = exception_message(error)  # never raises, whatever the exception's __str__ does
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
