"""``livescore eval``: score a JSON-lines dataset with scorers from the catalog."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import logging
import os
import sys
import threading
import time
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from livescore._catalog import parse_scorer_spec
from livescore._files import AtomicFile, output_target
from livescore._text import escape_lone_surrogates
from livescore.cli._calibration import (
    add_calibration_argument,
    calibrate_scorers,
    calibration_label,
    write_calibration,
)
from livescore.cli._common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    UsageError,
    finite_float,
    make_console,
    positive_int,
)
from livescore.cli._cost import CostPlan, Estimate, add_eval_cost_arguments, apply_judge_prices
from livescore.cli._eval_ci import EvalCi, add_ci_arguments
from livescore.cli._export import Export, add_emit_arguments, add_export_arguments
from livescore.cli._interrupt import CANCEL_GRACE_S, BackgroundRun, Interrupts
from livescore.cli._judge_options import JudgeOptions, add_judge_arguments
from livescore.cli._redact import redactor_from_args
from livescore.scorers import CatalogEntry, ScorerOptions, scorer_catalog

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from livescore.evals import Dataset, EvalResult, ItemResult, QualityRow
    from livescore.scoring import Scorer

__all__ = ("add_eval_parser", "run_eval_command")

DEFAULT_SCORERS = ("keyword-coverage",)
"""Scorers run when ``--scorer`` is not given (judge scorers join when a model is set)."""


# -- options --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Bound:
    """One ``--fail-under`` / ``--fail-over`` rule.

    Attributes:
        scorer: The scorer id it applies to; ``None`` for every scorer of its direction.
        value: The bound on the scorer's mean.
        over: ``True`` for ``--fail-over`` (a mean above fails), else ``--fail-under``.
    """

    scorer: str | None
    value: float
    over: bool

    @classmethod
    def parse(cls, text: str, *, over: bool) -> Bound:
        """``"0.7"`` or ``"hallucination=0.2"``."""
        name, sep, number = text.rpartition("=")
        option = "--fail-over" if over else "--fail-under"
        try:
            value = finite_float(number.strip())
        except argparse.ArgumentTypeError as exc:
            raise UsageError(f"{option} {text!r}: {exc}") from None
        if sep and not name.strip():
            raise UsageError(f"{option} {text!r}: a scorer name goes before '='")
        return cls(name.strip() if sep else None, value, over)

    def option(self) -> str:
        flag = "--fail-over" if self.over else "--fail-under"
        return f"{flag} {self.scorer + '=' if self.scorer else ''}{self.value:g}"


def add_eval_parser(sub: Any) -> None:
    """Add the ``eval`` sub-command to ``sub`` (the parser's sub-parsers)."""
    catalog = "\n".join(
        f"  {entry.usage():<34} {entry.summary}"
        + (" [judge]" if entry.needs_judge else "")
        + (f"\n  {'':<34} ARG {entry.argument}" if entry.argument else "")
        for entry in scorer_catalog()
    )
    p = sub.add_parser(
        "eval",
        help="score a JSON-lines dataset (ready outputs, or inputs run through a target)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
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
    p.add_argument(
        "--out",
        metavar="RESULTS.jsonl",
        help="write one JSON result per item, as each finishes (data order at the end): "
        "the item's fields (each output once), its steps and its scores; it reads back as a "
        "dataset",
    )
    p.add_argument("--report", metavar="REPORT.html", help="write a self-contained HTML report")
    p.add_argument(
        "--redact",
        action="store_true",
        help="replace personal data (names, e-mails, phone numbers, cards, IBANs…) with "
        "placeholders before the judge sees it; --out, --report and the exported scores "
        "hold the placeholders (needs the pii extra)",
    )
    p.add_argument(
        "--restore",
        action="store_true",
        help="with --redact: write the original values back into the --out file (mapped "
        "back on this machine, for your own disk; the judge, the exported scores and "
        "--report keep the placeholders)",
    )
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
    export = p.add_argument_group("export (traces and scores into your dashboards)")
    add_export_arguments(export)
    add_emit_arguments(export)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(handler=run_eval_command)


# -- building what the options name ---------------------------------------------------------


@dataclass(slots=True)
class _Selected:
    entry: CatalogEntry
    scorer: Scorer
    label: str | None = None  # the 0/1 defect label its score predicts on labelled data


def _select_scorers(args: argparse.Namespace, judge_options: JudgeOptions) -> list[_Selected]:
    specs = list(dict.fromkeys(args.scorer or ()))
    if not specs:
        specs = list(DEFAULT_SCORERS)
        if judge_options.configured:
            specs.insert(0, "hallucination")
    parsed: list[tuple[CatalogEntry, str | None]] = []
    for spec in specs:
        try:
            entry, argument = parse_scorer_spec(spec)
        except ValueError as exc:
            raise UsageError(f"--scorer: {exc}") from None
        if entry.name == "keyword-coverage" and argument is None and args.keyword_reference:
            argument = args.keyword_reference
        parsed.append((entry, argument))
    judge = None
    needing = [entry.name for entry, _ in parsed if entry.needs_judge]
    if needing:
        judge = judge_options.resolve()
        if judge is None and getattr(args, "broker", None):
            # Scored on the fleet: the workers' scorers hold the judge; here a scorer only
            # names itself in the jobs.
            judge = _WorkersJudge()
        if judge is None:
            raise UsageError(judge_options.missing_judge_message(needing[0]))
    options = ScorerOptions(model=judge, judge_mode=judge_options.judge_mode)
    selected: list[_Selected] = []
    for entry, argument in parsed:
        try:
            scorer = entry.build(argument, options)
        except ValueError as exc:
            raise UsageError(f"--scorer {entry.name}: {exc}") from None
        if any(s.scorer.id == scorer.id for s in selected):
            raise UsageError(f"two --scorer options build the scorer id {scorer.id!r}")
        # --label measures every judge scorer against one field; code scorers keep theirs.
        label = args.label if args.label and entry.needs_judge else entry.predicts
        selected.append(_Selected(entry, scorer, label))
    return selected


def _left_out_note(
    args: argparse.Namespace, judge_options: JudgeOptions, dataset: Dataset
) -> str | None:
    """The line that says the default scorers leave hallucination out although the data
    could feed it (it has context), for want of a judge; ``None`` when nothing is left out.

    Only for the defaults: scorers named with ``--scorer`` are the user's choice.
    """
    if args.scorer or judge_options.configured:
        return None
    from livescore.runs import Run, get_run_context

    with_context = 0
    for item in dataset.items:
        # Static context, or the tool results and documents of the run's own steps (a
        # results file's steps, a stored trace's run).
        if isinstance(item, Run):
            with_context += bool(get_run_context(item))
        elif isinstance(item, dict):
            steps = item.get("steps")
            with_context += bool(item.get("context")) or bool(
                steps and get_run_context(Run(steps=list(steps)))
            )
    if not with_context:
        return None
    return (
        f"Hallucination scoring is left out: {with_context} of {len(dataset.items)} item(s) "
        f"have context to check the answers against, but "
        f"{judge_options.missing_judge_message('hallucination')}."
    )


class _WorkersJudge:
    """Stands in for the judge of ``--broker`` runs: the workers judge with their own."""

    model_name = "(the workers' judge)"

    async def generate_object(self, **kwargs: Any) -> Any:
        raise RuntimeError("with --broker, scores are judged on the workers")

    async def generate_text(self, **kwargs: Any) -> Any:
        raise RuntimeError("with --broker, scores are judged on the workers")

    async def classify(self, **kwargs: Any) -> Any:
        raise RuntimeError("with --broker, scores are judged on the workers")


def _check_threshold(threshold: float, selected: Sequence[_Selected]) -> None:
    for s in selected:
        low, high = s.entry.score_range
        if s.label and not low <= threshold <= high:
            raise UsageError(
                f"--threshold {threshold:g} is outside the {s.scorer.id} scorer's scores "
                f"({low:g} to {high:g})"
            )


def _check_bounds(bounds: Sequence[Bound], selected: Sequence[_Selected]) -> None:
    by_id = {s.scorer.id: s for s in selected}
    for bound in bounds:
        if bound.scorer is not None:
            if bound.scorer not in by_id:
                raise UsageError(
                    f"{bound.option()}: no scorer {bound.scorer!r} runs "
                    f"(running: {', '.join(by_id)})"
                )
            targets = [by_id[bound.scorer]]
        else:
            targets = [s for s in selected if s.entry.higher_is_better != bound.over]
            if not targets:
                kind = "worse" if bound.over else "better"
                raise UsageError(
                    f"{bound.option()}: none of the scorers ({', '.join(by_id)}) is one where "
                    f"higher is {kind}; name one as SCORER=MEAN"
                )
        for s in targets:
            low, high = s.entry.score_range
            if not low <= bound.value <= high:
                raise UsageError(
                    f"{bound.option()} is outside the {s.scorer.id} scorer's scores "
                    f"({low:g} to {high:g})"
                )


def _load_target(spec: str) -> Any:
    module_name, sep, attr_path = spec.partition(":")
    if not sep or not module_name or not attr_path:
        raise UsageError(f"--target must look like 'module:attribute', not {spec!r}")
    # Like `python -m`, the current directory is importable, so `--target my_agent:agent`
    # works from a project folder.
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        value: Any = importlib.import_module(module_name)
    except Exception as exc:
        raise UsageError(f"--target: cannot import {module_name!r}: {exc}") from exc
    for part in attr_path.split("."):
        try:
            value = getattr(value, part)
        except AttributeError as exc:
            raise UsageError(f"--target: {module_name!r} has no attribute {attr_path!r}") from exc
    from livescore.evals import resolve_target

    try:
        resolve_target(value)
    except TypeError as exc:
        raise UsageError(f"--target {spec}: {exc}") from exc
    return value


def _check_output(option: str, path: Path) -> None:
    """Fail now, before any scoring, if ``path`` cannot be written.

    The check is the write's own: a temporary file created (and removed) in the target's
    folder, the symbolic link, if ``path`` is one, followed.
    """
    import tempfile

    target = output_target(path)
    if target.is_dir():
        raise UsageError(f"{option} {path}: is a directory")
    if not target.parent.is_dir():
        raise UsageError(f"{option} {path}: the folder {target.parent} does not exist")
    if target.exists() and not os.access(target, os.W_OK):
        raise UsageError(f"{option} {path}: the file is read-only")
    try:
        fd, probe = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    except OSError as exc:
        raise UsageError(f"{option} {path}: cannot write there ({exc.strerror or exc})") from exc
    os.close(fd)
    os.unlink(probe)


def _same_file(first: Path, second: Path) -> bool:
    if output_target(first) == output_target(second):
        return True
    try:
        return first.exists() and second.exists() and os.path.samefile(first, second)
    except OSError:
        return False


def _check_outputs(
    out_path: Path | None,
    report_path: Path | None,
    inputs: Sequence[tuple[str, Path]],
) -> None:
    """The output paths are writable, distinct, and none is an input of the command."""
    outputs = [("--out", out_path), ("--report", report_path)]
    for option, path in outputs:
        if path is None:
            continue
        _check_output(option, path)
        for what, source in inputs:
            if _same_file(path, source):
                raise UsageError(
                    f"{option} {path} is {what}: writing there would replace it; "
                    "choose another path"
                )
    if out_path is not None and report_path is not None and _same_file(out_path, report_path):
        raise UsageError(f"--out and --report both name {out_path}: give each its own file")


def _target_source(target: Any) -> Path | None:
    module = sys.modules.get(getattr(target, "__module__", "") or "")
    file = getattr(module, "__file__", None)
    return Path(file) if file else None


# -- writing results ------------------------------------------------------------------------


class _ResultsFile:
    """``--out``: one JSON line per item, written (and flushed) as each item finishes, to a
    temporary file beside the target (so an interrupted run keeps what it scored and a
    failed one leaves the old file alone); renamed onto the target at the end, in data
    order when the run completed. Safe to call from the scoring thread and the main one.

    Only where each line lies is held (its item's index, offset and length in bytes), not
    its text: the lines are put in data order by reading them back, so a file of runs
    costs a few bytes per item in memory."""

    def __init__(self, path: Path, dataset: Dataset, *, restore: bool = False) -> None:
        self.path = path
        self.dataset = dataset
        self.restore = restore  # --restore: the original values, not the placeholders
        self.indices = array("q")
        self.offsets = array("q")
        self.lengths = array("q")
        self.written = 0
        self.error: str | None = None
        self._lock = threading.Lock()
        self._file: AtomicFile | None = AtomicFile(path)

    def add(self, item: ItemResult) -> None:
        record = item.to_dict(include_run=True)
        if self.restore and item.pseudonyms is not None:
            record = item.pseudonyms.restore_value(record)
        record["line"] = self.dataset.lines[item.index]
        for name, column in self.dataset.label_columns.items():
            if column[item.index] is not None:
                record[name] = column[item.index]
        # A lone surrogate (a "\ud800" escape in the data) is written back as its escape.
        text = escape_lone_surrogates(json.dumps(record, ensure_ascii=False, default=str)) + "\n"
        with self._lock:
            file = self._file
            if file is None:  # finished (an interrupted run): too late for this one
                return
            size = len(text.encode("utf-8"))
            self.indices.append(item.index)
            self.offsets.append(self.written)
            self.lengths.append(size)
            self.written += size
            try:
                file.file.write(text)
                file.file.flush()
            except OSError as exc:  # keep scoring; the report may still be written
                self.error = exc.strerror or str(exc)
                file.discard()
                self._file = None

    def discard(self) -> None:
        """Drop what was written: the run did not start (``--max-cost`` refused it), so the
        file at ``path`` is left as it was."""
        with self._lock:
            file, self._file = self._file, None
        if file is not None:
            file.discard()

    def finish(self, *, in_data_order: bool) -> None:
        with self._lock:
            file, self._file = self._file, None
        if file is None:
            return
        try:
            order = sorted(range(len(self.indices)), key=self.indices.__getitem__)
            if not in_data_order or order == list(range(len(order))):
                file.commit()  # in data order already, or what was scored in finishing order
                return
            try:
                file.file.close()
                with open(file.temporary, "rb") as written, AtomicFile(self.path) as ordered:
                    for n in order:
                        written.seek(self.offsets[n])
                        ordered.file.write(written.read(self.lengths[n]).decode("utf-8"))
                    ordered.commit()
            finally:
                file.discard()
        except OSError as exc:
            self.error = exc.strerror or str(exc)


# -- the command ----------------------------------------------------------------------------

_MAX_PROBLEMS_SHOWN = 5
_MAX_FIELDS_SHOWN = 10


@dataclass(slots=True)
class _Stop:
    """Why scoring ended before the last item (``None`` fields: it did not)."""

    interrupted: bool = False
    unreachable: str | None = None  # the judge's description, when its circuit opened

    @property
    def early(self) -> bool:
        return self.interrupted or self.unreachable is not None


def run_eval_command(args: argparse.Namespace) -> int:
    """Run ``livescore eval`` from parsed arguments; returns the exit code."""
    with Interrupts() as interrupts:
        return _run_eval(args, interrupts)


def _run_eval(args: argparse.Namespace, interrupts: Interrupts) -> int:
    from rich.markup import escape

    out, err = make_console(), make_console(stderr=True)
    apply_judge_prices(args.judge_prices)  # before any judge is built
    judge_options = JudgeOptions.from_args(args)
    bounds = [Bound.parse(b, over=False) for b in args.fail_under]
    bounds += [Bound.parse(b, over=True) for b in args.fail_over]
    selected = _select_scorers(args, judge_options)
    if args.label and not any(s.entry.needs_judge for s in selected):
        raise UsageError(
            f"--label {args.label}: it measures judge scorers ([judge] in --help) against the "
            "label, and none is selected"
        )
    _check_threshold(args.threshold, selected)
    _check_bounds(bounds, selected)
    fit_label = (
        calibration_label(args.label, [s.label for s in selected]) if args.calibrate else None
    )
    if args.calibration:
        if args.broker:
            raise UsageError(
                "--calibration: with --broker the workers score: give it to livescore worker"
            )
        calibrated = calibrate_scorers(
            [s.scorer for s in selected], args.calibration, lambda line: err.print(escape(line))
        )
        for s, scorer in zip(selected, calibrated, strict=True):
            s.scorer = scorer
    target = _load_target(args.target) if args.target else None
    if bool(args.data) == bool(args.traces):
        raise UsageError("give a DATA.jsonl file or --traces FILE (one of them)")
    from_stdin = args.data == "-"
    path = Path("<stdin>") if from_stdin else Path(args.data or args.traces)
    out_path = Path(args.out) if args.out else None
    report_path = Path(args.report) if args.report else None
    inputs = [] if from_stdin else [("the traces" if args.traces else "the dataset", path)]
    source = _target_source(target) if target is not None else None
    if source is not None:
        inputs.append(("the --target module's file", source))
    _check_outputs(out_path, report_path, inputs)
    if args.calibrate:
        _check_output("--calibrate", Path(args.calibrate))
        others = [*inputs, ("--out", out_path), ("--report", report_path)]
        for what, other in others:
            if other is not None and _same_file(Path(args.calibrate), other):
                raise UsageError(f"--calibrate {args.calibrate} is {what}: choose another path")
    ci = EvalCi.from_args(
        args,
        [s.scorer.judge for s in selected if s.scorer.judge is not None],
        [("--out", out_path), ("--report", report_path)],
        inputs,
    )

    from livescore.evals import load_dataset

    if args.traces:
        from livescore.cli._traces import load_traces_dataset

        if target is not None:
            raise UsageError("--traces holds finished runs: --target does not apply")
        dataset = load_traces_dataset(path, Path(args.logs) if args.logs else None)
    elif args.logs:
        raise UsageError("--logs goes with --traces (the log records of stored traces)")
    else:
        try:
            dataset = load_dataset(
                sys.stdin.buffer if from_stdin else path,
                require_output=target is None,
                require_input=target is not None,
                label_fields=[s.label for s in selected if s.label],
            )
        except OSError as exc:
            raise UsageError(f"cannot read {str(path)!r}: {exc.strerror or exc}") from exc
    if args.limit is not None:
        dataset.limit(args.limit)
    if args.label and all(value is None for value in dataset.labels_for(args.label)):
        raise UsageError(
            f"--label {args.label}: no usable line of {path} has a 0/1 {args.label!r} field"
        )
    if fit_label and all(value is None for value in dataset.labels_for(fit_label)):
        raise UsageError(
            f"--calibrate: no usable line of {path} has a 0/1 {fit_label!r} field to fit on"
        )

    _print_problems(err, path, dataset)
    if not dataset.items:
        err.print(f"[red]error:[/red] {escape(str(path))} has no usable line; nothing to score")
        return EXIT_FAILED
    scorers = [s.scorer for s in selected]
    err.print(
        ("estimating the cost of " if args.estimate else "")
        + f"scoring {len(dataset.items)} item(s) from {escape(str(path))} with "
        f"{', '.join(s.id for s in scorers)}"
        + (
            f" from a sample of {min(args.estimate_items, len(dataset.items))}"
            if args.estimate
            else ""
        )
        + (f" ({len(dataset.problems)} line(s) skipped)" if dataset.problems else "")
    )
    left_out = _left_out_note(args, judge_options, dataset)
    if left_out is not None:
        err.print(f"[yellow]{escape(left_out)}[/yellow]", soft_wrap=True)

    if args.broker and (args.phoenix is not None or args.langfuse):
        raise UsageError(
            "--broker: the workers emit the scores, so --phoenix / --langfuse belong to them "
            "(a `sinks` list beside their scorers, or livescore worker --sinks MODULE:ATTR); "
            "--otlp-endpoint still exports the items' spans from here"
        )
    if args.broker and args.emit is not None:
        raise UsageError(
            "--emit: with --broker the workers emit the scores: give it to livescore worker"
        )
    if args.redact and args.broker:
        raise UsageError("--redact: with --broker the workers score: give it to livescore worker")
    if args.restore and not (args.redact and args.out):
        raise UsageError(
            "--restore puts personal data back into the --out file: give --redact and --out"
        )
    # Loaded once here (a missing extra is a usage error before any work); every pass of
    # _score (the first, and a --retry pass) redacts with it.
    args.redactor = redactor_from_args(args)
    # --traces: a file of any size. Once --out has an item, only what the summary, the
    # checks and the cost lines read of it is kept, unless an output reads more of each item
    # afterwards (the report, the comparison with a baseline, the label figures).
    args.item_records = (
        "aggregates"
        if args.traces
        and report_path is None
        and ci.baseline_path is None
        and not fit_label
        and not args.label
        else "whole"
    )
    plan = CostPlan(args, [s.judge for s in scorers if s.judge is not None])
    export = Export.from_args(args)
    try:
        results_file = (
            _ResultsFile(out_path, dataset, restore=args.restore) if out_path is not None else None
        )
    except OSError as exc:
        export.close(0)
        raise UsageError(f"--out {out_path}: cannot write there ({exc.strerror or exc})") from exc
    started = time.monotonic()
    done: list[ItemResult] = []
    stop = _Stop()
    partial = ""
    result: EvalResult | None
    if plan.wanted:
        outcome = _estimate_first(
            args,
            selected,
            target,
            dataset,
            out,
            err,
            done,
            results_file,
            export,
            plan,
            interrupts,
            stop,
        )
        if isinstance(outcome, int):  # estimated, and stopped there: the run did not start
            if results_file is not None:
                results_file.discard()
            export.close(_EXPORT_TIMEOUT_S)
            return outcome
        result = outcome
        if result is not None:
            partial = plan.stop_reason(len(result.items), len(dataset.items))
    else:
        result = _score(
            args, selected, target, dataset, results_file, export, interrupts, err, done, stop
        )
    if result is None:
        from livescore.evals import EvalResult

        result = EvalResult.from_items([s.id for s in scorers], done)
        result.duration_s = time.monotonic() - started
    if stop.interrupted:
        err.print(
            f"[yellow]interrupted:[/yellow] {len(done)} of {len(dataset.items)} item(s) were "
            "scored; writing what was scored"
        )
    elif stop.unreachable is not None:
        err.print(
            f"[red]error:[/red] {escape(stop.unreachable)}: stopped after {len(done)} of "
            f"{len(dataset.items)} item(s); writing what was scored"
        )
    # The outputs first: a second Ctrl-C (counted, never raised) cannot lose them, and a
    # slow dashboard cannot delay them.
    if results_file is not None:
        results_file.finish(in_data_order=not stop.early)
    quality, notes = _quality(result, dataset, selected, args.threshold)
    ci.compare(result, {s.scorer.id: s.entry.higher_is_better for s in selected}, args.threshold)
    outputs_ok, written = _write_outputs(
        err,
        result,
        dataset,
        path,
        results_file,
        report_path,
        quality,
        stop,
        partial,
        report_options=ci.report_options(),
    )
    if fit_label and not stop.interrupted:
        lines, error = write_calibration(
            args.calibrate,
            result,
            dataset.labels_for(fit_label),
            label=fit_label,
            higher_is_better={
                s.scorer.id: s.entry.higher_is_better for s in selected if s.label == fit_label
            },
        )
        written.extend(lines)
        if error is not None:
            err.print(error)
            outputs_ok = False
    export.close(_EXPORT_TIMEOUT_S if not stop.early else _EXPORT_TIMEOUT_INTERRUPTED_S)
    delivered = export.report(err)
    _print_results(out, result, dataset)
    _print_quality(out, quality, notes, dataset, selected, args.threshold)
    outputs_ok = ci.finish(out, err, result) and outputs_ok
    for line in written:
        out.print(line)
    if stop.interrupted:
        return EXIT_INTERRUPTED
    if stop.unreachable is not None:
        return EXIT_FAILED  # said above; the checks would only repeat it
    if partial:
        err.print(f"[yellow]stopped:[/yellow] {escape(partial)}")
        return EXIT_FAILED
    failures = _check_result(result, selected, bounds, fail_on_error=args.fail_on_error)
    failures += ci.failures()
    if args.fail_on_bad_lines and dataset.problems:
        failures.append(f"--fail-on-bad-lines: {len(dataset.problems)} line(s) were skipped")
    for failure in failures:
        err.print(f"[red]check failed:[/red] {escape(failure)}")
    return EXIT_OK if outputs_ok and delivered and not failures else EXIT_FAILED


_EXPORT_TIMEOUT_S = 10.0
_EXPORT_TIMEOUT_INTERRUPTED_S = 3.0


def _print_problems(err: Console, path: Path, dataset: Dataset) -> None:
    """The skipped lines (the first few, then a count) and the unknown fields, capped."""
    from rich.markup import escape

    for problem in dataset.problems[:_MAX_PROBLEMS_SHOWN]:
        where = f"{escape(str(path))}:{problem.line}"
        err.print(f"[yellow]skipped[/yellow] {where}: {escape(problem.message)}")
    hidden = len(dataset.problems) - _MAX_PROBLEMS_SHOWN
    if hidden > 0:
        err.print(
            f"[yellow]skipped[/yellow] {hidden} more line(s) of {escape(str(path))} (--report "
            "lists them all; --fail-on-bad-lines fails the run on any)"
        )
    # A label another catalog scorer predicts (a dataset labelled for several) is no typo.
    labels = {entry.predicts for entry in scorer_catalog() if entry.predicts}
    unknown = {k: n for k, n in dataset.unknown_fields.items() if k not in labels}
    if unknown:
        names = list(unknown.items())
        fields = ", ".join(f"{k!r} ({n} line(s))" for k, n in names[:_MAX_FIELDS_SHOWN])
        if len(names) > _MAX_FIELDS_SHOWN:
            fields += f" and {len(names) - _MAX_FIELDS_SHOWN} more"
        err.print(f"[yellow]note:[/yellow] unknown field(s) kept as metadata: {escape(fields)}")


def _score(
    args: argparse.Namespace,
    selected: Sequence[_Selected],
    target: Any,
    dataset: Dataset,
    results_file: _ResultsFile | None,
    export: Export,
    interrupts: Interrupts,
    err: Console,
    done: list[ItemResult],
    stop: _Stop,
    indices: Sequence[int] | None = None,
    spent: Callable[[], bool] | None = None,
) -> EvalResult | None:
    """Score the items at ``indices`` (all by default) on a background event loop, feeding
    no more once ``spent()``, the main thread waiting for it or for Ctrl-C.

    Returns the result, or ``None`` when scoring ended early (``stop`` says why); the items
    scored are added to ``done`` (in the order they finished) either way.
    """
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    from livescore._emit import DEFAULT_EMIT
    from livescore.evals import run_evals
    from livescore.otel import OTelEmitter

    emitter = OTelEmitter(
        tracer_provider=export.tracer_provider,
        logger_provider=export.logger_provider,
        emit=args.emit or DEFAULT_EMIT,
        semconv_proposals=args.semconv_proposals,
    )
    progress = Progress(
        TextColumn("[bold]scoring"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[failed]}"),
        console=err,
        transient=True,
        disable=args.quiet,
    )
    chosen = list(range(len(dataset.items))) if indices is None else list(indices)
    task = progress.add_task("scoring", total=len(chosen), failed="")
    scorers = [s.scorer for s in selected]
    judges = list({id(j): j for s in selected if (j := s.scorer.judge) is not None}.values())
    finished: list[ItemResult] = []
    lock = threading.Lock()
    failed = 0

    def items() -> Iterator[Any]:
        for i in chosen:
            if spent is not None and spent():
                return
            yield dataset.items[i]

    def advance(item: ItemResult) -> None:
        nonlocal failed
        item.index = chosen[item.index]  # run_evals numbers what it was given
        with lock:
            finished.append(item)
        if results_file is not None:
            results_file.add(item)
        if args.item_records == "aggregates":
            _keep_what_aggregates_read(item)
        if item.error is not None or any(s.status == "failed" for s in item.scores.values()):
            failed += 1
            if stop.unreachable is None and any(
                s.error_type in _STOPPING_ERRORS for s in item.scores.values()
            ):
                stop.unreachable = _unreachable_judge(judges)
                if stop.unreachable is not None:
                    # Every later judge call would fail at once: end here, keep what was scored.
                    background.cancel()
        progress.update(task, advance=1, failed=f"[red]{failed} with failures" if failed else "")

    async def evaluate() -> EvalResult:
        return await run_evals(
            items(),
            scorers,
            target=target,
            on_item_complete=advance,
            concurrency=args.concurrency,
            emitter=emitter,
            tracer_provider=export.tracer_provider,
            sinks=export.sinks,
            broker=args.broker,
            redact=args.redactor,
            # --traces: a file of any size, its runs read from disk as they are scored; the
            # results keep what the outputs read of them (--out has written each run whole
            # by then), so memory holds the runs in flight, not the file's every run.
            keep_runs=not args.traces,
        )

    background = BackgroundRun(evaluate, name="livescore-eval")
    with progress, _circuit_warning_held_back():
        background.start()
        if not background.wait(interrupts):
            # Ctrl-C: cancel, give the work a moment to wind down (a second Ctrl-C skips
            # the wait), and go on with what was scored.
            stop.interrupted = True
            background.cancel()
            background.wait(interrupts, timeout=CANCEL_GRACE_S, presses=interrupts.count)
    with lock:
        done.extend(finished)
    if stop.early or not background.done:
        return None
    try:
        result = background.outcome()
    except Exception as exc:
        from livescore.fleet import BrokerUnavailableError

        if isinstance(exc, BrokerUnavailableError):
            raise UsageError(f"--broker: {exc}") from exc
        raise
    return result  # None: cancelled from within (the judge became unreachable)


def _keep_what_aggregates_read(item: ItemResult) -> None:
    """Let go of what only the item's own outputs read (its texts, run, metadata, the scores'
    step results and prompts), keeping what the summary, the checks, the cost lines and
    ``EvalResult.from_items`` read: index, id, errors, durations, and per score its status,
    value, label, errors, usage and judge model (the reason only of a skip, as counted)."""
    from livescore.scoring import ScoreResult

    item.input = item.output = item.ground_truth = item.context = None
    item.run = item.conversation = item.pseudonyms = None
    item.metadata = {}
    item.scores = {
        sid: ScoreResult(
            run_id=score.run_id,
            scorer_id=score.scorer_id,
            status=score.status,
            score=score.score,
            label=score.label,
            reason=score.reason if score.status == "skipped" else None,
            usage=score.usage,
            error=score.error,
            error_type=score.error_type,
            failed_step=score.failed_step,
            duration_s=score.duration_s,
            judge_model=score.judge_model,
        )
        for sid, score in item.scores.items()
    }


@contextlib.contextmanager
def _circuit_warning_held_back() -> Iterator[None]:
    """The judge's "unreachable" warning is not printed: the command says it in its own
    line, with what it did about it."""

    def keep(record: logging.LogRecord) -> bool:
        return getattr(record, "livescore_event", None) != "judge_circuit_open"

    logger = logging.getLogger("livescore.judges")
    logger.addFilter(keep)
    try:
        yield
    finally:
        logger.removeFilter(keep)


# The failures after which a judge may be of no more use: unreachable (its circuit opened)
# or refusing every call (an unknown model, a refused key: see OpenAIJudge.refused).
_STOPPING_ERRORS = ("connection_error", "timeout", "auth_error", "bad_request")


def _unreachable_judge(judges: Sequence[Any]) -> str | None:
    """``"the judge gpt-4o at http://…/v1 is unreachable (connection refused)"`` when one
    judge's circuit is open (every call to it now fails at once), ``"the judge x at … refuses
    every call (HTTP 404: …)"`` when it answered with a permanent refusal (every later call
    would cost one more failure), else ``None``."""
    for judge in judges:
        where = getattr(judge, "base_url", None)
        named = f"the judge {judge.model_name}{f' at {where}' if where else ''}"
        reason = getattr(judge, "unreachable", None)
        if reason:
            return f"{named} is unreachable ({reason})"
        refusal = getattr(judge, "refused", None)
        if refusal:
            return f"{named} refuses every call ({refusal})"
    return None


def _estimate_first(
    args: argparse.Namespace,
    selected: Sequence[_Selected],
    target: Any,
    dataset: Dataset,
    out: Console,
    err: Console,
    done: list[ItemResult],
    results_file: _ResultsFile | None,
    export: Export,
    plan: CostPlan,
    interrupts: Interrupts,
    stop: _Stop,
) -> EvalResult | int | None:
    """``--estimate`` / ``--max-cost``: score a sample, print the estimate; then stop (an
    exit code) or score the rest under the ``--max-cost`` budget (the whole result, or
    ``None`` when scoring ended early: ``stop`` says why)."""
    from livescore.cli._cost import sample_indices
    from livescore.evals import EvalResult

    total = len(dataset.items)
    sample = sample_indices(total, plan.items)
    if not plan.estimate_only:  # the command's first line said it for --estimate
        err.print(f"estimating from {len(sample)} of {total} item(s)")
    first = _score(
        args, selected, target, dataset, results_file, export, interrupts, err, done, stop, sample
    )
    if first is None:
        return None
    estimate = Estimate.of(first.items, total=total, concurrency=args.concurrency)
    for line in estimate.lines():
        out.print(line)
    refusal = plan.refuses(estimate)
    if plan.estimate_only:
        if refusal is not None:
            out.print(f"with --max-cost: {refusal}")
        return EXIT_OK
    if refusal is not None:
        err.print(f"[red]{refusal}[/red]; nothing was written")
        return EXIT_FAILED
    picked = set(sample)
    rest = [i for i in range(total) if i not in picked]
    second = _score(
        args,
        selected,
        target,
        dataset,
        results_file,
        export,
        interrupts,
        err,
        done,
        stop,
        rest,
        plan.spent,
    )
    if second is None:
        return None
    result = EvalResult.from_items([s.scorer.id for s in selected], done)
    result.duration_s = first.duration_s + second.duration_s
    return result


def _check_result(
    result: EvalResult,
    selected: Sequence[_Selected],
    bounds: Sequence[Bound],
    *,
    fail_on_error: bool,
) -> list[str]:
    failures: list[str] = []
    if not any(agg.scored for agg in result.scores.values()):
        failures.append("no item could be scored (every score failed or was skipped)")
    if fail_on_error:
        errors = len(result.item_failures) + sum(a.failed for a in result.scores.values())
        if errors:
            failures.append(f"--fail-on-error: {errors} failure(s) (items or scores)")
    for bound in bounds:
        for s in selected:
            if bound.scorer is not None and s.scorer.id != bound.scorer:
                continue
            if bound.scorer is None and s.entry.higher_is_better == bound.over:
                continue
            mean = result.scores[s.scorer.id].mean
            if mean is None:
                failures.append(f"{bound.option()}: {s.scorer.id} has no score")
            elif (mean > bound.value) if bound.over else (mean < bound.value):
                word = "above" if bound.over else "below"
                failures.append(f"{bound.option()}: {s.scorer.id} mean {mean:.3f} is {word}")
    return failures


def _write_outputs(
    err: Console,
    result: EvalResult,
    dataset: Dataset,
    path: Path,
    results_file: _ResultsFile | None,
    report_path: Path | None,
    quality: list[QualityRow],
    stop: _Stop,
    stopped: str = "",
    report_options: dict[str, Any] | None = None,
) -> tuple[bool, list[str]]:
    """Write ``--report`` (``--out`` was written as items finished); one output failing
    never stops the other. Returns whether every output was written, and the lines that
    say where they are (printed after the summary)."""
    from rich.markup import escape

    ok = True
    written: list[str] = []
    if results_file is not None:
        if results_file.error is None:
            written.append(f"results: {escape(str(results_file.path))}")
        else:
            ok = False
            err.print(
                f"[red]error:[/red] --out {escape(str(results_file.path))}: "
                f"{escape(results_file.error)}"
            )
    if report_path is not None:
        from livescore.evals import write_report

        partial = stopped
        if stop.early:
            why = "was interrupted" if stop.interrupted else f"stopped ({stop.unreachable})"
            partial = (
                f"the evaluation {why} after {len(result.items)} of {len(dataset.items)} item(s)"
            )
        try:
            write_report(
                result,
                report_path,
                title=f"livescore eval: {path.name}",
                source=str(path),
                lines=dataset.lines,
                labels=dataset.label_columns,
                quality=quality,
                problems=[str(p) for p in dataset.problems],
                partial=partial,
                **(report_options or {}),
            )
        except OSError as exc:
            ok = False
            err.print(f"[red]error:[/red] --report {escape(str(report_path))}: {escape(str(exc))}")
        else:
            written.append(
                f"report: {escape(str(report_path))}" + (" (partial)" if partial else "")
            )
    return ok, written


# -- printing -------------------------------------------------------------------------------


def _print_results(out: Console, result: EvalResult, dataset: Dataset) -> None:
    from rich.markup import escape

    out.print(_summary_table(result))
    if result.item_failures:
        out.print(f"[red]{len(result.item_failures)} item(s) could not be scored:[/red]")
        for failure in result.item_failures[:10]:
            line = dataset.lines[failure.index]
            out.print(f"  line {line}: {failure.error_type}: {escape(failure.error)}")
    for agg in result.scores.values():
        for failure in agg.failures[:5]:
            line = dataset.lines[failure.index]
            out.print(
                f"  [red]{agg.scorer_id} failed[/red] on line {line} "
                f"({failure.error_type}{f' in {failure.step}' if failure.step else ''}): "
                f"{escape(failure.error)}"
            )
        for reason, n in list(agg.skip_reasons.items())[:3]:
            out.print(f"  [yellow]{agg.scorer_id} skipped {n} item(s)[/yellow]: {escape(reason)}")
    calls = result.usage.calls
    out.print(
        f"{len(result.items)} item(s) in {result.duration_s:.1f} s; "
        f"{calls} judge call{'' if calls == 1 else 's'}, {result.usage.total_tokens} tokens"
        + _cost_text(result)
    )


def _quality(
    result: EvalResult,
    dataset: Dataset,
    selected: Sequence[_Selected],
    threshold: float,
) -> tuple[list[QualityRow], list[str]]:
    """The judge-quality rows of every label the selected scorers predict (and the data
    has), and the notes about labels no scorer could be measured on."""
    rows: list[QualityRow] = []
    notes: list[str] = []
    for label, predictors in _by_label(selected).items():
        label_rows, label_notes = _quality_rows(result, dataset, threshold, label, predictors)
        rows.extend(label_rows)
        notes.extend(label_notes)
    return rows, notes


def _by_label(selected: Sequence[_Selected]) -> dict[str, list[_Selected]]:
    by_label: dict[str, list[_Selected]] = {}
    for s in selected:
        if s.label:
            by_label.setdefault(s.label, []).append(s)
    return by_label


def _print_quality(
    out: Console,
    rows: Sequence[QualityRow],
    notes: Sequence[str],
    dataset: Dataset,
    selected: Sequence[_Selected],
    threshold: float,
) -> None:
    """One judge-quality table per label, then the hints about labels nothing measured."""
    from rich.markup import escape

    by_label = _by_label(selected)
    for label, predictors in by_label.items():
        label_rows = [row for row in rows if row.label == label]
        if not label_rows:
            continue
        out.print(_quality_table(label, label_rows))
        baseline = label_rows[-1]
        directions = []
        if any(not p.entry.higher_is_better for p in predictors):
            directions.append(f"a score ≥ {threshold:g} predicts '{label}'")
        if any(p.entry.higher_is_better for p in predictors):
            directions.append(f"for scorers where higher is better, a score ≤ {threshold:g}")
        out.print(
            f"{'; '.join(directions).capitalize()} (--threshold); AUROC needs no threshold. "
            "The length-only baseline is what output length alone achieves (it "
            f"{escape(baseline.coverage)}); a judge should beat it."
        )
        for row in label_rows[:-1]:
            out.print(escape(_calibration_line(row)))
    for note in notes:
        out.print(escape(note))
    running = {s.entry.name for s in selected}
    for name, column in dataset.label_columns.items():
        if name in by_label or all(value is None for value in column):
            continue
        # A score that rises with the defect first (hallucination before faithfulness);
        # for conversations, a conversation scorer first.
        conversations = bool(dataset.formats.get("conversation"))
        predicting = [
            e.name
            for e in sorted(
                scorer_catalog(),
                key=lambda e: (conversations != (e.family == "conversation"), e.higher_is_better),
            )
            if e.predicts == name
        ]
        if predicting and predicting[0] in running:
            # The scorer runs, but --label pointed it at another field.
            out.print(
                f"The data is also labelled ({name} 0/1): without --label, "
                f"{predicting[0]} is measured against it."
            )
        elif predicting:
            out.print(
                f"The data is labelled ({name} 0/1): add --scorer {predicting[0]} --model "
                "openai/<model> to measure the judge's accuracy, F1 and AUROC."
            )
        else:
            out.print(
                f"The data is labelled ({name} 0/1): measure a judge scorer against it with "
                f"--label {name}."
            )


def _quality_rows(
    result: EvalResult,
    dataset: Dataset,
    threshold: float,
    label: str,
    predictors: Sequence[_Selected],
) -> tuple[list[QualityRow], list[str]]:
    import dataclasses

    from livescore.evals import QualityRow, binary_quality, split_threshold

    rows: list[QualityRow] = []
    notes: list[str] = []
    column = dataset.labels_for(label)
    labelled = [it for it in result.items if column[it.index] is not None]
    if not labelled:
        return rows, notes
    for selected in predictors:
        sid = selected.scorer.id
        pairs = [
            (int(column[it.index] or 0), it.scores[sid].score, it.scores[sid], it.index)
            for it in labelled
            if sid in it.scores and it.scores[sid].score is not None
        ]
        if not pairs:
            notes.append(f"{sid}: no item labelled '{label}' was scored, so no quality figures")
            continue
        labels = [p[0] for p in pairs]
        scores = [float(p[1] or 0.0) for p in pairs]
        calls = sum(p[2].usage.calls for p in pairs)
        tokens = sum(p[2].usage.total_tokens for p in pairs)
        flip = selected.entry.higher_is_better
        if flip:
            # A high score is good: the defect is predicted by a low one. Ranking by the
            # negated score makes "at or below the threshold" the positive prediction.
            quality = binary_quality(labels, [-x for x in scores], threshold=-threshold)
            quality = dataclasses.replace(quality, threshold=threshold)
        else:
            quality = binary_quality(labels, scores, threshold=threshold)
        ranked = [-x for x in scores] if flip else scores
        keys = [str(dataset.items[p[3]].get("id", p[3])) for p in pairs]
        split = split_threshold(
            labels, ranked, keys=keys, default=-threshold if flip else threshold
        )
        if split is not None and flip:
            split = dataclasses.replace(split, threshold=-split.threshold)
        rows.append(
            QualityRow(
                name=sid,
                quality=quality,
                calls_per_item=calls / len(pairs),
                tokens_per_item=tokens / len(pairs),
                coverage=f"{len(pairs)}/{len(labelled)} labelled items scored",
                label=label,
                rule=f"score {'≤' if flip else '≥'} {threshold:g}",
                split=split,
            )
        )
    if rows:
        # HaluEval's hallucinated answers are longer: a judge must beat output length alone.
        labels = [int(column[it.index] or 0) for it in labelled]
        lengths = [float(_output_length(it)) for it in labelled]
        median = sorted(lengths)[len(lengths) // 2]
        baseline = binary_quality(labels, lengths, threshold=median)
        rows.append(
            QualityRow(
                name="length-only baseline",
                quality=baseline,
                coverage=f"predicts {label} when output ≥ {median:.0f} chars (median)",
                label=label,
                rule=f"output ≥ {median:.0f} chars",
            )
        )
    return rows, notes


def _calibration_line(row: QualityRow) -> str:
    """The confusion matrix, base rate and κ of a row, and its held-out threshold."""
    q = row.quality
    base = "–" if q.base_rate is None else f"{q.base_rate:.2f}"
    line = (
        f"Against the labels, {row.name} ({row.rule}): {q.confusion()}; base rate {base} "
        f"({q.positives} of {q.n} labelled {row.label}); Cohen's κ {_fmt(q.kappa)}."
    )
    split = row.split
    if split is None:
        return line + " No held-out threshold: a half of the items lacks a class."
    held = split.held_out
    return (
        f"{line} Threshold chosen on half the items ({split.chosen_on.n}, split by item id): "
        f"score {'≤' if '≤' in row.rule else '≥'} {split.threshold:.3g}; on the other "
        f"{held.n}: accuracy {_fmt(held.accuracy)}, F1 {_fmt(held.f1)}, κ {_fmt(held.kappa)}."
    )


def _summary_table(result: EvalResult) -> Table:
    from rich.table import Table

    table = Table(title="Scores", title_justify="left")
    table.add_column("scorer", justify="left")
    priced = any(agg.usage.cost_usd is not None for agg in result.scores.values())
    for name in ("mean", "scored", "failed", "skipped", "judge calls", "tokens"):
        table.add_column(name, justify="right")
    if priced:
        table.add_column("cost (USD)", justify="right")
    for sid, agg in result.scores.items():
        row = [
            sid,
            "–" if agg.mean is None else f"{agg.mean:.3f}",
            str(agg.scored),
            f"[red]{agg.failed}[/red]" if agg.failed else "0",
            f"[yellow]{agg.skipped}[/yellow]" if agg.skipped else "0",
            str(agg.usage.calls),
            str(agg.usage.total_tokens),
        ]
        if priced:
            row.append(_usd(agg.usage.cost_usd))
        table.add_row(*row)
    return table


def _usd(value: float | None) -> str:
    from livescore._usage import format_usd

    return format_usd(value)


def _cost_text(result: EvalResult) -> str:
    """``", judge cost $X ($Y per item)"`` when the judge has a price, else nothing."""
    cost = result.usage.cost_usd
    if cost is None:
        return ""
    per_item = cost / len(result.items) if result.items else None
    return f", judge cost {_usd(cost)} ({_usd(per_item)} per item)"


def _fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _output_length(item: ItemResult) -> int:
    """The agent's text length: over every turn for a conversation."""
    if item.conversation is not None:
        from livescore.runs import get_assistant_message

        return sum(len(get_assistant_message(run) or "") for run in item.conversation.runs)
    return len(item.output_text)


def _quality_table(label: str, rows: Sequence[QualityRow]) -> Table:
    from rich.table import Table

    table = Table(
        title=f"Judge quality: how well each scorer predicts '{label}' (label 1)",
        title_justify="left",
    )
    for name in ("scored by", "n", "predicts when", "accuracy", "precision", "recall", "F1"):
        left = name in ("scored by", "predicts when")
        table.add_column(name, justify="left" if left else "right")
    for name in ("AUROC", "κ", "calls/item", "tokens/item"):
        table.add_column(name, justify="right")
    for row in rows:
        q = row.quality
        table.add_row(
            row.name,
            str(q.n),
            row.rule or _fmt(q.threshold, 2),
            _fmt(q.accuracy),
            _fmt(q.precision),
            _fmt(q.recall),
            _fmt(q.f1),
            _fmt(q.auroc),
            _fmt(q.kappa),
            _fmt(row.calls_per_item, 2),
            _fmt(row.tokens_per_item, 0),
        )
    return table
