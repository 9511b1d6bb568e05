"""OTLP trace and log payloads (protobuf and JSON) and SDK spans, as :class:`SpanRecord`
lists and :class:`LogEvent` lists.

The JSON form follows the OTLP specification, not the generic protobuf JSON mapping:
trace and span ids are hex strings, field names lowerCamelCase (snake_case is accepted
too), enums integers, and 64-bit integers may be strings. This is what the OpenTelemetry
Collector's file exporter writes, one ``ExportTraceServiceRequest`` per line, and what
OTLP/HTTP exporters send as ``application/json``.

Log records matter where an instrumentation puts message content in events rather than on
spans (the OpenTelemetry contrib instrumentations with ``..._CAPTURE_MESSAGE_CONTENT=
EVENT_ONLY``, the older ``gen_ai.user.message`` / ``gen_ai.choice`` events): each record
that names its trace, its span and an event becomes a :class:`LogEvent`, joined to its span
as a :class:`SpanEvent` when the trace is assembled, so the readers read it exactly as an
event recorded on the span.

Protobuf needs ``opentelemetry-proto`` (``pip install 'livescore-ai[collect]'``); it is
imported on first use.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from livescore._errors import OTLPDecodeError
from livescore.traces._span import SpanEvent, SpanRecord, _value_size

__all__ = (
    "DecodedLogs",
    "DecodedSpans",
    "LogEvent",
    "decode_otlp_json",
    "decode_otlp_logs_json",
    "decode_otlp_logs_protobuf",
    "decode_otlp_protobuf",
    "from_log_record",
    "from_readable_span",
)

_STATUS_ERROR = 2
# SpanFlags in the OTLP protocol: bits 8 and 9 say whether the parent is known to be remote.
_HAS_IS_REMOTE = 0x100
_IS_REMOTE = 0x200
# A span that was exported was recorded: its trace is sampled, whatever flags an exporter
# wrote (several write none at all).
_SAMPLED = 0x01
_HEX = frozenset("0123456789abcdefABCDEF")


def _wire_id(value: object, size: int) -> str | None:
    """A trace (``size`` 16) or span (``size`` 8) id as it travels in OTLP, in lowercase hex;
    ``None`` when it is not one.

    The OTLP specification is strict where a user's own ids are not: an id is exactly
    ``size`` bytes, never padded (``abc`` and ``0abc`` are not one trace), and the all-zero
    id is invalid. In JSON it is ``2 * size`` hex digits (OTLP JSON), or the base64 of its
    bytes (protobuf's own JSON mapping, which some exporters write); in protobuf, bytes.

    Example:
        >>> _wire_id("S/kvNXezTaajzpKdDg5HNg==", 16)
        '4bf92f3577b34da6a3ce929d0e0e4736'
        >>> _wire_id("abc", 8) is None
        True
    """
    if isinstance(value, bytes):
        raw = value
    elif isinstance(value, str):
        if len(value) == 2 * size and _HEX.issuperset(value):
            raw = bytes.fromhex(value)
        elif len(value) == 4 * ((size + 2) // 3):
            try:
                raw = base64.b64decode(value, validate=True)
            except ValueError:
                return None
        else:
            return None
    else:
        return None
    if len(raw) != size or not any(raw):
        return None
    return raw.hex()


def _trace_id(value: object) -> str | None:
    return _wire_id(value, 16)


def _span_id(value: object) -> str | None:
    return _wire_id(value, 8)


# What hostile JSON raises beside the shape errors: nesting past the interpreter's depth
# (RecursionError) and Infinity where an integer belongs (OverflowError). A bad request, not
# a crash.
_HOSTILE = (RecursionError, OverflowError)


@dataclass(slots=True)
class DecodedSpans:
    """What one payload held.

    Attributes:
        spans: The spans, in payload order.
        rejected: Spans left out because their trace or span id was invalid (the OTLP
            ``partial_success.rejected_spans`` count).
    """

    spans: list[SpanRecord] = field(default_factory=list)
    rejected: int = 0


@dataclass(frozen=True, slots=True)
class LogEvent:
    """A log record that belongs to a span: an event recorded beside it, not on it.

    Attributes:
        trace_id: Its trace (32 lowercase hex digits).
        span_id: The span it was emitted in (16 lowercase hex digits).
        event: What it says, as the span's own event would (see :func:`log_event`).

    Example:
        >>> e = LogEvent("1" * 32, "2" * 16, SpanEvent("gen_ai.choice", {"index": 0}))
        >>> e.event.name, e.size > 0
        ('gen_ai.choice', True)
    """

    trace_id: str
    span_id: str
    event: SpanEvent

    @property
    def size(self) -> int:
        """An estimate of the bytes it holds (what the assembler's memory cap counts)."""
        total = 120 + len(self.event.name)
        for key, value in self.event.attributes.items():
            total += 50 + len(key) + _value_size(value)
        return total


@dataclass(slots=True)
class DecodedLogs:
    """What one logs payload held.

    Attributes:
        events: The records that name their trace, span and event, in payload order.
        unjoined: Records left out because they name no (valid) trace and span id: they
            belong to no run.
        unnamed: Records left out because they name no event (``event_name`` or an
            ``event.name`` attribute): plain log lines, which no reader reads.
    """

    events: list[LogEvent] = field(default_factory=list)
    unjoined: int = 0
    unnamed: int = 0

    @property
    def dropped(self) -> int:
        """Records left out, for either reason."""
        return self.unjoined + self.unnamed


def log_event(
    trace_id: str | None,
    span_id: str | None,
    event_name: str | None,
    attributes: Mapping[str, Any],
    body: Any,
    out: DecodedLogs,
) -> None:
    """Add one log record to ``out``: a :class:`LogEvent`, or a count of why not.

    The event's name is the record's ``event_name``, else its ``event.name`` attribute. Its
    attributes are the record's, plus its body: a map's keys (the older GenAI events carry
    their content there: ``{"content": ...}``, ``{"message": {...}}``, ``{"id": ...}``; an
    attribute of the same name wins), anything else under ``body``.
    """
    if trace_id is None or span_id is None:
        out.unjoined += 1
        return
    name = event_name or attributes.get("event.name")
    if not isinstance(name, str) or not name:
        out.unnamed += 1
        return
    merged = dict(attributes)
    if isinstance(body, Mapping):
        for key, value in body.items():
            merged.setdefault(str(key), value)
    elif body is not None:
        merged.setdefault("body", body)
    out.events.append(LogEvent(trace_id, span_id, SpanEvent(name, merged)))


# -- protobuf ---------------------------------------------------------------------------------


def _parse_protobuf(body: bytes, what: Literal["trace", "logs"]) -> Any:
    """The ``Export{Trace,Logs}ServiceRequest`` message parsed from ``body``."""
    from google.protobuf.message import DecodeError  # type: ignore[import-untyped]

    request: Any
    if what == "trace":
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )

        request = ExportTraceServiceRequest()
    else:
        from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
            ExportLogsServiceRequest,
        )

        request = ExportLogsServiceRequest()
    try:
        request.ParseFromString(body)
    except (DecodeError, ValueError, RuntimeError) as exc:
        raise OTLPDecodeError(f"not an OTLP protobuf {what} export request ({exc})") from None
    return request


def decode_otlp_protobuf(body: bytes) -> DecodedSpans:
    """Decode an ``ExportTraceServiceRequest`` in its protobuf form.

    Raises:
        OTLPDecodeError: ``body`` is not such a message.
        ImportError: ``opentelemetry-proto`` is not installed.

    Example:
        >>> decode_otlp_protobuf(b"").spans
        []
    """
    request = _parse_protobuf(body, "trace")
    out = DecodedSpans()
    for resource_spans in request.resource_spans:
        service = None
        for kv in resource_spans.resource.attributes:
            if kv.key == "service.name":
                service = _pb_value(kv.value)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                trace_id = _trace_id(span.trace_id)
                span_id = _span_id(span.span_id)
                parent_span_id = _span_id(span.parent_span_id) if span.parent_span_id else None
                if (
                    trace_id is None
                    or span_id is None
                    or (span.parent_span_id and parent_span_id is None)
                ):
                    out.rejected += 1
                    continue
                flags = int(span.flags)
                status = span.status
                out.spans.append(
                    SpanRecord(
                        trace_id=trace_id,
                        span_id=span_id,
                        parent_span_id=parent_span_id,
                        name=span.name,
                        start_ns=int(span.start_time_unix_nano),
                        end_ns=int(span.end_time_unix_nano),
                        attributes={kv.key: _pb_value(kv.value) for kv in span.attributes},
                        events=tuple(
                            SpanEvent(e.name, {kv.key: _pb_value(kv.value) for kv in e.attributes})
                            for e in span.events
                        ),
                        error=status.message if status.code == _STATUS_ERROR else None,
                        trace_flags=(flags & 0xFF) | _SAMPLED,
                        parent_is_remote=bool(flags & _HAS_IS_REMOTE and flags & _IS_REMOTE),
                        service_name=service if isinstance(service, str) else None,
                    )
                )
    return out


def decode_otlp_logs_protobuf(body: bytes) -> DecodedLogs:
    """Decode an ``ExportLogsServiceRequest`` in its protobuf form (see :func:`log_event`);
    it raises as :func:`decode_otlp_protobuf` does.

    Example:
        >>> decode_otlp_logs_protobuf(b"").events
        []
    """
    request = _parse_protobuf(body, "logs")
    out = DecodedLogs()
    for resource_logs in request.resource_logs:
        for scope_logs in resource_logs.scope_logs:
            for record in scope_logs.log_records:
                log_event(
                    _trace_id(record.trace_id),
                    _span_id(record.span_id),
                    record.event_name,
                    {kv.key: _pb_value(kv.value) for kv in record.attributes},
                    _pb_value(record.body) if record.HasField("body") else None,
                    out,
                )
    return out


def _pb_value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [_pb_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _pb_value(kv.value) for kv in value.kvlist_value.values}
    if kind == "bytes_value":
        return base64.b64encode(value.bytes_value).decode("ascii")
    return getattr(value, kind)


# -- JSON -------------------------------------------------------------------------------------


def decode_otlp_json(payload: bytes | str | Mapping[str, Any]) -> DecodedSpans:
    """Decode an ``ExportTraceServiceRequest`` in its OTLP JSON form.

    Raises:
        OTLPDecodeError: ``payload`` is not JSON, or not shaped like such a request.

    Example:
        >>> line = ('{"resourceSpans": [{"scopeSpans": [{"spans": [{'
        ...         '"traceId": "4bf92f3577b34da6a3ce929d0e0e4736", "spanId": "00f067aa0ba902b7",'
        ...         '"name": "chat", "startTimeUnixNano": "1", "endTimeUnixNano": "2",'
        ...         '"attributes": [{"key": "gen_ai.operation.name",'
        ...         '"value": {"stringValue": "chat"}}]}]}]}]}')
        >>> [s.attributes for s in decode_otlp_json(line).spans]
        [{'gen_ai.operation.name': 'chat'}]
    """
    payload = _json_object(payload, "trace request is an object with resourceSpans")
    out = DecodedSpans()
    try:
        for resource_spans in _list(payload, "resourceSpans", "resource_spans"):
            resource = _get(resource_spans, "resource") or {}
            service = _json_attributes(_get(resource, "attributes")).get("service.name")
            for scope_spans in _list(resource_spans, "scopeSpans", "scope_spans"):
                for span in _list(scope_spans, "spans"):
                    record = _json_span(span, service if isinstance(service, str) else None)
                    if record is None:
                        out.rejected += 1
                    else:
                        out.spans.append(record)
    except (TypeError, ValueError, AttributeError, *_HOSTILE) as exc:
        raise OTLPDecodeError(f"not an OTLP JSON trace request ({_reason(exc)})") from None
    return out


def decode_otlp_logs_json(payload: bytes | str | Mapping[str, Any]) -> DecodedLogs:
    """Decode an ``ExportLogsServiceRequest`` in its OTLP JSON form (see :func:`log_event`).

    Raises:
        OTLPDecodeError: ``payload`` is not JSON, or not shaped like such a request.

    Example:
        >>> line = ('{"resourceLogs": [{"scopeLogs": [{"logRecords": [{'
        ...         '"traceId": "4bf92f3577b34da6a3ce929d0e0e4736", "spanId": "00f067aa0ba902b7",'
        ...         '"eventName": "gen_ai.user.message",'
        ...         '"body": {"kvlistValue": {"values": [{"key": "content",'
        ...         '"value": {"stringValue": "Hi"}}]}}}]}]}]}')
        >>> [(e.event.name, dict(e.event.attributes)) for e in decode_otlp_logs_json(line).events]
        [('gen_ai.user.message', {'content': 'Hi'})]
    """
    payload = _json_object(payload, "logs request is an object with resourceLogs")
    out = DecodedLogs()
    try:
        for resource_logs in _list(payload, "resourceLogs", "resource_logs"):
            for scope_logs in _list(resource_logs, "scopeLogs", "scope_logs"):
                for record in _list(scope_logs, "logRecords", "log_records"):
                    name = _get(record, "eventName", "event_name")
                    log_event(
                        _trace_id(_get(record, "traceId", "trace_id") or ""),
                        _span_id(_get(record, "spanId", "span_id") or ""),
                        str(name) if name else None,
                        _json_attributes(_get(record, "attributes")),
                        _json_value(_get(record, "body")),
                        out,
                    )
    except (TypeError, ValueError, AttributeError, *_HOSTILE) as exc:
        raise OTLPDecodeError(f"not an OTLP JSON logs request ({_reason(exc)})") from None
    return out


def _json_object(payload: bytes | str | Mapping[str, Any], shape: str) -> Mapping[str, Any]:
    """``payload`` decoded: an OTLP JSON request (``shape`` ends the error that says what
    one is)."""
    if isinstance(payload, bytes | str):
        try:
            payload = json.loads(payload)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            raise OTLPDecodeError(f"not JSON ({_reason(exc)})") from None
    if not isinstance(payload, Mapping):
        raise OTLPDecodeError(f"an OTLP JSON {shape}")
    return payload


def _reason(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    if isinstance(exc, OverflowError):
        return "a number out of range (Infinity where an integer belongs?)"
    return str(exc)


def _get(obj: Any, *names: str) -> Any:
    if not isinstance(obj, Mapping):
        raise TypeError(f"expected an object, got {type(obj).__name__}")
    for name in names:
        if name in obj:
            return obj[name]
    return None


def _list(obj: Any, *names: str) -> Sequence[Any]:
    value = _get(obj, *names)
    if value is None:
        return ()
    if not isinstance(value, list):
        raise TypeError(f"{names[0]} must be a list")
    return value


def _json_span(span: Any, service: str | None) -> SpanRecord | None:
    trace_id = _trace_id(_get(span, "traceId", "trace_id"))
    span_id = _span_id(_get(span, "spanId", "span_id"))
    parent = _get(span, "parentSpanId", "parent_span_id")
    parent_span_id = _span_id(parent) if parent else None
    if trace_id is None or span_id is None or (parent and parent_span_id is None):
        return None
    status = _get(span, "status") or {}
    code = _get(status, "code")
    failed = code in (_STATUS_ERROR, "STATUS_CODE_ERROR", "2")
    flags = int(_get(span, "flags") or 0)
    events = tuple(
        SpanEvent(
            str(_get(event, "name") or ""),
            _json_attributes(_get(event, "attributes")),
        )
        for event in _list(span, "events")
    )
    return SpanRecord(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=parent_span_id,
        name=str(_get(span, "name") or ""),
        start_ns=int(_get(span, "startTimeUnixNano", "start_time_unix_nano") or 0),
        end_ns=int(_get(span, "endTimeUnixNano", "end_time_unix_nano") or 0),
        attributes=_json_attributes(_get(span, "attributes")),
        events=events,
        error=str(_get(status, "message") or "") if failed else None,
        trace_flags=(flags & 0xFF) | _SAMPLED,
        parent_is_remote=bool(flags & _HAS_IS_REMOTE and flags & _IS_REMOTE),
        service_name=service,
    )


def _json_attributes(values: Any) -> dict[str, Any]:
    if values is None:
        return {}
    if not isinstance(values, list):
        raise TypeError("attributes must be a list of {key, value}")
    return {str(_get(kv, "key")): _json_value(_get(kv, "value")) for kv in values}


def _json_value(value: Any) -> Any:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise TypeError("an attribute value must be an object such as {stringValue: ...}")
    for key, raw in value.items():
        if key in ("stringValue", "string_value"):
            return str(raw)
        if key in ("boolValue", "bool_value"):
            return bool(raw)
        if key in ("intValue", "int_value"):
            return int(raw)  # int64 travels as a string in OTLP JSON
        if key in ("doubleValue", "double_value"):
            return float(raw)
        if key in ("arrayValue", "array_value"):
            return [_json_value(v) for v in _list(raw, "values")]
        if key in ("kvlistValue", "kvlist_value"):
            return {
                str(_get(kv, "key")): _json_value(_get(kv, "value")) for kv in _list(raw, "values")
            }
        if key in ("bytesValue", "bytes_value"):
            return str(raw)
    return None


# -- SDK spans and log records ----------------------------------------------------------------


def from_readable_span(span: Any) -> SpanRecord | None:
    """An OpenTelemetry SDK ``ReadableSpan`` as a record (read by duck typing: the SDK is
    not imported); ``None`` for a span without a valid context.

    Example:
        >>> from_readable_span(object()) is None
        True
    """
    ctx = getattr(span, "context", None)
    if ctx is None or not getattr(ctx, "is_valid", False):
        return None
    parent = getattr(span, "parent", None)
    status = getattr(span, "status", None)
    failed = status is not None and getattr(status.status_code, "value", 0) == _STATUS_ERROR
    resource = getattr(span, "resource", None)
    service = getattr(resource, "attributes", {}).get("service.name") if resource else None
    events: Iterable[Any] = getattr(span, "events", ()) or ()
    return SpanRecord(
        trace_id=format(ctx.trace_id, "032x"),
        span_id=format(ctx.span_id, "016x"),
        parent_span_id=format(parent.span_id, "016x") if parent is not None else None,
        name=str(span.name),
        start_ns=int(span.start_time or 0),
        end_ns=int(span.end_time or 0),
        attributes=dict(span.attributes or {}),
        events=tuple(SpanEvent(e.name, dict(e.attributes or {})) for e in events),
        error=(getattr(status, "description", None) or "") if failed else None,
        trace_flags=int(ctx.trace_flags),
        parent_is_remote=bool(parent is not None and parent.is_remote),
        service_name=service if isinstance(service, str) else None,
    )


def from_log_record(record: Any) -> DecodedLogs:
    """An OpenTelemetry SDK log record (a ``LogData``/``ReadWriteLogRecord`` or the
    ``LogRecord`` itself, read by duck typing) as :class:`DecodedLogs` of at most one event.

    Example:
        >>> from_log_record(object()).unjoined
        1
    """
    inner = getattr(record, "log_record", record)
    trace_id = getattr(inner, "trace_id", None)
    span_id = getattr(inner, "span_id", None)
    out = DecodedLogs()
    attributes = getattr(inner, "attributes", None) or {}
    log_event(
        format(trace_id, "032x") if isinstance(trace_id, int) and trace_id else None,
        format(span_id, "016x") if isinstance(span_id, int) and span_id else None,
        getattr(inner, "event_name", None),
        {str(k): _plain(v) for k, v in attributes.items()},
        _plain(getattr(inner, "body", None)),
        out,
    )
    return out


def _plain(value: Any) -> Any:
    """An SDK attribute value as OTLP decoding gives it: tuples as lists, maps as dicts (the
    SDK keeps a structured event attribute as tuples; the readers expect lists)."""
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    return value
