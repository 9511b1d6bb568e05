"""The hallucination scorer: the share of the output's claims that the context does not back."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel

from livescore._text import DEFAULT_MAX_TEXT_CHARS
from livescore.judges import Judge
from livescore.pii import RedactSpec
from livescore.scorers._claims import Claims, ExtractedClaims
from livescore.scorers._context import DEFAULT_MAX_CONTEXT_CHARS, no_context_reason
from livescore.scorers._hallucination_prompts import (
    ONE_CALL_SYSTEM,
    REASON_SYSTEM,
    VERDICT_SYSTEM,
    ClaimsWording,
)
from livescore.scorers._judge_spec import (
    EmptyContextPolicy,
    judge_catalog_entry,
    judge_schemas,
    judge_scorer,
)
from livescore.scorers._judged import DEFECT_LABELS, JudgeMode, check_scale, defect_label
from livescore.scorers._verdicts import StatementVerdict
from livescore.scoring import CalibrationSpec, ContextFunction, Scorer

__all__ = (
    "HALLUCINATION",
    "HALLUCINATION_LABELS",
    "ClaimVerdict",
    "ClaimVerdicts",
    "ExtractedClaims",
    "OneCallAnswer",
    "create_hallucination_scorer",
    "hallucination_label",
)

HALLUCINATION_LABELS = DEFECT_LABELS  # every label hallucination_label gives, best first

# Spellings judges use for a verdict. Anything else is rejected and the judge asked again.
_SPELLINGS = {
    "yes": ("y", "true", "hallucinated", "hallucination", "unsupported", "not supported"),
    "no": ("n", "false", "not hallucinated", "supported", "grounded", "faithful"),
}


class ClaimVerdict(StatementVerdict):
    """One claim's verdict. ``verdict`` is ``"yes"`` when the claim is hallucinated.

    Judges' spellings are normalised: ``"Yes"``, ``" YES "``, ``true`` and ``"hallucinated"``
    read as ``"yes"``; ``"No"``, ``false`` and ``"supported"`` as ``"no"``.
    """

    spellings = _SPELLINGS
    verdict: Literal["yes", "no"]


class OneCallAnswer(BaseModel):
    """The one-call answer: claims, one verdict per claim, and a short explanation."""

    claims: Claims
    verdicts: list[ClaimVerdict]
    reason: str


def hallucination_label(score: float, *, scale: float = 1.0) -> str:
    """The label of a hallucination score: Mastra's bands on ``score / scale``, their gaps
    closed at the midpoints (the bands are on the grounding docs page).

    Example:
        >>> hallucination_label(0.0), hallucination_label(0.33), hallucination_label(0.9)
        ('none', 'low', 'severe')
        >>> hallucination_label(5.0, scale=10)
        'mixed'
    """
    return defect_label(score, scale=check_scale(scale))


HALLUCINATION = ClaimsWording(
    verdict_system=VERDICT_SYSTEM,
    reason_system=REASON_SYSTEM,
    one_call_system=ONE_CALL_SYSTEM,
    one_call_schema=OneCallAnswer,
    decide="whether it is a hallucination, judging only by the <context> block",
    found="A hallucination check found {yes} of {total} claims of an AI output hallucinated "
    "(contradicted by, or missing from, the context). Its score is {score} on a scale from 0 "
    "(no hallucination) to {scale} (everything hallucinated).",
    explain="hallucinated claims and what the context says instead (or that it is silent), "
    "or say that every claim is backed by the context",
    attribute="hallucinated",
    only={
        "yes": "the only claim is not backed by the context",
        "no": "the only claim is backed by the context",
    },
    backed="no",
    # The logprob question asks whether the context supports everything: "no" is a
    # hallucination.
    unbacked="yes",
    all_backed="all {total} claims are backed by the context",
    share="{yes} of {total} claims are not backed by the context",
    empty="the output is empty, so it makes no claims",
    no_claims="the output makes no factual claims to check",
    logprob="{unsupported:.2f} on the output making a claim the context does not support",
).spec(
    name="hallucination",
    summary="share of the answer's claims the context does not support (context: "
    "the item's, else the run's tool results)",
    check="hallucination",
    defect="hallucinated",
    verdict=ClaimVerdict,
    counted="claims the context contradicts or does not contain",
    description="Share of the output's factual claims that the context contradicts or does "
    "not support, from 0 (none) to {scale} (all)",
    no_context=no_context_reason(
        hint="pass on_empty_context='all_unsupported' to score such runs as fully unsupported"
    ),
    # A judge that pads "statement" still gets it tied to its claim as written.
    strip_statements=True,
)
"""The hallucination scorer as data (see :class:`~livescore.scorers._judge_spec.JudgeSpec`)."""

ClaimVerdicts = judge_schemas(HALLUCINATION)[0]


def create_hallucination_scorer(
    *,
    model: str | Judge,
    scale: float = 1.0,
    context: Sequence[str] | None = None,
    get_context: ContextFunction | None = None,
    judge_mode: JudgeMode = "three_step",
    on_empty_context: EmptyContextPolicy = "skip",
    id: str = "hallucination",
    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
    max_context_chars: int = DEFAULT_MAX_CONTEXT_CHARS,
    judge_options: Mapping[str, Any] | None = None,
    redact: RedactSpec | None = None,
    calibration: CalibrationSpec | None = None,
) -> Scorer:
    """Score how much of an output the context contradicts or does not support.

    The score is the share of the output's factual claims that are hallucinated
    (contradicted by the context, or not in it) times ``scale``: 0 is fully grounded, lower
    is better. Claims are judged only against the context, never the judge's own knowledge;
    hedged wording about facts in the context, looser dates and numbers, and omitted details
    are not hallucinations; subjective claims are, unless the context states them.

    Args:
        judge_mode: As :func:`~livescore.scorers.judge_scorer`'s; ``"logprob"`` scores the
            judge's probability that the output makes an unsupported claim, × ``scale``.

    The other arguments are those of :func:`~livescore.scorers.judge_scorer`.

    Returns:
        A scorer whose ``analyze_step_result["verdicts"]`` say ``"yes"`` for a hallucinated
        claim, labelled by :func:`hallucination_label`. An empty output scores 0 without a
        judge call; the question is never read.

    Example:
        >>> from livescore.testing import ScriptedJudge
        >>> judge = ScriptedJudge([
        ...     {"claims": ["The first iPhone was announced in 2007."]},
        ...     {"verdicts": [{"statement": "The first iPhone was announced in 2007.",
        ...                    "verdict": "no", "reason": "The context gives January 9, 2007."}]},
        ...     "The score is 0 because the only claim is backed by the context.",
        ... ])
        >>> scorer = create_hallucination_scorer(
        ...     model=judge,
        ...     context=["The first iPhone was announced on January 9, 2007."],
        ... )
        >>> result = scorer.run_sync({"input": "When?", "output": "It was announced in 2007."})
        >>> result.score, result.label
        (0.0, 'none')
    """
    return judge_scorer(HALLUCINATION, **locals())  # every argument is judge_scorer's


_build = judge_catalog_entry(HALLUCINATION, create_hallucination_scorer)
