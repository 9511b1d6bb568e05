"""The worker's OpenTelemetry setup from OTEL_* variables: which exporter each signal gets
(the logs carry the gen_ai.evaluation.result events), and an endpoint that replaces the
variables."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk._logs.export import ConsoleLogRecordExporter
from opentelemetry.sdk.metrics.export import ConsoleMetricExporter

from livescore._errors import LivescoreError
from livescore.fleet._otel_env import _exporter


def test_each_signal_gets_the_exporter_its_variable_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_LOGS_EXPORTER", "console")
    monkeypatch.setenv("OTEL_METRICS_EXPORTER", "console")
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "none")
    assert isinstance(_exporter("LOGS"), ConsoleLogRecordExporter)
    assert isinstance(_exporter("METRICS"), ConsoleMetricExporter)
    assert _exporter("TRACES") is None
    monkeypatch.setenv("OTEL_LOGS_EXPORTER", "kafka")
    with pytest.raises(LivescoreError, match="OTEL_LOGS_EXPORTER='kafka'"):
        _exporter("LOGS")


def test_an_endpoint_names_each_signals_otlp_path(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OTEL_LOGS_EXPORTER", "OTEL_TRACES_EXPORTER"):
        monkeypatch.delenv(name, raising=False)
    logs = _exporter("LOGS", "http://127.0.0.1:4318")
    spans = _exporter("TRACES", "http://127.0.0.1:4318/")
    try:
        assert isinstance(logs, OTLPLogExporter)
        assert logs._endpoint == "http://127.0.0.1:4318/v1/logs"
        assert isinstance(spans, OTLPSpanExporter)
        assert spans._endpoint == "http://127.0.0.1:4318/v1/traces"
    finally:
        logs.shutdown()
        spans.shutdown()


@pytest.mark.parametrize(("events", "expected"), [(True, "LoggerProvider"), (False, "none")])
def test_a_logger_provider_only_when_the_worker_emits_events(events: bool, expected: str) -> None:
    # configure_from_env sets global providers (once per process): a fresh interpreter.
    code = textwrap.dedent(
        f"""
        import os
        os.environ["OTEL_TRACES_EXPORTER"] = os.environ["OTEL_METRICS_EXPORTER"] = "none"
        os.environ["OTEL_LOGS_EXPORTER"] = "none"
        from opentelemetry import _logs
        from livescore.fleet import configure_from_env
        setup = configure_from_env("w1", events={events})
        provider = _logs.get_logger_provider()
        print(type(provider).__name__ if setup.logger_provider is provider else "none")
        setup.shutdown()
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == expected
