"""The content similarity scorer: the Dice coefficient of the answer's and the reference's
character bigrams (no judge)."""

from __future__ import annotations

from dataclasses import dataclass

from livescore._catalog import ScorerOptions, catalog_entry, one_of
from livescore._text import DEFAULT_MAX_TEXT_CHARS, DROP_WHITESPACE, dice_similarity
from livescore.pii import RedactSpec
from livescore.scorers._text import (
    REFERENCES,
    SIMILARITY_LABELS,
    Reference,
    TextComparison,
    check_reference,
    code_scorer,
    similarity_label,
)
from livescore.scoring import CalibrationSpec, Scorer, StepContext

__all__ = ("SIMILARITY_LABELS", "create_content_similarity_scorer", "similarity_label")


def create_content_similarity_scorer(
    *,
    ignore_case: bool = True,
    ignore_whitespace: bool = True,
    reference: Reference = "auto",
    id: str = "content-similarity",
    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
    redact: RedactSpec | None = None,
    calibration: CalibrationSpec | None = None,
) -> Scorer:
    """Score how alike the answer and its reference are on the surface (no judge, no cost).

    The score is the Dice coefficient of the two texts' character bigrams, from 0 (no
    two-letter sequence in common) to 1 (the same text): the values of ``string-similarity``'s
    ``compareTwoStrings``, which Mastra uses. Surface similarity, not meaning: "The parcel is
    late" and "Your delivery is delayed" score low.

    Args:
        ignore_case: Compare in lower case.
        ignore_whitespace: Drop every whitespace character first (Mastra's values); ``False``
            makes "ice cream" and "icecream" differ.
        reference: ``"auto"`` (the ground truth, else the input), ``"ground_truth"`` or
            ``"input"`` (Mastra's behaviour).
        max_text_chars: Input, output and ground truth beyond this are cut (and flagged).

    The other arguments are those of :func:`~livescore.scoring.create_scorer`.

    Returns:
        A scorer whose results carry ``preprocess_step_result = {"reference", "reference_chars",
        "response_chars"}`` (the lengths compared) and ``analyze_step_result =
        {"similarity": float}``; labels are :func:`similarity_label`'s.

    Example:
        >>> scorer = create_content_similarity_scorer()
        >>> result = scorer.run_sync({
        ...     "input": "Where is my parcel?",
        ...     "output": "Your parcel is in the Lyon depot.",
        ...     "ground_truth": "The parcel is at the Lyon depot.",
        ... })
        >>> round(result.score, 3), result.label
        (0.745, 'moderate')
        >>> result.reason
        'Character bigram similarity to the ground truth: 0.75 (case and whitespace ignored).'
    """
    check_reference(reference)
    steps = _ContentSimilarity(reference, max_text_chars, ignore_case, ignore_whitespace)
    return code_scorer(
        steps, id=id, max_text_chars=max_text_chars, redact=redact, calibration=calibration
    )


@dataclass(frozen=True, slots=True)
class _ContentSimilarity(TextComparison):
    ignore_case: bool
    ignore_whitespace: bool

    description = "Character bigram (Dice) similarity of the answer to its reference"
    scorer = "content similarity"
    measure = "similarity"

    def normalise(self, text: str) -> str:
        if self.ignore_case:
            text = text.lower()
        if self.ignore_whitespace:
            # Dropped once, here: a C translate, ~20 times faster than collapsing runs by regex.
            text = text.translate(DROP_WHITESPACE)
        return text

    def analyze(self, ctx: StepContext) -> dict[str, float]:
        texts = ctx.state["texts"]
        return {"similarity": dice_similarity(*texts, ignore_whitespace=self.ignore_whitespace)}

    def generate_reason(self, ctx: StepContext) -> str:
        options = (("case", self.ignore_case), ("whitespace", self.ignore_whitespace))
        ignored = " and ".join(name for name, on in options if on)
        how = f"{ignored} ignored" if ignored else "case and whitespace count"
        source = ctx.preprocess_step_result["reference"]
        return f"Character bigram similarity to the {source}: {ctx.score:.2f} ({how})."


# -- in the catalog ---------------------------------------------------------------------------


@catalog_entry(
    "content-similarity",
    family="text",
    summary="Dice similarity of character bigrams, answer vs reference (Mastra's values)",
    argument="REFERENCE: auto (ground truth, else input), input or ground_truth",
    factory="livescore.scorers.create_content_similarity_scorer",
    examples=("content-similarity", "content-similarity:input"),
)
def _build(argument: str | None, options: ScorerOptions) -> Scorer:
    reference = one_of(argument, "auto", REFERENCES, "content-similarity")
    return create_content_similarity_scorer(reference=reference)  # type: ignore[arg-type]
