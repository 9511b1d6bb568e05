"""``livescore collect`` as a user runs it: a real process, spans from the SDK's exporter,
scores to an OTLP backend, SIGTERM, and the summary; usage errors on one line."""

from __future__ import annotations

import socket
import sys
import time
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from otlp_receiver import OTLPTestReceiver

from livescore.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "traces"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "collect"))
from _collect_process import SCORERS, start_collect, stop
from _trace_support import genai_tool_run


def export(url: str) -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=url + "/v1/traces")))
    genai_tool_run(provider, question="Weather in Lyon?", answer="It is sunny in Lyon.")
    provider.shutdown()


def test_a_run_sent_over_otlp_is_scored_and_sigterm_drains_it(tmp_path: Path) -> None:
    with OTLPTestReceiver() as backend:
        # A long quiet period: the trace is still open at SIGTERM, and the drain scores it.
        process, url = start_collect(
            tmp_path, "--otlp-endpoint", backend.url, "--quiet-period", "60"
        )
        try:
            export(url)
        finally:
            code, err = stop(process)
        assert code == 0, err
        assert "requests 200: 4" in err
        assert "refused (429) 0 request(s)" in err
        assert "runs 1: submitted 1" in err
        assert "scores: scored 1, failed 0, skipped 0, dropped 0" in err
        assert "Traceback" not in err
        scores = [s for s in backend.spans if s.name == "evaluation grounded"]
        assert len(scores) == 1
        assert scores[0].attributes["gen_ai.evaluation.score.value"] == 1.0
        assert scores[0].parent_span_id == scores[0].attributes["livescore.run.id"]
        assert {s.service_name for s in scores} == {"livescore-collect"}
        # The same score as a gen_ai.evaluation.result event, on the run's span.
        (event,) = backend.events()
        assert event.span_id == scores[0].parent_span_id
        assert event.trace_id == scores[0].trace_id
        assert event.attributes["gen_ai.evaluation.name"] == "grounded"
        assert event.attributes["gen_ai.evaluation.score.value"] == 1.0
        assert event.attributes["gen_ai.response.id"] == "chatcmpl-answers"
        assert event.service_name == "livescore-collect"


def test_explain_prints_each_trace_it_assembles(tmp_path: Path) -> None:
    printed = tmp_path / "stdout.txt"
    process, url = start_collect(
        tmp_path, "--quiet-period", "0.2", "--explain", "--emit", "spans", stdout=printed
    )
    try:
        export(url)
        provider = TracerProvider()
        provider.add_span_processor(
            SimpleSpanProcessor(OTLPSpanExporter(endpoint=url + "/v1/traces"))
        )
        with provider.get_tracer("web").start_as_current_span("GET /health"):
            pass
        provider.shutdown()
    finally:
        code, err = stop(process)
    assert code == 0, err
    out = printed.read_text(encoding="utf-8")
    assert "run 'weather'" in out
    assert "input        \"Weather in Lyon?\"  ← span 'invoke_agent weather'" in out
    assert 'tool         get_weather → "sunny, 24 °C"' in out
    assert "no run: no span speaks a convention livescore reads" in out
    assert "the root 'GET /health'" in out


def test_emit_events_sends_events_without_score_spans(tmp_path: Path) -> None:
    with OTLPTestReceiver() as backend:
        process, url = start_collect(
            tmp_path,
            "--otlp-endpoint",
            backend.url,
            "--quiet-period",
            "60",
            "--emit",
            "events",
            "--semconv-proposals",
        )
        try:
            export(url)
        finally:
            code, err = stop(process)
        assert code == 0, err
        assert not [s for s in backend.spans if s.name.startswith("evaluation ")]
        (event,) = backend.events()
        assert event.attributes["gen_ai.evaluation.evaluator.id"] == "grounded"
        assert event.attributes["gen_ai.evaluation.evaluator.type"] == "deterministic"
        assert event.attributes["gen_ai.evaluation.target"] == "weather"


def test_the_drain_deadline_says_what_it_left(tmp_path: Path) -> None:
    process, url = start_collect(tmp_path, "--quiet-period", "0.2", "--drain-timeout", "1", sleep=8)
    try:
        export(url)
        time.sleep(1.0)  # assembled and handed to the (slow) scorer
    finally:
        code, err = stop(process)
    assert code == 1, err
    assert "left at the drain deadline" in err
    assert "dropped 1 {'shutdown': 1}" in err
    assert "Traceback" not in err


def test_usage_errors_are_one_line_with_exit_code_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "collect_scorers.py").write_text(SCORERS.replace("SLEEP", "0"), encoding="utf-8")
    monkeypatch.delenv("COLLECT_TOKEN", raising=False)
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    cases = [
        (["--listen", "nowhere"], "--listen must look like HOST:PORT"),
        (["--listen", "127.0.0.1:0", "--token-env", "COLLECT_TOKEN"], "$COLLECT_TOKEN is not set"),
        (
            ["--listen", "127.0.0.1:14319", "--otlp-endpoint", "http://127.0.0.1:14319"],
            "this receiver itself",
        ),
        (["--listen", "127.0.0.1:0", "--forward", "ftp://x"], "--forward must be an http(s) URL"),
        (
            ["--listen", "127.0.0.1:0", "--broker", "redis://127.0.0.1:1/0", "--emit", "spans"],
            "the workers emit the scores",
        ),
    ]
    for extra, message in cases:
        assert main(["collect", "collect_scorers:scorers", *extra]) == 2
        err = capsys.readouterr().err
        assert message in err
        assert err.count("\n") == 1, err
    with pytest.raises(SystemExit) as exited:  # argparse's own error: usage, then the reason
        main(["collect", "collect_scorers:scorers", "--emit", "logs"])
    assert exited.value.code == 2
    assert "argument --emit: unknown signal 'logs'; use spans, events or both" in (
        capsys.readouterr().err
    )
    assert main(["collect", "missing_module:scorers"]) == 2
    assert "cannot import 'missing_module'" in capsys.readouterr().err
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["collect", "collect_scorers:scorers", "--listen", f"127.0.0.1:{port}"]) == 2
        assert "cannot listen there" in capsys.readouterr().err


def test_the_otel_variables_say_where_the_scores_go(tmp_path: Path) -> None:
    with OTLPTestReceiver() as backend:
        environment = {"OTEL_EXPORTER_OTLP_ENDPOINT": backend.url, "OTEL_SERVICE_NAME": "scoring"}
        process, url = start_collect(tmp_path, "--quiet-period", "0.2", env=environment)
        try:
            export(url)
        finally:
            code, err = stop(process)
        assert code == 0, err
        [score] = [s for s in backend.spans if s.name == "evaluation grounded"]
        assert score.service_name == "scoring"
