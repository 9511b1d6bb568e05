"""The keyword coverage scorer: how many of the reference's keywords the response covers (no
judge); the extraction rules are in ``KeywordExtractor``."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from livescore._catalog import ScorerOptions, catalog_entry
from livescore._text import DEFAULT_MAX_TEXT_CHARS
from livescore.otel import attributes as A
from livescore.pii import RedactSpec
from livescore.scorers._judged import check_scale
from livescore.scorers._keywords import KeywordExtractor, _words
from livescore.scorers._text import band_label, check_reference, code_scorer, reference_text
from livescore.scoring import CalibrationSpec, Scorer, StepContext

__all__ = (
    "KEYWORD_COVERAGE_LABELS",
    "CoverageSteps",
    "KeywordReference",
    "coverage_reason",
    "create_keyword_coverage_scorer",
    "keyword_coverage_label",
    "listed",
)

KeywordReference: TypeAlias = Literal["input", "ground_truth"]
"""Where the keywords to cover come from: the user's input or the run's ground truth."""

KEYWORD_COVERAGE_LABELS = ("none", "low", "partial", "high", "complete")
"""Every label :func:`keyword_coverage_label` can return, from worst to best."""

_MAX_LISTED = 20  # missing items named in a reason; the analyze result has them all

# Scorers with the same settings share one extractor, and so its warm token cache.
_extractor = functools.lru_cache(maxsize=32)(KeywordExtractor)


def keyword_coverage_label(score: float, *, scale: float = 1.0) -> str:
    """The label of a keyword coverage score: on ``score / scale``, ``"complete"`` (1),
    ``"high"`` (0.65 up to below 1), ``"partial"`` (0.35 up to below 0.65), ``"low"`` (above
    0) and ``"none"`` (0): Mastra's interpretation bands with the gaps closed at midpoints.

    Example:
        >>> keyword_coverage_label(1.0), keyword_coverage_label(0.75), keyword_coverage_label(0.0)
        ('complete', 'high', 'none')
        >>> keyword_coverage_label(5.0, scale=10)
        'partial'
    """
    check_scale(scale)
    return band_label(score / scale, KEYWORD_COVERAGE_LABELS, high=0.65, middle=0.35)


def create_keyword_coverage_scorer(
    *,
    reference: KeywordReference = "input",
    scale: float = 1.0,
    stemming: bool = True,
    extra_stopwords: Iterable[str] = (),
    compound_terms: Iterable[str] | None = None,
    builtin_compound_terms: bool = True,
    id: str = "keyword-coverage",
    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
    redact: RedactSpec | None = None,
    calibration: CalibrationSpec | None = None,
) -> Scorer:
    """Score how many of the reference's keywords the response covers (no judge, no cost).

    Keywords are the words left once stopwords and numbers are dropped, matched by their
    stem; technical terms ("React.js", "C++") and compound terms ("machine learning") stay
    whole. The score is matched / total × ``scale``, unrounded: ``scale`` when neither text
    has keywords, 0 when only one has. A run with no text to compare at all (a dict output,
    an input of prompt variables) is skipped as not scorable.

    Args:
        reference: ``"input"`` (the user's last message) or ``"ground_truth"``.
        scale: The score of full coverage (a positive number).
        stemming: Match word forms by their Snowball stem; ``False`` matches exact words.
        extra_stopwords: More words to ignore (domain filler: "please", "answer"…).
        compound_terms: More multi-word terms to treat as one keyword.
        builtin_compound_terms: Use the built-in compound terms ("feature engineering"…).
        max_text_chars: Input, output and ground truth beyond this are cut (and flagged).

    The other arguments are those of :func:`~livescore.scoring.create_scorer`.

    Returns:
        A scorer whose results carry ``preprocess_step_result = {"reference_keywords": set,
        "response_keywords": set}`` and ``analyze_step_result = {"total_keywords",
        "matched_keywords", "missing_keywords"}``; labels are :func:`keyword_coverage_label`'s.

    Example:
        >>> scorer = create_keyword_coverage_scorer()
        >>> result = scorer.run_sync({
        ...     "input": "Machine learning models need feature engineering and "
        ...     "hyperparameter tuning",
        ...     "output": "Good machine learning models start with feature engineering.",
        ... })
        >>> result.score, result.label
        (0.75, 'high')
        >>> result.reason
        'Covered 3 of 4 keywords of the input; missing: hyperparameter tuning.'
    """
    check_reference(reference, ("input", "ground_truth"))
    check_scale(scale)
    if isinstance(max_text_chars, bool) or not isinstance(max_text_chars, int):
        raise TypeError("max_text_chars must be an int")
    extractor = _extractor(
        stemming=bool(stemming),
        extra_stopwords=tuple(_words("extra_stopwords", extra_stopwords)),
        compound_terms=tuple(_words("compound_terms", compound_terms or ())),
        builtin_compound_terms=bool(builtin_compound_terms),
    )
    steps = _KeywordCoverage(reference, max_text_chars, extractor, scale)
    return code_scorer(
        steps, id=id, max_text_chars=max_text_chars, redact=redact, calibration=calibration
    )


@dataclass(frozen=True, slots=True)
class CoverageSteps:
    """What the steps of the coverage scorers (keyword coverage, completeness) share."""

    reference: KeywordReference
    limit: int  # the most characters of ground truth read

    @property
    def source(self) -> str:  # the reference in reasons
        return self.reference.replace("_", " ")


@dataclass(frozen=True, slots=True)
class _KeywordCoverage(CoverageSteps):
    extractor: KeywordExtractor
    scale: float

    @property
    def description(self) -> str:
        return (
            f"Share of the {self.source}'s keywords the response covers (stopwords ignored; "
            "word forms, technical terms and compound terms matched)"
        )

    def preprocess(self, ctx: StepContext) -> dict[str, set[str]]:
        uses = "takes its keywords from"
        scorer = "keyword coverage"
        text, _ = reference_text(ctx, self.reference, scorer=scorer, limit=self.limit, uses=uses)
        ref, response = self.extractor.extract(text), self.extractor.extract(ctx.output_text)
        ctx.state["keyword_coverage"] = (ref, response)
        return {"reference_keywords": ref.forms, "response_keywords": response.forms}

    def analyze(self, ctx: StepContext) -> dict[str, Any]:
        ref, response = ctx.state["keyword_coverage"]
        missing = sorted(form for key, form in ref.terms.items() if not response.covers(key))
        total = len(ref)
        matched = total - len(missing)
        ctx.attributes[A.LIVESCORE_KEYWORDS_TOTAL] = total
        ctx.attributes[A.LIVESCORE_KEYWORDS_MATCHED] = matched
        return {"total_keywords": total, "matched_keywords": matched, "missing_keywords": missing}

    def generate_score(self, ctx: StepContext) -> float:
        analysis = ctx.analyze_step_result
        total, matched = analysis["total_keywords"], analysis["matched_keywords"]
        if total == 0:
            return float(self.scale) if len(ctx.state["keyword_coverage"][1]) == 0 else 0.0
        return float(matched / total * self.scale)

    def generate_reason(self, ctx: StepContext) -> str:
        response_keywords = len(ctx.state["keyword_coverage"][1])
        analysis = ctx.analyze_step_result
        total, matched = analysis["total_keywords"], analysis["matched_keywords"]
        if total == 0:
            if response_keywords == 0:
                return (
                    f"Neither the {self.source} nor the response has keywords (empty, or only "
                    "stopwords and numbers): nothing to cover."
                )
            return (
                f"The {self.source} has no keywords (empty, or only stopwords and numbers) but "
                f"the response has {response_keywords}: scored 0, as for any run where only "
                "one side has keywords."
            )
        missing: list[str] = analysis["missing_keywords"]
        if matched == 0 and response_keywords == 0:
            noun = "keyword" if total == 1 else "keywords"
            return f"The response has no keywords; missing all {total} {noun}: {listed(missing)}."
        return coverage_reason(matched, total, missing, "keyword", self.source)

    def label(self, score: float) -> str:
        return keyword_coverage_label(score, scale=self.scale)


def listed(missing: list[str]) -> str:
    """The first 20 of ``missing``, and how many more (the analyze result has them all)."""
    text = ", ".join(missing[:_MAX_LISTED])
    if len(missing) > _MAX_LISTED:
        text += f" and {len(missing) - _MAX_LISTED} more"
    return text


def coverage_reason(covered: int, total: int, missing: list[str], noun: str, source: str) -> str:
    """The reason of a coverage score: how many of the ``source``'s ``total`` items (each a
    ``noun``) are ``covered``, and which are ``missing``."""
    nouns = noun if total == 1 else f"{noun}s"
    if covered == total:
        return f"Covered all {total} {nouns} of the {source}."
    return f"Covered {covered} of {total} {nouns} of the {source}; missing: {listed(missing)}."


# -- in the catalog ---------------------------------------------------------------------------


@catalog_entry(
    "keyword-coverage",
    family="text",
    summary="share of the reference's keywords the answer covers (code, no judge)",
    argument="REFERENCE: input (default) or ground_truth",
    factory="livescore.scorers.create_keyword_coverage_scorer",
    span_attributes={
        "livescore.keywords.total": "keywords to cover",
        "livescore.keywords.matched": "keywords the answer covers",
    },
    examples=("keyword-coverage", "keyword-coverage:ground_truth"),
)
def _build(argument: str | None, options: ScorerOptions) -> Scorer:
    return create_keyword_coverage_scorer(reference=argument or "input")  # type: ignore[arg-type]
