"""Lifecycle: shutdown with work in flight, a forked child, and a process that just exits."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from _reliability_support import (
    ANSWER,
    FAST_JUDGE,
    MakeHandler,
    attributes,
    evaluation_spans,
    get_weather,
    grounded_reply,
    question,
    tool_call,
    tool_contexts,
    weather_agent,
)
from forking import in_forked_child
from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from livescore import StepContext, create_scorer
from livescore.live import ScorerConfig
from livescore.otel import attributes as A
from livescore.scorers import create_hallucination_scorer, create_keyword_coverage_scorer
from livescore.testing import OpenAITestServer
from livescore_langchain.testing import ScriptedChatModel


def _agent_for(runs: int) -> Any:
    """One agent whose script lasts ``runs`` runs (a weather call, then the answer)."""
    turns: list[AIMessage | str] = []
    for i in range(runs):
        turns += [tool_call(call_id=f"call_{i}", city="Paris"), ANSWER]
    return create_agent(ScriptedChatModel(responses=turns), tools=[get_weather])


def test_shutdown_finishes_what_it_can_by_the_deadline_and_counts_the_rest_as_dropped(
    make_handler: MakeHandler, exporter: InMemorySpanExporter
) -> None:
    # "stuck" waits for an event that is only set after shutdown returns: if shutdown
    # waited for it past its deadline, the test would hang (and the timeout would fail it).
    release = threading.Event()

    async def stuck(ctx: StepContext) -> float:
        while not release.is_set():  # noqa: ASYNC110  (set from another thread)
            await anyio.sleep(0.01)
        return 1.0

    async def quick(ctx: StepContext) -> float:
        await anyio.sleep(0.01)
        return 0.5

    handler = make_handler(
        [
            ScorerConfig(
                create_scorer(id="stuck", description="never ends", generate_score=stuck),
                max_concurrency=2,
            ),
            create_scorer(id="quick", description="ends at once", generate_score=quick),
        ]
    )
    agent = _agent_for(7)
    for _ in range(6):
        agent.invoke(question(), config={"callbacks": [handler]})

    handler.shutdown(timeout=1.0)
    release.set()

    stats = handler.stats()
    stuck_stats, quick_stats = stats.by_scorer["stuck"], stats.by_scorer["quick"]
    assert stuck_stats.sampled == quick_stats.sampled == 6
    assert (stuck_stats.scored, stuck_stats.dropped) == (0, 6)
    assert stuck_stats.dropped_by_reason == {"shutdown": 6}
    assert stats.queued == stats.in_flight == 0
    assert stats.sampled == stats.finished
    # What could finish by the deadline did, and reached the exporter.
    spans = exporter.get_finished_spans()
    assert len(evaluation_spans(spans, "quick")) == quick_stats.scored
    assert evaluation_spans(spans, "stuck") == []
    # After shutdown: the agent still runs, and its runs are counted as dropped.
    agent.invoke(question(), config={"callbacks": [handler]})
    after = handler.stats()
    assert after.by_scorer["stuck"].dropped_by_reason == {"shutdown": 7}
    assert after.sampled == after.finished


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork (POSIX)")
def test_a_forked_child_scores_its_own_runs_through_the_judge(
    make_handler: MakeHandler, exporter: InMemorySpanExporter
) -> None:
    with OpenAITestServer(responder=grounded_reply) as server:
        hallucination = create_hallucination_scorer(
            model=server.judge(**FAST_JUDGE), get_context=tool_contexts
        )
        handler = make_handler([hallucination, create_keyword_coverage_scorer()])
        weather_agent().invoke(question(), config={"callbacks": [handler]})
        assert handler.flush(timeout=30)  # the parent's worker and judge client exist
        parent_before = handler.stats()

        def child() -> dict[str, Any]:
            exported_before = len(evaluation_spans(exporter.get_finished_spans()))
            weather_agent().invoke(question(), config={"callbacks": [handler]})
            flushed = handler.flush(timeout=20)
            stats = handler.stats()
            spans = evaluation_spans(exporter.get_finished_spans())[exported_before:]
            handler.shutdown(timeout=5)
            return {
                "flushed": flushed,
                "sampled": stats.sampled,
                "scored": stats.scored,
                "statuses": sorted(
                    f"{attributes(s)[A.LIVESCORE_SCORER_ID]}:{attributes(s)[A.LIVESCORE_STATUS]}"
                    for s in spans
                ),
            }

        report = in_forked_child(child)
        # The parent is untouched and still scores its own runs.
        assert handler.stats() == parent_before
        weather_agent().invoke(question(), config={"callbacks": [handler]})
        assert handler.flush(timeout=30)
    assert report == {
        "flushed": True,
        "sampled": 2,  # the child's counts start from zero
        "scored": 2,
        "statuses": ["hallucination:scored", "keyword-coverage:scored"],
    }
    assert handler.stats().scored == parent_before.scored + 2


EXIT_SCRIPT = """
import json
import sys

import anyio
from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

from livescore import create_scorer
from livescore.scorers import create_keyword_coverage_scorer
from livescore_langchain import LiveScoringHandler
from livescore_langchain.testing import ScriptedChatModel

OUT = sys.argv[1]
ENDING = sys.argv[2]


class FileSpanExporter(SpanExporter):
    def export(self, spans):
        with open(OUT, "a", encoding="utf-8") as f:
            for span in spans:
                f.write(json.dumps({"name": span.name, "attributes": dict(span.attributes)}))
                f.write("\\n")
        return SpanExportResult.SUCCESS

    def shutdown(self):
        pass


@tool
def get_weather(city: str) -> str:
    \"\"\"Weather.\"\"\"
    return "sunny, 21C in " + city


async def slowish(ctx):
    await anyio.sleep(0.2)  # still running when the script ends
    return 1.0


provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter()))
handler = LiveScoringHandler(
    [create_keyword_coverage_scorer(), create_scorer(id="slowish", description="x",
                                                     generate_score=slowish)],
    tracer_provider=provider,
)
turns = []
for i in range(5):
    turns += [AIMessage("", tool_calls=[{"name": "get_weather", "args": {"city": "Paris"},
                                         "id": f"c{i}"}]), "It is sunny and 21C in Paris."]
agent = create_agent(ScriptedChatModel(responses=turns), tools=[get_weather])
for _ in range(5):
    agent.invoke({"messages": [{"role": "user", "content": "Weather in Paris?"}]},
                 config={"callbacks": [handler]})
# No flush, no shutdown: the exit hook must finish the work before the interpreter goes.
if ENDING == "crash":
    raise RuntimeError("the application crashed")
"""


@pytest.mark.parametrize("ending", ["return", "crash"])
def test_scores_reach_the_exporter_when_the_process_exits_without_shutdown(
    tmp_path: Path, ending: str
) -> None:
    script = tmp_path / "agent_script.py"
    script.write_text(textwrap.dedent(EXIT_SCRIPT))
    out = tmp_path / "spans.jsonl"
    proc = subprocess.run(
        [sys.executable, str(script), str(out), ending],
        capture_output=True,
        text=True,
        timeout=50,
        check=False,
    )
    if ending == "crash":
        assert proc.returncode == 1
        assert "the application crashed" in proc.stderr
    else:
        assert proc.returncode == 0, proc.stderr
    spans = [json.loads(line) for line in out.read_text().splitlines()]
    evaluations = [s for s in spans if s["name"].startswith("evaluation ")]
    counts: dict[str, int] = {}
    for span in evaluations:
        attrs = span["attributes"]
        key = f"{attrs[A.LIVESCORE_SCORER_ID]}:{attrs[A.LIVESCORE_STATUS]}"
        counts[key] = counts.get(key, 0) + 1
    assert counts == {"keyword-coverage:scored": 5, "slowish:scored": 5}
    assert len([s for s in spans if s["name"].startswith("invoke_agent")]) == 5


STALL_SCRIPT = """
import atexit
import dataclasses
import json
import sys
import threading
import time

import anyio

OUT, STALL = sys.argv[1], sys.argv[2]
ended = {}


def report():
    # Registered first, so atexit runs it last: after livescore's exit hook.
    ended["exit_s"] = time.monotonic() - ended["main_returned"]
    ended["scores"] = dataclasses.asdict(dispatcher.stats().by_scorer["answer"])
    ended["sink"] = dataclasses.asdict(sink.stats())
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(ended, f, default=dict)


atexit.register(report)

from livescore import Run, create_scorer
from livescore.live import LiveDispatcher
from livescore.sinks import BatchingSink


class StalledSinkDouble(BatchingSink):
    \"\"\"A test double of a dashboard that stops answering (with STALL=sink).\"\"\"

    name = "stalled"

    def prepare(self, record):
        return record.run.run_id

    def deliver(self, batch):
        if STALL == "sink":
            threading.Event().wait()  # a request that never returns


async def answer(ctx):
    if STALL == "scorer":
        await anyio.sleep(600)  # a judge that never answers
    return 1.0


sink = StalledSinkDouble(flush_interval=0.05)
dispatcher = LiveDispatcher(
    [create_scorer(id="answer", description="x", generate_score=answer)], sinks=[sink]
)
for i in range(4):
    dispatcher.submit(Run(input="q", output="a", run_id=f"r{i}"))
ended["main_returned"] = time.monotonic()
# No flush, no shutdown: main returns.
"""


@pytest.mark.parametrize(
    ("stall", "exit_timeout"), [("sink", None), ("scorer", None), ("sink", "1"), ("scorer", "1")]
)
def test_exit_takes_one_shared_deadline_whatever_stalls(
    tmp_path: Path, stall: str, exit_timeout: str | None
) -> None:
    # The dispatchers' shutdown, the sinks' and their graces share one deadline at exit:
    # LIVESCORE_EXIT_TIMEOUT seconds (5 by default), not each its own one after the other.
    script = tmp_path / "stall_script.py"
    script.write_text(textwrap.dedent(STALL_SCRIPT))
    out = tmp_path / "ended.json"
    env = {k: v for k, v in os.environ.items() if k != "LIVESCORE_EXIT_TIMEOUT"}
    if exit_timeout is not None:
        env["LIVESCORE_EXIT_TIMEOUT"] = exit_timeout
    proc = subprocess.run(
        [sys.executable, str(script), str(out), stall],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    ended = json.loads(out.read_text())
    deadline = float(exit_timeout or 5)
    # A bound with room for a loaded machine (the work after the deadline is counting).
    assert ended["exit_s"] < deadline + 3, ended
    # Nothing is lost uncounted: what the deadline cut off is dropped, with the reason.
    scores, delivered = ended["scores"], ended["sink"]
    if stall == "sink":
        assert scores["scored"] == 4
        assert delivered["dropped_by_reason"] == {"shutdown": 4}
    else:
        assert scores["dropped_by_reason"] == {"shutdown": 4}
        assert delivered["sent"] + delivered["pending"] == 0
    assert scores["sampled"] == 4


SIGTERM_SCRIPT = """
import json
import os
import signal
import signal
import sys
import time

import anyio
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from livescore import Run, create_scorer
from livescore.live import LiveDispatcher, install_sigterm_handler
from livescore.otel import OTelEmitter

OUT = sys.argv[1]
MODE = sys.argv[2]


class FileSpanExporter(SpanExporter):
    def export(self, spans):
        with open(OUT, "a", encoding="utf-8") as f:
            for span in spans:
                f.write(json.dumps({"name": span.name, "attributes": dict(span.attributes)}))
                f.write("\\n")
        return SpanExportResult.SUCCESS

    def shutdown(self):
        pass


async def slowish(ctx):
    await anyio.sleep(0.3)  # still running when SIGTERM arrives
    return 1.0


provider = TracerProvider()
# A batch processor that would hold the spans for a minute: only a flush sends them.
provider.add_span_processor(BatchSpanProcessor(FileSpanExporter(), schedule_delay_millis=60_000))
dispatcher = LiveDispatcher(
    [create_scorer(id="slowish", description="x", generate_score=slowish)],
    emitter=OTelEmitter(tracer_provider=provider),
    max_judge_concurrency=2,
)
if MODE == "chained":
    def app_handler(signum, frame):
        print("the app's own handler ran", flush=True)
        sys.exit(3)

    signal.signal(signal.SIGTERM, app_handler)
if MODE in ("handler", "chained"):
    install_sigterm_handler(timeout=20)
for i in range(6):
    dispatcher.submit(Run(input="q", output="a", run_id=f"r{i}"))
os.kill(os.getpid(), signal.SIGTERM)  # what a container runtime sends
time.sleep(30)
print("still running after SIGTERM", flush=True)
"""


@pytest.mark.parametrize("mode", ["default", "handler", "chained"])
def test_sigterm_loses_queued_scores_unless_the_handler_is_installed(
    tmp_path: Path, mode: str
) -> None:
    script = tmp_path / "sigterm_script.py"
    script.write_text(textwrap.dedent(SIGTERM_SCRIPT))
    out = tmp_path / "spans.jsonl"
    proc = subprocess.run(
        [sys.executable, str(script), str(out), mode],
        capture_output=True,
        text=True,
        timeout=50,
        check=False,
    )
    assert "still running" not in proc.stdout
    spans = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    scored = sorted(s["attributes"][A.LIVESCORE_RUN_ID] for s in spans)
    if mode == "default":
        # Python's default: the process ends at once; every queued score is lost, uncounted.
        assert proc.returncode == -signal.SIGTERM
        assert scored == []
    elif mode == "handler":
        # Finished within the deadline and exported, then the process ends by SIGTERM all
        # the same, as it would have.
        assert proc.returncode == -signal.SIGTERM, proc.stderr
        assert scored == [f"r{i}" for i in range(6)]
    else:
        # Flushed, then the app's own handler decides: here it exits with status 3.
        assert proc.returncode == 3, proc.stderr
        assert "the app's own handler ran" in proc.stdout
        assert scored == [f"r{i}" for i in range(6)]


def test_install_sigterm_handler_wants_the_main_thread_and_a_sane_timeout() -> None:
    from livescore.live import install_sigterm_handler

    errors: list[BaseException] = []

    def from_a_thread() -> None:
        try:
            install_sigterm_handler()
        except ValueError as exc:
            errors.append(exc)

    thread = threading.Thread(target=from_a_thread)
    thread.start()
    thread.join(10)
    assert "main thread" in str(errors[0])
    with pytest.raises(ValueError, match="timeout"):
        install_sigterm_handler(timeout=-1)
