"""``--metrics-port``: ``livescore collect`` serves its metrics for Prometheus (a real process,
scraped over HTTP on 127.0.0.1); a bad or taken port is a one-line usage error.
(``livescore worker --metrics-port`` is scraped by a real Prometheus in
tests/fleet/test_fleet_alerts.py.)"""

from __future__ import annotations

import socket
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from livescore.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "traces"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "collect"))
from _collect_process import SCORERS, start_collect, stop
from _trace_support import genai_tool_run


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        return str(response.read().decode())


def test_collect_serves_the_scores_metrics_for_prometheus(tmp_path: Path) -> None:
    port = _free_port()
    process, url = start_collect(
        tmp_path, "--quiet-period", "0.2", "--metrics-port", f"127.0.0.1:{port}"
    )
    try:
        provider = TracerProvider()
        provider.add_span_processor(
            SimpleSpanProcessor(OTLPSpanExporter(endpoint=url + "/v1/traces"))
        )
        genai_tool_run(provider, question="Weather in Lyon?", answer="It is sunny in Lyon.")
        provider.shutdown()
        deadline = time.monotonic() + 60
        text = _scrape(port)
        while 'livescore_status="scored"' not in text and time.monotonic() < deadline:
            time.sleep(0.3)
            text = _scrape(port)
    finally:
        code, err = stop(process)
    assert code == 0, err
    # Names and labels as OpenTelemetry's Prometheus exporter writes them (docs/alerts.md).
    scored = [line for line in text.splitlines() if line.startswith("livescore_runs_total{")]
    assert any(
        'livescore_scorer_id="grounded"' in line and 'livescore_status="scored"' in line
        for line in scored
    ), text
    assert 'livescore_score_bucket{gen_ai_evaluation_name="grounded",le="0.5"' in text
    assert 'livescore_score_count{gen_ai_evaluation_name="grounded"' in text
    assert "# TYPE livescore_score histogram" in text
    # The collect process's resource, as the exporter's target_info.
    assert 'service_name="livescore-collect"' in text


def test_a_bad_or_taken_metrics_port_is_a_one_line_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "collect_scorers.py").write_text(SCORERS.replace("SLEEP", "0"), encoding="utf-8")
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(SystemExit) as exited:
        main(["collect", "collect_scorers:scorers", "--metrics-port", "ninety"])
    assert exited.value.code == 2
    assert "--metrics-port: expected PORT or HOST:PORT, not 'ninety'" in capsys.readouterr().err
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code = main(
            [
                "collect",
                "collect_scorers:scorers",
                "--listen",
                "127.0.0.1:0",
                "--metrics-port",
                f"127.0.0.1:{port}",
            ]
        )
        err = capsys.readouterr().err
    assert code == 2
    assert f"--metrics-port: cannot listen on 127.0.0.1:{port}" in err
    assert err.count("\n") == 1, err
