"""Stored traces: OTLP JSON files (what the OpenTelemetry Collector's file exporter writes).

A file holds ``resourceSpans`` lines and, where an instrumentation captures message content
in events rather than on spans, ``resourceLogs`` lines (the Collector writes both when its
traces and logs pipelines share the ``file`` exporter); the logs may also be a file of
their own (``logs=``). Each log record that names a span of the file is added to that
span's events, as ``livescore collect`` does with ``/v1/logs``.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from livescore._errors import OTLPDecodeError
from livescore.runs import Run
from livescore.traces._assemble import runs_from_spans
from livescore.traces._otlp import DecodedLogs, LogEvent, decode_otlp_json, decode_otlp_logs_json
from livescore.traces._span import SpanEvent, SpanRecord

__all__ = ("StoredTraces", "TraceFileProblem", "load_traces", "read_spans")


@dataclass(frozen=True, slots=True)
class TraceFileProblem:
    """A line of a traces file that could not be read.

    Attributes:
        line: Its number, from 1.
        message: What is wrong with it.
    """

    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


@dataclass(slots=True)
class StoredTraces:
    """What :func:`load_traces` read.

    Attributes:
        runs: Every run the file's traces describe, in start order within each trace.
        spans: How many spans the file held.
        traces: How many traces.
        rejected_spans: Spans left out for an invalid trace or span id.
        problems: Lines that could not be read (skipped), and log records that name a span
            the file does not hold (line 0).
        log_records: Log records added to their span's events.
    """

    runs: list[Run] = field(default_factory=list)
    spans: int = 0
    traces: int = 0
    rejected_spans: int = 0
    problems: list[TraceFileProblem] = field(default_factory=list)
    log_records: int = 0

    def __iter__(self) -> Iterator[Run]:
        return iter(self.runs)

    def __len__(self) -> int:
        return len(self.runs)


def load_traces(
    path: str | os.PathLike[str], *, logs: str | os.PathLike[str] | None = None
) -> StoredTraces:
    """Read a file of OTLP JSON trace requests and assemble the runs in it.

    The file holds one ``ExportTraceServiceRequest`` in its OTLP JSON form per line (the
    Collector's ``file`` exporter), or a single such request over several lines. The spans
    of one trace may be spread over any lines, in any order. ``ExportLogsServiceRequest``
    lines (``resourceLogs``), in the file or in ``logs``, add each log record that names
    a span of the file (an event name too) to that span's events: the messages of an
    instrumentation that captures content in events. A line that is not such a
    request is reported in ``problems`` with its number and skipped. Each run keeps its
    span's ids, so scores of it (``run_evals(load_traces(path), ...)``) nest under the
    stored run's span in a dashboard that holds the trace.

    Raises:
        OSError: The file cannot be read.

    Example:
        >>> import tempfile, json
        >>> span = {"traceId": "4bf92f3577b34da6a3ce929d0e0e4736", "spanId": "00f067aa0ba902b7",
        ...         "name": "invoke_agent", "startTimeUnixNano": "1", "endTimeUnixNano": "2",
        ...         "attributes": [
        ...   {"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}},
        ...   {"key": "gen_ai.input.messages", "value": {"stringValue":
        ...       '[{"role": "user", "parts": [{"type": "text", "content": "2+2?"}]}]'}},
        ...   {"key": "gen_ai.output.messages", "value": {"stringValue":
        ...       '[{"role": "assistant", "parts": [{"type": "text", "content": "4"}]}]'}}]}
        >>> line = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})
        >>> with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        ...     _ = f.write(line + "\\n")
        >>> [run.output for run in load_traces(f.name)]
        ['4']
    """
    result = StoredTraces()
    spans, result.rejected_spans, result.problems, result.log_records = _read_all(path, logs)
    result.spans = len(spans)
    result.traces = len({s.trace_id for s in spans})
    result.runs = runs_from_spans(spans)
    return result


def read_spans(
    path: str | os.PathLike[str], *, logs: str | os.PathLike[str] | None = None
) -> tuple[list[SpanRecord], int, list[TraceFileProblem]]:
    """The spans of a traces file (see :func:`load_traces`), with the log records of
    ``path`` and ``logs`` joined to them: ``(spans, rejected, problems)``.

    Raises:
        OSError: A file cannot be read.
    """
    spans, rejected, problems, _ = _read_all(path, logs)
    return spans, rejected, problems


def _read_all(
    path: str | os.PathLike[str], logs: str | os.PathLike[str] | None
) -> tuple[list[SpanRecord], int, list[TraceFileProblem], int]:
    """:func:`read_spans`, and how many log records were joined."""
    spans, rejected, problems, events = _read(path)
    if logs is not None:
        _, _, log_problems, more = _read(logs)
        problems.extend(
            TraceFileProblem(p.line, f"{os.fspath(logs)}: {p.message}") for p in log_problems
        )
        events.extend(more)
    unjoined = 0
    if events:
        spans, unjoined = _join(spans, events)
        if unjoined:
            problems.append(
                TraceFileProblem(
                    0, f"{unjoined} log record(s) name a span the traces do not hold (left out)"
                )
            )
    return spans, rejected, problems, len(events) - unjoined


def _read(
    path: str | os.PathLike[str],
) -> tuple[list[SpanRecord], int, list[TraceFileProblem], list[LogEvent]]:
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    spans: list[SpanRecord] = []
    events: list[LogEvent] = []
    rejected = 0
    lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    problems: list[TraceFileProblem] = []
    for number, line in lines:
        try:
            rejected += _decode(json.loads(line), spans, events)
        except ValueError as exc:  # OTLPDecodeError and JSONDecodeError are ValueErrors
            message = str(exc) if isinstance(exc, OTLPDecodeError) else f"not JSON ({exc})"
            problems.append(TraceFileProblem(number, message))
    if problems and len(problems) == len(lines) and len(lines) > 1:
        # Not JSON lines: perhaps one request written over several lines.
        whole_spans: list[SpanRecord] = []
        whole_events: list[LogEvent] = []
        try:
            whole_rejected = _decode(json.loads(text), whole_spans, whole_events)
        except ValueError:
            pass
        else:
            return whole_spans, whole_rejected, [], whole_events
    return spans, rejected, problems, events


_LOGS_KEYS = ("resourceLogs", "resource_logs")


def _decode(payload: Any, spans: list[SpanRecord], events: list[LogEvent]) -> int:
    """Add what one request holds (spans, log records or both); returns the spans rejected.

    Raises:
        OTLPDecodeError: It is not such a request.
    """
    if isinstance(payload, Mapping) and any(key in payload for key in _LOGS_KEYS):
        logs: DecodedLogs = decode_otlp_logs_json(payload)
        events.extend(logs.events)
        if not any(key in payload for key in ("resourceSpans", "resource_spans")):
            return 0
    decoded = decode_otlp_json(payload)
    spans.extend(decoded.spans)
    return decoded.rejected


def _join(spans: Iterable[SpanRecord], events: list[LogEvent]) -> tuple[list[SpanRecord], int]:
    """``spans`` with each log event added to its span's events; and how many named none."""
    by_span: dict[tuple[str, str], list[SpanEvent]] = {}
    for item in events:
        by_span.setdefault((item.trace_id, item.span_id), []).append(item.event)
    joined: list[SpanRecord] = []
    for span in spans:
        extra = by_span.pop((span.trace_id, span.span_id), None)
        if extra:
            span = dataclasses.replace(span, events=(*span.events, *extra))
        joined.append(span)
    return joined, sum(len(v) for v in by_span.values())
