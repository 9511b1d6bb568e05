"""OpenLLMetry (``traceloop-sdk``): a plain-code agent (``@agent`` over a raw ``openai`` tool
loop, ``@tool``), scored in process by ``LiveScoringSpanProcessor`` and over OTLP/HTTP by
``livescore collect``; with content capture off, the run is skipped saying which setting
turns it on. Also the spans earlier OpenLLMetry releases wrote (indexed messages, cut
values), read from their attributes.

The agent runs in a subprocess (``traceloop_agent.py``) of ``.traceloop-venv`` (``make
traceloop``: traceloop-sdk pins the OpenTelemetry packages one patch release apart from
the dev extra), with livescore installed there from this checkout.
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
    weather,
)
from otlp_receiver import OTLPTestReceiver

from livescore.testing import OpenAITestServer, Reply
from livescore.traces import SpanEvent, SpanRecord, assemble_runs, runs_from_spans

SCRIPT = Path(__file__).resolve().parent / "traceloop_agent.py"
VENV = Path(__file__).resolve().parents[2] / ".traceloop-venv"
# The versions this test was written against (the Makefile's traceloop target pins them):
# a release that changes what the spans carry fails here first.
PINNED = {"traceloop-sdk": "0.62.4", "opentelemetry-instrumentation-openai": "0.62.4"}
CONVERSATION = "weather-session-1"  # the association property traceloop_agent.py sets


def traceloop_python() -> str:
    python = VENV / "bin" / "python"
    if not python.exists() or not list(VENV.glob(".installed-*")):
        pytest.skip("traceloop-sdk is not installed in .traceloop-venv (make traceloop does it)")
    return str(python)


def _record(raw: dict[str, Any]) -> SpanRecord:
    events = tuple(SpanEvent(e["name"], e["attributes"]) for e in raw.pop("events"))
    return SpanRecord(**raw, events=events)


def run_agent(judge: OpenAITestServer, collect_url: str, **env: str) -> dict[str, Any]:
    python = traceloop_python()
    script = [
        Reply.tool_calls(("get_weather", {"city": "Lyon"}), ids=["call_1"]),
        Reply.text(ANSWER),
    ]
    environment = {k: v for k, v in os.environ.items() if not k.startswith("TRACELOOP_")}
    with OpenAITestServer(script) as llm:
        done = subprocess.run(
            [python, str(SCRIPT), llm.base_url, judge.base_url, collect_url],
            capture_output=True,
            text=True,
            timeout=240,
            env={**environment, "TRACELOOP_TELEMETRY": "false", **env},
        )
    assert done.returncode == 0, done.stderr[-3000:]
    got: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["answer"] == ANSWER
    assert got["flushed"]
    return got


def test_the_pinned_versions_are_installed() -> None:
    python = traceloop_python()
    done = subprocess.run(
        [
            python,
            "-c",
            f"from importlib.metadata import version; print(*map(version, {list(PINNED)!r}))",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.split() == list(PINNED.values()), done.stderr


@pytest.mark.timeout(300)
def test_a_traceloop_agent_run_is_scored_in_process_and_by_collect(tmp_path: Path) -> None:
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
    assert run.input == QUESTION  # the @agent function's first argument
    assert run.output == ANSWER  # its return value
    assert run.conversation_id == CONVERSATION
    tools = [(s.name, s.input, s.output) for s in run.steps if s.kind == "tool"]
    assert tools == [("get_weather", {"city": "Lyon"}, weather("Lyon"))]  # the @tool span
    assert [s.name for s in run.steps if s.kind == "model"] == ["scripted-model"] * 2
    run_span = next(r for r in got["spans"] if r["span_id"] == run.span_id)
    assert run_span["name"] == "weather-agent.agent"
    assert run_span["attributes"]["traceloop.span.kind"] == "agent"

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
        "OpenLLMetry: traceloop-sdk decorators, OpenAI instrumentation",
        f"traceloop-sdk {PINNED['traceloop-sdk']}",
        assembled,
        '`Traceloop.set_association_properties({"session_id": ...})` for the conversation',
    )


@pytest.mark.timeout(300)
def test_content_capture_off_skips_the_run_naming_the_setting() -> None:
    with OpenAITestServer() as judge:
        got = run_agent(judge, "-", TRACELOOP_TRACE_CONTENT="false")
        assert judge.requests == []  # no judge call is paid for a run without text
    [score, _] = sorted(got["scores"], key=lambda s: s["name"])
    assert score["name"] == "evaluation hallucination"
    assert score["value"] is None
    assert "TRACELOOP_TRACE_CONTENT=true" in score["skip_reason"]


# -- what earlier releases wrote ------------------------------------------------------------


def span(span_id: str, parent: str | None, start: int, name: str, **attributes: Any) -> SpanRecord:
    return SpanRecord(
        "a" * 32, span_id * 16, parent and parent * 16, name, start, 99 - start, attributes
    )


def test_indexed_messages_give_tool_calls_and_tool_results() -> None:
    """Earlier OpenLLMetry releases flattened messages into ``gen_ai.prompt.N.*`` and
    ``gen_ai.completion.N.*`` (``llm.request.type`` instead of an operation name), content
    parts as JSON; with no tool span, the tool's result is the tool-role message's."""
    spans = [
        span(
            "1",
            None,
            0,
            "weather.workflow",
            **{
                "traceloop.span.kind": "workflow",
                "traceloop.entity.name": "weather",
                "traceloop.entity.input": json.dumps(
                    {"args": [], "kwargs": {"question": QUESTION}}
                ),
                "traceloop.entity.output": json.dumps(ANSWER),
                "traceloop.association.properties.thread_id": "t-9",
            },
        ),
        span(
            "2",
            "1",
            1,
            "openai.chat",
            **{
                "llm.request.type": "chat",
                "gen_ai.request.model": "gpt-4o",
                "gen_ai.prompt.0.role": "user",
                "gen_ai.prompt.0.content": json.dumps([{"type": "text", "text": QUESTION}]),
                "gen_ai.completion.0.role": "assistant",
                "gen_ai.completion.0.finish_reason": "tool_calls",
                "gen_ai.completion.0.tool_calls.0.id": "call_1",
                "gen_ai.completion.0.tool_calls.0.name": "get_weather",
                "gen_ai.completion.0.tool_calls.0.arguments": '{"city": "Lyon"}',
                "traceloop.association.properties.thread_id": "t-9",
            },
        ),
        span(
            "3",
            "1",
            2,
            "openai.chat",
            **{
                "llm.request.type": "chat",
                "gen_ai.prompt.0.role": "user",
                "gen_ai.prompt.0.content": QUESTION,
                "gen_ai.prompt.1.role": "assistant",
                "gen_ai.prompt.1.tool_calls.0.id": "call_1",
                "gen_ai.prompt.1.tool_calls.0.name": "get_weather",
                "gen_ai.prompt.1.tool_calls.0.arguments": '{"city": "Lyon"}',
                "gen_ai.prompt.2.role": "tool",
                "gen_ai.prompt.2.content": TOOL_RESULT,
                "gen_ai.prompt.2.tool_call_id": "call_1",
                "gen_ai.completion.0.role": "assistant",
                "gen_ai.completion.0.content": ANSWER,
            },
        ),
    ]
    [assembled] = assemble_runs(spans)
    run = assembled.run
    assert (run.input, run.output, run.conversation_id) == (QUESTION, ANSWER, "t-9")
    [tool] = [s for s in run.steps if s.kind == "tool"]
    assert (tool.name, tool.input, tool.output) == ("get_weather", {"city": "Lyon"}, TOOL_RESULT)
    assert run.steps[0].tool_calls_requested[0].call_id == "call_1"
    assert assembled.sources["input"].attribute == "traceloop.entity.input .kwargs.question"
    assert assembled.sources["conversation_id"].attribute == (
        "traceloop.association.properties.thread_id"
    )


def test_values_cut_short_are_read_as_truncated() -> None:
    """``OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT`` cuts the JSON of an entity's input and
    output: the readable start is kept, marked truncated, and a model span's whole message
    wins over it."""
    cut = json.dumps({"args": [QUESTION], "kwargs": {}})[:24]
    root = span(
        "1",
        None,
        0,
        "weather.agent",
        **{
            "traceloop.span.kind": "agent",
            "traceloop.entity.input": cut,
            "traceloop.entity.output": json.dumps(ANSWER)[:30],
        },
    )
    [run] = runs_from_spans([root])
    assert run.input == QUESTION[: len(cut) - len('{"args": ["')]
    assert run.output == ANSWER[:29]
    assert run.metadata["input_truncated"]
    assert run.metadata["output_truncated"]
    chat = span(
        "2",
        "1",
        1,
        "openai.chat",
        **{
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": json.dumps([{"role": "user", "content": QUESTION}]),
            "gen_ai.output.messages": json.dumps([{"role": "assistant", "content": ANSWER}]),
        },
    )
    [run] = runs_from_spans([root, chat])
    assert (run.input, run.output) == (QUESTION, ANSWER)


def test_framework_spans_with_a_span_kind_and_genai_content_are_read() -> None:
    """An instrumentation of OpenLLMetry's for a framework may mark its spans with a span
    kind and say their content the GenAI way (no entity input or output)."""
    messages = [{"role": "user", "content": QUESTION}]
    spans = [
        span(
            "1",
            None,
            0,
            "weather.agent",
            **{
                "traceloop.span.kind": "agent",
                "gen_ai.agent.name": "weather",
                "gen_ai.input.messages": json.dumps(messages),
                "gen_ai.output.messages": json.dumps([{"role": "assistant", "content": ANSWER}]),
            },
        ),
        span(
            "2",
            "1",
            1,
            "get_weather.tool",
            **{
                "traceloop.span.kind": "tool",
                "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.call.arguments": '{"city": "Lyon"}',
                "gen_ai.tool.call.result": TOOL_RESULT,
            },
        ),
    ]
    [assembled] = assemble_runs(spans)
    run = assembled.run
    assert (run.input, run.output, run.name) == (messages, ANSWER, "weather")
    [tool] = run.steps
    assert (tool.name, tool.input, tool.output) == ("get_weather", {"city": "Lyon"}, TOOL_RESULT)
    assert {s.convention for s in assembled.sources.values()} == {"traceloop"}
