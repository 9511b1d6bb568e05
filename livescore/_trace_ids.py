"""Trace and span ids as OpenTelemetry writes them (lowercase hex, zero-padded).

The dispatcher samples by trace id and :class:`~livescore.runs.TraceParent` parses both ids
through these, so one trace is the same trace however its id was spelled.
"""

from __future__ import annotations

import re

__all__ = ("normalize_span_id", "normalize_trace_id")

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
