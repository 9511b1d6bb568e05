"""``livescore traces inspect``: for each stored trace, the run it gives (and where each
field came from, what scorers get) or why none."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from livescore.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "traces"))
from _trace_support import genai_tool_run, memory_provider, otlp_json_line


def traces_file(tmp_path: Path) -> Path:
    """A tool-using agent run, a trace with no agent in it, and a broken line."""
    provider, exporter = memory_provider()
    genai_tool_run(provider, question="Weather in Lyon?", answer="Sunny in Lyon.")
    with provider.get_tracer("web").start_as_current_span(
        "GET /health", attributes={"http.method": "GET"}
    ):
        pass
    spans = list(exporter.get_finished_spans())
    path = tmp_path / "traces.jsonl"
    path.write_text(otlp_json_line(spans) + "\nnot json\n", encoding="utf-8")
    return path


def test_each_trace_shows_its_run_with_sources_or_why_it_has_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["traces", "inspect", str(traces_file(tmp_path))]) == 0
    out, err = capsys.readouterr()
    assert "run 'weather'" in out
    assert (
        "input        \"Weather in Lyon?\"  ← span 'invoke_agent weather' gen_ai.input.messages"
        in out
    )
    assert 'output       "Sunny in Lyon."' in out
    tool = "tool         get_weather → \"sunny, 24 °C\"  ← span 'execute_tool get_weather'"
    assert tool + " gen_ai.tool.call.result [genai]" in out
    assert "conversation conv-1" in out
    assert "1 item(s) for judge scorers" in out
    assert "no run: no span speaks a convention livescore reads" in out
    assert "the root 'GET /health' has attributes http.method" in out
    assert "line 2:" in err  # the broken line, said, not fatal
    assert "2 trace(s)" in err
    assert "1 run(s), 1 trace(s) without a run" in err


def test_json_gives_one_object_per_trace_with_texts_in_full(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["traces", "inspect", "--json", str(traces_file(tmp_path))]) == 0
    reports = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    with_run = next(r for r in reports if r["runs"])
    [run] = with_run["runs"]
    assert run["input"] == "Weather in Lyon?"
    assert run["output"] == "Sunny in Lyon."
    assert run["sources"]["output"]["attribute"] == "gen_ai.output.messages"
    assert run["context"] == [
        '{"tool": "get_weather", "arguments": {"city": "Lyon"}, "result": "sunny, 24 °C"}'
    ]
    assert run["skipped"] is None
    without = next(r for r in reports if not r["runs"])
    assert without["conventions"] == {"unknown": 1}


def test_a_missing_file_is_a_one_line_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["traces", "inspect", str(tmp_path / "nope.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "cannot read" in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
