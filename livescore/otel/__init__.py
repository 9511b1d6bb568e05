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

__all__ = (
    "ContentCapture",
    "Emitter",
    "OTelEmitter",
    "QueueDepthSource",
    "attributes",
    "run_span_context",
)
