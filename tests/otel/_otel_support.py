"""The real OpenTelemetry SDK with in-memory exporters, and readers for what it caught."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


@dataclass
class InMemoryOTel:
    tracer_provider: TracerProvider
    exporter: InMemorySpanExporter
    meter_provider: MeterProvider
    reader: InMemoryMetricReader
    logger_provider: LoggerProvider
    log_exporter: InMemoryLogRecordExporter

    @classmethod
    def create(cls) -> InMemoryOTel:
        exporter = InMemorySpanExporter()
        tracer_provider = TracerProvider()
        tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
        reader = InMemoryMetricReader()
        meter_provider = MeterProvider(metric_readers=[reader])
        log_exporter = InMemoryLogRecordExporter()
        logger_provider = LoggerProvider()
        logger_provider.add_log_record_processor(SimpleLogRecordProcessor(log_exporter))
        return cls(tracer_provider, exporter, meter_provider, reader, logger_provider, log_exporter)

    def events(self) -> list[Any]:
        """The ``gen_ai.evaluation.result`` log records (SDK ``LogRecord`` objects)."""
        return [
            r.log_record
            for r in self.log_exporter.get_finished_logs()
            if r.log_record.event_name == "gen_ai.evaluation.result"
        ]

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def eval_spans(self) -> list[ReadableSpan]:
        return [
            s
            for s in self.spans()
            if (s.attributes or {}).get("gen_ai.operation.name") == "evaluation"
        ]

    def points(self, name: str) -> list[Any]:
        """Every data point of the metric ``name`` (empty when it was never recorded)."""
        data = self.reader.get_metrics_data()
        found: list[Any] = []
        if data is None:
            return found
        for rm in data.resource_metrics:
            for sm in rm.scope_metrics:
                for metric in sm.metrics:
                    if metric.name == name:
                        found.extend(metric.data.data_points)
        return found

    def counts(self, name: str, *keys: str) -> dict[tuple[Any, ...], int]:
        """A counter's values keyed by the given attributes."""
        return {tuple(p.attributes.get(k) for k in keys): p.value for p in self.points(name)}

    def shutdown(self) -> None:
        self.tracer_provider.shutdown()
        self.meter_provider.shutdown()
        self.logger_provider.shutdown()
