"""``livescore eval``: score a JSON-lines dataset with scorers from the catalog."""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from livescore.cli._calibration import (
    calibrate_scorers,
    calibration_label,
    write_calibration,
)
from livescore.cli._common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    UsageError,
    check_broker_options,
    make_console,
)
from livescore.cli._cost import CostPlan, apply_judge_prices
from livescore.cli._eval_ci import EvalCi
from livescore.cli._eval_options import (
    Bound,
    Selected,
    check_bounds,
    check_output,
    check_outputs,
    check_threshold,
    left_out_note,
    load_target,
    same_file,
    select_scorers,
    target_source,
)
from livescore.cli._eval_parser import add_eval_parser
from livescore.cli._eval_print import (
    estimate_lines,
    measured_labels,
    print_problems,
    print_quality,
    print_results,
    quality,
)
from livescore.cli._export import Export
from livescore.cli._interrupt import CANCEL_GRACE_S, BackgroundRun, Interrupts
from livescore.cli._judge_options import JudgeOptions
from livescore.cli._redact import redactor_from_args

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress

    from livescore.evals import (
        CostEstimate,
        Dataset,
        EvalResult,
        ItemResult,
        QualityRow,
        ResultsFile,
    )

__all__ = ("add_eval_parser", "run_eval_command")

# -- the command ----------------------------------------------------------------------------

_EXPORT_TIMEOUT_S = 10.0
_EXPORT_TIMEOUT_INTERRUPTED_S = 3.0


@dataclass(slots=True)
class _Stop:
    """Why scoring ended before the last item (``None`` fields: it did not)."""

    interrupted: bool = False
    unreachable: str | None = None  # the judge's description, when its circuit opened

    @property
    def early(self) -> bool:
        return self.interrupted or self.unreachable is not None


@dataclass(slots=True)
class _Setup:
    """What the options name, checked: everything a run needs before it scores."""

    judge_options: JudgeOptions
    selected: list[Selected]
    bounds: list[Bound]
    fit_label: str | None
    target: Any
    path: Path
    out_path: Path | None
    report_path: Path | None
    ci: EvalCi
    dataset: Dataset


def run_eval_command(args: argparse.Namespace) -> int:
    """Run ``livescore eval`` from parsed arguments; returns the exit code."""
    with Interrupts() as interrupts:
        return _run_eval(args, interrupts)


def _prepare(args: argparse.Namespace, err: Console) -> _Setup:
    """Check the options and load the data (a :class:`UsageError` for what is wrong)."""
    apply_judge_prices(args.judge_prices)  # before any judge is built
    _check_option_pairs(args)
    judge_options = JudgeOptions.from_args(args)
    bounds = [Bound.parse(b, over=False) for b in args.fail_under]
    bounds += [Bound.parse(b, over=True) for b in args.fail_over]
    selected = _select_scorers(args, judge_options, bounds, err)
    fit_label = (
        calibration_label(args.label, [s.label for s in selected]) if args.calibrate else None
    )
    target = load_target(args.target) if args.target else None
    if bool(args.data) == bool(args.traces):
        raise UsageError("give a DATA.jsonl file or --traces FILE (one of them)")
    from_stdin = args.data == "-"
    path = Path("<stdin>") if from_stdin else Path(args.data or args.traces)
    out_path = Path(args.out) if args.out else None
    report_path = Path(args.report) if args.report else None
    inputs = [] if from_stdin else [("the traces" if args.traces else "the dataset", path)]
    source = target_source(target) if target is not None else None
    if source is not None:
        inputs.append(("the --target module's file", source))
    check_outputs(out_path, report_path, inputs)
    if args.calibrate:
        _check_calibrate_path(
            args.calibrate, [*inputs, ("--out", out_path), ("--report", report_path)]
        )
    ci = EvalCi.from_args(
        args,
        [s.scorer.judge for s in selected if s.scorer.judge is not None],
        [("--out", out_path), ("--report", report_path)],
        inputs,
    )
    dataset = _load_data(args, path, target, selected)
    if args.label and all(value is None for value in dataset.labels_for(args.label)):
        raise UsageError(
            f"--label {args.label}: no usable line of {path} has a 0/1 {args.label!r} field"
        )
    if fit_label and all(value is None for value in dataset.labels_for(fit_label)):
        raise UsageError(
            f"--calibrate: no usable line of {path} has a 0/1 {fit_label!r} field to fit on"
        )
    return _Setup(
        judge_options,
        selected,
        bounds,
        fit_label,
        target,
        path,
        out_path,
        report_path,
        ci,
        dataset,
    )


def _check_option_pairs(args: argparse.Namespace) -> None:
    """Options that do not go together."""
    check_broker_options(args)
    if args.broker and (args.phoenix is not None or args.langfuse):
        raise UsageError(
            "--broker: the workers emit the scores, so --phoenix / --langfuse belong to them "
            "(a `sinks` list beside their scorers, or livescore worker --sinks MODULE:ATTR); "
            "--otlp-endpoint still exports the items' spans from here"
        )
    if args.restore and not (args.redact and args.out):
        raise UsageError(
            "--restore puts personal data back into the --out file: give --redact and --out"
        )


def _select_scorers(
    args: argparse.Namespace, judge_options: JudgeOptions, bounds: list[Bound], err: Console
) -> list[Selected]:
    """The scorers ``--scorer`` names (or the defaults), checked against the label and
    bound options, calibrated as ``--calibration`` says."""
    from rich.markup import escape

    selected = select_scorers(args, judge_options)
    if args.label and not any(s.entry.needs_judge for s in selected):
        raise UsageError(
            f"--label {args.label}: it measures judge scorers ([judge] in --help) against the "
            "label, and none is selected"
        )
    check_threshold(args.threshold, selected)
    check_bounds(bounds, selected)
    if args.calibration:
        calibrated = calibrate_scorers(
            [s.scorer for s in selected], args.calibration, lambda line: err.print(escape(line))
        )
        for s, scorer in zip(selected, calibrated, strict=True):
            s.scorer = scorer
    return selected


def _check_calibrate_path(calibrate: str, others: list[tuple[str, Path | None]]) -> None:
    """``--calibrate FILE`` can be written, and is none of the command's other files."""
    check_output("--calibrate", Path(calibrate))
    for what, other in others:
        if other is not None and same_file(Path(calibrate), other):
            raise UsageError(f"--calibrate {calibrate} is {what}: choose another path")


def _load_data(
    args: argparse.Namespace, path: Path, target: Any, selected: list[Selected]
) -> Dataset:
    """The dataset (``DATA.jsonl``, or the runs of ``--traces``), cut to ``--limit``."""
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
                sys.stdin.buffer if args.data == "-" else path,
                require_output=target is None,
                require_input=target is not None,
                label_fields=[s.label for s in selected if s.label],
            )
        except OSError as exc:
            raise UsageError(f"cannot read {str(path)!r}: {exc.strerror or exc}") from exc
    if args.limit is not None:
        dataset.limit(args.limit)
    return dataset


def _run_eval(args: argparse.Namespace, interrupts: Interrupts) -> int:
    from rich.markup import escape

    out, err = make_console(), make_console(stderr=True)
    setup = _prepare(args, err)
    dataset = setup.dataset
    print_problems(err, setup.path, dataset)
    if not dataset.items:
        err.print(
            f"[red]error:[/red] {escape(str(setup.path))} has no usable line; nothing to score"
        )
        return EXIT_FAILED
    _announce(args, setup, err)
    # Loaded once here (a missing extra is a usage error before any work); every pass of
    # _score (the first, and a --retry pass) redacts with it.
    args.redactor = redactor_from_args(args)
    # Without an output that reads each item afterwards (the report, the comparison with a
    # baseline), the run keeps running totals, and of the labelled items what the figures
    # against their labels read: --out has written each item whole by then, so memory
    # holds the items in flight, not every item.
    keep_items = setup.report_path is not None or setup.ci.baseline_path is not None
    args.labelled = measured_labels(dataset, setup.selected, setup.fit_label)
    judges = [s.scorer.judge for s in setup.selected if s.scorer.judge is not None]
    plan = CostPlan(args, judges)
    export = Export.from_args(args)
    results_file = _results_file(setup, args.restore, export)
    stop = _Stop()
    if plan.max_cost is not None and not plan.estimate_only:  # --estimate said it above
        sample = min(plan.items, len(dataset.items))
        err.print(f"estimating from {sample} of {len(dataset.items)} item(s)")
    result = _score(args, setup, results_file, export, interrupts, out, err, stop, plan, keep_items)
    if not stop.early and result.estimate is not None:
        refusal = plan.refuses(result.estimate)
        if plan.estimate_only:
            for line in estimate_lines(result.estimate):
                out.print(line)
            if refusal is not None:
                out.print(f"with --max-cost: {refusal}")
        elif refusal is not None:
            err.print(f"[red]{refusal}[/red]; nothing was written")
        if plan.estimate_only or refusal is not None:  # the run did not start
            if results_file is not None:
                results_file.discard()
            export.close(_EXPORT_TIMEOUT_S)
            return EXIT_FAILED if refusal is not None and not plan.estimate_only else EXIT_OK
    partial = plan.stop_reason(result, len(dataset.items))
    if stop.interrupted:
        err.print(
            f"[yellow]interrupted:[/yellow] {result.item_count} of {len(dataset.items)} "
            "item(s) were scored; writing what was scored"
        )
    elif stop.unreachable is not None:
        err.print(
            f"[red]error:[/red] {escape(stop.unreachable)}: stopped after {result.item_count} "
            f"of {len(dataset.items)} item(s); writing what was scored"
        )
    return _finish(args, setup, result, results_file, export, stop, partial, out, err)


def _announce(args: argparse.Namespace, setup: _Setup, err: Console) -> None:
    """What is about to be scored (or estimated), and what the default scorers leave out."""
    from rich.markup import escape

    dataset = setup.dataset
    err.print(
        ("estimating the cost of " if args.estimate else "")
        + f"scoring {len(dataset.items)} item(s) from {escape(str(setup.path))} with "
        f"{', '.join(s.scorer.id for s in setup.selected)}"
        + (
            f" from a sample of {min(args.estimate_items, len(dataset.items))}"
            if args.estimate
            else ""
        )
        + (f" ({len(dataset.problems)} line(s) skipped)" if dataset.problems else "")
    )
    left_out = left_out_note(args, setup.judge_options, dataset)
    if left_out is not None:
        err.print(f"[yellow]{escape(left_out)}[/yellow]", soft_wrap=True)


def _results_file(setup: _Setup, restore: bool, export: Export) -> ResultsFile | None:
    """The ``--out`` file, opened now (the export closed again when it cannot be)."""
    if setup.out_path is None:
        return None
    from livescore.evals import ResultsFile

    try:
        return ResultsFile(setup.out_path, setup.dataset, restore=restore)
    except OSError as exc:
        export.close(0)
        raise UsageError(
            f"--out {setup.out_path}: cannot write there ({exc.strerror or exc})"
        ) from exc


def _finish(
    args: argparse.Namespace,
    setup: _Setup,
    result: EvalResult,
    results_file: ResultsFile | None,
    export: Export,
    stop: _Stop,
    partial: str,
    out: Console,
    err: Console,
) -> int:
    """Write the outputs, print the summary and the checks; the exit code."""
    from rich.markup import escape

    dataset, selected, ci = setup.dataset, setup.selected, setup.ci
    # The outputs first: a second Ctrl-C (counted, never raised) cannot lose them, and a
    # slow dashboard cannot delay them.
    if results_file is not None:
        results_file.finish(in_data_order=not stop.early)
    rows, notes = quality(result, dataset, selected, args.threshold)
    ci.compare(result, {s.scorer.id: s.entry.higher_is_better for s in selected}, args.threshold)
    outputs_ok, written = _write_outputs(err, setup, result, results_file, rows, stop, partial)
    if setup.fit_label and not stop.interrupted:
        lines, error = write_calibration(
            args.calibrate,
            result,
            dataset.labels_for(setup.fit_label),
            label=setup.fit_label,
            higher_is_better={
                s.scorer.id: s.entry.higher_is_better
                for s in selected
                if s.label == setup.fit_label
            },
        )
        written.extend(lines)
        if error is not None:
            err.print(error)
            outputs_ok = False
    export.close(_EXPORT_TIMEOUT_S if not stop.early else _EXPORT_TIMEOUT_INTERRUPTED_S)
    delivered = export.report(err)
    print_results(out, result, dataset)
    print_quality(out, rows, notes, dataset, selected, args.threshold)
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
    failures = _check_result(result, selected, setup.bounds, fail_on_error=args.fail_on_error)
    failures += ci.failures()
    if args.fail_on_bad_lines and dataset.problems:
        failures.append(f"--fail-on-bad-lines: {len(dataset.problems)} line(s) were skipped")
    for failure in failures:
        err.print(f"[red]check failed:[/red] {escape(failure)}")
    return EXIT_OK if outputs_ok and delivered and not failures else EXIT_FAILED


def _score(
    args: argparse.Namespace,
    setup: _Setup,
    results_file: ResultsFile | None,
    export: Export,
    interrupts: Interrupts,
    out: Console,
    err: Console,
    stop: _Stop,
    plan: CostPlan,
    keep_items: bool,
) -> EvalResult:
    """Score on a background event loop (``run_evals``; ``estimate_cost`` for
    ``--estimate``), the main thread waiting for it or for Ctrl-C.

    Returns the result, or, when Ctrl-C ended the scoring, what was scored by then (``stop``
    says why the scoring ended early).
    """
    from livescore.evals import EvalCollector

    total = len(setup.dataset.items)
    progress = _progress_bar(err, disable=args.quiet)
    task = progress.add_task(
        "scoring", total=min(plan.items, total) if plan.estimate_only else total, failed=""
    )
    scorer_ids = [s.scorer.id for s in setup.selected]
    # What was scored when Ctrl-C ends the run before run_evals returns its result.
    collector = EvalCollector(scorer_ids, keep_items=keep_items, labels=args.labelled)
    failed = 0

    def advance(item: ItemResult) -> None:
        nonlocal failed
        collector.add(item)
        if results_file is not None:
            results_file.add(item)
        if item.error is not None or any(s.status == "failed" for s in item.scores.values()):
            failed += 1
        progress.update(task, advance=1, failed=f"[red]{failed} with failures" if failed else "")

    evaluate = _evaluation(args, setup, export, plan, keep_items, advance, out)
    started = time.monotonic()
    result = _run_in_background(evaluate, interrupts, stop, progress)
    if result is None:
        result = collector.result(time.monotonic() - started)
    if result.stopped == "judge_unreachable":
        stop.unreachable = result.stop_reason
    return result


def _progress_bar(err: Console, *, disable: bool) -> Progress:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    return Progress(
        TextColumn("[bold]scoring"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[failed]}"),
        console=err,
        transient=True,
        disable=disable,
    )


def _evaluation(
    args: argparse.Namespace,
    setup: _Setup,
    export: Export,
    plan: CostPlan,
    keep_items: bool,
    advance: Callable[[ItemResult], None],
    out: Console,
) -> Callable[[], Awaitable[EvalResult]]:
    """The scoring to run: ``run_evals`` (a sample first, for ``--max-cost``), or
    ``estimate_cost`` for ``--estimate``; ``advance`` is called with each item scored."""
    from livescore._emit import DEFAULT_EMIT
    from livescore.evals import estimate_cost, run_evals
    from livescore.otel import OTelEmitter

    items, scorers = setup.dataset.items, [s.scorer for s in setup.selected]
    options: dict[str, Any] = {
        "target": setup.target,
        "on_item_complete": advance,
        "concurrency": args.concurrency,
        "emitter": OTelEmitter(
            tracer_provider=export.tracer_provider,
            logger_provider=export.logger_provider,
            emit=args.emit or DEFAULT_EMIT,
            semconv_proposals=args.semconv_proposals,
        ),
        "tracer_provider": export.tracer_provider,
        "sinks": export.sinks,
        "broker": args.broker,
        "redact": args.redactor,
        # --traces: a file of any size, its runs read from disk as they are scored; the
        # results keep what the outputs read of them (--out has written each run whole
        # by then), so memory holds the runs in flight, not the file's every run.
        "keep_runs": not args.traces,
        "stop_when_judge_unreachable": True,
    }

    def estimated(estimate: CostEstimate) -> None:
        for line in estimate_lines(estimate):
            out.print(line)

    async def evaluate() -> EvalResult:
        if plan.estimate_only:
            return await estimate_cost(items, scorers, items=plan.items, **options)
        return await run_evals(
            items,
            scorers,
            keep_items=keep_items,
            labels=args.labelled,
            max_cost=plan.budget,
            estimate_items=plan.items,
            on_estimate=estimated,
            **options,
        )

    return evaluate


def _run_in_background(
    evaluate: Callable[[], Awaitable[EvalResult]],
    interrupts: Interrupts,
    stop: _Stop,
    progress: Progress,
) -> EvalResult | None:
    """``evaluate()`` on its own event loop, the main thread waiting for it (``progress``
    shown meanwhile) or for Ctrl-C; its result (``None`` when Ctrl-C ended it: ``stop`` says
    so)."""
    background = BackgroundRun(evaluate, name="livescore-eval")
    with progress, _circuit_warning_held_back():
        background.start()
        if not background.wait(interrupts):
            # Ctrl-C: cancel, give the work a moment to wind down (a second Ctrl-C skips
            # the wait), and go on with what was scored.
            stop.interrupted = True
            background.cancel()
            background.wait(interrupts, timeout=CANCEL_GRACE_S, presses=interrupts.count)
    if stop.interrupted or not background.done:
        return None
    try:
        return background.outcome()
    except Exception as exc:
        from livescore.fleet import BrokerUnavailableError

        if isinstance(exc, BrokerUnavailableError):
            raise UsageError(f"--broker: {exc}") from exc
        raise


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


def _check_result(
    result: EvalResult,
    selected: Sequence[Selected],
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
    setup: _Setup,
    result: EvalResult,
    results_file: ResultsFile | None,
    quality: list[QualityRow],
    stop: _Stop,
    stopped: str = "",
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
    dataset, path, report_path = setup.dataset, setup.path, setup.report_path
    if report_path is not None:
        from livescore.evals import write_report

        partial = stopped
        if stop.early:
            why = "was interrupted" if stop.interrupted else f"stopped ({stop.unreachable})"
            partial = (
                f"the evaluation {why} after {result.item_count} of {len(dataset.items)} item(s)"
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
                **setup.ci.report_options(),
            )
        except OSError as exc:
            ok = False
            err.print(f"[red]error:[/red] --report {escape(str(report_path))}: {escape(str(exc))}")
        else:
            written.append(
                f"report: {escape(str(report_path))}" + (" (partial)" if partial else "")
            )
    return ok, written
