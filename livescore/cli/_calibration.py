"""``--calibration FILE``, shared by ``eval``, ``worker`` and ``collect``: the scorers' labels
set by a calibration fitted on the user's own labels (``livescore eval --calibrate``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from livescore.cli._common import UsageError

__all__ = (
    "CALIBRATION_HELP",
    "add_calibration_argument",
    "calibrate_scorers",
    "calibration_label",
    "write_calibration",
)

CALIBRATION_HELP = (
    "label the scores as this calibration file says (written by livescore eval --label FIELD "
    "--calibrate FILE): FIELD or not_FIELD by the threshold fitted on your labels, with the "
    "label's probability where it was fitted; scorers it has no entry for keep their labels "
    "(said once at start-up); one fitted for another judge model is refused"
)


def add_calibration_argument(group: Any, *, extra: str = "") -> None:
    """Add ``--calibration FILE`` to a parser or argument group."""
    group.add_argument(
        "--calibration", metavar="FILE", help=CALIBRATION_HELP + (f"; {extra}" if extra else "")
    )


def calibrate_scorers(items: Sequence[Any], path: str, say: Callable[[str], None]) -> list[Any]:
    """``items`` (scorers or :class:`~livescore.live.ScorerConfig` objects), each scorer the
    calibration has an entry for calibrated with it.

    A scorer the file does not name keeps its own labels, said once through ``say``: a
    worker's list mixes code and judge scorers, and a file fitted on one label calibrates
    the judge scorers measured against it. What cannot work is refused at start-up with one
    line: a file that cannot be read, an entry fitted for another judge model, a file that
    names none of the scorers.

    Raises:
        UsageError: As above.
    """
    from livescore.evals import calibrate_scorers as calibrate
    from livescore.live import ScorerConfig
    from livescore.scoring import Calibration, CalibrationError

    try:
        calibration = Calibration.load(path)
    except CalibrationError as exc:
        raise UsageError(f"--calibration {exc}") from None
    scorers = [item.scorer if isinstance(item, ScorerConfig) else item for item in items]
    try:
        calibrated, left = calibrate(scorers, calibration)
    except CalibrationError as exc:
        raise UsageError(f"--calibration {path}: {exc}") from None
    if left:
        say(
            f"note: --calibration {path} ({calibration.id}, label {calibration.label!r}) has no "
            f"entry for {', '.join(left)}: their labels stay the scorers' own"
        )
    return [
        dataclasses.replace(item, scorer=scorer) if isinstance(item, ScorerConfig) else scorer
        for item, scorer in zip(items, calibrated, strict=True)
    ]


def calibration_label(label: str | None, predicted: Sequence[str | None]) -> str:
    """The field ``--calibrate`` fits against: ``--label``, else the one label the selected
    scorers predict (hallucination and faithfulness both predict ``hallucinated``).

    Raises:
        UsageError: No ``--label`` and not exactly one predicted label.
    """
    if label:
        return label
    labels = sorted({p for p in predicted if p})
    if len(labels) == 1:
        return labels[0]
    found = f" (they predict {', '.join(labels)})" if labels else ""
    raise UsageError(
        f"--calibrate needs --label FIELD: the 0/1 field to fit the scorers against{found}"
    )


def write_calibration(
    path: str,
    result: Any,
    labels: Sequence[int | None],
    *,
    label: str,
    higher_is_better: dict[str, bool],
) -> tuple[list[str], str | None]:
    """Fit the scorers of ``higher_is_better`` on ``result`` and write the file.

    Returns:
        The lines to print (rich markup): one per scorer and judge with its threshold and
        held-out figures, then where the file is; and the error when none was written.
    """
    from rich.markup import escape

    from livescore.evals import fit_calibration
    from livescore.scoring import CalibrationError

    try:
        calibration = fit_calibration(
            result,
            labels,
            label=label,
            scorers=list(higher_is_better),
            higher_is_better=higher_is_better,
        )
    except CalibrationError as exc:
        return [], f"[red]error:[/red] --calibrate {escape(path)}: {escape(str(exc))}"
    lines = []
    for entry in calibration.entries:
        held = entry.held_out
        side = "≥" if entry.defect_when == "high" else "≤"
        line = (
            f"Calibrated {entry.scorer_id} (judge {entry.judge_model or 'none'}) on "
            f"{entry.fitted_on} items: score {side} {entry.threshold:.3g} predicts '{label}'; "
            f"on the other {held.get('n')}: accuracy {_fmt(held.get('accuracy'))}, "
            f"balanced accuracy {_fmt(held.get('balanced_accuracy'))}, F1 "
            f"{_fmt(held.get('f1'))}, AUROC {_fmt(held.get('auroc'))}"
        )
        if entry.probability_map:
            line += (
                f"; probability map Brier {_fmt(held.get('brier'))} (base rate alone "
                f"{_fmt(held.get('brier_base_rate'))})"
            )
        lines.append(escape(line + "."))
    fitted = {entry.scorer_id for entry in calibration.entries}
    missing = [sid for sid in higher_is_better if sid not in fitted]
    if missing:
        lines.append(
            escape(
                f"Not calibrated: {', '.join(missing)} (too few labelled items of a class in "
                "a half, or none scored)."
            )
        )
    try:
        calibration.save(path)
    except OSError as exc:
        reason = escape(exc.strerror or str(exc))
        return lines, f"[red]error:[/red] --calibrate {escape(path)}: {reason}"
    return [*lines, f"calibration: {escape(path)} ({calibration.id})"], None


def _fmt(value: float | int | None) -> str:
    return "–" if value is None else f"{value:.3f}"
