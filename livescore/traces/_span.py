"""One ended span, as every trace reader sees it: :class:`SpanRecord`.

The in-process span processor, the OTLP receiver and the stored-traces reader each turn
what they get (an SDK ``ReadableSpan``, an OTLP protobuf or JSON span) into this one plain
record, so that a run is assembled from spans by one piece of code whatever their source.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ("SpanEvent", "SpanRecord")


@dataclass(frozen=True, slots=True)
class SpanEvent:
    """An event recorded on a span (an exception, a ``gen_ai.choice``…).

    Attributes:
        name: The event's name.
        attributes: Its attributes.
    """

    name: str
    attributes: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SpanRecord:
    """An ended span: ids, name, times, attributes, events and status.

    Attributes:
        trace_id: 32 lowercase hex digits.
        span_id: 16 lowercase hex digits.
        parent_span_id: The parent's span id, ``None`` for a root span.
        name: The span's name.
        start_ns: Start time, nanoseconds since the epoch.
        end_ns: End time, nanoseconds since the epoch.
        attributes: The span's attributes (strings, numbers, booleans, lists of them).
        events: Its events, in order.
        error: The status message when the span's status is ERROR (``""`` when it has none);
            ``None`` when the span did not fail.
        trace_flags: W3C trace flags (1 = sampled).
        parent_is_remote: The parent lives in another process (a propagated context).
        service_name: The resource's ``service.name``, when known.

    Example:
        >>> span = SpanRecord("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", None,
        ...                   "invoke_agent", 0, 1, {"gen_ai.operation.name": "invoke_agent"})
        >>> span.is_root, span.size > 0
        (True, True)
    """

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    start_ns: int
    end_ns: int
    attributes: Mapping[str, Any] = field(default_factory=dict)
    events: tuple[SpanEvent, ...] = ()
    error: str | None = None
    trace_flags: int = 1
    parent_is_remote: bool = False
    service_name: str | None = None

    @property
    def is_root(self) -> bool:
        """No parent at all, or one in another process: the trace's root here."""
        return self.parent_span_id is None or self.parent_is_remote

    @property
    def size(self) -> int:
        """An estimate of the bytes this record holds (strings dominate), for memory caps."""
        total = 200 + len(self.name)
        for key, value in self.attributes.items():
            total += 50 + len(key) + _value_size(value)
        for event in self.events:
            total += 80 + len(event.name)
            for key, value in event.attributes.items():
                total += 50 + len(key) + _value_size(value)
        return total


def _value_size(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, list | tuple):
        return sum(_value_size(v) + 8 for v in value)
    if isinstance(value, Mapping):  # an event's structured value (a log record's body)
        return sum(len(str(k)) + _value_size(v) + 16 for k, v in value.items())
    return 8
