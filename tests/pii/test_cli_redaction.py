"""``--redact`` on ``livescore eval`` and ``livescore collect``: no e-mail, phone number or
name reaches the judge, the results file, the report, the exported spans and events, or a
sink."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from _pii_support import CONTEXT, INPUT, NAME, OUTPUT, claims_judge, leaks
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from otlp_receiver import OTLPTestReceiver
from score_api_doubles import LangfuseTestReceiver

from livescore.cli import main
from livescore.testing import OpenAITestServer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "collect"))
from _collect_process import stop


def agent_run(provider: TracerProvider) -> None:
    """A GenAI-convention agent run: it looks the customer up with a tool, then answers."""
    tracer = provider.get_tracer("hand-instrumented-agent")
    messages = {
        "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [_text(INPUT)]}]),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [_text(OUTPUT)]}]),
    }
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"}
    with tracer.start_as_current_span("invoke_agent support", attributes=agent | messages):
        tool = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "find_customer",
            "gen_ai.tool.call.id": "c1",
            "gen_ai.tool.call.arguments": json.dumps({"email": "margaret.thornton@example.org"}),
            "gen_ai.tool.call.result": " ".join(CONTEXT),
        }
        with tracer.start_as_current_span("execute_tool find_customer", attributes=tool):
            pass


def _text(content: str) -> dict[str, str]:
    return {"type": "text", "content": content}


def received(backend: OTLPTestReceiver) -> list[object]:
    return [
        [(s.name, s.attributes) for s in backend.spans],
        [(e.body, e.attributes) for e in backend.events()],
    ]


def test_eval_redact_keeps_personal_data_out_of_everything_it_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "support.jsonl"
    item = {"input": INPUT, "output": OUTPUT, "context": CONTEXT}
    data.write_text(json.dumps(item) + "\n", encoding="utf-8")
    out, report = tmp_path / "results.jsonl", tmp_path / "report.html"
    with (
        OpenAITestServer(responder=claims_judge) as server,
        OTLPTestReceiver() as backend,
        LangfuseTestReceiver() as langfuse,
    ):
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", "pk-lf-test")
        monkeypatch.setenv("LANGFUSE_SECRET_KEY", "sk-lf-test")
        monkeypatch.setenv("LANGFUSE_BASE_URL", langfuse.url)
        code = main(
            [
                "eval",
                str(data),
                "--scorer",
                "hallucination",
                "--model",
                "test-judge",
                "--redact",
                "--out",
                str(out),
                "--report",
                str(report),
                "--otlp-endpoint",
                backend.url,
                "--langfuse",
                "--quiet",
            ]
        )
        requests = list(server.requests)
        scores = langfuse.scores()
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert len(requests) == 3
    assert scores
    results = out.read_text(encoding="utf-8")
    assert "<PERSON_1>" in results
    assert "<EMAIL_1>" in results
    caught = [requests, scores, results, report.read_text(encoding="utf-8"), received(backend)]
    assert leaks([*caught, printed.out, printed.err]) == []


def test_eval_restore_puts_the_values_back_in_the_out_file_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "support.jsonl"
    data.write_text(json.dumps({"input": INPUT, "output": OUTPUT, "context": CONTEXT}) + "\n")
    out, report = tmp_path / "results.jsonl", tmp_path / "report.html"
    with OpenAITestServer(responder=claims_judge) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        argv = ["eval", str(data), "--scorer", "hallucination", "--model", "test-judge"]
        argv += ["--redact", "--restore", "--out", str(out), "--report", str(report)]
        code = main([*argv, "--quiet"])
        requests = list(server.requests)
    assert code == 0, capsys.readouterr().err
    (record,) = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert record["input"] == INPUT
    # The judge's explanation, written about <PERSON_1>, names the person again on disk.
    assert NAME in record["scores"]["hallucination"]["reason"]
    assert "<PERSON_1>" not in out.read_text(encoding="utf-8")
    assert leaks([requests, report.read_text(encoding="utf-8")]) == []


def test_restore_without_redact_and_out_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"input": "q", "output": "a"}) + "\n", encoding="utf-8")
    assert main(["eval", str(data), "--scorer", "keyword-coverage", "--restore", "--quiet"]) == 2
    assert "--restore puts personal data back" in capsys.readouterr().err


def test_eval_redact_with_broker_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"input": "q", "output": "a"}) + "\n", encoding="utf-8")
    argv = ["eval", str(data), "--scorer", "keyword-coverage", "--redact"]
    assert main([*argv, "--broker", "redis://127.0.0.1:1/0", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "--redact: with --broker the workers score" in err
    assert "Traceback" not in err


SCORERS = """
from livescore.scorers import create_hallucination_scorer

scorers = [create_hallucination_scorer(model="openai/test-judge")]
"""


def test_collect_redact_sends_the_judge_and_the_backend_placeholders_only(
    tmp_path: Path,
) -> None:
    (tmp_path / "pii_scorers.py").write_text(SCORERS, encoding="utf-8")
    with OpenAITestServer(responder=claims_judge) as server, OTLPTestReceiver() as backend:
        process = subprocess.Popen(
            [
                *(sys.executable, "-m", "livescore.cli", "collect", "pii_scorers:scorers"),
                *("--listen", "127.0.0.1:0", "--otlp-endpoint", backend.url, "--redact"),
            ],
            cwd=tmp_path,
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "test"},
        )
        try:
            assert process.stderr is not None
            line = process.stderr.readline()
            found = re.search(r"on (http://127\.0\.0\.1:\d+)/v1/traces", line)
            assert found, line + process.stderr.read()
            provider = TracerProvider()
            exporter = OTLPSpanExporter(endpoint=found.group(1) + "/v1/traces")
            provider.add_span_processor(SimpleSpanProcessor(exporter))
            agent_run(provider)
            provider.shutdown()
        finally:
            code, err = stop(process)
        requests = list(server.requests)
    assert code == 0, err
    assert "scores: scored 1, failed 0" in err
    assert len(requests) == 3
    assert "<PERSON_1>" in json.dumps(requests)
    score_spans = [s for s in backend.spans if s.name.startswith("evaluation ")]
    assert len(score_spans) == 1
    assert leaks([requests, received(backend), err]) == []
