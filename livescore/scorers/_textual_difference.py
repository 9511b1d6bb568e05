"""The textual difference scorer: how much of the reference text the answer keeps, in order
(the ratio ``2·LCS / (len a + len b)``; no judge)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from livescore._catalog import ScorerOptions, catalog_entry, one_of
from livescore._text import DEFAULT_MAX_TEXT_CHARS, utf16_units
from livescore.pii import RedactSpec
from livescore.scorers._text import (
    REFERENCES,
    Reference,
    TextComparison,
    check_reference,
    code_scorer,
)
from livescore.scoring import CalibrationSpec, Scorer, StepContext

__all__ = ("create_textual_difference_scorer", "sequence_ratio")


def sequence_ratio(first: str, second: str) -> float:
    """``2 × LCS / (len first + len second)`` on characters, from 0 to 1.

    LCS is the length of the longest common subsequence of the two texts' characters
    (Python's ``difflib.SequenceMatcher.ratio()`` approximates the same ratio). Identical
    texts → 1; exactly one empty → 0. Lengths count UTF-16 code units (an emoji is two), as
    Mastra's JavaScript does, so the values are the same. Computed by rapidfuzz's
    bit-parallel LCS: O(n·m/64) time and O(n) memory, about 7 ms for two 20,000-character
    texts.

    Example:
        >>> sequence_ratio("kitten", "sitting")
        0.6153846153846154
        >>> sequence_ratio("", ""), sequence_ratio("abc", "")
        (1.0, 0.0)
    """
    # Imported on first use: `import livescore.scorers` stays light (rapidfuzz: ~7 ms).
    from rapidfuzz.distance import LCSseq

    if first == second:
        return 1.0
    if not first or not second:
        return 0.0
    first, second = utf16_units(first), utf16_units(second)
    common = LCSseq.similarity(first, second)
    return 2.0 * common / (len(first) + len(second))


def create_textual_difference_scorer(
    *,
    reference: Reference = "auto",
    id: str = "textual-difference",
    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
    redact: RedactSpec | None = None,
    calibration: CalibrationSpec | None = None,
) -> Scorer:
    """Score how close the answer's text is to a reference text (no judge, no cost).

    The score is :func:`sequence_ratio` of the reference and the answer: 1 for the same text,
    0 for nothing in common (or exactly one empty text). It is Mastra's textual difference
    ratio, computed without Mastra's n × m table. The step result also says how the texts
    differ word by word (a run of removed and added words is one change).

    Args:
        reference: ``"auto"`` (the ground truth, else the input), ``"ground_truth"`` or
            ``"input"`` (Mastra's behaviour).
        max_text_chars: Input, output and ground truth beyond this are cut (and flagged).

    The other arguments are those of :func:`~livescore.scoring.create_scorer`.

    Returns:
        A scorer whose results carry ``preprocess_step_result = {"reference",
        "reference_chars", "response_chars"}`` and ``analyze_step_result = {"ratio",
        "changes", "words_added", "words_removed", "length_difference"}`` (the length
        difference over the longer length); labels are those of content similarity.

    Example:
        >>> scorer = create_textual_difference_scorer()
        >>> result = scorer.run_sync({
        ...     "input": "Summarise the policy.",
        ...     "output": "Returns are free within 30 days.",
        ...     "ground_truth": "Returns are free within 14 days.",
        ... })
        >>> round(result.score, 3), result.label
        (0.938, 'high')
        >>> result.analyze_step_result["changes"], result.analyze_step_result["words_added"]
        (1, ['30'])
    """
    check_reference(reference)
    steps = _TextualDifference(reference, max_text_chars)
    return code_scorer(
        steps, id=id, max_text_chars=max_text_chars, redact=redact, calibration=calibration
    )


@dataclass(frozen=True, slots=True)
class _TextualDifference(TextComparison):
    description = "Share of the reference's characters the answer keeps in order (LCS ratio)"
    scorer = "textual difference"
    measure = "ratio"

    def analyze(self, ctx: StepContext) -> dict[str, Any]:
        # Imported on first use: `import livescore.scorers` stays light (rapidfuzz: ~7 ms).
        from rapidfuzz.distance import Indel

        ref, response = ctx.state["texts"]
        first, second = ref.split(), response.split()
        # Word by word: a removal next to an addition is one change (a replacement).
        changes, in_change = 0, False
        added: list[str] = []
        removed: list[str] = []
        for op in Indel.opcodes(first, second):
            if op.tag != "equal" and not in_change:
                changes += 1
            in_change = op.tag != "equal"
            if op.tag == "insert":
                added.extend(second[op.dest_start : op.dest_end])
            elif op.tag == "delete":
                removed.extend(first[op.src_start : op.src_end])
        longer = max(len(ref), len(response))
        return {
            "ratio": sequence_ratio(ref, response),
            "changes": changes,
            "words_added": added,
            "words_removed": removed,
            "length_difference": abs(len(ref) - len(response)) / longer if longer else 0.0,
        }

    def generate_reason(self, ctx: StepContext) -> str:
        source = ctx.preprocess_step_result["reference"]
        analysis = ctx.analyze_step_result
        changes = analysis["changes"]
        if changes == 0 and ctx.score == 1:
            return f"The answer is the same text as the {source}."
        return (
            f"The answer keeps {ctx.score:.0%} of the {source}'s text in order (ratio "
            f"{ctx.score:.2f}); words differ in {changes} {'place' if changes == 1 else 'places'} "
            f"({len(analysis['words_added'])} added, {len(analysis['words_removed'])} "
            f"removed); lengths differ by {analysis['length_difference']:.0%}."
        )


# -- in the catalog ---------------------------------------------------------------------------


@catalog_entry(
    "textual-difference",
    family="text",
    summary="2·LCS / total length of answer and reference (1 = the same text)",
    argument="REFERENCE: auto (ground truth, else input), input or ground_truth",
    factory="livescore.scorers.create_textual_difference_scorer",
    examples=("textual-difference", "textual-difference:input"),
)
def _build(argument: str | None, options: ScorerOptions) -> Scorer:
    reference = one_of(argument, "auto", REFERENCES, "textual-difference")
    return create_textual_difference_scorer(reference=reference)  # type: ignore[arg-type]
