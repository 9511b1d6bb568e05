"""Stored traces: OTLP JSON files (what the OpenTelemetry Collector's file exporter writes)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from livescore._errors import OTLPDecodeError
from livescore.runs import Run
from livescore.traces._assemble import runs_from_spans
from livescore.traces._otlp import decode_otlp_json
from livescore.traces._span import SpanRecord

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
        problems: Lines that could not be read (skipped).
    """

    runs: list[Run] = field(default_factory=list)
    spans: int = 0
    traces: int = 0
    rejected_spans: int = 0
    problems: list[TraceFileProblem] = field(default_factory=list)

    def __iter__(self) -> Iterator[Run]:
        return iter(self.runs)

    def __len__(self) -> int:
        return len(self.runs)


def load_traces(path: str | os.PathLike[str]) -> StoredTraces:
    """Read a file of OTLP JSON trace requests and assemble the runs in it.

    The file holds one ``ExportTraceServiceRequest`` in its OTLP JSON form per line (the
    Collector's ``file`` exporter), or a single such request over several lines. The spans
    of one trace may be spread over any lines, in any order. A line that is not such a
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
    spans, result.rejected_spans, result.problems = read_spans(path)
    result.spans = len(spans)
    result.traces = len({s.trace_id for s in spans})
    result.runs = runs_from_spans(spans)
    return result


def read_spans(
    path: str | os.PathLike[str],
) -> tuple[list[SpanRecord], int, list[TraceFileProblem]]:
    """The spans of a traces file (see :func:`load_traces`): ``(spans, rejected, problems)``.

    Raises:
        OSError: The file cannot be read.
    """
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    spans: list[SpanRecord] = []
    rejected = 0
    lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    problems: list[TraceFileProblem] = []
    for number, line in lines:
        try:
            decoded = decode_otlp_json(line)
        except OTLPDecodeError as exc:
            problems.append(TraceFileProblem(number, str(exc)))
            continue
        spans.extend(decoded.spans)
        rejected += decoded.rejected
    if problems and len(problems) == len(lines) and len(lines) > 1:
        # Not JSON lines: perhaps one request written over several lines.
        try:
            decoded = decode_otlp_json(json.loads(text))
        except (ValueError, OTLPDecodeError):
            pass
        else:
            return decoded.spans, decoded.rejected, []
    return spans, rejected, problems
