"""``livescore collect --console`` and ``--out``: each score as it is made, printed with its
run and written as a results line, from a real ``collect`` process fed over OTLP/HTTP."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from livescore.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "traces"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "collect"))
from _collect_process import SCORERS, start_collect, stop
from _trace_support import GENAI_INPUT, genai_tool_run, user

# A second scorer that fails on an answer without "sunny": the failure's reason must print.
STRICT_SCORERS = (
    SCORERS
    + """
def strict(ctx):
    if "sunny" not in str(ctx.run.output):
        raise ValueError("the answer does not say sunny")
    return 1.0

scorers.append(
    create_scorer(id="strict", description="fails without sunny", generate_score=strict)
)
"""
)


def _provider(url: str) -> TracerProvider:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=url + "/v1/traces")))
    return provider


def _wait_for_lines(path: Path, count: int, timeout: float = 60.0) -> list[str]:
    deadline = time.monotonic() + timeout
    while True:
        lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
        if len(lines) >= count or time.monotonic() > deadline:
            return lines
        time.sleep(0.1)


def test_console_prints_each_score_with_its_run_and_out_writes_it(tmp_path: Path) -> None:
    printed, results = tmp_path / "stdout.txt", tmp_path / "scores.jsonl"
    process, url = start_collect(
        tmp_path,
        "--quiet-period",
        "0.2",
        "--console",
        "--out",
        str(results),
        stdout=printed,
        scorers=STRICT_SCORERS,
    )
    try:
        provider = _provider(url)
        genai_tool_run(provider, question="Weather in Lyon?", answer="It is sunny in Lyon.")
        provider.force_flush()
        # Written while collect runs, not only at its end.
        assert len(_wait_for_lines(results, 2)) == 2
        # A run with a question and no answer at all: skipped, with the reason.
        with provider.get_tracer("agent").start_as_current_span(
            "invoke_agent weather",
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "weather",
                GENAI_INPUT: user("And tomorrow?"),
            },
        ):
            pass
        provider.force_flush()
        assert len(_wait_for_lines(results, 4)) == 4
        genai_tool_run(provider, question="And on Sunday?", answer="It rains.")
        provider.shutdown()
        lines = _wait_for_lines(results, 6)
    finally:
        code, err = stop(process)
    assert code == 0, err
    assert "Traceback" not in err
    # Not exported, and the start-up line says so: no warning that scores go nowhere.
    assert "go nowhere" not in err
    out = printed.read_text(encoding="utf-8")
    run_1, run_2, run_3 = out.split("Run ")[1:]
    assert run_1.startswith("1  invoke_agent weather  trace ")
    assert "question  Weather in Lyon?" in run_1
    assert "answer    It is sunny in Lyon." in run_1
    assert 'execute_tool get_weather({"city": "Lyon"})' in run_1
    assert "→ sunny, 24 °C" in run_1  # the tool's result
    assert "evaluation grounded  score 1.00" in run_1
    assert "evaluation strict  score 1.00" in run_1
    assert run_2.startswith("2  invoke_agent weather")
    assert "answer    (no output)" in run_2
    assert "evaluation grounded  skipped" in run_2
    assert "the trace records no output for this run" in run_2
    assert run_3.startswith("3  invoke_agent weather")
    assert "evaluation strict  failed (ValueError)" in run_3
    assert "the answer does not say sunny" in run_3
    # --out: one results line per score, in the format of livescore eval --out.
    assert len(lines) == 6, lines
    records = [json.loads(line) for line in lines]
    assert [r["index"] for r in records] == list(range(6))
    assert len({(r["run_id"], next(iter(r["scores"]))) for r in records}) == 6
    first = next(r for r in records if r["output"] == "It is sunny in Lyon.")
    assert first["agent"] == "weather"
    assert first["trace_id"]
    assert first["span_id"] == first["run_id"]
    assert any((s.get("tool_call") or {}).get("name") == "get_weather" for s in first["steps"])
    statuses = sorted(
        (r["output"] or "", sid, score["status"])
        for r in records
        for sid, score in r["scores"].items()
    )
    assert statuses == [
        ("", "grounded", "skipped"),
        ("", "strict", "skipped"),
        ("It is sunny in Lyon.", "grounded", "scored"),
        ("It is sunny in Lyon.", "strict", "scored"),
        ("It rains.", "grounded", "scored"),
        ("It rains.", "strict", "failed"),
    ]
    failure = next(
        r["scores"]["strict"]
        for r in records
        if "strict" in r["scores"] and r["output"] == "It rains."
    )
    assert failure["error_type"] == "ValueError"
    assert f"--out: 6 score(s) written to {results}" in err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--out", "{tmp}/no/such/folder/scores.jsonl"],
            "--out {tmp}/no/such/folder/scores.jsonl: cannot write there",
        ),
        (["--out", "{tmp}"], "cannot write there"),
        (
            ["--console", "--broker", "redis://127.0.0.1:1/0"],
            "--console: with --broker the workers score",
        ),
    ],
)
def test_output_usage_errors_are_one_line_before_the_receiver_starts(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "collect_scorers.py").write_text(SCORERS.replace("SLEEP", "0"), encoding="utf-8")
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    args = [a.replace("{tmp}", str(tmp_path)) for a in extra]
    assert main(["collect", "collect_scorers:scorers", "--listen", "127.0.0.1:0", *args]) == 2
    err = capsys.readouterr().err
    assert message.replace("{tmp}", str(tmp_path)) in err
    assert err.count("\n") == 1, err
    assert "receiving OTLP traces" not in err


def test_help_names_both_flags(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["collect", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--console print each score as it is made" in text
    assert "--out FILE write each score as it is made to FILE" in text
