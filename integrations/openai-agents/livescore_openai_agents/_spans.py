"""Which OpenTelemetry span represents an Agents SDK run.

The SDK has no OpenTelemetry of its own. The run's span is, in order of preference:

1. the span current when the run started: OpenInference's
   ``openinference-instrumentation-openai-agents`` (and Logfire's instrumentation) turn each
   SDK span into an OTel span and make it current while it runs, and a user's own
   ``start_as_current_span`` block is current too;
2. an ``invoke_agent {name}`` span livescore opens itself (``emit_run_spans``).

OpenInference's processor and livescore's run in the order they were registered. When
OpenInference runs first, its span for the run is current in livescore's start callback;
when livescore runs first, OpenInference's span is current only in livescore's *end*
callback (OpenInference detaches it after). So with OpenInference active, livescore looks
again at the run's end and keeps whichever of the two spans OpenInference made.
"""

from __future__ import annotations

import sys
from typing import Any

from opentelemetry.trace import Span

__all__ = ("is_openinference_span", "openinference_active")

_OPENINFERENCE_MODULE = "openinference.instrumentation.openai_agents"


def openinference_active() -> bool:
    """Whether OpenInference's Agents SDK instrumentation is instrumenting right now."""
    # Only look if the user imported the instrumentation: importing it here would cost
    # tens of milliseconds and would never make it active anyway.
    module = sys.modules.get(_OPENINFERENCE_MODULE)
    if module is None:
        return False
    cls = getattr(module, "OpenAIAgentsInstrumentor", None)
    instance: Any = getattr(cls, "_instance", None)  # BaseInstrumentor is a singleton
    return bool(getattr(instance, "is_instrumented_by_opentelemetry", False))


def is_openinference_span(span: Span | None) -> bool:
    """Whether ``span`` was made by OpenInference's Agents SDK instrumentation."""
    scope = getattr(span, "instrumentation_scope", None)
    name = getattr(scope, "name", None)
    return isinstance(name, str) and name.startswith(_OPENINFERENCE_MODULE)
