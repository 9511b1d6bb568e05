"""Strands (GenAI spans natively, in both of its forms) scored by the span processor.

The agent runs in a subprocess (``strands_agent.py``) of ``.strands-venv`` (``make
strands``: strands-agents pins the OpenTelemetry packages apart from the dev extra), with
livescore installed there from this checkout; that also keeps Strands' global tracer
provider and its process-wide threading instrumentation out of the other tests.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from _compat import record_compat

from livescore.traces import assemble_runs, read_spans

SCRIPT = Path(__file__).resolve().parent / "strands_agent.py"
VENV = Path(__file__).resolve().parents[2] / ".strands-venv"
STRANDS_VERSION = "1.62.0"  # the Makefile's STRANDS_VERSION: the one installed and tested


def strands_python() -> str:
    python = VENV / "bin" / "python"
    if not python.exists() or not (VENV / f".installed-{STRANDS_VERSION}").exists():
        pytest.skip("Strands Agents is not installed in .strands-venv (make strands installs it)")
    return str(python)


@pytest.mark.parametrize(
    "opt_in",
    [None, "gen_ai_latest_experimental"],
    ids=["span-events", "latest-attributes"],
)
def test_a_strands_tool_run_is_scored_under_its_invoke_agent_span(
    opt_in: str | None, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "OTEL_SEMCONV_STABILITY_OPT_IN"}
    if opt_in:
        env["OTEL_SEMCONV_STABILITY_OPT_IN"] = opt_in
    done = subprocess.run(
        [strands_python(), str(SCRIPT), str(tmp_path / "spans.json")],
        capture_output=True,
        text=True,
        timeout=50,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["answer"] == "It is sunny in Lyon."
    assert got["flushed"]
    assert got["score_parents"] == [got["agent_span"]]
    assert got["score_values"] == [1.0]
    assert got["judge_saw_tool_result"]
    assert got["scored"] == 1
    spans, rejected, problems = read_spans(tmp_path / "spans.json")
    assert (rejected, problems) == (0, [])
    [assembled] = assemble_runs(spans)
    assert assembled.run.span_id == got["agent_span"]
    assert assembled.run.output.strip() == "It is sunny in Lyon."  # Strands adds a newline
    assert assembled.run.input == [{"role": "user", "content": "What is the weather in Lyon?"}]
    record_compat(
        "Strands Agents (its own), " + ("latest GenAI attributes" if opt_in else "span events"),
        STRANDS_VERSION,
        assembled,
        f"`OTEL_SEMCONV_STABILITY_OPT_IN={opt_in}`" if opt_in else "",
    )
