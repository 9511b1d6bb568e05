"""The ``livescore`` command: ``livescore eval`` over a dataset, ``livescore demo``.

Exit codes: 0 when the evaluation ran (items or scores that failed are reported, not
fatal); 1 when the dataset has no usable line; 2 for usage errors (unknown option or
scorer, no judge model for an LLM scorer, a target that cannot be imported, a file that
cannot be read).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from livescore.judges import Judge, JudgeConfigError, resolve_judge
from livescore.runs import Run, Step, extract_retrieved_documents, extract_tool_results
from livescore.scoring import Scorer

from ._dataset import Dataset, load_dataset
from ._quality import BinaryQuality, binary_quality
from ._report import QualityRow, write_report
from ._result import EvalResult, ItemResult
from ._run_evals import get_item_context, run_evals

__all__ = ("build_parser", "main")

EXIT_OK = 0
EXIT_NO_DATA = 1
EXIT_USAGE = 2

JUDGE_MODEL_ENV = "LIVESCORE_JUDGE_MODEL"
"""Environment variable read when ``--model`` is not given."""

SCORER_NAMES = ("hallucination", "keyword-coverage")


class UsageError(Exception):
    """A command-line mistake: printed, then exit code 2."""


def _console(stderr: bool = False) -> Console:
    # Piped output (CI logs, tests) gets a generous width instead of rich's 80 columns.
    width = None if sys.stdout.isatty() else int(os.environ.get("COLUMNS", "160"))
    return Console(stderr=stderr, width=width, highlight=False)


def eval_context(run: Run, step: Step | None) -> list[str] | None:
    """Ground truth for ``livescore eval``: the item's context, else the run's evidence.

    A dataset line's ``context`` wins; for a target's runs without one, the successful tool
    results and retrieved documents of the run are the context (as in live scoring).

    Example:
        >>> eval_context(Run(metadata={"context": ["Paris is in France."]}), None)
        ['Paris is in France.']
    """
    item = get_item_context(run, step)
    if item is not None:
        return item
    evidence = [r.to_context() for r in extract_tool_results(run)]
    evidence += extract_retrieved_documents(run)
    return evidence or None


def judge_model_string(model: str) -> str:
    """``"gpt-4o-mini"`` means ``"openai/gpt-4o-mini"``: the prefix is optional on the CLI.

    A name with a slash is taken as ``provider/model``, so a model id that has a slash of its
    own (``meta-llama/Llama-3.1-8B-Instruct`` on vLLM) is written with the prefix:
    ``openai/meta-llama/Llama-3.1-8B-Instruct``.

    Example:
        >>> judge_model_string("gpt-4o-mini"), judge_model_string("openai/llama3.2")
        ('openai/gpt-4o-mini', 'openai/llama3.2')
    """
    model = model.strip()
    return model if "/" in model or not model else f"openai/{model}"


def add_judge_arguments(parser: Any) -> None:
    """The judge options ``livescore eval`` and ``livescore demo`` share.

    ``parser`` is an ``argparse`` parser or argument group.
    """
    parser.add_argument(
        "--model",
        help="the judge model, '[openai/]<model>', on the OpenAI-compatible endpoint of "
        f"OPENAI_BASE_URL / OPENAI_API_KEY (default: ${JUDGE_MODEL_ENV})",
    )
    parser.add_argument(
        "--base-url", help="the judge's OpenAI-compatible base URL (default: $OPENAI_BASE_URL)"
    )
    parser.add_argument(
        "--judge-timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="timeout of one judge call (default: 60)",
    )
    parser.add_argument(
        "--mode",
        choices=("three_step", "one_call"),
        default="three_step",
        help="hallucination: claims, verdicts and reason in three judge calls (default) or one",
    )


def judge_from_arguments(args: argparse.Namespace) -> Judge | None:
    """The judge the shared options name; ``None`` when no model is given anywhere.

    Raises:
        livescore.judges.JudgeConfigError: The model or endpoint is unusable.
    """
    model = args.model or os.environ.get(JUDGE_MODEL_ENV)
    if not model:
        return None
    options: dict[str, Any] = {"timeout": args.judge_timeout}
    if args.base_url:
        options["base_url"] = args.base_url
    return resolve_judge(judge_model_string(model), **options)


def _judge(args: argparse.Namespace) -> Judge:
    try:
        judge = judge_from_arguments(args)
    except JudgeConfigError as exc:
        raise UsageError(str(exc)) from exc
    if judge is None:
        raise UsageError(
            "the hallucination scorer needs a judge model: pass --model openai/<model> or set "
            f"{JUDGE_MODEL_ENV} (the endpoint comes from OPENAI_BASE_URL / OPENAI_API_KEY)"
        )
    return judge


def _build_scorers(args: argparse.Namespace) -> list[Scorer]:
    names = list(dict.fromkeys(args.scorer or ()))
    if not names:
        has_model = bool(args.model or os.environ.get(JUDGE_MODEL_ENV))
        names = ["hallucination", "keyword-coverage"] if has_model else ["keyword-coverage"]
    scorers: list[Scorer] = []
    for name in names:
        if name == "hallucination":
            from livescore.scorers import create_hallucination_scorer

            scorers.append(
                create_hallucination_scorer(
                    model=_judge(args), get_context=eval_context, mode=args.mode
                )
            )
        elif name == "keyword-coverage":
            try:
                from livescore.scorers import (  # type: ignore[attr-defined,unused-ignore]
                    create_keyword_coverage_scorer,
                )
            except ImportError as exc:
                raise UsageError("the keyword-coverage scorer is not available") from exc
            scorers.append(create_keyword_coverage_scorer(reference=args.keyword_reference))
        else:  # argparse's choices make this unreachable; kept for direct callers
            raise UsageError(f"unknown scorer {name!r}; choose from {', '.join(SCORER_NAMES)}")
    return scorers


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
    if not (callable(value) or hasattr(value, "ainvoke")):
        raise UsageError(
            f"--target {spec!r} is a {type(value).__name__}: it must be a callable "
            "(input) -> output or a LangChain Runnable"
        )
    return value


# -- eval ---------------------------------------------------------------------------------


def _quality_rows(
    result: EvalResult, dataset: Dataset, threshold: float
) -> tuple[list[QualityRow], list[str]]:
    rows: list[QualityRow] = []
    notes: list[str] = []
    labelled = [it for it in result.items if dataset.labels[it.index] is not None]
    if not labelled:
        return rows, notes
    for sid in result.scores:
        if not sid.startswith("hallucination"):
            continue  # the labels say "hallucinated": only a hallucination score predicts them
        pairs = [
            (int(dataset.labels[it.index] or 0), it.scores[sid].score, it.scores[sid])
            for it in labelled
            if sid in it.scores and it.scores[sid].score is not None
        ]
        if not pairs:
            notes.append(f"{sid}: no labelled item was scored, so no quality figures")
            continue
        labels = [p[0] for p in pairs]
        scores = [float(p[1] or 0.0) for p in pairs]
        calls = sum(p[2].usage.calls for p in pairs)
        tokens = sum(p[2].usage.total_tokens for p in pairs)
        rows.append(
            QualityRow(
                name=sid,
                quality=binary_quality(labels, scores, threshold=threshold),
                calls_per_item=calls / len(pairs),
                tokens_per_item=tokens / len(pairs),
                coverage=f"{len(pairs)}/{len(labelled)} labelled items scored",
            )
        )
    if rows:
        # HaluEval's hallucinated answers are longer: a judge must beat output length alone.
        labels = [int(dataset.labels[it.index] or 0) for it in labelled]
        lengths = [float(len(it.output_text)) for it in labelled]
        median = sorted(lengths)[len(lengths) // 2]
        baseline = binary_quality(labels, lengths, threshold=median)
        rows.append(
            QualityRow(
                name="length-only baseline (REFERENCE)",
                quality=baseline,
                coverage=f"predicts hallucinated when output ≥ {median:.0f} chars (median)",
            )
        )
    return rows, notes


def _summary_table(result: EvalResult) -> Table:
    table = Table(title="Scores", title_justify="left")
    for name, justify in (
        ("scorer", "left"),
        ("mean", "right"),
        ("scored", "right"),
        ("failed", "right"),
        ("skipped", "right"),
        ("judge calls", "right"),
        ("tokens", "right"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
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


def _quality_table(rows: Sequence[QualityRow]) -> Table:
    table = Table(title="Judge quality (hallucinated = positive)", title_justify="left")
    for name in ("scored by", "n", "threshold", "accuracy", "precision", "recall", "F1"):
        table.add_column(name, justify="left" if name == "scored by" else "right")
    for name in ("AUROC", "calls/item", "tokens/item"):
        table.add_column(name, justify="right")
    for row in rows:
        q: BinaryQuality = row.quality
        table.add_row(
            row.name,
            str(q.n),
            _fmt(q.threshold, 2),
            _fmt(q.accuracy),
            _fmt(q.precision),
            _fmt(q.recall),
            _fmt(q.f1),
            _fmt(q.auroc),
            _fmt(row.calls_per_item, 2),
            _fmt(row.tokens_per_item, 0),
        )
    return table


def _write_jsonl(path: Path, result: EvalResult, dataset: Dataset) -> None:
    with path.open("w", encoding="utf-8") as out:
        for item in result.items:
            record = item.to_dict(include_run=True)
            record["line"] = dataset.lines[item.index]
            label = dataset.labels[item.index]
            if label is not None:
                record["hallucinated"] = label
            out.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")


async def _run_eval(
    args: argparse.Namespace,
    scorers: list[Scorer],
    target: Any,
    dataset: Dataset,
    err: Console,
) -> EvalResult:
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
        if item.error is not None or any(s.status == "failed" for s in item.scores.values()):
            failed += 1
        progress.update(task, advance=1, failed=f"[red]{failed} with failures" if failed else "")

    with progress:
        return await run_evals(
            dataset.items,
            scorers,
            target=target,
            on_item_complete=advance,
            concurrency=args.concurrency,
        )


def _cmd_eval(args: argparse.Namespace) -> int:
    out, err = _console(), _console(stderr=True)
    if args.concurrency < 1:
        raise UsageError("--concurrency must be at least 1")
    if args.threshold < 0.0:
        raise UsageError("--threshold must not be negative")
    scorers = _build_scorers(args)
    target = _load_target(args.target) if args.target else None
    path = Path(args.data)
    try:
        dataset = load_dataset(path, require_output=target is None)
    except OSError as exc:
        raise UsageError(f"cannot read {str(path)!r}: {exc.strerror or exc}") from exc
    if args.limit is not None:
        for field in ("items", "lines", "labels"):
            setattr(dataset, field, getattr(dataset, field)[: args.limit])

    for problem in dataset.problems:
        where = f"{escape(str(path))}:{problem.line}"
        err.print(f"[yellow]skipped[/yellow] {where}: {escape(problem.message)}")
    if not dataset.items:
        err.print(f"[red]error:[/red] {escape(str(path))} has no usable line; nothing to score")
        return EXIT_NO_DATA
    err.print(
        f"scoring {len(dataset.items)} item(s) from {escape(str(path))} with "
        f"{', '.join(s.id for s in scorers)}"
        + (f" ({len(dataset.problems)} line(s) skipped)" if dataset.problems else "")
    )

    result = anyio.run(_run_eval, args, scorers, target, dataset, err)

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

    quality, notes = _quality_rows(result, dataset, args.threshold)
    if quality:
        out.print(_quality_table(quality))
        baseline = quality[-1]
        out.print(
            f"A score ≥ {args.threshold:g} predicts 'hallucinated' (--threshold); AUROC needs "
            "no threshold. The length-only baseline is what output length alone achieves "
            f"(it {escape(baseline.coverage)}); a judge should beat it."
        )
    elif dataset.labelled and not any(s.id.startswith("hallucination") for s in scorers):
        out.print(
            "The data is labelled (hallucinated 0/1): add --scorer hallucination --model "
            "openai/<model> to measure the judge's accuracy, F1 and AUROC."
        )
    for note in notes:
        out.print(escape(note))

    if args.out:
        _write_jsonl(Path(args.out), result, dataset)
        out.print(f"results: {escape(args.out)}")
    if args.report:
        write_report(
            args.report,
            result,
            title=f"livescore eval: {path.name}",
            source=str(path),
            lines=dataset.lines,
            labels=dataset.labels,
            quality=quality,
            problems=[str(p) for p in dataset.problems],
        )
        out.print(f"report: {escape(args.report)}")
    return EXIT_OK


# -- parser -------------------------------------------------------------------------------


def _add_eval(sub: Any) -> None:
    p = sub.add_parser(
        "eval",
        help="score a JSON-lines dataset (ready outputs, or inputs run through a target)",
        description=(
            "Score each line of DATA with the chosen scorers. A line is a JSON object with "
            "input and output (ready answers) plus optional context (string or list), "
            "ground_truth and id; or, with --target, just the input. The hallucination "
            "benchmark format (question, context, output, hallucinated 0/1) is read too, and "
            "its labels give judge-quality figures (accuracy, precision, recall, F1, AUROC). "
            "Bad lines are reported with their number and skipped."
        ),
        epilog=(
            "The judge endpoint comes from OPENAI_BASE_URL / OPENAI_API_KEY (any "
            "OpenAI-compatible server). Exit codes: 0 ran (even with failed items or "
            "scores), 1 no usable line, 2 usage error.\n\n"
            "example: livescore eval data/hallucination/halueval_qa_200.jsonl "
            "--scorer hallucination --model openai/gpt-4o-mini --limit 50 --report report.html"
        ),
    )
    p.add_argument("data", metavar="DATA.jsonl", help="the dataset, one JSON object per line")
    p.add_argument(
        "--scorer",
        action="append",
        choices=SCORER_NAMES,
        help="a scorer to run (repeatable); default: keyword-coverage, plus hallucination "
        "when a judge model is configured",
    )
    add_judge_arguments(p)
    p.add_argument(
        "--keyword-reference",
        choices=("input", "ground_truth"),
        default="input",
        help="keyword coverage: compare the output with the input (default) or ground_truth",
    )
    p.add_argument(
        "--target",
        metavar="MODULE:ATTR",
        help="produce outputs with this callable or LangChain Runnable",
    )
    p.add_argument("--concurrency", type=int, default=4, help="items in flight (default: 4)")
    p.add_argument("--limit", type=int, metavar="N", help="score only the first N usable lines")
    p.add_argument("--out", metavar="RESULTS.jsonl", help="write one JSON result per item")
    p.add_argument("--report", metavar="REPORT.html", help="write a self-contained HTML report")
    p.add_argument(
        "--threshold",
        type=float,
        default=0.5,
        help="labelled data: a hallucination score at or above this predicts 'hallucinated' "
        "(default: 0.5)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(handler=_cmd_eval)


def _add_demo(sub: Any) -> None:
    from livescore.demo import add_demo_arguments, run_demo_command

    p = sub.add_parser(
        "demo",
        help="watch a LangChain agent being scored live (the README's main command)",
        description=(
            "Run a small LangChain agent with real tools over a handful of questions, with "
            "live hallucination and keyword-coverage scoring attached, and show each run's "
            "trace with its tool calls and evaluation spans as they were exported."
        ),
    )
    add_demo_arguments(p)
    p.set_defaults(handler=run_demo_command)


def build_parser() -> argparse.ArgumentParser:
    """The ``livescore`` argument parser (``eval`` and ``demo`` sub-commands)."""
    from livescore import __version__

    parser = argparse.ArgumentParser(
        prog="livescore",
        description=(
            "Score what AI agents say, live or over a dataset, and publish every score as "
            "OpenTelemetry data."
        ),
        epilog="Run 'livescore demo' to see it work, 'livescore eval -h' for datasets.",
    )
    parser.add_argument("--version", action="version", version=f"livescore {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="{eval,demo}")
    _add_eval(sub)
    _add_demo(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``livescore`` command; returns the exit code.

    Example:
        >>> main(["--version"])  # doctest: +SKIP
        livescore 0.1.0
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Callable[[argparse.Namespace], int] | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        return handler(args)
    except UsageError as exc:
        _console(stderr=True).print(f"[red]error:[/red] {escape(str(exc))}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        _console(stderr=True).print("interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
