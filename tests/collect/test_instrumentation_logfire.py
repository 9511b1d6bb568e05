"""The OpenAI Agents SDK traced by Logfire (``logfire.instrument_openai_agents()``, nothing
sent to Logfire), scored in process by ``LiveScoringSpanProcessor`` (one of Logfire's
``additional_span_processors``) and over OTLP/HTTP by ``livescore collect``.

Logfire's spans name no operation and no span kind: the Logfire reader tells them by their
message templates. The agent runs in a subprocess (``logfire_agent.py``): Logfire patches
process-wide state that must not leak into other tests. The model is the SDK's real Chat
Completions or Responses model talking to the OpenAI-compatible test server.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version
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
    weather,
)
from otlp_receiver import OTLPTestReceiver

from livescore.testing import OpenAITestServer
from livescore.traces import SpanEvent, SpanRecord, assemble_runs

pytest.importorskip("logfire")
pytest.importorskip("agents")

SCRIPT = Path(__file__).resolve().parent / "logfire_agent.py"
# The versions this test was written against (the dev extra pins them): a release that
# changes what the spans carry fails here first.
PINNED = {"logfire": "5.4.0", "openai-agents": "0.24.0"}
ROWS = {
    "chat_completions": "Logfire: OpenAI Agents SDK, Chat Completions model",
    "responses": "Logfire: OpenAI Agents SDK, Responses model",
}


def _record(raw: dict[str, Any]) -> SpanRecord:
    events = tuple(SpanEvent(e["name"], e["attributes"]) for e in raw.pop("events"))
    return SpanRecord(**raw, events=events)


@pytest.mark.timeout(240)
@pytest.mark.parametrize("api", ["chat_completions", "responses"])
def test_an_agents_sdk_run_traced_by_logfire_is_scored_in_process_and_by_collect(
    tmp_path: Path, api: str
) -> None:
    for package, pinned in PINNED.items():
        assert version(package) == pinned, f"{package} {version(package)} is not the one tested"
    with (
        OpenAITestServer(hallucination_replies()) as judge,
        OpenAITestServer(hallucination_replies()) as collect_judge,
        OTLPTestReceiver() as backend,
    ):
        collect, url = start_judged_collect(tmp_path, collect_judge, backend.url)
        try:
            done = subprocess.run(
                [sys.executable, str(SCRIPT), api, judge.base_url, url + "/v1/traces"],
                capture_output=True,
                text=True,
                timeout=180,
            )
        finally:
            code, err = stop(collect)
        assert done.returncode == 0, done.stderr[-3000:]
        assert code == 0, err
        assert "runs 1: submitted 1" in err, err
        assert_judged(judge)
        assert_judged(collect_judge)
        collected = {s.name: s for s in backend.spans}
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["answer"] == ANSWER
    assert got["flushed"]

    [assembled] = assemble_runs(_record(raw) for raw in got["spans"])
    run = assembled.run
    assert run.input == QUESTION
    assert run.output == ANSWER
    assert run.conversation_id == "thread-logfire-1"  # the SDK trace's group_id
    tools = [(s.name, s.output) for s in run.steps if s.kind == "tool"]
    assert tools == [("get_weather", weather("Lyon"))]
    run_span = next(r for r in got["spans"] if r["span_id"] == run.span_id)
    assert run_span["name"] == "Task: Agent workflow"  # the Runner.run, all its agents

    in_process = {s["name"]: (s["parent"], s["value"]) for s in got["scores"]}
    by_collect = {
        name: (s.parent_span_id, s.attributes["gen_ai.evaluation.score.value"])
        for name, s in collected.items()
        if name.startswith("evaluation ")
    }
    for scores in (in_process, by_collect):
        assert scores == {
            "evaluation hallucination": (run.span_id, 0.5),
            "evaluation keyword-coverage": (run.span_id, 1.0),
        }
    record_compat(
        ROWS[api],
        f"logfire {PINNED['logfire']} (openai-agents {PINNED['openai-agents']})",
        assembled,
        "`logfire.configure(scrubbing=False)` if text mentions a password, secret, session, "
        "cookie… (Logfire replaces it)",
    )
