"""Why a trace gave the run it did, or none: what ``livescore traces inspect`` prints.

For each trace: the runs assembled from it, where each of their fields was read (span,
attribute, convention) and what a scorer is given (the input and output text, the context
judge scorers check the answer against, the reason a run is skipped); for a trace without a
run, why not.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from livescore.runs import (
    NO_INPUT_METADATA_KEY,
    NOT_SCORABLE_METADATA_KEY,
    get_assistant_message,
    get_run_context,
    get_user_message,
)
from livescore.traces._assemble import AssembledRun, assemble_trace
from livescore.traces._readers import read_span
from livescore.traces._span import SpanRecord

__all__ = ("RunReport", "TraceReport", "explain_traces")


@dataclass(slots=True)
class RunReport:
    """One run of a trace and what its scorers get.

    Attributes:
        assembled: The run and where each of its fields came from.
        input_text: The user text scorers read (``None``: none found).
        output_text: The answer text scorers read (``None``: none found).
        context: The context judge scorers check the answer against (tool results,
            retrieved documents), one string per item.
        skipped: Why scorers skip the run (no output), else ``None``.
        no_input: Why scorers that need the input skip it, else ``None``.
    """

    assembled: AssembledRun
    input_text: str | None
    output_text: str | None
    context: list[str]
    skipped: str | None = None
    no_input: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form (``livescore traces inspect --json``)."""
        run = self.assembled.run
        return {
            "span_id": run.span_id,
            "name": run.name,
            "input": self.input_text,
            "output": self.output_text,
            "context": self.context,
            "conversation_id": run.conversation_id,
            "tools": [s.name for s in run.steps if s.kind == "tool"],
            "skipped": self.skipped,
            "no_input": self.no_input,
            "truncated": [
                k[: -len("_truncated")] for k in run.metadata if k.endswith("_truncated")
            ],
            "sources": {
                name: {
                    "span": source.span_name,
                    "span_id": source.span_id,
                    "attribute": source.attribute,
                    "convention": source.convention,
                    "quality": source.quality,
                }
                for name, source in self.assembled.sources.items()
            },
        }


@dataclass(slots=True)
class TraceReport:
    """One trace: its runs, or why it has none.

    Attributes:
        trace_id: The trace.
        spans: How many spans it holds.
        conventions: How many of its spans each reader read (``unknown``: none did).
        kinds: How many spans of each kind (``agent``, ``model``, ``tool``, ``retriever``).
        runs: Its runs.
        no_run: Why it has no run (``None`` when it has some).
    """

    trace_id: str
    spans: int
    conventions: dict[str, int]
    kinds: dict[str, int]
    runs: list[RunReport] = field(default_factory=list)
    no_run: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form."""
        return {
            "trace_id": self.trace_id,
            "spans": self.spans,
            "conventions": self.conventions,
            "kinds": self.kinds,
            "runs": [r.to_dict() for r in self.runs],
            "no_run": self.no_run,
        }


def explain_traces(spans: Iterable[SpanRecord]) -> list[TraceReport]:
    """A report per trace in ``spans``, in the order the traces first appear.

    Example:
        >>> span = SpanRecord("1" * 32, "2" * 16, None, "GET /health", 0, 1, {"http.method": "GET"})
        >>> print(explain_traces([span])[0].no_run)
        no span speaks a convention livescore reads (1 span; the root 'GET /health' has \
attributes http.method)
    """
    traces: dict[str, list[SpanRecord]] = {}
    for span in spans:
        traces.setdefault(span.trace_id, []).append(span)
    return [_explain(trace_id, trace) for trace_id, trace in traces.items()]


def _explain(trace_id: str, spans: list[SpanRecord]) -> TraceReport:
    readings = {span.span_id: read_span(span) for span in spans}  # read once, used twice
    conventions = Counter(reading.convention for reading in readings.values())
    kinds: Counter[str] = Counter(r.kind for r in readings.values() if r.kind is not None)
    report = TraceReport(trace_id, len(spans), dict(conventions), dict(kinds))
    for assembled in assemble_trace({span.span_id: span for span in spans}, readings):
        run = assembled.run
        report.runs.append(
            RunReport(
                assembled,
                input_text=_text(get_user_message, run),
                output_text=_text(get_assistant_message, run),
                context=get_run_context(run),
                skipped=_said(run.metadata.get(NOT_SCORABLE_METADATA_KEY)),
                no_input=_said(run.metadata.get(NO_INPUT_METADATA_KEY)),
            )
        )
    if not report.runs:
        report.no_run = _why_no_run(spans, conventions, kinds)
    return report


def _text(find: Any, run: Any) -> str | None:
    try:
        found = find(run)
    except TypeError:
        return None
    return found if isinstance(found, str) else None


def _said(value: Any) -> str | None:
    return str(value) if value else None


def _why_no_run(spans: list[SpanRecord], conventions: Counter[str], kinds: Counter[str]) -> str:
    ids = {s.span_id for s in spans}
    roots = [s for s in spans if s.parent_span_id is None or s.parent_span_id not in ids]
    root = min(roots or spans, key=lambda s: (s.start_ns, s.end_ns))
    if set(conventions) == {"unknown"}:
        keys = sorted(root.attributes)
        shown = ", ".join(keys[:8]) + (", …" if len(keys) > 8 else "") if keys else "none"
        return (
            f"no span speaks a convention livescore reads ({len(spans)} span"
            f"{'s' if len(spans) != 1 else ''}; the root {root.name!r} has attributes {shown})"
        )
    seen = ", ".join(f"{kind} ×{count}" for kind, count in sorted(kinds.items())) or "none"
    missing_root = (
        f"; the trace's root is missing (span {root.name!r} names a parent "
        f"{root.parent_span_id} that never arrived)"
        if root.parent_span_id is not None and not root.parent_is_remote
        else ""
    )
    return (
        "no agent span, and no root span that holds an input and an output or has model "
        f"calls beneath it (span kinds read: {seen}){missing_root}"
    )
