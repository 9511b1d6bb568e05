"""Between OpenTelemetry span contexts and the plain :class:`~livescore.runs.TraceParent`."""

from __future__ import annotations

from opentelemetry import trace
from opentelemetry.trace import SpanContext, TraceFlags

from livescore.runs import TraceParent

__all__ = ("current_trace_parent", "parent_span_context")


def current_trace_parent() -> TraceParent | None:
    """The span current in this thread's context, as a :class:`~livescore.runs.TraceParent`.

    ``None`` when no valid span is current (no SDK, or no span started). Cheap (a context
    variable read): the live dispatcher calls it in ``submit`` for runs that carry no span
    of their own, so their scores nest under the span the agent ran in.

    Example:
        >>> current_trace_parent() is None  # no span is current here
        True
    """
    ctx = trace.get_current_span().get_span_context()
    if not ctx.is_valid:
        return None
    return TraceParent(f"{ctx.trace_id:032x}", f"{ctx.span_id:016x}", int(ctx.trace_flags))


def parent_span_context(parent: TraceParent) -> SpanContext:
    """The OpenTelemetry ``SpanContext`` of a :class:`~livescore.runs.TraceParent`.

    Example:
        >>> from livescore.runs import TraceParent
        >>> ctx = parent_span_context(TraceParent("4bf92f3577b34da6a3ce929d0e0e4736",
        ...                                       "00f067aa0ba902b7"))
        >>> ctx.is_valid, ctx.trace_flags.sampled
        (True, True)
    """
    return SpanContext(
        trace_id=int(parent.trace_id, 16),
        span_id=int(parent.span_id, 16),
        is_remote=parent.is_remote,
        trace_flags=TraceFlags(parent.trace_flags & 0xFF),
    )
