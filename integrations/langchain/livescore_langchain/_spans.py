"""Which OpenTelemetry span represents a LangChain run, and livescore's own agent spans.

The run's span is, in order of preference:

1. the span OpenInference's LangChain instrumentation opened for the root run (it never
   makes its spans current, so it is found through ``LangChainInstrumentor().get_span``);
2. the span current when the run started (Traceloop/OpenLLMetry and hand-written
   ``start_as_current_span`` blocks make their spans current);
3. an ``invoke_agent {name}`` span livescore opens itself (``emit_run_spans``).

The spans livescore opens come from :mod:`livescore.otel`'s helpers, shared with the other
integrations (started with an explicit parent context and never attached).
"""

from __future__ import annotations

import sys
from typing import Any
from uuid import UUID

from opentelemetry.trace import Span

# The span helpers every integration shares; re-exported so the handler reads one module.
from livescore.otel import current_span, end_span, span_ids, start_agent_span, start_tool_span

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
