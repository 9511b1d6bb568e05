"""Runs from OpenTelemetry traces: any agent that describes its runs as spans.

One place turns spans into :class:`~livescore.Run` records, whichever way they arrive:
in process (``livescore.LiveScoringSpanProcessor``), over OTLP/HTTP
(``livescore collect``) or from a file of stored traces (:func:`load_traces`,
``livescore eval --traces``); log records that belong to a span (message content captured
in events) are joined to it as its events. It reads both conventions agents are traced
with: the OpenTelemetry GenAI semantic conventions (``invoke_agent`` / ``chat`` /
``execute_tool`` spans, ``gen_ai.input.messages``…) and OpenInference (``AGENT`` /
``LLM`` / ``TOOL`` / ``RETRIEVER`` spans, ``input.value``, ``llm.input_messages.*``…).

This package imports neither the OpenTelemetry SDK nor anything above
:mod:`livescore.runs`; protobuf payloads need ``opentelemetry-proto``, imported on use.

Example:
    >>> from livescore.traces import SpanRecord, runs_from_spans
    >>> span = SpanRecord("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", None,
    ...     "ToolCallingAgent.run", 0, 9, {"openinference.span.kind": "AGENT",
    ...     "input.value": "What is 2+2?", "output.value": "4"})
    >>> [(run.input, run.output) for run in runs_from_spans([span])]
    [('What is 2+2?', '4')]
"""

from livescore._errors import OTLPDecodeError
from livescore.traces._assemble import (
    NO_CONTENT_REASON,
    AssembledRun,
    AssemblyLimits,
    AssemblyStats,
    FieldSource,
    TraceAssembler,
    assemble_runs,
    build_run,
    runs_from_spans,
)
from livescore.traces._explain import RunReport, TraceReport, explain_traces
from livescore.traces._files import (
    StoredRuns,
    StoredTraces,
    TraceFileProblem,
    load_traces,
    open_stored_runs,
    read_spans,
)
from livescore.traces._otlp import (
    DecodedLogs,
    DecodedSpans,
    LogEvent,
    decode_otlp_json,
    decode_otlp_logs_json,
    decode_otlp_logs_protobuf,
    decode_otlp_protobuf,
    from_log_record,
    from_readable_span,
)
from livescore.traces._span import SpanEvent, SpanRecord

__all__ = (
    "NO_CONTENT_REASON",
    "AssembledRun",
    "AssemblyLimits",
    "AssemblyStats",
    "DecodedLogs",
    "DecodedSpans",
    "FieldSource",
    "LogEvent",
    "OTLPDecodeError",
    "RunReport",
    "SpanEvent",
    "SpanRecord",
    "StoredRuns",
    "StoredTraces",
    "TraceAssembler",
    "TraceFileProblem",
    "TraceReport",
    "assemble_runs",
    "build_run",
    "decode_otlp_json",
    "decode_otlp_logs_json",
    "decode_otlp_logs_protobuf",
    "decode_otlp_protobuf",
    "explain_traces",
    "from_log_record",
    "from_readable_span",
    "load_traces",
    "open_stored_runs",
    "read_spans",
    "runs_from_spans",
)
