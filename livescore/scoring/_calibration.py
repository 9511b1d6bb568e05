"""A scorer's labels fitted to the user's own labelled data: :class:`Calibration` (read,
written and applied here; fitted by :func:`livescore.evals.fit_calibration`)."""

from __future__ import annotations

import bisect
import dataclasses
import hashlib
import itertools
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, TypeAlias

from livescore import _attributes as A
from livescore.scoring._result import ScoreResult

__all__ = (
    "CALIBRATION_FORMAT",
    "Calibration",
    "CalibrationEntry",
    "CalibrationError",
    "CalibrationSpec",
    "DefectWhen",
)

CALIBRATION_FORMAT: Final = 1
"""The version of the calibration file's shape (its ``format`` field)."""

DefectWhen: TypeAlias = Literal["high", "low"]
"""Which side of the threshold predicts the label: ``"high"`` (a score at or above it, as
for hallucination) or ``"low"`` (at or below it, as for faithfulness)."""

_DEFECT_WHEN = ("high", "low")


class CalibrationError(ValueError):
    """A calibration file that cannot be read or does not fit a scorer (one line)."""


@dataclass(frozen=True, slots=True)
class CalibrationEntry:
    """The calibration of one scorer (``scorer_id``) with one judge model.

    Attributes:
        judge_model: The judge model it was fitted on (``None`` for a code scorer).
        threshold: The score that splits the verdicts (see :data:`DefectWhen`).
        probability_map: ``(score, probability)`` points, scores ascending, of an isotonic
            fit of the label's probability (interpolated between points); empty when the
            score took two values or fewer.
        fitted_on: The labelled items the fit used (one half of those scored).
        held_out: Figures on the other half (``accuracy``, ``f1``, ``auroc``, ``kappa``…;
            with a probability map ``brier`` and ``brier_base_rate``).

    Example:
        >>> entry = CalibrationEntry("hallucination", "gpt-4o-mini", 0.3, "high",
        ...                          probability_map=((0.0, 0.0), (0.5, 1.0)))
        >>> entry.predicts(0.35), entry.probability(0.25)
        (True, 0.5)
    """

    scorer_id: str
    judge_model: str | None
    threshold: float
    defect_when: DefectWhen
    probability_map: tuple[tuple[float, float], ...] = ()
    fitted_on: int = 0
    held_out: Mapping[str, float | int | None] = field(default_factory=dict, hash=False)

    def predicts(self, score: float) -> bool:
        """Whether ``score`` predicts the label (the defect)."""
        if self.defect_when == "high":
            return score >= self.threshold
        return score <= self.threshold

    def probability(self, score: float) -> float | None:
        """The label's probability at ``score`` (``None`` without a probability map)."""
        points = self.probability_map
        if not points:
            return None
        scores = [p[0] for p in points]
        if score <= scores[0]:
            return points[0][1]
        if score >= scores[-1]:
            return points[-1][1]
        # scores[right - 1] <= score < scores[right]: the two points differ in score.
        right = bisect.bisect_right(scores, score)
        (x0, y0), (x1, y1) = points[right - 1], points[right]
        return y0 + (y1 - y0) * (score - x0) / (x1 - x0)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict (one entry of the file's ``scorers`` list)."""
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        data["probability_map"] = [list(p) for p in self.probability_map]
        data["held_out"] = dict(self.held_out)
        return data

    @classmethod
    def from_dict(cls, data: Any, where: str = "entry") -> CalibrationEntry:
        """Read one entry, checking every field (:class:`CalibrationError` on a bad one)."""
        if not isinstance(data, Mapping):
            raise CalibrationError(f"{where} is not an object")
        scorer_id = data.get("scorer_id")
        if not isinstance(scorer_id, str) or not scorer_id:
            raise CalibrationError(f"{where}: scorer_id must be a non-empty string")
        where = f"{where} ({scorer_id})"
        judge_model = data.get("judge_model")
        if judge_model is not None and not isinstance(judge_model, str):
            raise CalibrationError(f"{where}: judge_model must be a string or null")
        threshold = _number(data.get("threshold"), f"{where}: threshold")
        defect_when = data.get("defect_when")
        if defect_when not in _DEFECT_WHEN:
            raise CalibrationError(f"{where}: defect_when must be 'high' or 'low'")
        points = _probability_map(data.get("probability_map", []), where)
        fitted_on = data.get("fitted_on", 0)
        if isinstance(fitted_on, bool) or not isinstance(fitted_on, int) or fitted_on < 0:
            raise CalibrationError(f"{where}: fitted_on must be a count")
        held_out = data.get("held_out", {})
        if not isinstance(held_out, Mapping) or not all(
            isinstance(k, str) and (v is None or _is_number(v)) for k, v in held_out.items()
        ):
            raise CalibrationError(f"{where}: held_out must map names to numbers")
        held = dict(held_out)
        return cls(scorer_id, judge_model, threshold, defect_when, points, fitted_on, held)


CalibrationSpec: TypeAlias = "Calibration | str | os.PathLike[str]"
"""What ``calibration=`` takes: a :class:`Calibration`, or the path of its file."""


@dataclass(frozen=True, slots=True)
class Calibration:
    """Thresholds (and probability maps) fitted on the user's labels, per scorer and judge.

    A calibrated score keeps its value; its label becomes ``label`` when the score predicts
    the defect, else ``not_<label>``. Fit one with ``livescore eval --label FIELD
    --calibrate FILE``.

    Attributes:
        label: The 0/1 field of the labelled data the scorers were fitted against.
        entries: One per (scorer id, judge model).
        created: When it was fitted (ISO 8601, UTC).
        format: The file format's version (:data:`CALIBRATION_FORMAT`).

    Example:
        >>> calibration = Calibration("hallucinated", (
        ...     CalibrationEntry("hallucination", "gpt-4o-mini", 0.3, "high"),), created="")
        >>> result = ScoreResult(run_id="r", scorer_id="hallucination", score=0.4,
        ...                      label="low", judge_model="gpt-4o-mini")
        >>> calibration.apply(result).label
        'hallucinated'
    """

    label: str
    entries: tuple[CalibrationEntry, ...]
    created: str
    format: int = CALIBRATION_FORMAT
    _id: str = field(init=False, repr=False, compare=False, hash=False, default="")

    def __post_init__(self) -> None:
        # Hashed once: every calibrated score carries the id.
        canonical = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        object.__setattr__(
            self, "_id", "cal-" + hashlib.sha256(canonical.encode()).hexdigest()[:12]
        )

    @property
    def id(self) -> str:
        """A short name of its content: ``"cal-"`` + 12 hex digits of its SHA-256."""
        return self._id

    @property
    def negative_label(self) -> str:
        """The label of a score that does not predict the defect: ``not_<label>``."""
        return f"not_{self.label}"

    def entry(self, scorer_id: str, judge_model: str | None) -> CalibrationEntry | None:
        """The entry for this scorer and judge model, if the file has one."""
        for entry in self.entries:
            if entry.scorer_id == scorer_id and entry.judge_model == judge_model:
                return entry
        return None

    def entry_for(self, scorer_id: str, judge_model: str | None) -> CalibrationEntry:
        """The entry a scorer with this judge uses; a one-line :class:`CalibrationError`
        when there is none (fitted for another judge model, or not for this scorer)."""
        entry = self.entry(scorer_id, judge_model)
        if entry is not None:
            return entry
        fitted = [e.judge_model for e in self.entries if e.scorer_id == scorer_id]
        if fitted:
            models = ", ".join(repr(m) for m in fitted)
            raise CalibrationError(
                f"calibration {self.id} of scorer {scorer_id!r} was fitted for judge model "
                f"{models}, not {judge_model!r}: fit one for this judge (livescore eval "
                "--label FIELD --calibrate FILE)"
            )
        calibrated = ", ".join(sorted({e.scorer_id for e in self.entries})) or "none"
        raise CalibrationError(
            f"calibration {self.id} has no entry for scorer {scorer_id!r} "
            f"(it calibrates: {calibrated})"
        )

    def apply(self, result: ScoreResult) -> ScoreResult:
        """A copy of ``result`` with the calibrated label and ``livescore.calibration*``
        attributes; a result that is not scored, or has no entry, is returned as it is."""
        if result.status != "scored" or result.score is None:
            return result
        entry = self.entry(result.scorer_id, result.judge_model)
        if entry is None:
            return result
        attributes = dict(result.attributes)
        attributes[A.LIVESCORE_CALIBRATION] = self.id
        attributes[A.LIVESCORE_CALIBRATION_THRESHOLD] = float(entry.threshold)
        probability = entry.probability(result.score)
        if probability is not None:
            attributes[A.LIVESCORE_CALIBRATION_PROBABILITY] = float(probability)
        label = self.label if entry.predicts(result.score) else self.negative_label
        return dataclasses.replace(result, label=label, attributes=attributes)

    def to_dict(self) -> dict[str, Any]:
        """The file's JSON object."""
        return {
            "format": self.format,
            "label": self.label,
            "created": self.created,
            "scorers": [entry.to_dict() for entry in self.entries],
        }

    @classmethod
    def from_dict(cls, data: Any) -> Calibration:
        """Read the file's JSON object (:class:`CalibrationError` on anything amiss)."""
        if not isinstance(data, Mapping):
            raise CalibrationError("not a calibration: the file holds no JSON object")
        version = data.get("format")
        if version != CALIBRATION_FORMAT:
            raise CalibrationError(
                f"calibration format {version!r} is not one this livescore reads "
                f"({CALIBRATION_FORMAT})"
            )
        label = data.get("label")
        if not isinstance(label, str) or not label:
            raise CalibrationError("label must be the name of the 0/1 field it was fitted on")
        created = data.get("created", "")
        if not isinstance(created, str):
            raise CalibrationError("created must be a date and time (ISO 8601 text)")
        raw = data.get("scorers")
        if not isinstance(raw, list) or not raw:
            raise CalibrationError("scorers must be a non-empty list of entries")
        entries = tuple(
            CalibrationEntry.from_dict(item, f"scorers[{i}]") for i, item in enumerate(raw)
        )
        keys = [(entry.scorer_id, entry.judge_model) for entry in entries]
        for index, (scorer_id, judge_model) in enumerate(keys):
            if (scorer_id, judge_model) in keys[:index]:
                raise CalibrationError(
                    f"two entries for scorer {scorer_id!r} and judge model {judge_model!r}"
                )
        return cls(label=label, entries=entries, created=created)

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the file atomically; the path written."""
        from livescore._files import write_text_atomically

        return write_text_atomically(path, json.dumps(self.to_dict(), indent=2) + "\n")

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Calibration:
        """Read a calibration file (:class:`CalibrationError`, naming the file, on a bad one).

        Example:
            >>> import tempfile, pathlib
            >>> path = pathlib.Path(tempfile.mkdtemp()) / "calibration.json"
            >>> _ = path.write_text("{}")
            >>> try:
            ...     Calibration.load(path)
            ... except CalibrationError as exc:
            ...     print(str(exc).split(": ", 1)[1])
            calibration format None is not one this livescore reads (1)
        """
        name = os.fspath(path)
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise CalibrationError(f"{name}: cannot read it ({reason})") from None
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise CalibrationError(f"{name}: not JSON ({exc})") from None
        try:
            return cls.from_dict(data)
        except CalibrationError as exc:
            raise CalibrationError(f"{name}: {exc}") from None


def as_calibration(spec: CalibrationSpec) -> Calibration:
    """A :class:`Calibration`, read from its file when ``spec`` is a path."""
    if isinstance(spec, Calibration):
        return spec
    if isinstance(spec, str | os.PathLike):
        return Calibration.load(spec)
    raise TypeError(f"calibration must be a Calibration or a file path, not {spec!r}")


def _is_number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value)


def _number(value: Any, what: str) -> float:
    if not _is_number(value):
        raise CalibrationError(f"{what} must be a finite number")
    return float(value)


def _probability_map(value: Any, where: str) -> tuple[tuple[float, float], ...]:
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise CalibrationError(f"{where}: probability_map must be a list of [score, p] pairs")
    points: list[tuple[float, float]] = []
    for point in value:
        if not isinstance(point, Sequence) or isinstance(point, str) or len(point) != 2:
            raise CalibrationError(f"{where}: probability_map must be a list of [score, p] pairs")
        score = _number(point[0], f"{where}: a probability_map score")
        probability = _number(point[1], f"{where}: a probability_map probability")
        if not 0.0 <= probability <= 1.0:
            raise CalibrationError(f"{where}: probability_map probabilities lie in [0, 1]")
        points.append((score, probability))
    if any(b[0] < a[0] for a, b in itertools.pairwise(points)):
        raise CalibrationError(f"{where}: probability_map scores must be ascending")
    return tuple(points)
