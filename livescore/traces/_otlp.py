"""OTLP trace payloads (protobuf and JSON) and SDK spans, as :class:`SpanRecord` lists.

The JSON form follows the OTLP specification, not the generic protobuf JSON mapping:
trace and span ids are hex strings, field names lowerCamelCase (snake_case is accepted
too), enums integers, and 64-bit integers may be strings. This is what the OpenTelemetry
Collector's file exporter writes, one ``ExportTraceServiceRequest`` per line, and what
OTLP/HTTP exporters send as ``application/json``.

Protobuf needs ``opentelemetry-proto`` (``pip install 'livescore-ai[collect]'``); it is
imported on first use.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from livescore._errors import OTLPDecodeError
from livescore._trace_ids import normalize_span_id, normalize_trace_id
from livescore.traces._span import SpanEvent, SpanRecord

__all__ = (
    "DecodedSpans",
    "decode_otlp_json",
    "decode_otlp_protobuf",
    "from_readable_span",
)

_STATUS_ERROR = 2
# SpanFlags in the OTLP protocol: bits 8 and 9 say whether the parent is known to be remote.
_HAS_IS_REMOTE = 0x100
_IS_REMOTE = 0x200
# A span that was exported was recorded: its trace is sampled, whatever flags an exporter
# wrote (several write none at all).
_SAMPLED = 0x01


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


# -- protobuf ---------------------------------------------------------------------------------


def decode_otlp_protobuf(body: bytes) -> DecodedSpans:
    """Decode an ``ExportTraceServiceRequest`` in its protobuf form.

    Raises:
        OTLPDecodeError: ``body`` is not such a message.
        ImportError: ``opentelemetry-proto`` is not installed.

    Example:
        >>> decode_otlp_protobuf(b"").spans
        []
    """
    from google.protobuf.message import DecodeError  # type: ignore[import-untyped]
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(body)
    except (DecodeError, ValueError, RuntimeError) as exc:
        raise OTLPDecodeError(f"not an OTLP protobuf trace export request ({exc})") from None
    out = DecodedSpans()
    for resource_spans in request.resource_spans:
        service = None
        for kv in resource_spans.resource.attributes:
            if kv.key == "service.name":
                service = _pb_value(kv.value)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                trace_id = normalize_trace_id(span.trace_id.hex())
                span_id = normalize_span_id(span.span_id.hex())
                if trace_id is None or span_id is None:
                    out.rejected += 1
                    continue
                flags = int(span.flags)
                status = span.status
                out.spans.append(
                    SpanRecord(
                        trace_id=trace_id,
                        span_id=span_id,
                        parent_span_id=normalize_span_id(span.parent_span_id.hex()),
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
    if isinstance(payload, bytes | str):
        try:
            payload = json.loads(payload)
        except (ValueError, UnicodeDecodeError) as exc:
            raise OTLPDecodeError(f"not JSON ({exc})") from None
    if not isinstance(payload, Mapping):
        raise OTLPDecodeError("an OTLP JSON trace request is an object with resourceSpans")
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
    except (TypeError, ValueError, AttributeError) as exc:
        raise OTLPDecodeError(f"not an OTLP JSON trace request ({exc})") from None
    return out


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
    trace_id = normalize_trace_id(_get(span, "traceId", "trace_id"))
    span_id = normalize_span_id(_get(span, "spanId", "span_id"))
    if trace_id is None or span_id is None:
        return None
    parent = _get(span, "parentSpanId", "parent_span_id")
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
        parent_span_id=normalize_span_id(parent) if parent else None,
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


# -- SDK spans --------------------------------------------------------------------------------


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
