"""CrewAI traced by OpenInference's CrewAI and OpenAI instrumentors, scored by
``livescore collect`` over OTLP/HTTP.

The crew runs in a subprocess (``crewai_agent.py``) of ``.crewai-venv`` (``make crewai``).
livescore is not installed there, and cannot be: crewai 1.15 requires ``openai<3`` and
livescore ``openai>=3``, so pip cannot put them in one environment, and a CrewAI
application is scored by ``livescore collect`` beside it (not by
``LiveScoringSpanProcessor`` in its process). The model is CrewAI's native OpenAI
provider talking to the OpenAI-compatible test server.

Which span is the run: the crew's kickoff span (a ``CHAIN`` span with ``crew_tasks``),
not the task's ``AGENT`` span. The kickoff holds the question (the task descriptions,
filled with the kickoff's inputs) and the crew's final answer; the AGENT span's input is
the agent's configuration, and the model spans' is CrewAI's built prompt.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

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
from livescore.traces import SpanRecord, assemble_runs, decode_otlp_protobuf

SCRIPT = Path(__file__).resolve().parent / "crewai_agent.py"
VENV = Path(__file__).resolve().parents[2] / ".crewai-venv"
# The versions this test was written against (the Makefile's crewai target pins them): a
# release that changes what the spans carry fails here first.
PINNED = {
    "crewai": "1.15.30",
    "openinference-instrumentation-crewai": "1.1.21",
    "openinference-instrumentation-openai": "0.1.66",
}
SESSION = "crew-conversation-1"


def crewai_python() -> str:
    python = VENV / "bin" / "python"
    if not python.exists() or not list(VENV.glob(".installed-*")):
        pytest.skip("CrewAI is not installed in .crewai-venv (make crewai installs it)")
    return str(python)


def crew_env() -> dict[str, str]:
    """The crew's environment: CrewAI's telemetry and its hosted tracing off (nothing leaves
    this machine), OpenTelemetry itself on (``OTEL_SDK_DISABLED`` would silence the
    instrumentors' spans too), no OpenAI or OTLP settings of the caller's."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OTEL_", "OPENAI_", "CREWAI_")) and k != "VIRTUAL_ENV"
    }
    env.update(
        CREWAI_DISABLE_TELEMETRY="true",
        CREWAI_DISABLE_TRACKING="true",
        CREWAI_TRACING_ENABLED="false",
    )
    return env


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "instrument_openai", [True, False], ids=["with-model-spans", "crewai-spans-only"]
)
def test_a_crewai_run_is_scored_by_collect_under_its_kickoff_span(
    tmp_path: Path, instrument_openai: bool
) -> None:
    python = crewai_python()
    script = [
        Reply.tool_calls(("get_weather", {"city": "Lyon"}), ids=["call_1"]),
        Reply.text(ANSWER),
    ]
    spans_file = tmp_path / "spans.pb"
    with (
        OpenAITestServer(script) as llm,
        OpenAITestServer(hallucination_replies()) as judge,
        OTLPTestReceiver() as backend,
    ):
        collect, url = start_judged_collect(tmp_path, judge, backend.url)
        try:
            config = {
                "model_url": llm.base_url,
                "traces_endpoint": url + "/v1/traces",
                "spans_file": str(spans_file),
                "task": QUESTION.replace("Lyon", "{city}"),  # filled by the kickoff's inputs
                "city": "Lyon",
                "tool_result": TOOL_RESULT,
                "session": SESSION,
                "instrument_openai": instrument_openai,
            }
            home = tmp_path / "home"  # CrewAI writes its settings and storage under it
            home.mkdir()
            done = subprocess.run(
                [python, str(SCRIPT), json.dumps(config)],
                capture_output=True,
                text=True,
                timeout=240,
                cwd=tmp_path,
                env={**crew_env(), "HOME": str(home)},
            )
        finally:
            code, err = stop(collect)
        assert done.returncode == 0, done.stderr[-3000:]
        assert code == 0, err
        assert "runs 1: submitted 1" in err, err
        assert_judged(judge)
        collected = {s.name: s for s in backend.spans}
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["versions"] == PINNED, "not the versions tested"
    assert got["answer"] == ANSWER
    # Without the OpenAI instrumentor (or with LiteLLM's, which CrewAI 1.x does not go
    # through) there are no model spans: the kickoff span still holds the whole run.
    assert ("ChatCompletion" in got["span_names"]) is instrument_openai

    [assembled] = assemble_runs(decode_otlp_protobuf(spans_file.read_bytes()).spans)
    run = assembled.run
    assert run.span_id == got["crew_span"]  # the kickoff span, not the task's AGENT span
    assert run.input == QUESTION  # the task's description, its {city} filled in
    assert run.output == ANSWER  # the crew's final answer, whole
    assert tool_results(run) == [("get_weather", weather("Lyon"))]
    assert run.conversation_id == SESSION
    assert [s.kind for s in run.steps] == (
        ["model", "tool", "model"] if instrument_openai else ["tool"]
    )

    hallucination = collected["evaluation hallucination"]
    coverage = collected["evaluation keyword-coverage"]
    for score in (hallucination, coverage):
        assert score.trace_id == got["trace_id"]
        assert score.parent_span_id == got["crew_span"]
    assert hallucination.attributes["gen_ai.evaluation.score.value"] == 0.5
    assert coverage.attributes["gen_ai.evaluation.score.value"] == 1.0
    # One row for both: the model spans add steps, not where the run's fields come from.
    record_compat(
        "openinference-instrumentation-crewai",
        f"{PINNED['openinference-instrumentation-crewai']} (crewai {PINNED['crewai']}; "
        f"openinference-instrumentation-openai {PINNED['openinference-instrumentation-openai']})",
        assembled,
        "`using_session(id)` around `kickoff` for a conversation id",
    )


# -- the kickoff span as the reader sees it (no CrewAI needed) ---------------------------------


def kickoff(tasks: list[dict[str, Any]], inputs: dict[str, Any] | None) -> SpanRecord:
    attributes: dict[str, Any] = {
        "openinference.span.kind": "CHAIN",
        "crew_tasks": json.dumps(tasks),
        "crew_inputs": json.dumps(inputs) if inputs else "",
        "output.value": json.dumps({"raw": "Done.", "tasks_output": []}),
    }
    if inputs:
        attributes["input.value"] = json.dumps(inputs)
    return SpanRecord("1" * 32, "2" * 16, None, "crew.kickoff", 0, 9, attributes)


def test_a_kickoff_span_is_the_run_and_its_tasks_are_its_input() -> None:
    tasks = [
        {"description": "Research {topic} for {year}.", "expected_output": "notes"},
        {"description": 'Write a report as JSON: {"title": ...}.', "expected_output": "x"},
    ]
    agent = SpanRecord(
        "1" * 32,
        "3" * 16,
        "2" * 16,
        "Researcher._execute_core",
        1,
        8,
        {
            "openinference.span.kind": "AGENT",
            "input.value": json.dumps({"agent": {"role": "Researcher"}, "context": ""}),
        },
    )
    [assembled] = assemble_runs([kickoff(tasks, {"topic": "AI agents", "year": 2026}), agent])
    assert assembled.run.span_id == "2" * 16
    # Filled as CrewAI fills them; JSON braces and unknown names stay as they are.
    assert assembled.run.input == (
        'Research AI agents for 2026.\n\nWrite a report as JSON: {"title": ...}.'
    )
    assert assembled.run.output == "Done."
    assert assembled.sources["input"].attribute == "crew_tasks .description"
    assert assembled.sources["output"].attribute == "output.value .raw"


def test_a_kickoff_without_inputs_reads_the_descriptions_as_written() -> None:
    [assembled] = assemble_runs([kickoff([{"description": "Say hi to {name}."}], None)])
    assert assembled.run.input == "Say hi to {name}."
