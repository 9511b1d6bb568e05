"""Scores as OpenTelemetry data: the emitter, and every attribute name in one module.

Example:
    >>> from livescore.otel import OTelEmitter, attributes
    >>> attributes.GEN_AI_EVALUATION_NAME
    'gen_ai.evaluation.name'
"""

from livescore.otel import attributes
from livescore.otel._emitter import (
    ContentCapture,
    Emitter,
    OTelEmitter,
    QueueDepthSource,
    run_span_context,
)
from livescore.otel._run_spans import (
    current_span,
    end_span,
    span_ids,
    start_agent_span,
    start_tool_span,
)

__all__ = (
    "ContentCapture",
    "Emitter",
    "OTelEmitter",
    "QueueDepthSource",
    "attributes",
    "current_span",
    "end_span",
    "run_span_context",
    "span_ids",
    "start_agent_span",
    "start_tool_span",
)
