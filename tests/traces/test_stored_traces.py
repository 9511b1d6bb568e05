"""Stored traces read in bounded memory: ``load_traces`` holds one trace's spans at a time
(the rest wait in a temporary file), whatever the file's size and however its spans are
spread over its lines, and assembles exactly the runs that all of its spans describe."""

from __future__ import annotations

import gc
import json
import random
import sqlite3
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from _trace_support import genai_tool_run, memory_provider, otlp_json

import livescore.traces._assemble as assemble_module
import livescore.traces._files as files_module
from livescore.traces import SpanRecord, decode_otlp_json, load_traces, runs_from_spans
from livescore.traces._files import open_stored_runs

TRACES = 30  # four spans each


def _shuffled_file(path: Path) -> None:
    """Thirty four-span runs, their spans shuffled over lines of one to five spans each (a
    Collector's batches mix traces), with a line that is not JSON among them."""
    provider, exporter = memory_provider()
    for n in range(TRACES):
        genai_tool_run(provider, question=f"Weather in town {n}?", answer=f"Sunny in town {n}.")
    spans = list(exporter.get_finished_spans())
    random.Random(36).shuffle(spans)
    lines = []
    start = 0
    while start < len(spans):
        size = 1 + start % 5
        lines.append(json.dumps(otlp_json(spans[start : start + size])))
        start += size
    lines.insert(4, "not json")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _every_span(path: Path) -> list[SpanRecord]:
    """Every span of the file, decoded line by line and all held (the reference)."""
    spans: list[SpanRecord] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            spans.extend(decode_otlp_json(json.loads(line)).spans)
        except ValueError:
            continue
    return spans


def test_the_runs_are_those_all_the_spans_describe(tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    _shuffled_file(path)
    stored = load_traces(path)
    expected = runs_from_spans(_every_span(path))
    assert [run.to_dict() for run in stored.runs] == [run.to_dict() for run in expected]
    assert (stored.spans, stored.traces, len(stored.runs)) == (4 * TRACES, TRACES, TRACES)
    assert [p.line for p in stored.problems] == [5]


def test_one_trace_s_spans_are_in_memory_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each time a trace is assembled, count the span records alive in the process: the
    # trace's own four (and none of the 116 others, which wait on disk).
    path = tmp_path / "traces.jsonl"
    _shuffled_file(path)
    alive: list[int] = []
    assemble = assemble_module.assemble_trace

    def span_records() -> int:
        gc.collect()
        return sum(1 for o in gc.get_objects() if isinstance(o, SpanRecord))

    before = span_records()  # held elsewhere in the process (other tests' data)

    def counting(spans: Mapping[str, SpanRecord], *args: Any) -> Any:
        alive.append(span_records() - before)
        return assemble(spans, *args)

    monkeypatch.setattr(assemble_module, "assemble_trace", counting)
    monkeypatch.setattr(files_module, "assemble_trace", counting, raising=False)
    stored = load_traces(path)
    assert len(stored.runs) == TRACES
    assert len(alive) == TRACES
    assert max(alive) == 4, alive
    assert stored.largest_trace == 4


def test_a_temporary_file_that_fails_is_an_os_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A full disk under $TMPDIR: what the caller (eval --traces) reports as a file it
    # cannot read, in one line, never an sqlite3 traceback.
    path = tmp_path / "traces.jsonl"
    _shuffled_file(path)

    def full(self: Any, spans: Any) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(files_module._SpanStore, "add_spans", full)
    with pytest.raises(OSError, match="temporary file holding its spans failed"):
        load_traces(path)


def test_the_runs_can_stay_on_disk_and_are_read_back_one_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # eval --traces: the runs wait in the temporary file, each read back (on the scoring
    # thread) when it is scored; the same runs as load_traces, the file gone on close.
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))  # $TMPDIR, for this test
    path = tmp_path / "traces.jsonl"
    _shuffled_file(path)
    stored, runs = open_stored_runs(path)
    expected = [run.to_dict() for run in load_traces(path).runs]
    assert (len(runs), stored.spans, stored.traces, stored.runs) == (TRACES, 4 * TRACES, TRACES, [])
    assert [p.line for p in stored.problems] == [5]
    read: list[dict[str, Any]] = []
    worker = threading.Thread(target=lambda: read.extend(run.to_dict() for run in runs))
    worker.start()
    worker.join(timeout=60)
    assert read == expected
    assert runs[-1].to_dict() == expected[-1]
    assert [run.to_dict() for run in runs[2:4]] == expected[2:4]
    del runs[10:]  # --limit 10
    assert len(runs) == 10
    assert [run.to_dict() for run in runs] == expected[:10]
    with pytest.raises(IndexError):
        runs[10]
    assert list((tmp_path / "tmp").iterdir())  # the temporary file, while the runs are wanted
    runs.close()
    assert not list((tmp_path / "tmp").iterdir())


def test_the_runs_left_on_disk_go_when_nobody_holds_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    path = tmp_path / "traces.jsonl"
    _shuffled_file(path)
    _, runs = open_stored_runs(path)
    assert len(runs) == TRACES
    del runs
    gc.collect()
    assert not list((tmp_path / "tmp").iterdir())
