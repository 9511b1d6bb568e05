"""The trace context a score nests under: :class:`TraceParent`, and id normalisation."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ("TraceParent", "normalize_span_id", "normalize_trace_id")

_HEX = re.compile(r"[0-9a-f]+")
_CANONICAL_TRACE_ID = re.compile(r"[0-9a-f]{32}")
_CANONICAL_SPAN_ID = re.compile(r"[0-9a-f]{16}")


def _normalize_hex_id(value: object, digits: int) -> str | None:
    if not isinstance(value, str):
        return None
    text = value.strip().lower()
    if text.startswith("0x"):
        text = text[2:]
    if not text or len(text) > digits or not _HEX.fullmatch(text):
        return None
    text = text.rjust(digits, "0")
    return None if text == "0" * digits else text


def normalize_trace_id(value: object) -> str | None:
    """A trace id as OpenTelemetry writes it (32 lowercase hex digits), or ``None``.

    Upper case is lowered, a ``0x`` prefix is dropped and a short id is padded with leading
    zeros (``hex(span_context.trace_id)`` drops them), so one trace always samples the same
    way however its id was spelled. Anything that is not 1 to 32 hex digits, and the
    all-zero (invalid) id, gives ``None``.

    Example:
        >>> normalize_trace_id("4BF92F3577B34DA6A3CE929D0E0E4736")
        '4bf92f3577b34da6a3ce929d0e0e4736'
        >>> normalize_trace_id("0x1f")
        '0000000000000000000000000000001f'
        >>> normalize_trace_id("not-a-trace-id") is None
        True
    """
    # The form every OTel integration hands over: no work to do (this runs on submit).
    if isinstance(value, str) and _CANONICAL_TRACE_ID.fullmatch(value):
        return None if value == "0" * 32 else value
    return _normalize_hex_id(value, 32)


def normalize_span_id(value: object) -> str | None:
    """A span id as OpenTelemetry writes it (16 lowercase hex digits), or ``None``.

    Example:
        >>> normalize_span_id("00F067AA0BA902B7")
        '00f067aa0ba902b7'
    """
    if isinstance(value, str) and _CANONICAL_SPAN_ID.fullmatch(value):
        return None if value == "0" * 16 else value
    return _normalize_hex_id(value, 16)


@dataclass(frozen=True, slots=True)
class TraceParent:
    """The span a run's scores nest under: its trace id, span id and trace flags.

    A plain, JSON-safe record (no OpenTelemetry import), so a scoring job can carry it to
    another process; :func:`livescore.otel.parent_span_context` turns it into an OTel
    ``SpanContext``. Build one with :meth:`parse` (which normalises the ids) or
    :meth:`of_run`.

    Attributes:
        trace_id: 32 lowercase hex digits.
        span_id: 16 lowercase hex digits.
        trace_flags: W3C trace flags; bit 1 is "sampled".
        is_remote: Whether the span lives in another process (a job rebuilt on a worker).

    Example:
        >>> parent = TraceParent.parse("4BF92F3577B34DA6A3CE929D0E0E4736", "00f067aa0ba902b7")
        >>> parent.trace_id, parent.sampled
        ('4bf92f3577b34da6a3ce929d0e0e4736', True)
        >>> TraceParent.from_dict(parent.to_dict()).is_remote
        True
    """

    trace_id: str
    span_id: str
    trace_flags: int = 1
    is_remote: bool = False

    @property
    def sampled(self) -> bool:
        """Whether the trace is sampled (its spans are recorded and exported)."""
        return bool(self.trace_flags & 1)

    @classmethod
    def parse(
        cls, trace_id: object, span_id: object, trace_flags: object = 1, *, is_remote: bool = False
    ) -> TraceParent | None:
        """Normalise and check the ids (see :func:`normalize_trace_id`); ``None`` if invalid."""
        tid = normalize_trace_id(trace_id)
        sid = normalize_span_id(span_id)
        if tid is None or sid is None:
            return None
        flags = (
            trace_flags if isinstance(trace_flags, int) and not isinstance(trace_flags, bool) else 1
        )
        return cls(tid, sid, flags & 0xFF, is_remote)

    @classmethod
    def of_run(cls, run: Any) -> TraceParent | None:
        """The parent carried by a run's ``trace_id``, ``span_id`` and ``trace_flags``."""
        return cls.parse(run.trace_id, run.span_id, run.trace_flags)

    def to_dict(self) -> dict[str, Any]:
        """``{"trace_id", "span_id", "trace_flags"}``: JSON-safe."""
        return {"trace_id": self.trace_id, "span_id": self.span_id, "trace_flags": self.trace_flags}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> TraceParent | None:
        """Rebuild from :meth:`to_dict` in another process (so ``is_remote`` is ``True``)."""
        if not data:
            return None
        return cls.parse(
            data.get("trace_id"), data.get("span_id"), data.get("trace_flags", 1), is_remote=True
        )
