"""Scores as OpenTelemetry data: the emitter, and every attribute name in one module.

Scoring any OpenTelemetry-instrumented agent from its spans is :mod:`livescore.collect`'s
``LiveScoringSpanProcessor``; this module names it too (``from livescore.otel import
LiveScoringSpanProcessor``), beside the rest of livescore's OpenTelemetry, and loads it only
when that name is used. ``livescore.otel.attributes`` imports nothing; the emitter (and
OpenTelemetry with it) is loaded on first use of the names below, so scorers can name their
span attributes without loading OpenTelemetry.

Example:
    >>> from livescore.otel import OTelEmitter, attributes
    >>> attributes.GEN_AI_EVALUATION_NAME
    'gen_ai.evaluation.name'
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from livescore.otel import attributes

if TYPE_CHECKING:
    from livescore._emit import EmitSignal
    from livescore.collect import LiveScoringSpanProcessor
    from livescore.otel._context import current_trace_parent, parent_span_context
    from livescore.otel._emitter import (
        ContentCapture,
        Emitter,
        OTelEmitter,
        QueueDepthSource,
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
    "EmitSignal",
    "Emitter",
    "LiveScoringSpanProcessor",
    "OTelEmitter",
    "QueueDepthSource",
    "attributes",
    "current_span",
    "current_trace_parent",
    "end_span",
    "parent_span_context",
    "span_ids",
    "start_agent_span",
    "start_tool_span",
)

_LAZY = {
    # The one name of a layer above (livescore.collect, built on the live dispatcher): a
    # re-export loaded only when asked for, so importing livescore.otel never loads the
    # layers above it. tests/test_layers.py knows it (LAZY_REEXPORTS) and allows no other.
    "LiveScoringSpanProcessor": "livescore.collect",
    "ContentCapture": "livescore.otel._emitter",
    "EmitSignal": "livescore._emit",
    "Emitter": "livescore.otel._emitter",
    "OTelEmitter": "livescore.otel._emitter",
    "QueueDepthSource": "livescore.otel._emitter",
    "current_trace_parent": "livescore.otel._context",
    "parent_span_context": "livescore.otel._context",
    "current_span": "livescore.otel._run_spans",
    "end_span": "livescore.otel._run_spans",
    "span_ids": "livescore.otel._run_spans",
    "start_agent_span": "livescore.otel._run_spans",
    "start_tool_span": "livescore.otel._run_spans",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'livescore.otel' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # once loaded, a plain module attribute
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
