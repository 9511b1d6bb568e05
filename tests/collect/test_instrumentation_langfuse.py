"""The Langfuse SDK (v3 and later: OpenTelemetry spans): a plain-code agent
(``@observe(as_type="agent")`` over the OpenAI client of ``langfuse.openai``, an
``@observe(as_type="tool")`` function), scored in process by ``LiveScoringSpanProcessor`` and
over OTLP/HTTP by ``livescore collect``; with the decorators' input and output capture off,
the run is still read from its generations. Also the shapes other uses of the SDK write.

The agent runs in a subprocess (``langfuse_agent.py``): ``Langfuse()`` keeps process-wide
state (its global tracer provider, one client per key, threads, an exit handler). No
Langfuse server is involved; nothing leaves the machine.
"""

from __future__ import annotations

import json
import os
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
    TOOL_RESULT,
    assert_judged,
    hallucination_replies,
    start_judged_collect,
    weather,
)
from otlp_receiver import OTLPTestReceiver

from livescore.testing import OpenAITestServer, Reply
from livescore.traces import SpanEvent, SpanRecord, assemble_runs

pytest.importorskip("langfuse")

SCRIPT = Path(__file__).resolve().parent / "langfuse_agent.py"
# The version this test was written against (the dev extra pins it): a release that
# changes what the spans carry fails here first.
PINNED = {"langfuse": "5.2.0"}
SESSION = "weather-session-1"  # what langfuse_agent.py propagates


def _record(raw: dict[str, Any]) -> SpanRecord:
    events = tuple(SpanEvent(e["name"], e["attributes"]) for e in raw.pop("events"))
    return SpanRecord(**raw, events=events)


def run_agent(judge: OpenAITestServer, collect_url: str, **env: str) -> dict[str, Any]:
    script = [
        Reply.tool_calls(("get_weather", {"city": "Lyon"}), ids=["call_1"]),
        Reply.text(ANSWER),
    ]
    environment = {k: v for k, v in os.environ.items() if not k.startswith("LANGFUSE_")}
    with OpenAITestServer(script) as llm:
        done = subprocess.run(
            [sys.executable, str(SCRIPT), llm.base_url, judge.base_url, collect_url],
            capture_output=True,
            text=True,
            timeout=180,
            env={**environment, **env},
        )
    assert done.returncode == 0, done.stderr[-3000:]
    got: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["answer"] == ANSWER
    assert got["flushed"]
    assert got["sent_to_langfuse"] == len(got["spans"])  # Langfuse still got every span
    return got


@pytest.mark.timeout(240)
def test_a_langfuse_observed_run_is_scored_in_process_and_by_collect(tmp_path: Path) -> None:
    for package, pinned in PINNED.items():
        assert version(package) == pinned, f"{package} {version(package)} is not the one tested"
    with (
        OpenAITestServer(hallucination_replies()) as judge,
        OpenAITestServer(hallucination_replies()) as collect_judge,
        OTLPTestReceiver() as backend,
    ):
        collect, url = start_judged_collect(tmp_path, collect_judge, backend.url)
        try:
            got = run_agent(judge, url + "/v1/traces")
        finally:
            code, err = stop(collect)
        assert code == 0, err
        assert "runs 1: submitted 1" in err, err
        assert_judged(judge)
        assert_judged(collect_judge)
        collected = {s.name: s for s in backend.spans}

    [assembled] = assemble_runs(_record(raw) for raw in got["spans"])
    run = assembled.run
    assert run.input == QUESTION  # the agent function's first argument
    assert run.output == ANSWER  # its return value
    assert run.conversation_id == SESSION
    tools = [(s.name, s.input, s.output) for s in run.steps if s.kind == "tool"]
    assert tools == [("get_weather", {"city": "Lyon"}, weather("Lyon"))]  # the tool span
    assert [s.name for s in run.steps if s.kind == "model"] == ["scripted-model"] * 2
    run_span = next(r for r in got["spans"] if r["span_id"] == run.span_id)
    assert run_span["name"] == "weather-agent"
    assert run_span["attributes"]["langfuse.observation.type"] == "agent"

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
        "Langfuse SDK: @observe, langfuse.openai",
        f"langfuse {PINNED['langfuse']}",
        assembled,
        "`propagate_attributes(session_id=...)` for the conversation",
    )


@pytest.mark.timeout(240)
def test_with_decorator_capture_off_the_run_is_read_from_its_generations() -> None:
    """``LANGFUSE_OBSERVE_DECORATOR_IO_CAPTURE_ENABLED=false`` empties the agent and tool
    observations; ``langfuse.openai``'s generations still hold the messages: the question,
    the answer and the tool's result (a tool-role message of the second call)."""
    with OpenAITestServer(hallucination_replies()) as judge:
        got = run_agent(judge, "-", LANGFUSE_OBSERVE_DECORATOR_IO_CAPTURE_ENABLED="false")
        assert_judged(judge)
    [assembled] = assemble_runs(_record(raw) for raw in got["spans"])
    run = assembled.run
    assert (run.input, run.output) == (QUESTION, ANSWER)
    assert assembled.sources["input"].attribute == "langfuse.observation.input .messages"
    [tool] = [s for s in run.steps if s.kind == "tool" and s.output]
    assert (tool.name, tool.output) == ("get_weather", TOOL_RESULT)
    assert {s["name"]: s["value"] for s in got["scores"]} == {
        "evaluation hallucination": 0.5,
        "evaluation keyword-coverage": 1.0,
    }


# -- other shapes the SDK writes ------------------------------------------------------------


def span(span_id: str, parent: str | None, start: int, name: str, **attributes: Any) -> SpanRecord:
    return SpanRecord(
        "b" * 32, span_id * 16, parent and parent * 16, name, start, 99 - start, attributes
    )


def test_a_plain_observed_root_over_a_decorated_generation_is_a_run() -> None:
    """``@observe()`` (a ``span``) around an ``@observe(as_type="generation")`` function of
    the app's own (its input a recorded call holding the messages, its output a text) and
    a retriever: no agent span, so the root over the model call is the run."""
    messages = [{"role": "user", "content": QUESTION}]
    spans = [
        span(
            "1",
            None,
            0,
            "answer",
            **{
                "langfuse.observation.type": "span",
                "langfuse.observation.input": json.dumps({"args": [QUESTION], "kwargs": {}}),
                "langfuse.observation.output": ANSWER,
                "session.id": "s-2",
                "user.id": "u-7",
            },
        ),
        span(
            "2",
            "1",
            1,
            "search",
            **{
                "langfuse.observation.type": "retriever",
                "langfuse.observation.input": json.dumps({"args": [], "kwargs": {"query": "Lyon"}}),
                "langfuse.observation.output": json.dumps([{"page_content": TOOL_RESULT}]),
            },
        ),
        span(
            "3",
            "1",
            2,
            "call_model",
            **{
                "langfuse.observation.type": "generation",
                "langfuse.observation.input": json.dumps({"args": [messages], "kwargs": {}}),
                "langfuse.observation.output": ANSWER,
                "langfuse.observation.model.name": "gpt-4o",
            },
        ),
    ]
    [assembled] = assemble_runs(spans)
    run = assembled.run
    assert (run.input, run.output) == (QUESTION, ANSWER)
    assert (run.conversation_id, run.metadata["user_id"]) == ("s-2", "u-7")
    retriever, model = run.steps
    assert (retriever.input, retriever.documents) == ("Lyon", [TOOL_RESULT])
    assert (model.name, model.input, model.output) == ("gpt-4o", messages, ANSWER)
