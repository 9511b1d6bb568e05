"""``livescore eval``: the scorers, the target and the paths the options name, checked
before any work (a usage error, exit 2, says what is wrong)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from livescore._catalog import parse_scorer_spec
from livescore._files import output_target
from livescore.cli._common import UsageError, finite_float
from livescore.cli._judge_options import JudgeOptions
from livescore.cli._loading import load_attribute
from livescore.scorers import CatalogEntry, ScorerOptions

if TYPE_CHECKING:
    from livescore.evals import Dataset
    from livescore.scoring import Scorer

__all__ = (
    "DEFAULT_SCORERS",
    "Bound",
    "Selected",
    "check_bounds",
    "check_output",
    "check_outputs",
    "check_threshold",
    "left_out_note",
    "load_target",
    "same_file",
    "select_scorers",
    "target_source",
)

DEFAULT_SCORERS = ("keyword-coverage",)
"""Scorers run when ``--scorer`` is not given (judge scorers join when a model is set)."""


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


@dataclass(slots=True)
class Selected:
    entry: CatalogEntry
    scorer: Scorer
    label: str | None = None  # the 0/1 defect label its score predicts on labelled data


def select_scorers(args: argparse.Namespace, judge_options: JudgeOptions) -> list[Selected]:
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
    selected: list[Selected] = []
    for entry, argument in parsed:
        try:
            scorer = entry.build(argument, options)
        except ValueError as exc:
            raise UsageError(f"--scorer {entry.name}: {exc}") from None
        if any(s.scorer.id == scorer.id for s in selected):
            raise UsageError(f"two --scorer options build the scorer id {scorer.id!r}")
        # --label measures every judge scorer against one field; code scorers keep theirs.
        label = args.label if args.label and entry.needs_judge else entry.predicts
        selected.append(Selected(entry, scorer, label))
    return selected


def left_out_note(
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


def check_threshold(threshold: float, selected: Sequence[Selected]) -> None:
    for s in selected:
        low, high = s.entry.score_range
        if s.label and not low <= threshold <= high:
            raise UsageError(
                f"--threshold {threshold:g} is outside the {s.scorer.id} scorer's scores "
                f"({low:g} to {high:g})"
            )


def check_bounds(bounds: Sequence[Bound], selected: Sequence[Selected]) -> None:
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


def load_target(spec: str) -> Any:
    """The callable or agent ``--target MODULE:ATTR`` names, checked to be one a run can
    call."""
    _, value = load_attribute(spec, "--target")
    from livescore.evals import resolve_target

    try:
        resolve_target(value)
    except TypeError as exc:
        raise UsageError(f"--target {spec}: {exc}") from exc
    return value


def check_output(option: str, path: Path) -> None:
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


def same_file(first: Path, second: Path) -> bool:
    if output_target(first) == output_target(second):
        return True
    try:
        return first.exists() and second.exists() and os.path.samefile(first, second)
    except OSError:
        return False


def check_outputs(
    out_path: Path | None,
    report_path: Path | None,
    inputs: Sequence[tuple[str, Path]],
) -> None:
    """The output paths are writable, distinct, and none is an input of the command."""
    outputs = [("--out", out_path), ("--report", report_path)]
    for option, path in outputs:
        if path is None:
            continue
        check_output(option, path)
        for what, source in inputs:
            if same_file(path, source):
                raise UsageError(
                    f"{option} {path} is {what}: writing there would replace it; "
                    "choose another path"
                )
    if out_path is not None and report_path is not None and same_file(out_path, report_path):
        raise UsageError(f"--out and --report both name {out_path}: give each its own file")


def target_source(target: Any) -> Path | None:
    module = sys.modules.get(getattr(target, "__module__", "") or "")
    file = getattr(module, "__file__", None)
    return Path(file) if file else None
