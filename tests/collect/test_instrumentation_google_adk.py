"""Google ADK's own telemetry (GenAI spans, message content on spans or in log records),
scored in process by ``LiveScoringSpanProcessor`` and over OTLP/HTTP by ``livescore collect``.

The agent runs in a subprocess (``adk_agent.py``) of ``.adk-venv`` (``make adk``: google-adk
requires OpenTelemetry 1.44 at most, the dev extra has later ones), with livescore installed
there from this checkout; its model is a scripted ``BaseLlm`` (a test double). ADK traces
through the global tracer and logger providers, which that process owns.
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
    assert_judged,
    hallucination_replies,
    start_judged_collect,
    tool_results,
    weather,
)
from otlp_receiver import OTLPTestReceiver

from livescore.runs import NOT_SCORABLE_METADATA_KEY
from livescore.testing import OpenAITestServer
from livescore.traces import AssembledRun, assemble_runs, read_spans

SCRIPT = Path(__file__).resolve().parent / "adk_agent.py"
VENV = Path(__file__).resolve().parents[2] / ".adk-venv"
ADK_VERSION = "2.13.0"  # the Makefile's ADK_VERSION: the one installed and tested
CONTENT = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
OPT_IN = "OTEL_SEMCONV_STABILITY_OPT_IN"


def adk_python() -> str:
    python = VENV / "bin" / "python"
    if not python.exists() or not (VENV / f".installed-{ADK_VERSION}").exists():
        pytest.skip(f"Google ADK {ADK_VERSION} is not installed in .adk-venv (make adk)")
    return str(python)


def run_adk(
    tmp_path: Path, capture: str | None, judge: OpenAITestServer, collect_url: str
) -> tuple[dict[str, Any], AssembledRun]:
    """Run the agent with ``capture`` as the content setting (and the latest GenAI
    conventions opted in); returns what it printed and the run its spans and log records
    (as the Collector's file exporter writes them) assemble into."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "ADK_"))}
    env[OPT_IN] = "gen_ai_latest_experimental"
    if capture is not None:
        env[CONTENT] = capture
    out = tmp_path / "adk.jsonl"
    done = subprocess.run(
        [adk_python(), str(SCRIPT), judge.base_url, collect_url, str(out)],
        capture_output=True,
        text=True,
        timeout=150,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    spans, rejected, problems = read_spans(out)
    assert (rejected, problems) == (0, [])
    [assembled] = assemble_runs(spans)
    return got, assembled


def assert_the_run(got: dict[str, Any], assembled: AssembledRun) -> None:
    run = assembled.run
    assert got["answer"] == ANSWER
    assert run.name == "weather_agent"  # invoke_agent, under ADK's invoke_workflow root
    assert run.input == QUESTION
    assert run.output == ANSWER
    assert run.conversation_id == got["session_id"]  # gen_ai.conversation.id: the session
    [(name, result)] = tool_results(run)
    assert name == "get_weather"
    # ADK wraps a str result; a tool span's JSON is parsed, a tool-role message's is text.
    found = result if isinstance(result, dict) else json.loads(result)
    assert found == {"result": weather("Lyon")}


def assert_scores(scores: list[dict[str, Any]], run_span: str | None) -> None:
    by_name = {s["name"]: s for s in scores}
    assert set(by_name) == {"evaluation hallucination", "evaluation keyword-coverage"}
    assert {s["parent"] for s in scores} == {run_span}
    assert by_name["evaluation hallucination"]["attributes"]["gen_ai.evaluation.score.value"] == 0.5
    assert (
        by_name["evaluation keyword-coverage"]["attributes"]["gen_ai.evaluation.score.value"] == 1.0
    )


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("capture", "where"),
    [("SPAN_ONLY", "content on spans"), ("true", "content in log records")],
)
def test_an_adk_run_is_scored_under_its_invoke_agent_span(
    tmp_path: Path, capture: str, where: str
) -> None:
    in_spans = capture == "SPAN_ONLY"
    with (
        OpenAITestServer(hallucination_replies()) as judge,
        OpenAITestServer(hallucination_replies()) as collect_judge,
        OTLPTestReceiver() as backend,
    ):
        collect, url = start_judged_collect(tmp_path, collect_judge, backend.url)
        try:
            got, assembled = run_adk(tmp_path, capture, judge, url)
        finally:
            code, err = stop(collect)
        assert code == 0, err
        assert "runs 1: submitted 1" in err, err
        assert_judged(collect_judge)
        collected = [
            {"name": s.name, "parent": s.parent_span_id, "attributes": s.attributes}
            for s in backend.spans
            if s.name.startswith("evaluation")
        ]
        assert_judged(judge)
    assert_the_run(got, assembled)
    run_span = assembled.run.span_id
    assert_scores(collected, run_span)  # livescore collect: spans and /v1/logs
    # The span processor, in ADK's process (with its log record processor for =true).
    assert got["stats"]["scored"] == 2
    assert_scores(got["scores"], run_span)
    if not in_spans:
        adk_records = [n for n in got["log_records"] if n != "gen_ai.evaluation.result"]
        assert adk_records == ["gen_ai.client.inference.operation.details"] * 2
    record_compat(
        f"Google ADK, {where}",
        ADK_VERSION,
        assembled,
        f"`{CONTENT}=SPAN_ONLY`"
        if in_spans
        else f"`{CONTENT}=true` (or `EVENT_ONLY`); export the log records to `/v1/logs`",
    )


@pytest.mark.timeout(180)
def test_by_default_adk_captures_no_content_and_the_run_is_skipped_naming_the_setting(
    tmp_path: Path,
) -> None:
    with OpenAITestServer() as judge:
        got, assembled = run_adk(tmp_path, None, judge, "-")
        assert judge.requests == []  # no judge call is paid for a run without text
    assert got["answer"] == ANSWER
    run = assembled.run
    assert (run.input, run.output) == (None, None)
    reason = run.metadata[NOT_SCORABLE_METADATA_KEY]
    assert "captured no message content" in reason, reason
    assert f"{CONTENT}=SPAN_ONLY" in reason, reason
    assert "Google ADK" in reason, reason
    assert (got["stats"]["scored"], got["stats"]["skipped"]) == (0, 2)
    for score in got["scores"]:
        assert score["parent"] == run.span_id
        assert score["attributes"]["livescore.skip_reason"] == reason
