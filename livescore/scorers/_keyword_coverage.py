"""The keyword coverage scorer: how many of the reference's keywords the response covers.

Pipeline (code only, no judge; microseconds to a few milliseconds per score):

1. preprocess: the keywords of the reference (the user's input, or the ground truth) and of
   the response, ``{"reference_keywords": set, "response_keywords": set}`` (display forms).
   The extraction rules (stopwords, stems, technical and compound terms) are in
   ``KeywordExtractor``.
2. analyze: ``{"total_keywords", "matched_keywords", "missing_keywords"}``.
3. generate_score: matched / total × scale, unrounded. With no reference keywords: ``scale``
   when the response has none either, else 0 (Mastra's documented rule).
4. generate_reason: which keywords are missing.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any, Literal, TypeAlias

from livescore._catalog import ScorerOptions, catalog_entry
from livescore._text import DEFAULT_MAX_TEXT_CHARS
from livescore.otel import attributes as A
from livescore.pii import RedactSpec
from livescore.scorers._judged import check_scale
from livescore.scorers._keywords import KeywordExtractor, Keywords, _words
from livescore.scorers._text import reference_text
from livescore.scoring import CalibrationSpec, Scorer, StepContext, create_scorer

__all__ = (
    "KEYWORD_COVERAGE_LABELS",
    "KeywordReference",
    "create_keyword_coverage_scorer",
    "keyword_coverage_label",
)

KeywordReference: TypeAlias = Literal["input", "ground_truth"]
"""Where the keywords to cover come from: the user's ``"input"`` or the run's
``"ground_truth"``."""

KEYWORD_COVERAGE_LABELS = ("none", "low", "partial", "high", "complete")
"""Every label :func:`keyword_coverage_label` can return, from worst to best."""

_MAX_LISTED = 20  # missing keywords named in the reason; the analyze result has them all

_STATE_KEY = "keyword_coverage"


def keyword_coverage_label(score: float, *, scale: float = 1.0) -> str:
    """The label of a keyword coverage score, from Mastra's interpretation bands.

    The label reads ``score / scale``. Mastra names 1.0, 0.7–0.9, 0.4–0.6, 0.1–0.3 and 0.0;
    livescore closes the gaps at the midpoints, keeps ``"complete"`` for full coverage only
    and ``"none"`` for no coverage at all:

    ======================  ==============  ====================================
    ``score / scale``       label           meaning
    ======================  ==============  ====================================
    1                       ``"complete"``  every keyword is covered
    0.65 up to below 1      ``"high"``      most keywords are covered
    0.35 up to below 0.65   ``"partial"``   some keywords are covered
    above 0, below 0.35     ``"low"``       few keywords are covered
    0                       ``"none"``      no keyword is covered
    ======================  ==============  ====================================

    Example:
        >>> keyword_coverage_label(1.0), keyword_coverage_label(0.75), keyword_coverage_label(0.0)
        ('complete', 'high', 'none')
        >>> keyword_coverage_label(5.0, scale=10)
        'partial'
    """
    check_scale(scale)
    ratio = score / scale
    if ratio >= 1:
        return "complete"
    if ratio >= 0.65:
        return "high"
    if ratio >= 0.35:
        return "partial"
    if ratio > 0:
        return "low"
    return "none"


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

    Keywords are the words left once stopwords (the SMART English list) and numbers are
    dropped, compared case-insensitively by their stem ("dogs" covers "dog", "running"
    covers "run"). Technical terms stay whole ("React.js", "Node.js", "C++", "C#", ".NET",
    "GPT-4"; "React", "React.js" and "ReactJS" are one keyword). Compound terms ("machine
    learning", "type inference", hyphenated words like "real-time") count as one keyword,
    covered only when the response has the same words next to each other. The full rules
    are in ``KeywordExtractor``.

    Score: matched / total × ``scale``, unrounded. Both texts without keywords (empty, or
    only stopwords and numbers): ``scale``. Exactly one without keywords: 0. A run with no
    text to compare at all (an output that is a dict of fields, an input of prompt
    variables, a message list without a user or an assistant message) is skipped as not
    scorable, with the reason, rather than scored 0 or 1. The span carries
    ``livescore.keywords.total`` and ``livescore.keywords.matched``.

    Args:
        reference: ``"input"`` (the user's last message; the default) or ``"ground_truth"``
            (the run's ground truth; a run without one is not scorable).
        scale: The score of full coverage (a positive number).
        stemming: Match word forms by their Snowball stem; ``False`` matches exact words.
        extra_stopwords: More words to ignore (domain filler: "please", "answer"…).
        compound_terms: More multi-word terms to treat as one keyword, besides the built-in
            list ("vector clock", "Kubernetes operator"…).
        builtin_compound_terms: Use the built-in compound terms ("machine learning",
            "feature engineering", "hyperparameter tuning"…).
        id: The scorer id on results, spans and metrics.
        max_text_chars: Input, output and ground truth beyond this are cut (and flagged:
            ``flags["output_truncated"]``…).
        redact: Keeps personal data from the judge (see ``Scorer.with_redaction``).
        calibration: Labels fitted on yours (see ``Scorer.with_calibration``).

    Returns:
        A scorer whose results carry ``preprocess_step_result = {"reference_keywords": set,
        "response_keywords": set}``, ``analyze_step_result = {"total_keywords": int,
        "matched_keywords": int, "missing_keywords": [...]}``, the score, a label (see
        :func:`keyword_coverage_label`) and a reason naming the missing keywords.

    Raises:
        ValueError: ``reference`` or ``scale`` is invalid, or a compound term has fewer
            than two words.
        TypeError: ``extra_stopwords`` or ``compound_terms`` is not a list of strings.

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
    if reference not in ("input", "ground_truth"):
        raise ValueError(f"reference must be 'input' or 'ground_truth', not {reference!r}")
    check_scale(scale)
    if isinstance(max_text_chars, bool) or not isinstance(max_text_chars, int):
        raise TypeError("max_text_chars must be an int")
    if max_text_chars < 1:
        raise ValueError("max_text_chars must be positive")
    if compound_terms is None:
        compound_terms = ()
    extractor = _extractor(
        stemming=bool(stemming),
        extra_stopwords=_as_tuple("extra_stopwords", extra_stopwords),
        compound_terms=_as_tuple("compound_terms", compound_terms),
        builtin_compound_terms=bool(builtin_compound_terms),
    )
    source = "input" if reference == "input" else "ground truth"

    def preprocess(ctx: StepContext) -> dict[str, set[str]]:
        text, _ = reference_text(
            ctx,
            reference,
            scorer="keyword coverage",
            limit=max_text_chars,
            uses="takes its keywords from",
        )
        ref = extractor.extract(text)
        response = extractor.extract(ctx.output_text)
        ctx.state[_STATE_KEY] = (ref, response)
        return {"reference_keywords": ref.forms, "response_keywords": response.forms}

    def analyze(ctx: StepContext) -> dict[str, Any]:
        ref, response = _extracted(ctx)
        missing = sorted(form for key, form in ref.terms.items() if not response.covers(key))
        ctx.attributes[A.LIVESCORE_KEYWORDS_TOTAL] = len(ref)
        ctx.attributes[A.LIVESCORE_KEYWORDS_MATCHED] = len(ref) - len(missing)
        return {
            "total_keywords": len(ref),
            "matched_keywords": len(ref) - len(missing),
            "missing_keywords": missing,
        }

    def generate_score(ctx: StepContext) -> float:
        response = _extracted(ctx)[1]
        total: int = ctx.analyze_step_result["total_keywords"]
        matched: int = ctx.analyze_step_result["matched_keywords"]
        if total == 0:
            return float(scale) if len(response) == 0 else 0.0
        return matched / total * scale

    def generate_reason(ctx: StepContext) -> str:
        response = _extracted(ctx)[1]
        analysis = ctx.analyze_step_result
        total, matched = analysis["total_keywords"], analysis["matched_keywords"]
        if total == 0:
            if len(response) == 0:
                return (
                    f"Neither the {source} nor the response has keywords (empty, or only "
                    "stopwords and numbers): nothing to cover."
                )
            return (
                f"The {source} has no keywords (empty, or only stopwords and numbers) but the "
                f"response has {len(response)}: scored 0, as for any run where only one side "
                "has keywords."
            )
        noun = "keyword" if total == 1 else "keywords"
        if matched == total:
            return f"Covered all {total} {noun} of the {source}."
        missing: list[str] = analysis["missing_keywords"]
        listed = ", ".join(missing[:_MAX_LISTED])
        if len(missing) > _MAX_LISTED:
            listed += f" and {len(missing) - _MAX_LISTED} more"
        if matched == 0 and len(response) == 0:
            return f"The response has no keywords; missing all {total} {noun}: {listed}."
        return f"Covered {matched} of {total} {noun} of the {source}; missing: {listed}."

    return create_scorer(
        id=id,
        description=(
            f"Share of the {source}'s keywords the response covers (stopwords ignored; "
            "word forms, technical terms and compound terms matched)"
        ),
        preprocess=preprocess,
        analyze=analyze,
        generate_score=generate_score,
        generate_reason=generate_reason,
        label=lambda score: keyword_coverage_label(score, scale=scale),
        max_text_chars=max_text_chars,
        sync_steps="inline",  # microseconds of pure CPU: a thread hop would cost more
        redact=redact,
        calibration=calibration,
    )


@functools.lru_cache(maxsize=32)
def _extractor(
    *,
    stemming: bool,
    extra_stopwords: tuple[str, ...],
    compound_terms: tuple[str, ...],
    builtin_compound_terms: bool,
) -> KeywordExtractor:
    # Scorers with the same settings share one extractor, and so its warm token cache.
    return KeywordExtractor(
        stemming=stemming,
        extra_stopwords=extra_stopwords,
        compound_terms=compound_terms,
        builtin_compound_terms=builtin_compound_terms,
    )


def _as_tuple(name: str, words: object) -> tuple[str, ...]:
    # A tuple, so the settings can key the shared-extractor cache.
    return tuple(_words(name, words))


def _extracted(ctx: StepContext) -> tuple[Keywords, Keywords]:
    value: tuple[Keywords, Keywords] = ctx.state[_STATE_KEY]
    return value


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
    reference = argument or "input"
    if reference not in ("input", "ground_truth"):
        raise ValueError(
            f"keyword-coverage compares with 'input' or 'ground_truth', not {reference!r}"
        )
    return create_keyword_coverage_scorer(reference=reference)  # type: ignore[arg-type]
