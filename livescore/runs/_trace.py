"""The trace context a score nests under: :class:`TraceParent`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from livescore._trace_ids import normalize_span_id, normalize_trace_id

__all__ = ("TraceParent",)


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
