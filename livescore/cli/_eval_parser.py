"""The ``livescore eval`` parser: its options, help text and exit codes."""

from __future__ import annotations

import argparse
from typing import Any

from livescore.cli._calibration import add_calibration_argument
from livescore.cli._common import add_command, finite_float, positive_int
from livescore.cli._cost import add_eval_cost_arguments
from livescore.cli._eval_ci import add_ci_arguments
from livescore.cli._export import add_emit_arguments, add_export_arguments
from livescore.cli._judge_options import add_judge_arguments
from livescore.cli._redact import add_redact_argument
from livescore.scorers import scorer_catalog

__all__ = ("add_eval_parser",)


def add_eval_parser(sub: Any) -> None:
    """Add the ``eval`` sub-command to ``sub`` (the parser's sub-parsers)."""
    catalog = "\n".join(
        f"  {entry.usage():<34} {entry.summary}"
        + (" [judge]" if entry.needs_judge else "")
        + (f"\n  {'':<34} ARG {entry.argument}" if entry.argument else "")
        for entry in scorer_catalog()
    )
    p = add_command(
        sub,
        "eval",
        help="score a JSON-lines dataset (ready outputs, or inputs run through a target)",
        description=(
            "Score each line of DATA with the chosen scorers. A line is a JSON object with\n"
            "input and output (ready answers) plus optional context (string or list),\n"
            "ground_truth and id; or, with --target, just the input. A line with turns (a list\n"
            "of input/output objects, each with optional tool_calls) is a conversation: the\n"
            "conversation scorers judge it whole, the others its last turn. The hallucination\n"
            "benchmark format (question, context, output, hallucinated 0/1) is read too, and\n"
            "its labels give judge-quality figures (accuracy, precision, recall, F1, AUROC);\n"
            "so do other 0/1 defect labels a scorer predicts (toxic, biased, irrelevant) or\n"
            "that --label names.\n"
            "A line may also carry steps (the run's model turns and tool calls, as an --out\n"
            "record has them), so tool scorers and checks score a dataset; an --out file is\n"
            "read back as a dataset. Bad lines are reported with their number (the first few,\n"
            "then a count) and skipped; other fields are kept as metadata (and named once).\n\n"
            f"scorers (--scorer NAME[:ARG]):\n{catalog}"
        ),
        epilog=(
            "The judge endpoint comes from --base-url / OPENAI_BASE_URL and the key from\n"
            "OPENAI_API_KEY (any OpenAI-compatible server).\n\n"
            "exit codes:\n"
            "  0    scored, and every --fail-* check passed (a --baseline change that is not\n"
            "       significant passes --fail-on-regression)\n"
            "  1    nothing could be scored (every score failed or was skipped, or no usable\n"
            "       line); a --fail-on-error / --fail-on-bad-lines / --fail-under /\n"
            "       --fail-over check failed; the judge became unreachable or refused\n"
            "       every call (an unknown model, a refused key: the run stops early,\n"
            "       keeping what was scored); an output could not be written (the\n"
            "       others still are); or spans or dashboard scores were not delivered\n"
            "       (--otlp-endpoint, --phoenix, --langfuse: one line says what and why);\n"
            "       or --max-cost refused to start or stopped the run (its outputs are marked\n"
            "       partial); or --fail-on-regression found a scorer significantly worse\n"
            "       than in --baseline (at 5 %), or --summary-md could not be written\n"
            "  2    usage error: bad option or scorer, no judge model, a --base-url that is\n"
            "       not http(s), a --label no line has, unreadable data, an output path that\n"
            "       cannot be written or that is an input (checked before scoring)\n"
            "  130  interrupted (Ctrl-C, which stops within a few seconds whatever the\n"
            "       target is doing; a second one skips the wait): the items scored so far\n"
            "       are in --out, and --report is written and marked partial\n\n"
            "--out and --report are written to a temporary file beside the path and renamed\n"
            "onto it when complete (a failed run leaves the old file); a path that is a\n"
            "symbolic link is followed (the file it points to is replaced, the link stays).\n\n"
            "example: livescore eval data/hallucination/halueval_qa_200.jsonl \\\n"
            "  --scorer hallucination --model openai/gpt-4o-mini --limit 50 --report report.html"
        ),
    )
    _add_data_arguments(p)
    _add_label_arguments(p)
    _add_check_arguments(p)
    export = p.add_argument_group("export (traces and scores into your dashboards)")
    add_export_arguments(export)
    add_emit_arguments(export)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    from livescore.cli._eval import run_eval_command

    return run_eval_command(args)


def _add_data_arguments(p: Any) -> None:
    """The data, the scorers, the judge and cost, the target; then the outputs."""
    p.add_argument(
        "data",
        metavar="DATA.jsonl",
        nargs="?",
        help="the dataset, one JSON object per line ('-' reads it from standard input)",
    )
    p.add_argument(
        "--traces",
        metavar="FILE",
        help="score the agent runs of stored OpenTelemetry traces instead of DATA: OTLP JSON, "
        "one export request per line (the Collector's file exporter); with --otlp-endpoint "
        "the scores nest under the stored runs' spans. resourceLogs lines in it (the log "
        "records that hold the messages when content is captured in events) are joined to "
        "their spans",
    )
    p.add_argument(
        "--logs",
        metavar="FILE",
        help="with --traces: the log records in a file of their own (OTLP JSON resourceLogs "
        "lines, as the Collector's file exporter writes a logs pipeline)",
    )
    p.add_argument(
        "--scorer",
        action="append",
        metavar="NAME[:ARG]",
        help="a scorer to run (repeatable; see the list above); default: keyword-coverage, "
        "plus hallucination when a judge model is configured",
    )
    judge = p.add_argument_group("judge (for the scorers marked [judge])")
    add_judge_arguments(judge)
    cost = p.add_argument_group("judge cost")
    add_eval_cost_arguments(cost)
    p.add_argument(
        "--keyword-reference",
        choices=("input", "ground_truth"),
        default=None,
        help="keyword coverage's reference, same as --scorer keyword-coverage:REFERENCE",
    )
    p.add_argument(
        "--target",
        metavar="MODULE:ATTR",
        help="produce outputs with this callable, or an agent an installed integration runs "
        "(a LangChain Runnable with livescore-langchain)",
    )
    p.add_argument(
        "--concurrency", type=positive_int, default=4, help="items in flight (default: 4)"
    )
    p.add_argument(
        "--broker",
        metavar="URL",
        help="score on the worker fleet (livescore worker) behind this Redis URL instead of "
        "here; the workers need scorers with the same ids, and judge with their own judge "
        "(no --model needed here)",
    )
    p.add_argument(
        "--limit", type=positive_int, metavar="N", help="score only the first N usable lines"
    )
    _add_output_arguments(p)


def _add_output_arguments(p: Any) -> None:
    """--out, --report, and personal data in them."""
    p.add_argument(
        "--out",
        metavar="RESULTS.jsonl",
        help="write one JSON result per item, as each finishes (data order at the end): "
        "the item's fields (each output once), its steps and its scores; it reads back as a "
        "dataset",
    )
    p.add_argument("--report", metavar="REPORT.html", help="write a self-contained HTML report")
    add_redact_argument(
        p,
        placeholders_in="--out, --report and the exported scores hold the placeholders "
        "(needs the pii extra)",
    )
    p.add_argument(
        "--restore",
        action="store_true",
        help="with --redact: write the original values back into the --out file (mapped "
        "back on this machine, for your own disk; the judge, the exported scores and "
        "--report keep the placeholders)",
    )


def _add_label_arguments(p: Any) -> None:
    """Labelled data: the threshold, the label, calibration."""
    p.add_argument(
        "--threshold",
        type=finite_float,
        default=0.5,
        help="labelled data: for a scorer where higher is worse, a score at or above this "
        "predicts the label (hallucinated, toxic…); where higher is better (faithfulness), a "
        "score at or below it; must lie in the scorer's score range (default: 0.5)",
    )
    p.add_argument(
        "--label",
        metavar="FIELD",
        help="labelled data: the 0/1 field that marks a defect (1 = bad), to measure every "
        "selected judge scorer against; default: each scorer's own label (hallucinated for "
        "hallucination and faithfulness, toxic for toxicity, biased for bias, irrelevant for "
        "answer-relevancy); a field no line has, or no judge scorer, is a usage error",
    )
    p.add_argument(
        "--calibrate",
        metavar="CALIBRATION.json",
        help="labelled data: fit each scorer measured against the label (--label FIELD, or "
        "the one label the scorers predict) on half the labelled items, per judge model: "
        "the threshold with the best balanced accuracy and, for scores of more than two "
        "values, an isotonic map to the label's probability; report it on the other half "
        "and write it here, for --calibration",
    )
    add_calibration_argument(
        p, extra="with --broker, give it to livescore worker (the workers score)"
    )


def _add_check_arguments(p: Any) -> None:
    """The checks for CI."""
    checks = p.add_argument_group("checks for CI (exit 1 when one fails)")
    checks.add_argument(
        "--fail-on-error",
        action="store_true",
        help="fail when any item or score failed (skipped scores do not count)",
    )
    checks.add_argument(
        "--fail-on-bad-lines",
        action="store_true",
        help="fail when any line of DATA was skipped (invalid JSON, no input…)",
    )
    checks.add_argument(
        "--fail-under",
        action="append",
        default=[],
        metavar="[SCORER=]MEAN",
        help="fail when a scorer's mean is below MEAN; without SCORER=, every scorer where "
        "higher is better (repeatable)",
    )
    checks.add_argument(
        "--fail-over",
        action="append",
        default=[],
        metavar="[SCORER=]MEAN",
        help="fail when a scorer's mean is above MEAN; without SCORER=, every scorer where "
        "higher is worse, e.g. hallucination (repeatable)",
    )
    add_ci_arguments(checks, p)
