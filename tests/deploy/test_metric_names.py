"""The names table of docs/dashboards/alerts.md is what OpenTelemetry's Prometheus exporter
writes for livescore's metrics: every series and label it lists, from a real exposition of
the real emitter's metrics."""

from __future__ import annotations

import re

from opentelemetry.exporter.prometheus import PrometheusMetricReader
from opentelemetry.sdk.metrics import MeterProvider
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_support import ROOT

from livescore import Run, ScoreResult
from livescore.judges import JudgeUsage
from livescore.otel import OTelEmitter

PAGE = ROOT / "docs" / "dashboards" / "alerts.md"


def _table() -> list[tuple[list[str], list[str]]]:
    """(series, labels) per row of the names table."""
    text = PAGE.read_text(encoding="utf-8")
    section = text.split("### Names and units", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not cells[0].startswith("`livescore."):
            continue
        rows.append((re.findall(r"`([^`]+)`", cells[2]), re.findall(r"`([^`]+)`", cells[3])))
    return rows


def _exposition() -> str:
    registry = CollectorRegistry()
    provider = MeterProvider(metric_readers=[PrometheusMetricReader(registry=registry)])
    emitter = OTelEmitter(meter_provider=provider, emit="events")
    usage = JudgeUsage(calls=1, input_tokens=900, output_tokens=20, latency_s=0.8, cost_usd=0.002)
    emitter.emit(
        Run(run_id="r1"),
        ScoreResult(
            run_id="r1", scorer_id="faith", score=0.3, judge_model="judge-model", usage=usage
        ),
        sample_rate=0.05,
    )
    emitter.emit(
        Run(run_id="r2"),
        ScoreResult(run_id="r2", scorer_id="faith", status="failed", error_type="timeout"),
        sample_rate=0.05,
    )
    emitter.record_dropped("faith", "queue_full")
    emitter.observe_queue_depth(lambda: [(3, {"livescore.dispatcher": "d"})])
    try:
        return generate_latest(registry).decode()
    finally:
        provider.shutdown()


def test_the_docs_table_names_what_the_exporter_writes() -> None:
    rows = _table()
    assert len(rows) == 6, rows
    text = _exposition()
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    for series, labels in rows:
        assert series, rows
        for name in series:
            assert any(re.match(rf"{re.escape(name)}[{{ ]", line) for line in lines), (
                f"{name} is not in the exposition:\n{text}"
            )
        for label in labels:
            assert any(
                line.startswith(tuple(f"{s}{{" for s in series)) and f"{label}=" in line
                for line in lines
            ), f"no {series} series has the label {label}:\n{text}"
