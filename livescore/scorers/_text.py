"""What the code scorers share: the text an answer is compared with (the run's ground truth or
the user's input) and how their steps become a scorer. Pure text helpers live in
:mod:`livescore._text`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Protocol, TypeAlias

from livescore._messages import message_text
from livescore._text import DEFAULT_MAX_TEXT_CHARS
from livescore.pii import RedactSpec
from livescore.scoring import CalibrationSpec, NotScorable, Scorer, StepContext, create_scorer

__all__ = (
    "REFERENCES",
    "SIMILARITY_LABELS",
    "CodeSteps",
    "Reference",
    "TextComparison",
    "band_label",
    "check_reference",
    "code_scorer",
    "reference_text",
    "similarity_label",
)

Reference: TypeAlias = Literal["auto", "input", "ground_truth"]
"""What an answer is compared with: ``"ground_truth"``, ``"input"``, or ``"auto"`` (the
ground truth when the run has one, else the input)."""

REFERENCES = ("auto", "input", "ground_truth")
"""Every :data:`Reference`."""

SIMILARITY_LABELS = ("none", "low", "moderate", "high", "identical")
"""Every label :func:`similarity_label` can return, from least to most similar."""


def reference_text(
    ctx: StepContext,
    reference: Reference,
    *,
    scorer: str,
    limit: int,
    uses: str = "compares the answer with",
) -> tuple[str, str]:
    """The text to compare the answer with, and where it came from (``"ground truth"`` or
    ``"input"``): ``"auto"`` takes the run's ground truth when it has one, else the input.
    A ground truth is cut at ``limit`` characters (and flagged), as input and output are.

    Raises:
        NotScorable: ``reference="ground_truth"`` and the run has none (``uses`` says what
            the scorer does with it, in the reason).
        TypeError: The ground truth is neither text nor messages.
    """
    truth = ctx.run.ground_truth
    if reference == "input" or (reference == "auto" and truth is None):
        return ctx.input_text, "input"
    if truth is None:
        raise NotScorable(
            f"no ground truth: this {scorer} scorer {uses} the run's ground_truth "
            "(reference='ground_truth'), and the run has none"
        )
    try:
        text = message_text(truth)
    except TypeError:
        text = None
    if text is None or (not text and isinstance(truth, Mapping) and truth):
        raise TypeError(
            "ground truth must be text, a list of texts or chat messages, "
            f"not {type(truth).__name__}"
        )
    if len(text) > limit:
        ctx.flags["ground_truth_truncated"] = True
        ctx.flags["ground_truth_chars"] = len(text)
        text = text[:limit]
    return text, "ground truth"


def check_reference(reference: object, allowed: tuple[str, ...] = REFERENCES) -> None:
    """Raise ``ValueError`` unless ``reference`` is one of ``allowed``.

    Example:
        >>> check_reference("input", ("input", "ground_truth"))
        >>> check_reference("auto", ("input", "ground_truth"))
        Traceback (most recent call last):
        ...
        ValueError: reference must be 'input' or 'ground_truth', not 'auto'
    """
    if reference not in allowed:
        names = ", ".join(repr(name) for name in allowed[:-1])
        raise ValueError(f"reference must be {names} or {allowed[-1]!r}, not {reference!r}")


class CodeSteps(Protocol):
    """The steps of a code scorer, as methods of one object that holds its options; a
    scorer without a preprocess or analyze step sets that name to ``None``."""

    @property
    def description(self) -> str: ...
    @property
    def preprocess(self) -> Callable[[StepContext], Any] | None: ...
    @property
    def analyze(self) -> Callable[[StepContext], Any] | None: ...
    def generate_score(self, ctx: StepContext) -> float: ...
    def generate_reason(self, ctx: StepContext) -> str: ...
    def label(self, score: float) -> str | None: ...


def code_scorer(
    steps: CodeSteps,
    *,
    id: str,
    level: Literal["run", "conversation"] = "run",
    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
    redact: RedactSpec | None,
    calibration: CalibrationSpec | None,
) -> Scorer:
    """The scorer that runs ``steps``: on the event loop, since they are quick, pure CPU
    steps and a hop to a worker thread would cost more than the step itself."""
    return create_scorer(
        id=id,
        description=steps.description,
        label=steps.label,
        max_text_chars=max_text_chars,
        sync_steps="inline",
        level=level,
        redact=redact,
        calibration=calibration,
        preprocess=steps.preprocess,
        analyze=steps.analyze,
        generate_score=steps.generate_score,
        generate_reason=steps.generate_reason,
    )


def band_label(ratio: float, labels: tuple[str, ...], high: float, middle: float) -> str:
    """One of five ``labels`` (worst first) for a ``ratio`` from 0 to 1: the best at 1,
    the next from ``high``, the middle one from ``middle``, then one above 0 and one at 0."""
    none, low, middling, good, full = labels
    bands = ((1.0, full), (high, good), (middle, middling))  # lower bounds
    return next((label for bound, label in bands if ratio >= bound), low if ratio > 0 else none)


def similarity_label(score: float) -> str:
    """The label of a similarity from 0 to 1 (content similarity, textual difference).

    ``"identical"`` (1), ``"high"`` (0.8 up to below 1), ``"moderate"`` (0.5 up to below
    0.8), ``"low"`` (above 0, below 0.5), ``"none"`` (0).

    Example:
        >>> similarity_label(1.0), similarity_label(0.85), similarity_label(0.2)
        ('identical', 'high', 'low')
    """
    return band_label(score, SIMILARITY_LABELS, high=0.8, middle=0.5)


@dataclass(frozen=True, slots=True)
class TextComparison:
    """The steps of a scorer that compares the answer with one reference text: preprocess
    keeps both texts, normalised, in ``ctx.state["texts"]``; the score is the analyze step's
    ``measure``, labelled by :func:`similarity_label`."""

    reference: Reference
    limit: int  # the most characters of ground truth read
    scorer: ClassVar[str]  # its name in the reason a run without a ground truth is skipped for
    measure: ClassVar[str]  # the key of the score in the analyze step's result

    def normalise(self, text: str) -> str:
        return text

    def preprocess(self, ctx: StepContext) -> dict[str, Any]:
        ref, source = reference_text(ctx, self.reference, scorer=self.scorer, limit=self.limit)
        ref, response = self.normalise(ref), self.normalise(ctx.output_text)
        ctx.state["texts"] = (ref, response)
        return {"reference": source, "reference_chars": len(ref), "response_chars": len(response)}

    def generate_score(self, ctx: StepContext) -> float:
        return float(ctx.analyze_step_result[self.measure])

    def label(self, score: float) -> str:
        return similarity_label(score)
