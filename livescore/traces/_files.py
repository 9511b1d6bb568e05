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

MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest line of a traces file read by default (longer ones are reported and skipped):
four times the largest request ``livescore collect`` takes by default."""


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
    path: str | os.PathLike[str],
    *,
    logs: str | os.PathLike[str] | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> StoredTraces:
    """Read a file of OTLP JSON trace requests and assemble the runs in it.

    The file holds one ``ExportTraceServiceRequest`` in its OTLP JSON form per line (the
    Collector's ``file`` exporter), or a single such request over several lines. The spans
    of one trace may be spread over any lines, in any order. ``ExportLogsServiceRequest``
    lines (``resourceLogs``), in the file or in ``logs``, add each log record that names
    a span of the file (an event name too) to that span's events: the messages of an
    instrumentation that captures content in events. A line that is not such a
    request is reported in ``problems`` with its number and skipped, as is a line longer
    than ``max_line_bytes`` (the file is read a line at a time: a line costs at most that
    much text in memory, beside the spans held). Each run keeps its
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
    spans, result.rejected_spans, result.problems, result.log_records = _read_all(
        path, logs, max_line_bytes
    )
    result.spans = len(spans)
    result.traces = len({s.trace_id for s in spans})
    result.runs = runs_from_spans(spans)
    return result


def read_spans(
    path: str | os.PathLike[str],
    *,
    logs: str | os.PathLike[str] | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> tuple[list[SpanRecord], int, list[TraceFileProblem]]:
    """The spans of a traces file (see :func:`load_traces`), with the log records of
    ``path`` and ``logs`` joined to them: ``(spans, rejected, problems)``.

    Raises:
        OSError: A file cannot be read.
    """
    spans, rejected, problems, _ = _read_all(path, logs, max_line_bytes)
    return spans, rejected, problems


def _read_all(
    path: str | os.PathLike[str], logs: str | os.PathLike[str] | None, max_line_bytes: int
) -> tuple[list[SpanRecord], int, list[TraceFileProblem], int]:
    """:func:`read_spans`, and how many log records were joined."""
    spans, rejected, problems, events = _read(path, max_line_bytes)
    if logs is not None:
        _, _, log_problems, more = _read(logs, max_line_bytes)
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
    path: str | os.PathLike[str], max_line_bytes: int
) -> tuple[list[SpanRecord], int, list[TraceFileProblem], list[LogEvent]]:
    spans: list[SpanRecord] = []
    events: list[LogEvent] = []
    rejected = 0
    problems: list[TraceFileProblem] = []
    lines = 0
    # Line by line, each read at most max_line_bytes (+1 to tell a longer one): a file of
    # any size costs one line's text at a time beside the spans it holds.
    with open(path, "rb") as file:
        number = 0
        while True:
            raw = file.readline(max_line_bytes + 1)
            if not raw:
                break
            number += 1
            if len(raw) > max_line_bytes and not raw.endswith(b"\n"):
                while (more := file.readline(1 << 20)) and not more.endswith(b"\n"):
                    pass  # the rest of the line, read and let go
                lines += 1
                problems.append(
                    TraceFileProblem(number, f"longer than {max_line_bytes} bytes (skipped)")
                )
                continue
            line = raw.decode("utf-8", errors="replace")
            if not line.strip():
                continue
            lines += 1
            try:
                bad = _decode(json.loads(line), spans, events)
            except (ValueError, RecursionError) as exc:
                # OTLPDecodeError and JSONDecodeError are ValueErrors; RecursionError is
                # JSON nested past the interpreter's depth.
                problems.append(TraceFileProblem(number, _problem(exc)))
                continue
            if bad:
                rejected += bad
                problems.append(TraceFileProblem(number, _invalid_ids(bad)))
    if problems and len(problems) == lines > 1 and os.path.getsize(path) <= max_line_bytes:
        # Not JSON lines: perhaps one request written over several lines.
        whole_spans: list[SpanRecord] = []
        whole_events: list[LogEvent] = []
        text = Path(path).read_text(encoding="utf-8", errors="replace")
        try:
            whole_rejected = _decode(json.loads(text), whole_spans, whole_events)
        except (ValueError, RecursionError):
            pass
        else:
            whole_problems = [TraceFileProblem(1, _invalid_ids(whole_rejected))]
            return (
                whole_spans,
                whole_rejected,
                whole_problems if whole_rejected else [],
                whole_events,
            )
    return spans, rejected, problems, events


def _problem(exc: BaseException) -> str:
    if isinstance(exc, OTLPDecodeError):
        return str(exc)
    if isinstance(exc, RecursionError):
        return "not JSON (nested too deeply)"
    return f"not JSON ({exc})"


def _invalid_ids(count: int) -> str:
    return (
        f"{count} span(s) with an invalid trace or span id left out (a trace id is 32 hex "
        "digits, a span id 16, or the base64 of their 16 and 8 bytes)"
    )


# A dataset line's fields: a file of them given as traces is the likeliest mistake.
_DATASET_KEYS = ("input", "output", "question", "turns")


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
    if (
        isinstance(payload, Mapping)
        and payload
        and not any(key in payload for key in ("resourceSpans", "resource_spans"))
    ):
        if any(key in payload for key in _DATASET_KEYS):
            raise OTLPDecodeError(
                "a dataset line (input/output), not an OTLP trace request: score this file "
                "as a dataset (livescore eval without --traces)"
            )
        raise OTLPDecodeError("not an OTLP trace request (no resourceSpans or resourceLogs)")
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
