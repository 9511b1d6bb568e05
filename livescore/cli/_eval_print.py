"""``livescore eval``: what it prints (the skipped lines, the summary, the judge quality)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from livescore.scorers import scorer_catalog

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from livescore.cli._eval_options import Selected
    from livescore.evals import CostEstimate, Dataset, EvalResult, QualityRow

__all__ = (
    "estimate_lines",
    "measured_labels",
    "print_problems",
    "print_quality",
    "print_results",
    "quality",
)

_MAX_PROBLEMS_SHOWN = 5
_MAX_FIELDS_SHOWN = 10


def print_problems(err: Console, path: Path, dataset: Dataset) -> None:
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


def print_results(out: Console, result: EvalResult, dataset: Dataset) -> None:
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
        f"{result.item_count} item(s) in {result.duration_s:.1f} s; "
        f"{calls} judge call{'' if calls == 1 else 's'}, {result.usage.total_tokens} tokens"
        + _cost_text(result)
    )


def quality(
    result: EvalResult,
    dataset: Dataset,
    selected: Sequence[Selected],
    threshold: float,
) -> tuple[list[QualityRow], list[str]]:
    """The judge-quality rows of every label the selected scorers predict (and the data
    has), and the notes about labels no scorer could be measured on."""
    rows: list[QualityRow] = []
    notes: list[str] = []
    for label, predictors in _by_label(selected).items():
        measured = result.label_quality(
            dataset.labels_for(label),
            label=label,
            scorers={p.scorer.id: p.entry.higher_is_better for p in predictors},
            threshold=threshold,
        )
        rows.extend(measured.rows)
        notes.extend(measured.notes)
    return rows, notes


def measured_labels(
    dataset: Dataset, selected: Sequence[Selected], fit_label: str | None
) -> list[int | None] | None:
    """Which items carry a label the scores are measured against (the quality figures,
    ``--calibrate``): 1 where one does, by item index; ``None`` when none does."""
    names = [*_by_label(selected), *([fit_label] if fit_label else [])]
    columns = [dataset.labels_for(name) for name in names]
    marks: list[int | None] = [
        1 if any(column[i] is not None for column in columns) else None
        for i in range(len(dataset.items))
    ]
    return marks if any(marks) else None


def _by_label(selected: Sequence[Selected]) -> dict[str, list[Selected]]:
    by_label: dict[str, list[Selected]] = {}
    for s in selected:
        if s.label:
            by_label.setdefault(s.label, []).append(s)
    return by_label


def print_quality(
    out: Console,
    rows: Sequence[QualityRow],
    notes: Sequence[str],
    dataset: Dataset,
    selected: Sequence[Selected],
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
    per_item = cost / result.item_count if result.item_count else None
    return f", judge cost {_usd(cost)} ({_usd(per_item)} per item)"


def _fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


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


def estimate_lines(estimate: CostEstimate) -> list[str]:
    """The estimate, as ``--estimate`` and ``--max-cost`` print it."""
    head = f"estimate from {estimate.sample} of {estimate.total} item(s):"
    if estimate.cost is not None:
        cost = (
            f"judge cost {_usd(estimate.cost)} for all {estimate.total} (95 % range "
            f"{_usd(estimate.cost_low)} to {_usd(estimate.cost_high)}), "
            f"{_usd(estimate.cost_per_item)} per item"
        )
    else:
        cost = (
            f"judge cost unknown: no price for {', '.join(estimate.unpriced)} "
            "(--judge-prices or $LIVESCORE_JUDGE_PRICES)"
        )
    return [
        f"{head} {cost}",
        f"  judge calls {estimate.calls_per_item:.2f} and tokens "
        f"{estimate.tokens_per_item:,.0f} per item; about {_duration(estimate.seconds)} for "
        f"the whole dataset at --concurrency {estimate.concurrency}",
    ]


def _duration(seconds: float) -> str:
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
