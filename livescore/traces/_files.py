"""Stored traces: OTLP JSON files (what the OpenTelemetry Collector's file exporter writes).

A file holds ``resourceSpans`` lines and, where an instrumentation captures message content
in events rather than on spans, ``resourceLogs`` lines (the Collector writes both when its
traces and logs pipelines share the ``file`` exporter); the logs may also be a file of
their own (``logs=``). Each log record that names a span of the file is added to that
span's events, as ``livescore collect`` does with ``/v1/logs``.

The spans of one trace may be anywhere in the file, so none can be assembled before the
whole file is read. They wait on disk instead of in memory: each line's spans and log
records go to a temporary SQLite file (:class:`_SpanStore`) as it is read, and the traces
are then assembled one at a time, in the order they first appeared. What is held in memory
is one line's text and one trace's spans, whatever the file's size.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import pickle
import shutil
import sqlite3
import tempfile
import threading
import weakref
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

from livescore._errors import OTLPDecodeError
from livescore.runs import Run
from livescore.traces._assemble import assemble_trace
from livescore.traces._otlp import DecodedLogs, LogEvent, decode_otlp_json, decode_otlp_logs_json
from livescore.traces._span import SpanEvent, SpanRecord

__all__ = (
    "StoredRuns",
    "StoredTraces",
    "TraceFileProblem",
    "load_traces",
    "open_stored_runs",
    "read_spans",
)

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
        largest_trace: The most spans one trace held: the most held in memory at once
            while the runs were assembled (the rest waited on disk).
    """

    runs: list[Run] = field(default_factory=list)
    spans: int = 0
    traces: int = 0
    rejected_spans: int = 0
    problems: list[TraceFileProblem] = field(default_factory=list)
    log_records: int = 0
    largest_trace: int = 0

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
        OSError: The file cannot be read, or the temporary file that holds its spans while
            it is read (under ``$TMPDIR``, about the file's size) cannot be written.

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
    with _SpanStore() as store:
        result.rejected_spans, result.problems, result.log_records = _read_all(
            store, path, logs, max_line_bytes
        )
        result.spans = store.spans
        result.traces = store.traces
        for trace in store.each_trace():
            result.largest_trace = max(result.largest_trace, len(trace))
            result.runs.extend(assembled.run for assembled in assemble_trace(trace))
    return result


class StoredRuns(Sequence[Run]):
    """The runs of a traces file, on disk: each read back when it is asked for.

    What ``livescore eval --traces`` scores: the runs wait in the temporary SQLite file
    their spans waited in, so memory holds the runs being scored, not every run of the
    file. Safe to read from any thread. The file is removed by :meth:`close`, or when this
    object is let go.
    """

    def __init__(self, store: _SpanStore, count: int) -> None:
        self._store = store
        self._count = count
        self._closer = weakref.finalize(self, store.close)

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> Run: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Run]: ...

    def __getitem__(self, index: int | slice) -> Run | Sequence[Run]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._count))]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError("run index out of range")
        return self._store.run_at(index)

    def __delitem__(self, index: slice) -> None:
        """``del runs[n:]``: keep the first ``n`` (``livescore eval --limit``)."""
        start, stop, step = index.indices(self._count)
        if step != 1 or stop != self._count:
            raise TypeError("only the runs from an index to the end can be removed")
        self._count = start

    def close(self) -> None:
        """Remove the temporary file."""
        self._closer()


def open_stored_runs(
    path: str | os.PathLike[str],
    *,
    logs: str | os.PathLike[str] | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> tuple[StoredTraces, StoredRuns]:
    """:func:`load_traces` with the runs left on disk: ``(what was read, without its
    runs; the runs)``, one run at a time in memory instead of the file's every run.

    Raises:
        OSError: As :func:`load_traces`.
    """
    result = StoredTraces()
    store = _SpanStore()
    try:
        with store.failing_as_oserror():
            result.rejected_spans, result.problems, result.log_records = _read_all(
                store, path, logs, max_line_bytes
            )
            result.spans = store.spans
            result.traces = store.traces
            count = 0
            for trace in store.each_trace():
                result.largest_trace = max(result.largest_trace, len(trace))
                count += store.add_runs(assembled.run for assembled in assemble_trace(trace))
    except BaseException:
        store.close()
        raise
    return result, StoredRuns(store, count)


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
    with _SpanStore() as store:
        rejected, problems, _ = _read_all(store, path, logs, max_line_bytes)
        spans = list(store.every_span())
    return spans, rejected, problems


def _read_all(
    store: _SpanStore,
    path: str | os.PathLike[str],
    logs: str | os.PathLike[str] | None,
    max_line_bytes: int,
) -> tuple[int, list[TraceFileProblem], int]:
    """Read ``path`` (and ``logs``) into ``store``: ``(rejected spans, problems, log records
    joined)``."""
    rejected, problems = _read(store, path, max_line_bytes)
    if logs is not None:
        _, log_problems = _read(store, logs, max_line_bytes, spans=False)
        problems.extend(
            TraceFileProblem(p.line, f"{os.fspath(logs)}: {p.message}") for p in log_problems
        )
    unjoined = store.unjoined_events()
    if unjoined:
        problems.append(
            TraceFileProblem(
                0, f"{unjoined} log record(s) name a span the traces do not hold (left out)"
            )
        )
    return rejected, problems, store.events - unjoined


def _read(
    store: _SpanStore, path: str | os.PathLike[str], max_line_bytes: int, *, spans: bool = True
) -> tuple[int, list[TraceFileProblem]]:
    """Add the spans (unless ``spans`` is false: a logs file) and log records of ``path`` to
    ``store``: ``(rejected spans, problems)``."""
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
            line_spans: list[SpanRecord] = []
            line_events: list[LogEvent] = []
            try:
                bad = _decode(json.loads(line), line_spans, line_events)
            except (ValueError, RecursionError) as exc:
                # OTLPDecodeError and JSONDecodeError are ValueErrors; RecursionError is
                # JSON nested past the interpreter's depth.
                problems.append(TraceFileProblem(number, _problem(exc)))
                continue
            if spans:
                store.add_spans(line_spans)
            store.add_events(line_events)
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
            # No line was read, so nothing of this file is in the store yet.
            if spans:
                store.add_spans(whole_spans)
            store.add_events(whole_events)
            whole_problems = [TraceFileProblem(1, _invalid_ids(whole_rejected))]
            return whole_rejected, whole_problems if whole_rejected else []
    return rejected, problems


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


def _failed(exc: sqlite3.Error) -> OSError:
    # The disk under the temporary folder failed it (full, read-only): for the caller, a
    # file that cannot be read through, as an OSError says.
    return OSError(f"the temporary file holding its spans failed ({exc})")


class _SpanStore:
    """The spans and log records of a traces file, on disk until their trace is assembled: a
    SQLite database in a temporary file (removed on exit), written a line's records at a
    time and read back a trace at a time, in the order each trace first appeared.

    Example:
        >>> span = SpanRecord("1" * 32, "2" * 16, None, "chat", 0, 1, {})
        >>> with _SpanStore() as store:
        ...     store.add_spans([span])
        ...     [list(trace) for trace in store.each_trace()]
        [['2222222222222222']]
    """

    def __init__(self) -> None:
        self.spans = 0
        self.traces = 0
        self.events = 0
        folder = tempfile.mkdtemp(prefix="livescore-traces-")  # under $TMPDIR
        self._folder = folder
        try:
            # Any thread: eval --traces reads the runs back on its scoring thread.
            self._db = sqlite3.connect(
                os.path.join(folder, "spans.sqlite"), check_same_thread=False
            )
        except sqlite3.Error as exc:
            shutil.rmtree(folder, ignore_errors=True)
            raise OSError(f"cannot make the temporary file for its spans ({exc})") from exc
        # A scratch file: nothing to recover after a crash, so no journal and no syncs.
        self._db.executescript(
            """
            PRAGMA journal_mode = OFF;
            PRAGMA synchronous = OFF;
            CREATE TABLE traces (seq INTEGER PRIMARY KEY, trace_id TEXT UNIQUE NOT NULL);
            CREATE TABLE spans (seq INTEGER PRIMARY KEY, trace_id TEXT, span_id TEXT, body BLOB);
            CREATE TABLE events (seq INTEGER PRIMARY KEY, trace_id TEXT, span_id TEXT, body BLOB);
            CREATE TABLE runs (seq INTEGER PRIMARY KEY, body BLOB);
            """
        )
        self._indexed = False
        self._lock = threading.Lock()  # one connection, shared by the threads reading runs

    def __enter__(self) -> _SpanStore:
        return self

    def __exit__(self, kind: object, exc: BaseException | None, trace: object) -> None:
        self.close()
        if isinstance(exc, sqlite3.Error):
            raise _failed(exc) from exc

    @contextlib.contextmanager
    def failing_as_oserror(self) -> Iterator[None]:
        """A failure of the database as an ``OSError`` (the store stays open)."""
        try:
            yield
        except sqlite3.Error as exc:
            raise _failed(exc) from exc

    def close(self) -> None:
        """Close the database and remove its file."""
        self._db.close()
        shutil.rmtree(self._folder, ignore_errors=True)

    def add_runs(self, runs: Iterable[Run]) -> int:
        """Keep ``runs`` after those added before; returns how many were added."""
        rows = [(pickle.dumps(run, pickle.HIGHEST_PROTOCOL),) for run in runs]
        with self._db:
            self._db.executemany("INSERT INTO runs (body) VALUES (?)", rows)
        return len(rows)

    def run_at(self, index: int) -> Run:
        """The run added ``index``-th (from 0)."""
        with self._lock:
            row = self._db.execute("SELECT body FROM runs WHERE seq = ?", (index + 1,)).fetchone()
        if row is None:
            raise IndexError("run index out of range")
        run: Run = pickle.loads(row[0])
        return run

    def add_spans(self, spans: Iterable[SpanRecord]) -> None:
        rows = [(s.trace_id, s.span_id, pickle.dumps(s, pickle.HIGHEST_PROTOCOL)) for s in spans]
        if not rows:
            return
        with self._db:
            before = self._db.total_changes
            self._db.executemany(
                "INSERT OR IGNORE INTO traces (trace_id) VALUES (?)", [(r[0],) for r in rows]
            )
            self.traces += self._db.total_changes - before
            self._db.executemany(
                "INSERT INTO spans (trace_id, span_id, body) VALUES (?, ?, ?)", rows
            )
        self.spans += len(rows)

    def add_events(self, events: Iterable[LogEvent]) -> None:
        rows = [
            (e.trace_id, e.span_id, pickle.dumps(e.event, pickle.HIGHEST_PROTOCOL)) for e in events
        ]
        if not rows:
            return
        with self._db:
            self._db.executemany(
                "INSERT INTO events (trace_id, span_id, body) VALUES (?, ?, ?)", rows
            )
        self.events += len(rows)

    def _index(self) -> None:
        # Built once the file is read: indexing as rows arrive would slow every insert.
        if not self._indexed:
            with self._db:
                self._db.execute("CREATE INDEX spans_by_trace ON spans (trace_id, span_id)")
                self._db.execute("CREATE INDEX events_by_trace ON events (trace_id)")
            self._indexed = True

    def unjoined_events(self) -> int:
        """Log records that name a span the file does not hold."""
        self._index()
        (count,) = self._db.execute(
            "SELECT COUNT(*) FROM events AS e WHERE NOT EXISTS "
            "(SELECT 1 FROM spans AS s WHERE s.trace_id = e.trace_id AND s.span_id = e.span_id)"
        ).fetchone()
        return int(count)

    def every_span(self) -> Iterator[SpanRecord]:
        """Every span in the order read (a span id seen twice: both), the log records of each
        span id among the events of its first span (all the log records are held)."""
        events: dict[tuple[str, str], list[SpanEvent]] = {}
        for trace_id, span_id, body in self._db.execute(
            "SELECT trace_id, span_id, body FROM events ORDER BY seq"
        ):
            events.setdefault((trace_id, span_id), []).append(pickle.loads(body))
        for trace_id, span_id, body in self._db.execute(
            "SELECT trace_id, span_id, body FROM spans ORDER BY seq"
        ):
            span: SpanRecord = pickle.loads(body)
            extra = events.pop((trace_id, span_id), None)
            if extra:
                span = dataclasses.replace(span, events=(*span.events, *extra))
            yield span

    def each_trace(self) -> Iterator[dict[str, SpanRecord]]:
        """Each trace's spans by span id (a span id seen twice: the later span, in the
        earlier's place), with their log records among their events."""
        self._index()
        # A cursor of its own for the trace ids: the queries per trace do not disturb it.
        trace_ids = self._db.cursor()
        trace_ids.execute("SELECT trace_id FROM traces ORDER BY seq")
        for (trace_id,) in trace_ids:
            events: dict[str, list[SpanEvent]] = {}
            for span_id, body in self._db.execute(
                "SELECT span_id, body FROM events WHERE trace_id = ? ORDER BY seq", (trace_id,)
            ):
                events.setdefault(span_id, []).append(pickle.loads(body))
            trace: dict[str, SpanRecord] = {}
            for span_id, body in self._db.execute(
                "SELECT span_id, body FROM spans WHERE trace_id = ? ORDER BY seq", (trace_id,)
            ):
                span: SpanRecord = pickle.loads(body)
                extra = events.pop(span_id, None)  # joined to the first span of that id
                if extra:
                    span = dataclasses.replace(span, events=(*span.events, *extra))
                trace[span_id] = span
            yield trace
