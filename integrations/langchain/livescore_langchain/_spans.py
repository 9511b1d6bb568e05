"""Which OpenTelemetry span represents a LangChain run, and livescore's own agent spans.

The run's span is, in order of preference:

1. the span OpenInference's LangChain instrumentation opened for the root run (it never
   makes its spans current, so it is found through ``LangChainInstrumentor().get_span``);
2. the span current when the run started (Traceloop/OpenLLMetry and hand-written
   ``start_as_current_span`` blocks make their spans current);
3. an ``invoke_agent {name}`` span livescore opens itself (``emit_run_spans``).

Spans livescore opens are started with an explicit parent context and never attached:
callbacks are not nested scopes, and an attached context that a failing callback never
detaches would parent every later span of the thread.
"""

from __future__ import annotations

import sys
from typing import Any
from uuid import UUID

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer

from livescore.otel import ContentCapture
from livescore.otel import attributes as attrs

__all__ = (
    "current_span",
    "end_span",
    "openinference_active",
    "openinference_span",
    "span_ids",
    "start_agent_span",
    "start_tool_span",
)

_OPENINFERENCE_MODULE = "openinference.instrumentation.langchain"


def _openinference_instrumentor() -> Any:
    # Only look if the user imported the instrumentation: importing it here would cost
    # hundreds of milliseconds and would never make it active anyway.
    module = sys.modules.get(_OPENINFERENCE_MODULE)
    if module is None:
        return None
    cls = getattr(module, "LangChainInstrumentor", None)
    instance = getattr(cls, "_instance", None)  # BaseInstrumentor is a singleton
    if instance is None or getattr(instance, "_tracer", None) is None:
        # Not instrumented: calling get_span now would print a warning to stdout.
        return None
    return instance


def openinference_active() -> bool:
    """Whether OpenInference's LangChain instrumentation is instrumenting right now."""
    return _openinference_instrumentor() is not None


def openinference_span(run_id: UUID) -> Span | None:
    """The span OpenInference opened for ``run_id``, if it is active and has one."""
    instrumentor = _openinference_instrumentor()
    if instrumentor is None:
        return None
    span = instrumentor.get_span(run_id)
    if isinstance(span, Span) and span.get_span_context().is_valid:
        return span
    return None


def current_span() -> Span | None:
    """The span current in this context, if it is a valid one."""
    span = trace.get_current_span()
    return span if span.get_span_context().is_valid else None


def span_ids(span: Span | None) -> tuple[str | None, str | None, int]:
    """``(trace_id, span_id, trace_flags)`` of ``span`` as hex strings (``None`` if invalid)."""
    if span is None:
        return None, None, 1
    ctx = span.get_span_context()
    if not ctx.is_valid:
        return None, None, 1
    return format(ctx.trace_id, "032x"), format(ctx.span_id, "016x"), int(ctx.trace_flags)


def _parent_context(parent: Span | None) -> Context | None:
    # None means "the current context": a span current when the run started becomes the
    # parent, and with none the agent span starts a new trace.
    return trace.set_span_in_context(parent) if parent is not None else None


def start_agent_span(tracer: Tracer, name: str, parent: Span | None) -> Span:
    """Start (never attach) the ``invoke_agent {name}`` span of a run."""
    return tracer.start_span(
        f"{attrs.OPERATION_INVOKE_AGENT} {name}",
        context=_parent_context(parent),
        kind=SpanKind.INTERNAL,
        attributes={
            attrs.GEN_AI_OPERATION_NAME: attrs.OPERATION_INVOKE_AGENT,
            attrs.GEN_AI_AGENT_NAME: name,
        },
    )


def start_tool_span(tracer: Tracer, tool: str, call_id: str | None, parent: Span) -> Span:
    """Start (never attach) an ``execute_tool {tool}`` span under the agent span."""
    attributes: dict[str, str] = {
        attrs.GEN_AI_OPERATION_NAME: attrs.OPERATION_EXECUTE_TOOL,
        attrs.GEN_AI_TOOL_NAME: tool,
    }
    if call_id:
        attributes[attrs.GEN_AI_TOOL_CALL_ID] = call_id
    return tracer.start_span(
        f"{attrs.OPERATION_EXECUTE_TOOL} {tool}",
        context=trace.set_span_in_context(parent),
        kind=SpanKind.INTERNAL,
        attributes=attributes,
    )


def end_span(
    span: Span,
    error: BaseException | str | None,
    *,
    error_type: str | None = None,
    capture: ContentCapture = "full",
    max_chars: int = 1000,
) -> None:
    """End ``span``, marking it failed (``error.type`` and an ERROR status) on ``error``.

    ``error`` is the exception, or a message whose type is ``error_type`` (``"error"`` by
    default). Error messages can quote user text (a tool's input, the agent's exception),
    so ``capture`` governs them as it governs the scores' explanations: ``"none"`` keeps
    only the error type, ``"truncated"`` cuts the message at ``max_chars``.
    """
    if error is not None:
        if isinstance(error, BaseException):
            kind, message = error_type or type(error).__name__, str(error)
        else:
            kind, message = error_type or "error", error
        if capture == "none":
            message = kind
        elif capture == "truncated" and len(message) > max_chars:
            message = message[: max_chars - 1] + "…"
        span.set_attribute(attrs.ERROR_TYPE, kind)
        span.set_status(Status(StatusCode.ERROR, message or kind))
    span.end()
