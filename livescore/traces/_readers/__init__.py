"""One reader per convention, behind one contract (:mod:`._reading`): what a span says.

:func:`read_span` asks the readers in :data:`READERS` order and lets the first that speaks
the span read it. Conventions with a marker of their own come first (a span of
OpenLLMetry's or Logfire's may carry some ``gen_ai.*`` attributes beside it); the GenAI
conventions, which many of them borrow from, come last. A new instrumentation is one
module here with its ``READER``, one line below, and its test.
"""

from __future__ import annotations

import logging

from livescore.traces._readers import (
    genai,
    langfuse,
    logfire,
    mastra,
    openinference,
    traceloop,
    vercel_ai,
)
from livescore.traces._readers._reading import (
    Message,
    Quality,
    Reader,
    Sourced,
    SpanKind,
    SpanReading,
)
from livescore.traces._span import SpanRecord

__all__ = (
    "READERS",
    "Message",
    "Quality",
    "Reader",
    "Sourced",
    "SpanKind",
    "SpanReading",
    "convention_of",
    "read_span",
)

_log = logging.getLogger("livescore.traces")
_failed: set[str] = set()  # readers whose failure was logged (once each)

READERS: tuple[Reader, ...] = (
    openinference.READER,
    logfire.READER,
    traceloop.READER,
    langfuse.READER,
    vercel_ai.READER,
    mastra.READER,
    genai.READER,
)


def convention_of(span: SpanRecord) -> Reader | None:
    """The reader that speaks ``span``, or ``None``."""
    for reader in READERS:
        if reader.speaks(span):
            return reader
    return None


def read_span(span: SpanRecord) -> SpanReading:
    """What ``span`` says, read by the first reader that speaks it (``unknown`` if none).

    Example:
        >>> span = SpanRecord("1" * 32, "2" * 16, None, "x", 0, 0,
        ...     {"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o"})
        >>> reading = read_span(span)
        >>> reading.convention, reading.kind, reading.model
        ('openinference', 'model', 'gpt-4o')
    """
    reader = convention_of(span)
    if reader is None:
        return SpanReading("unknown")
    try:
        return reader.read(span)
    except Exception:  # a reader's bug costs this span's reading, never the trace
        if reader.name not in _failed:
            _failed.add(reader.name)
            _log.exception("livescore: the %s reader failed on span %r", reader.name, span.name)
        return SpanReading(reader.name)
