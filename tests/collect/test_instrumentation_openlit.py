"""A raw OpenAI tool loop traced by OpenLIT, exported by OpenLIT itself over OTLP/HTTP to
``livescore collect`` and scored there.

OpenLIT needs ``openai<3`` and livescore ``openai>=3``, so the loop runs in a subprocess
of ``.openlit-venv`` (``make openlit``; ``openlit_agent.py``), without livescore: the
in-process span processor cannot be tested with it. That process also writes the spans it
made to a file, which this test assembles for the compatibility table.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path

import pytest
from _collect_process import stop
from _compat import record_compat
from _instrumentation_support import (
    ANSWER,
    QUESTION,
    TOOL_RESULT,
    assert_judged,
    hallucination_replies,
    start_judged_collect,
    tool_results,
    weather,
)
from otlp_receiver import OTLPTestReceiver

from livescore.testing import OpenAITestServer, Reply
from livescore.traces import assemble_runs, decode_otlp_protobuf

SCRIPT = Path(__file__).resolve().parent / "openlit_agent.py"
VENV = Path(__file__).resolve().parents[2] / ".openlit-venv"
OPENLIT_VERSION = "1.44.0"  # the Makefile's OPENLIT_VERSION: the one installed and tested


def openlit_python() -> str:
    python = VENV / "bin" / "python"
    if not python.exists() or not (VENV / f".installed-{OPENLIT_VERSION}").exists():
        pytest.skip(f"OpenLIT {OPENLIT_VERSION} is not installed in .openlit-venv (make openlit)")
    return str(python)


def scripted(reply: Reply) -> Reply:
    # OpenLIT 1.44.0 reads usage.prompt_tokens_details unconditionally (OpenAI always sends
    # it; without it every chat span ends in an AttributeError and carries no content); the
    # test server sends it only when some prompt tokens were cached.
    return dataclasses.replace(reply, usage=(40, 10, 1))


@pytest.mark.timeout(240)
def test_an_openlit_traced_tool_loop_is_scored_by_collect(tmp_path: Path) -> None:
    python = openlit_python()
    script = [
        scripted(Reply.tool_calls(("get_weather", {"city": "Lyon"}), ids=["call_1"])),
        scripted(Reply.text(ANSWER)),
    ]
    spans_file = tmp_path / "spans.pb"
    with (
        OpenAITestServer(script) as llm,
        OpenAITestServer(hallucination_replies()) as judge,
        OTLPTestReceiver() as backend,
    ):
        collect, url = start_judged_collect(tmp_path, judge, backend.url)
        try:
            ran = subprocess.run(
                [python, str(SCRIPT), llm.base_url, url, str(spans_file), TOOL_RESULT],
                capture_output=True,
                text=True,
                timeout=150,
                env={
                    "PATH": "/usr/bin:/bin",
                    "HOME": str(tmp_path),
                    # Anything bound off this machine fails at once (nothing should try).
                    "HTTP_PROXY": "http://127.0.0.1:9",
                    "HTTPS_PROXY": "http://127.0.0.1:9",
                    "NO_PROXY": "127.0.0.1,localhost",
                },  # and no OTEL_* settings from this process
            )
        finally:
            code, err = stop(collect)
        assert ran.returncode == 0, ran.stderr[-3000:]
        assert code == 0, err
        assert "runs 1: submitted 1" in err, err
        assert_judged(judge)
        got = json.loads(ran.stdout.strip().splitlines()[-1])
        scores = {s.name: s for s in backend.spans}
    assert got["answer"] == ANSWER
    # OpenLIT traced the model calls only: the app's span over them is the run.
    [assembled] = assemble_runs(decode_otlp_protobuf(spans_file.read_bytes()).spans)
    run = assembled.run
    assert run.span_id == got["root"]
    assert run.input == QUESTION
    assert run.output == ANSWER
    # No tool span: the result is the tool-role message the second chat call was sent.
    assert tool_results(run) == [("get_weather", weather("Lyon"))]
    hallucination = scores["evaluation hallucination"]
    coverage = scores["evaluation keyword-coverage"]
    for score in (hallucination, coverage):
        assert score.parent_span_id == got["root"]
    assert hallucination.attributes["gen_ai.evaluation.score.value"] == 0.5
    assert coverage.attributes["gen_ai.evaluation.score.value"] == 1.0
    record_compat(
        "OpenLIT",
        f"{OPENLIT_VERSION} (openai 2.54.0)",
        assembled,
        "`capture_message_content=True` (the default); "
        "`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=false` turns it off",
    )
