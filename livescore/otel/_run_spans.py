"""The spans an integration opens for a run when nothing else represents it.

A score span is a child of the span that represents the scored run. When the runtime has
no OpenTelemetry span of its own for the run (no OpenInference, no span current at the
run's start), the integration opens an ``invoke_agent {name}`` span for it, with an
``execute_tool {tool}`` child per tool call, following the GenAI semantic conventions.

Spans are started with an explicit parent context and never attached: a runtime's
callbacks are not nested scopes, and an attached context that a failing callback never
detaches would parent every later span of the thread. ``opentelemetry-api`` only.
"""

from __future__ import annotations

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer

from livescore._errors import exception_message
from livescore.otel import attributes as attrs
from livescore.otel._emitter import ContentCapture

__all__ = ("current_span", "end_span", "span_ids", "start_agent_span", "start_tool_span")


def current_span() -> Span | None:
    """The span current in this context, if it is a valid one.

    Example:
        >>> current_span() is None  # outside any span
        True
    """
    span = trace.get_current_span()
    return span if span.get_span_context().is_valid else None


def span_ids(span: Span | None) -> tuple[str | None, str | None, int]:
    """``(trace_id, span_id, trace_flags)`` of ``span`` as hex strings (``None`` if invalid).

    These are the values a :class:`~livescore.Run` carries so its scores become children
    of ``span``.

    Example:
        >>> span_ids(None)
        (None, None, 1)
    """
    if span is None:
        return None, None, 1
    ctx = span.get_span_context()
    if not ctx.is_valid:
        return None, None, 1
    return format(ctx.trace_id, "032x"), format(ctx.span_id, "016x"), int(ctx.trace_flags)


def _parent_context(parent: Span | None) -> Context | None:
    # None means "the current context": with no span current, the agent span starts a
    # new trace.
    return trace.set_span_in_context(parent) if parent is not None else None


def start_agent_span(tracer: Tracer, name: str, parent: Span | None) -> Span:
    """Start (never attach) the ``invoke_agent {name}`` span of a run under ``parent``.

    Example:
        >>> span = start_agent_span(trace.get_tracer("example"), "support-agent", None)
        >>> end_span(span, None)
    """
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
    """Start (never attach) an ``execute_tool {tool}`` span under the run's agent span.

    Example:
        >>> tracer = trace.get_tracer("example")
        >>> agent = start_agent_span(tracer, "support-agent", None)
        >>> end_span(start_tool_span(tracer, "search_docs", "call_1", agent), None)
        >>> end_span(agent, None)
    """
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

    Example:
        >>> span = start_agent_span(trace.get_tracer("example"), "support-agent", None)
        >>> end_span(span, "the tool timed out", error_type="timeout", capture="none")
    """
    if error is not None:
        if isinstance(error, BaseException):
            kind, message = error_type or type(error).__name__, exception_message(error)
        else:
            kind, message = error_type or "error", error
        if capture == "none":
            message = kind
        elif capture == "truncated" and len(message) > max_chars:
            message = message[: max_chars - 1] + "…"
        span.set_attribute(attrs.ERROR_TYPE, kind)
        span.set_status(Status(StatusCode.ERROR, message or kind))
    span.end()
