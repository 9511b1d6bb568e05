"""The content similarity scorer: how alike the answer and its reference read, character by
character (Dice coefficient of character bigrams; no judge)."""

from __future__ import annotations

from typing import Any

from livescore._catalog import ScorerOptions, catalog_entry, one_of
from livescore._text import DEFAULT_MAX_TEXT_CHARS, DROP_WHITESPACE, dice_similarity
from livescore.pii import RedactSpec
from livescore.scorers._text import Reference, check_reference, reference_text
from livescore.scoring import CalibrationSpec, Scorer, StepContext, create_scorer

__all__ = ("SIMILARITY_LABELS", "create_content_similarity_scorer", "similarity_label")

SIMILARITY_LABELS = ("none", "low", "moderate", "high", "identical")
"""Every label :func:`similarity_label` can return, from least to most similar."""


def similarity_label(score: float) -> str:
    """The label of a similarity from 0 to 1 (content similarity, textual difference).

    ``"identical"`` (1), ``"high"`` (0.8 up to below 1), ``"moderate"`` (0.5 up to below
    0.8), ``"low"`` (above 0, below 0.5), ``"none"`` (0).

    Example:
        >>> similarity_label(1.0), similarity_label(0.85), similarity_label(0.2)
        ('identical', 'high', 'low')
    """
    if score >= 1:
        return "identical"
    if score >= 0.8:
        return "high"
    if score >= 0.5:
        return "moderate"
    if score > 0:
        return "low"
    return "none"


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

    The score is the Dice coefficient of the two texts' character bigrams: ``2 × shared
    bigrams / (bigrams of the answer + bigrams of the reference)``, from 0 (no two-letter
    sequence in common) to 1 (the same text). It is the ``string-similarity`` npm package's
    ``compareTwoStrings``, which Mastra's content similarity scorer uses, and gives identical
    values on identical options: with ``ignore_whitespace=True`` every whitespace character is
    removed before comparing (as ``string-similarity`` always does), and characters outside
    the Basic Multilingual Plane (most emoji) count as two UTF-16 units, as in JavaScript.

    Surface similarity, not meaning: "The parcel is late" and "Your delivery is delayed" score
    low. Use it for answers that should stay close to a template or an expected answer.

    Args:
        ignore_case: Compare in lower case.
        ignore_whitespace: Ignore every whitespace character (the default; Mastra's values).
            ``False`` makes whitespace count: "ice cream" and "icecream" then differ.
            (Mastra's ``ignoreWhitespace: false`` changes nothing, since
            ``string-similarity`` drops whitespace anyway; livescore honours the option.)
        reference: What the answer is compared with: ``"auto"`` (the run's ground truth when
            it has one, else the user's input; the default), ``"ground_truth"`` (a run
            without one is skipped as not scorable) or ``"input"`` (Mastra's behaviour).
        id: The scorer id on results, spans and metrics.
        max_text_chars: Texts beyond this are cut (and flagged).
        redact: Keeps personal data from the judge (see ``Scorer.with_redaction``).
        calibration: Labels fitted on yours (see ``Scorer.with_calibration``).

    Returns:
        A scorer whose results carry ``preprocess_step_result = {"reference": "input" |
        "ground truth", "reference_chars": int, "response_chars": int}`` (the lengths
        compared: without whitespace when it is ignored), ``analyze_step_result =
        {"similarity": float}``, the score, a label (:func:`similarity_label`) and a reason.

    Raises:
        ValueError: ``reference`` is not one of the three values.

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
    if max_text_chars < 1:
        raise ValueError("max_text_chars must be positive")
    ignored = [
        name for name, flag in (("case", ignore_case), ("whitespace", ignore_whitespace)) if flag
    ]
    how = f" ({' and '.join(ignored)} ignored)" if ignored else " (case and whitespace count)"

    def normalise(text: str) -> str:
        if ignore_case:
            text = text.lower()
        if ignore_whitespace:
            # The comparison drops every whitespace character: drop them once, here (a C
            # translate, ~20 times faster than collapsing runs with a regex).
            text = text.translate(DROP_WHITESPACE)
        return text

    def preprocess(ctx: StepContext) -> dict[str, Any]:
        ref, source = reference_text(
            ctx, reference, scorer="content similarity", limit=max_text_chars
        )
        ref, response = normalise(ref), normalise(ctx.output_text)
        ctx.state["texts"] = (ref, response)
        return {"reference": source, "reference_chars": len(ref), "response_chars": len(response)}

    def analyze(ctx: StepContext) -> dict[str, float]:
        ref, response = ctx.state["texts"]
        return {"similarity": dice_similarity(ref, response, ignore_whitespace=ignore_whitespace)}

    def generate_reason(ctx: StepContext) -> str:
        source = ctx.preprocess_step_result["reference"]
        return f"Character bigram similarity to the {source}: {ctx.score:.2f}{how}."

    return create_scorer(
        id=id,
        description="Character bigram (Dice) similarity of the answer to its reference",
        preprocess=preprocess,
        analyze=analyze,
        generate_score=lambda ctx: ctx.analyze_step_result["similarity"],
        generate_reason=generate_reason,
        label=similarity_label,
        max_text_chars=max_text_chars,
        sync_steps="inline",  # pure CPU: a thread hop would cost more than the step
        redact=redact,
        calibration=calibration,
    )


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
    allowed = ("auto", "input", "ground_truth")
    reference = one_of(argument, "auto", allowed, "content-similarity")
    return create_content_similarity_scorer(reference=reference)  # type: ignore[arg-type]
