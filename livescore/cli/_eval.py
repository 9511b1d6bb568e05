"""``livescore eval``: score a JSON-lines dataset with scorers from the catalog."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from livescore.cli._common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    UsageError,
    finite_float,
    make_console,
    positive_int,
)
from livescore.cli._export import Export, add_export_arguments
from livescore.cli._judge_options import JudgeOptions, add_judge_arguments
from livescore.scorers import CatalogEntry, ScorerOptions, parse_scorer_spec, scorer_catalog

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
            "ground_truth and id; or, with --target, just the input. The hallucination\n"
            "benchmark format (question, context, output, hallucinated 0/1) is read too, and\n"
            "its labels give judge-quality figures (accuracy, precision, recall, F1, AUROC);\n"
            "so do other 0/1 defect labels a scorer predicts (toxic, biased, irrelevant) or\n"
            "that --label names.\n"
            "Bad lines are reported with their number and skipped; other fields are kept as\n"
            "metadata (and named once).\n\n"
            f"scorers (--scorer NAME[:ARG]):\n{catalog}"
        ),
        epilog=(
            "The judge endpoint comes from --base-url / OPENAI_BASE_URL and the key from\n"
            "OPENAI_API_KEY (any OpenAI-compatible server).\n\n"
            "exit codes:\n"
            "  0    scored, and every --fail-* check passed\n"
            "  1    nothing could be scored (every score failed or was skipped, or no usable\n"
            "       line), a --fail-on-error / --fail-under / --fail-over check failed, or an\n"
            "       output could not be written (the others still are)\n"
            "  2    usage error: bad option or scorer, no judge model, unreadable data,\n"
            "       an output path that cannot be written (checked before scoring)\n"
            "  130  interrupted (Ctrl-C): the items scored so far are in --out, and --report\n"
            "       is written and marked partial\n\n"
            "example: livescore eval data/hallucination/halueval_qa_200.jsonl \\\n"
            "  --scorer hallucination --model openai/gpt-4o-mini --limit 50 --report report.html"
        ),
    )
    p.add_argument("data", metavar="DATA.jsonl", help="the dataset, one JSON object per line")
    p.add_argument(
        "--scorer",
        action="append",
        metavar="NAME[:ARG]",
        help="a scorer to run (repeatable; see the list above); default: keyword-coverage, "
        "plus hallucination when a judge model is configured",
    )
    judge = p.add_argument_group("judge (for the scorers marked [judge])")
    add_judge_arguments(judge)
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
        help="write one JSON result per item, as each finishes (data order at the end)",
    )
    p.add_argument("--report", metavar="REPORT.html", help="write a self-contained HTML report")
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
        "answer-relevancy)",
    )
    checks = p.add_argument_group("checks for CI (exit 1 when one fails)")
    checks.add_argument(
        "--fail-on-error",
        action="store_true",
        help="fail when any item or score failed (skipped scores do not count)",
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
    export = p.add_argument_group("export (traces and scores into your dashboards)")
    add_export_arguments(export)
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
    options = ScorerOptions(judge=judge, mode=judge_options.mode)
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


class _WorkersJudge:
    """Stands in for the judge of ``--broker`` runs: the workers judge with their own."""

    model = "(the workers' judge)"

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


def _check_writable(option: str, path: Path) -> None:
    """Fail now, before any scoring, if ``path`` cannot be written."""
    if path.is_dir():
        raise UsageError(f"{option} {path}: is a directory")
    if not path.parent.is_dir():
        raise UsageError(f"{option} {path}: the folder {path.parent} does not exist")
    existed = path.exists()
    try:
        with path.open("a", encoding="utf-8"):
            pass
    except OSError as exc:
        raise UsageError(f"{option} {path}: cannot write there ({exc.strerror or exc})") from exc
    if not existed:
        path.unlink(missing_ok=True)


# -- writing results ------------------------------------------------------------------------


class _ResultsFile:
    """``--out``: one JSON line per item, written (and flushed) as each item finishes, so an
    interrupted run keeps what it scored; rewritten in data order when the run completes."""

    def __init__(self, path: Path, dataset: Dataset) -> None:
        self.path = path
        self.dataset = dataset
        self.records: list[tuple[int, str]] = []
        self.error: str | None = None
        self._file: IO[str] | None = path.open("w", encoding="utf-8")

    def add(self, item: ItemResult) -> None:
        record = item.to_dict(include_run=True)
        record["line"] = self.dataset.lines[item.index]
        for name, column in self.dataset.label_columns.items():
            if column[item.index] is not None:
                record[name] = column[item.index]
        text = json.dumps(record, ensure_ascii=False, default=str) + "\n"
        self.records.append((item.index, text))
        if self._file is None:
            return
        try:
            self._file.write(text)
            self._file.flush()
        except OSError as exc:  # keep scoring; the report may still be written
            self.error = exc.strerror or str(exc)
            self._close()

    def finish(self, *, in_data_order: bool) -> None:
        self._close()
        if self.error is not None or not in_data_order:
            return
        partial = self.path.with_name(self.path.name + ".tmp")
        try:
            with partial.open("w", encoding="utf-8") as out:
                out.writelines(text for _, text in sorted(self.records))
            os.replace(partial, self.path)
        except OSError as exc:
            self.error = exc.strerror or str(exc)
            partial.unlink(missing_ok=True)

    def _close(self) -> None:
        file, self._file = self._file, None
        if file is not None:
            with contextlib.suppress(OSError):
                file.close()


# -- the command ----------------------------------------------------------------------------


def run_eval_command(args: argparse.Namespace) -> int:
    """Run ``livescore eval`` from parsed arguments; returns the exit code."""
    from rich.markup import escape

    out, err = make_console(), make_console(stderr=True)
    judge_options = JudgeOptions.from_args(args)
    bounds = [Bound.parse(b, over=False) for b in args.fail_under]
    bounds += [Bound.parse(b, over=True) for b in args.fail_over]
    selected = _select_scorers(args, judge_options)
    _check_threshold(args.threshold, selected)
    _check_bounds(bounds, selected)
    target = _load_target(args.target) if args.target else None
    out_path = Path(args.out) if args.out else None
    report_path = Path(args.report) if args.report else None
    if out_path is not None:
        _check_writable("--out", out_path)
    if report_path is not None:
        _check_writable("--report", report_path)

    from livescore.evals import load_dataset

    path = Path(args.data)
    try:
        dataset = load_dataset(
            path,
            require_output=target is None,
            require_input=target is not None,
            label_fields=[s.label for s in selected if s.label],
        )
    except OSError as exc:
        raise UsageError(f"cannot read {str(path)!r}: {exc.strerror or exc}") from exc
    if args.limit is not None:
        dataset.limit(args.limit)

    for problem in dataset.problems:
        where = f"{escape(str(path))}:{problem.line}"
        err.print(f"[yellow]skipped[/yellow] {where}: {escape(problem.message)}")
    if dataset.unknown_fields:
        fields = ", ".join(f"{k!r} ({n} line(s))" for k, n in dataset.unknown_fields.items())
        err.print(f"[yellow]note:[/yellow] unknown field(s) kept as metadata: {escape(fields)}")
    if not dataset.items:
        err.print(f"[red]error:[/red] {escape(str(path))} has no usable line; nothing to score")
        return EXIT_FAILED
    scorers = [s.scorer for s in selected]
    err.print(
        f"scoring {len(dataset.items)} item(s) from {escape(str(path))} with "
        f"{', '.join(s.id for s in scorers)}"
        + (f" ({len(dataset.problems)} line(s) skipped)" if dataset.problems else "")
    )

    if args.broker and (args.phoenix is not None or args.langfuse):
        raise UsageError(
            "--broker: the workers emit the scores, so --phoenix / --langfuse belong to them "
            "(a `sinks` list beside their scorers, or livescore worker --sinks MODULE:ATTR); "
            "--otlp-endpoint still exports the items' spans from here"
        )
    export = Export.from_args(args)
    results_file = _ResultsFile(out_path, dataset) if out_path is not None else None
    done: list[ItemResult] = []
    interrupted = False
    try:
        result = _score(args, scorers, target, dataset, err, done, results_file, export)
    except KeyboardInterrupt:
        from livescore.evals import summarize

        interrupted = True
        result = summarize([s.id for s in scorers], done)
        err.print(
            f"[yellow]interrupted:[/yellow] {len(done)} of {len(dataset.items)} item(s) were "
            "scored; writing what was scored"
        )
    finally:
        export.close()  # the traces and the dashboards' scores leave before the summary
    export.report(err)
    if results_file is not None:
        results_file.finish(in_data_order=not interrupted)
    _print_results(out, result, dataset, selected)
    quality = _print_quality(out, result, dataset, selected, args.threshold)
    outputs_ok = _write_outputs(
        out, err, result, dataset, path, results_file, report_path, quality, interrupted
    )
    if interrupted:
        return EXIT_INTERRUPTED
    failures = _check_result(result, selected, bounds, fail_on_error=args.fail_on_error)
    for failure in failures:
        err.print(f"[red]check failed:[/red] {escape(failure)}")
    return EXIT_OK if outputs_ok and not failures else EXIT_FAILED


def _score(
    args: argparse.Namespace,
    scorers: list[Scorer],
    target: Any,
    dataset: Dataset,
    err: Console,
    done: list[ItemResult],
    results_file: _ResultsFile | None,
    export: Export,
) -> EvalResult:
    import anyio
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    from livescore.evals import run_evals

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
    task = progress.add_task("scoring", total=len(dataset.items), failed="")
    failed = 0

    def advance(item: ItemResult) -> None:
        nonlocal failed
        done.append(item)
        if results_file is not None:
            results_file.add(item)
        if item.error is not None or any(s.status == "failed" for s in item.scores.values()):
            failed += 1
        progress.update(task, advance=1, failed=f"[red]{failed} with failures" if failed else "")

    async def evaluate() -> EvalResult:
        return await run_evals(
            dataset.items,
            scorers,
            target=target,
            on_item_complete=advance,
            concurrency=args.concurrency,
            tracer_provider=export.tracer_provider,
            sinks=export.sinks,
            broker=args.broker,
        )

    with progress:
        try:
            return anyio.run(evaluate)
        except Exception as exc:
            from livescore.fleet import BrokerUnavailableError

            if isinstance(exc, BrokerUnavailableError):
                raise UsageError(f"--broker: {exc}") from exc
            raise


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
    out: Console,
    err: Console,
    result: EvalResult,
    dataset: Dataset,
    path: Path,
    results_file: _ResultsFile | None,
    report_path: Path | None,
    quality: list[QualityRow],
    interrupted: bool,
) -> bool:
    """Write ``--report`` (``--out`` was written as items finished); one output failing
    never stops the other. Returns whether every output was written."""
    from rich.markup import escape

    ok = True
    if results_file is not None:
        if results_file.error is None:
            out.print(f"results: {escape(str(results_file.path))}")
        else:
            ok = False
            err.print(
                f"[red]error:[/red] --out {escape(str(results_file.path))}: "
                f"{escape(results_file.error)}"
            )
    if report_path is not None:
        from livescore.evals import write_report

        partial = (
            f"the evaluation was interrupted after {len(result.items)} of "
            f"{len(dataset.items)} item(s)"
            if interrupted
            else ""
        )
        try:
            write_report(
                result,
                report_path,
                title=f"livescore eval: {path.name}",
                source=str(path),
                lines=dataset.lines,
                labels=dataset.labels,
                quality=quality,
                problems=[str(p) for p in dataset.problems],
                partial=partial,
            )
        except OSError as exc:
            ok = False
            err.print(f"[red]error:[/red] --report {escape(str(report_path))}: {escape(str(exc))}")
        else:
            out.print(f"report: {escape(str(report_path))}" + (" (partial)" if partial else ""))
    return ok


# -- printing -------------------------------------------------------------------------------


def _print_results(
    out: Console, result: EvalResult, dataset: Dataset, selected: Sequence[_Selected]
) -> None:
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
                f"({failure.error_type} in {failure.step}): {escape(failure.error)}"
            )
        for reason, n in list(agg.skip_reasons.items())[:3]:
            out.print(f"  [yellow]{agg.scorer_id} skipped {n} item(s)[/yellow]: {escape(reason)}")
    out.print(
        f"{len(result.items)} item(s) in {result.duration_s:.1f} s; judge calls "
        f"{result.usage.calls}, tokens {result.usage.total_tokens}"
    )


def _print_quality(
    out: Console,
    result: EvalResult,
    dataset: Dataset,
    selected: Sequence[_Selected],
    threshold: float,
) -> list[QualityRow]:
    """One judge-quality table per label the selected scorers predict (and the data has)."""
    from rich.markup import escape

    rows: list[QualityRow] = []
    by_label: dict[str, list[_Selected]] = {}
    for s in selected:
        if s.label:
            by_label.setdefault(s.label, []).append(s)
    for label, predictors in by_label.items():
        label_rows, notes = _quality_rows(result, dataset, threshold, label, predictors)
        if label_rows:
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
        rows.extend(label_rows)
    predicted = set(by_label)
    for name, column in dataset.label_columns.items():
        if name in predicted or all(value is None for value in column):
            continue
        # A score that rises with the defect first (hallucination before faithfulness).
        predicting = [
            e.name
            for e in sorted(scorer_catalog(), key=lambda e: e.higher_is_better)
            if e.predicts == name
        ]
        out.print(
            f"The data is labelled ({name} 0/1): add --scorer {predicting[0]} --model "
            "openai/<model> to measure the judge's accuracy, F1 and AUROC."
            if predicting
            else f"The data is labelled ({name} 0/1): measure a judge scorer against it with "
            f"--label {name}."
        )
    return rows


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
        lengths = [float(len(it.output_text)) for it in labelled]
        median = sorted(lengths)[len(lengths) // 2]
        baseline = binary_quality(labels, lengths, threshold=median)
        rows.append(
            QualityRow(
                name="length-only baseline (REFERENCE)",
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
    for name in ("mean", "scored", "failed", "skipped", "judge calls", "tokens"):
        table.add_column(name, justify="right")
    for sid, agg in result.scores.items():
        table.add_row(
            sid,
            "–" if agg.mean is None else f"{agg.mean:.3f}",
            str(agg.scored),
            f"[red]{agg.failed}[/red]" if agg.failed else "0",
            f"[yellow]{agg.skipped}[/yellow]" if agg.skipped else "0",
            str(agg.usage.calls),
            str(agg.usage.total_tokens),
        )
    return table


def _fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _quality_table(label: str, rows: Sequence[QualityRow]) -> Table:
    from rich.table import Table

    table = Table(title=f"Judge quality ({label} = positive)", title_justify="left")
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
