"""``livescore traces inspect``: what livescore reads in stored traces, and why."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from livescore.cli._common import EXIT_OK, UsageError, add_command, make_console

if TYPE_CHECKING:
    from rich.console import Console

    from livescore.traces import RunReport, TraceReport

__all__ = ("add_traces_parser", "print_trace_report")

_SHOWN = 160  # characters of a text shown before it is cut (the full text is in --json)


def add_traces_parser(sub: Any) -> None:
    """Add the ``traces`` sub-command (``traces inspect``) to ``sub``."""
    p = sub.add_parser(
        "traces",
        help="see what livescore reads in OpenTelemetry traces (and why a run is not scored)",
        description="Tools for the traces livescore reads.",
    )
    verbs = p.add_subparsers(dest="verb", metavar="{inspect}", required=True)
    inspect = add_command(
        verbs,
        "inspect",
        help="print, for each trace of a file, the run it gives or why none",
        description=(
            "Read an OTLP JSON traces file (what the OpenTelemetry Collector's file exporter\n"
            "writes, one request per line; the input of 'livescore eval --traces') and print,\n"
            "for each trace, the run livescore assembles from it or why none: which span and\n"
            "attribute each field came from, and what scorers are given (the input and\n"
            "output text, the context judge scorers check the answer against, the reason a\n"
            "run is skipped)."
        ),
        epilog=(
            "exit codes:\n"
            "  0  the file was read (whether or not its traces give runs)\n"
            "  2  the file cannot be read\n\n"
            "example: livescore traces inspect traces.jsonl"
        ),
    )
    inspect.add_argument("file", type=Path, metavar="FILE", help="an OTLP JSON traces file")
    inspect.add_argument(
        "--json", action="store_true", help="one JSON object per trace, with texts in full"
    )
    inspect.set_defaults(handler=run_inspect_command)


def run_inspect_command(args: argparse.Namespace) -> int:
    from livescore.traces import explain_traces, read_spans

    try:
        spans, rejected, problems = read_spans(args.file)
    except OSError as exc:
        raise UsageError(f"cannot read {str(args.file)!r}: {exc.strerror or exc}") from exc
    reports = explain_traces(spans)
    console = make_console()
    if args.json:
        for report in reports:
            console.out(json.dumps(report.to_dict(), ensure_ascii=False), highlight=False)
    else:
        for report in reports:
            print_trace_report(console, report)
    err = make_console(stderr=True)
    for problem in problems:
        err.print(f"{args.file}: {problem}", markup=False)
    if rejected:
        err.print(f"{args.file}: {rejected} span(s) with an invalid trace or span id left out")
    runs = sum(len(r.runs) for r in reports)
    err.print(
        f"{len(reports)} trace(s), {len(spans)} span(s): {runs} run(s), "
        f"{sum(1 for r in reports if not r.runs)} trace(s) without a run",
        markup=False,
    )
    return EXIT_OK


def _cut(text: str | None, *, quoted: bool = True) -> str:
    if text is None:
        return "(none)"
    flat = " ".join(text.split())
    flat = flat if len(flat) <= _SHOWN else flat[: _SHOWN - 1] + "…"
    return json.dumps(flat, ensure_ascii=False) if quoted else flat


def print_trace_report(console: Console, report: TraceReport) -> None:
    """One trace's report, as ``livescore traces inspect`` (and ``collect --explain``) print it."""
    read = ", ".join(f"{name} ×{n}" for name, n in sorted(report.conventions.items()))
    console.print(f"trace {report.trace_id}: {report.spans} span(s), read as {read}", markup=False)
    if report.no_run is not None:
        console.print(f"  no run: {report.no_run}", markup=False)
    for run in report.runs:
        _print_run(console, run)
    console.print()


def _print_run(console: Console, report: RunReport) -> None:
    run = report.assembled.run
    sources = report.assembled.sources

    def line(label: str, value: str, source: str | None = None) -> None:
        where = f"  ← {sources[source]}" if source in sources else ""
        console.print(f"    {label:<13}{value}{where}", markup=False)

    console.print(f"  run {run.name!r} (span {run.span_id})", markup=False)
    line("input", _cut(report.input_text), "input")
    line("output", _cut(report.output_text), "output")
    for step in run.steps:
        if step.kind == "tool" and step.tool_call is not None:
            result = step.tool_call.result
            shown = _cut(result if isinstance(result, str) else json.dumps(result, default=str))
            line("tool", f"{step.name} → {shown}", f"tool {step.name}")
        elif step.kind == "retriever":
            line("retrieval", f"{step.name}: {len(step.documents)} document(s)")
    if run.conversation_id:
        line("conversation", run.conversation_id, "conversation_id")
    console.print(
        f"    {'context':<13}{len(report.context)} item(s) for judge scorers", markup=False
    )
    for item in report.context:
        console.print(f"      - {_cut(item, quoted=False)}", markup=False)
    for name in ("input", "output"):
        if run.metadata.get(f"{name}_truncated"):
            console.print(
                f"    note: the {name} was cut short by the instrumentation", markup=False
            )
    if report.skipped:
        console.print(f"    skipped by every scorer: {report.skipped}", markup=False)
    elif report.no_input:
        console.print(
            f"    skipped by scorers that need the input: {report.no_input}", markup=False
        )
