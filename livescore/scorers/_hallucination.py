"""The hallucination scorer: how much of what the agent said the context does not back.

Pipeline (three-step mode, the default; at most three judge calls):

1. preprocess (judge): the output's factual claims, ``{"claims": [...]}``. An empty output
   has none, and the judge is not called.
2. analyze (judge): one verdict per claim against the context,
   ``{"verdicts": [{"statement", "verdict": "yes" | "no", "reason"}]}``, ``"yes"`` meaning
   hallucinated. No claims: no call.
3. generate_score (code): hallucinated / total × scale, rounded half-up to 2 decimals like
   Mastra; 0 when there is nothing to judge.
4. generate_reason (judge): ``"The score is X because …"``. No claims: a fixed sentence.

One-call mode asks for claims, verdicts and reason in a single structured answer and fills the
same result fields.

Logprob mode asks one plain question about the whole output (is every statement supported
by the context? "yes" or "no", one token) and reads the judge's probability of "no" from its
token logprobs: the score is that probability × scale (the chance that the output makes at
least one claim the context does not back), not the share of claims. One call, a few
hundred tokens, a continuous score (so thresholds and AUROC mean something); a judge
without logprobs answers in a structured word instead, and the score is then 0 or the scale.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel

from livescore._text import DEFAULT_MAX_TEXT_CHARS
from livescore.judges import Judge
from livescore.pii import RedactSpec
from livescore.scorers._claims import Claims, ExtractedClaims, claims_extraction_step
from livescore.scorers._context import (
    DEFAULT_MAX_CONTEXT_CHARS,
    MIN_MAX_CONTEXT_CHARS,
    context_items,
    no_context_reason,
)
from livescore.scorers._hallucination_prompts import (
    LOGPROB_CHOICES,
    LOGPROB_SYSTEM,
    ONE_CALL_SYSTEM,
    REASON_SYSTEM,
    VERDICT_SYSTEM,
    logprob_prompt,
    one_call_prompt,
    reason_prompt,
    verdict_prompt,
)
from livescore.scorers._judge_spec import (
    EmptyContextPolicy,
    JudgePrompts,
    JudgeSpec,
    LogprobSpec,
    judge_catalog_entry,
    judge_schemas,
    judge_scorer,
)
from livescore.scorers._judged import DEFECT_LABELS, JudgeMode, check_scale, defect_label, fmt
from livescore.scorers._verdicts import StatementVerdict
from livescore.scoring import CalibrationSpec, ContextFunction, Scorer, StepContext

__all__ = (
    "DEFAULT_MAX_CONTEXT_CHARS",
    "HALLUCINATION",
    "HALLUCINATION_LABELS",
    "MIN_MAX_CONTEXT_CHARS",
    "ClaimVerdict",
    "ClaimVerdicts",
    "EmptyContextPolicy",
    "ExtractedClaims",
    "OneCallAnswer",
    "create_hallucination_scorer",
    "hallucination_label",
)

HALLUCINATION_LABELS = DEFECT_LABELS
"""Every label :func:`hallucination_label` can return, from best to worst."""

NO_CONTEXT_REASON = no_context_reason(
    hint="pass on_empty_context='all_unsupported' to score such runs as fully unsupported"
)

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
    """The label of a hallucination score, from Mastra's interpretation bands.

    The label reads ``score / scale`` so it does not depend on the scale. Mastra's bands
    leave gaps (0.3–0.4, 0.5–0.6…); livescore closes them at the midpoints:

    ======================  ============  =====================================
    ``score / scale``       label         meaning
    ======================  ============  =====================================
    0                       ``"none"``    every claim is backed by the context
    above 0, below 0.45     ``"low"``     a few contradictions
    0.45 up to below 0.65   ``"mixed"``   several contradictions
    0.65 up to below 0.85   ``"high"``    many contradictions
    0.85 to 1               ``"severe"``  most or all claims contradicted
    ======================  ============  =====================================

    Example:
        >>> hallucination_label(0.0), hallucination_label(0.33), hallucination_label(0.9)
        ('none', 'low', 'severe')
        >>> hallucination_label(5.0, scale=10)
        'mixed'
    """
    return defect_label(score, scale=check_scale(scale))


def _count_reason(ctx: StepContext) -> str:
    total = ctx.flags["claims_total"]
    hallucinated = ctx.flags["claims_hallucinated"]
    if not context_items(ctx):
        return (
            f"The score is {fmt(ctx.score)} because no context was given, so none of the "
            f"{'1 claim' if total == 1 else f'{total} claims'} can be backed by it."
        )
    if total == 1:
        what = f"the only claim is {'not ' if hallucinated else ''}backed by the context"
    elif hallucinated == 0:
        what = f"all {total} claims are backed by the context"
    else:
        what = f"{hallucinated} of {total} claims are not backed by the context"
    return f"The score is {fmt(ctx.score)} because {what}."


def _no_claims_reason(ctx: StepContext) -> str:
    score_text = fmt(ctx.score)
    if not ctx.output_text.strip():
        return f"The score is {score_text} because the output is empty, so it makes no claims."
    return f"The score is {score_text} because the output makes no factual claims to check."


def _logprob_reason(ctx: StepContext, probability: float) -> str:
    return (
        f"The score is {fmt(ctx.score)} because the judge puts a probability of "
        f"{probability:.2f} on the output making a claim the context does not support "
        "(one word, read from its token probabilities)."
        if ctx.flags.get("verdict_from_logprobs")
        else f"The score is {fmt(ctx.score)} because the judge answered "
        f"{'no' if probability >= 0.5 else 'yes'} to whether the context supports every "
        "statement (it gave no token probabilities, so the score is 0 or the scale)."
    )


HALLUCINATION = JudgeSpec(
    name="hallucination",
    family="grounding",
    summary="share of the answer's claims the context does not support (context: "
    "the item's, else the run's tool results)",
    check="hallucination",
    items="claims",
    noun="claim",
    defect="hallucinated",
    verdict=ClaimVerdict,
    counted="claims the context contradicts or does not contain",
    description="Share of the output's factual claims that the context contradicts or does "
    "not support, from 0 (none) to {scale} (all)",
    grounded=True,
    no_context=NO_CONTEXT_REASON,
    always_explain=True,
    # A judge that pads "statement" still gets it tied to its claim as written.
    strip_statements=True,
    # The same request as the faithfulness scorer's: a run's memo sends it once.
    extract=claims_extraction_step,
    prompts=JudgePrompts(
        verdict_system=VERDICT_SYSTEM,
        reason_system=REASON_SYSTEM,
        one_call_system=ONE_CALL_SYSTEM,
        verdict=lambda shown: verdict_prompt(shown.items, shown.context),
        reason=lambda shown: reason_prompt(
            score_text=shown.score_text, scale=shown.scale, verdicts=shown.verdicts
        ),
        one_call=lambda shown: one_call_prompt(shown.output, shown.context),
        one_call_schema=OneCallAnswer,
    ),
    logprob=LogprobSpec(
        system=LOGPROB_SYSTEM,
        prompt=logprob_prompt,
        choices=LOGPROB_CHOICES,
        # The question asks whether the context supports everything: "no" is a hallucination.
        verdicts={"yes": "no", "no": "yes"},
        reason=_logprob_reason,
    ),
    no_items_reason=_no_claims_reason,
    count_reason=_count_reason,
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

    The score is the share of the output's factual claims that are hallucinated (contradicted
    by the context, or not in it) times ``scale``: 0 is fully grounded. Claims are judged
    only against the context, never the judge's own knowledge; hedged wording about facts in
    the context, looser dates and numbers, and omitted details are not hallucinations;
    subjective claims are, unless the context states them.

    Args:
        model: The judge: ``"openai/<model>"`` (OpenAI-compatible API, configured by
            ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL``) or a :class:`~livescore.judges.Judge`.
        scale: The score of a fully hallucinated output (a positive number).
        context: Static ground truth, one string per fact or document.
        get_context: ``get_context(run, step)``, sync or async, returning the run's ground
            truth. It overrides ``context`` and is called once per score (a synchronous one
            in a worker thread, so it may block); if it raises, the score fails in step
            ``"get_context"``. With neither ``context`` nor ``get_context`` it is
            :func:`livescore.get_run_context`: the context given with the run (a dataset
            item's), else the run's successful tool calls and retrieved documents.
        judge_mode: ``"three_step"`` (claims, verdicts, reason: up to three judge calls,
            the default), ``"one_call"`` (one structured answer with all three, cheaper
            and a little less careful; same result fields) or ``"logprob"`` (one one-token
            call on the whole output: the score is the judge's probability that the output
            makes an unsupported claim, × scale; ``flags["verdict_probability"]``,
            ``flags["verdict_from_logprobs"]``).
        on_empty_context: With no context (none given, or ``get_context`` returned nothing):
            ``"skip"`` marks the run not scorable; ``"all_unsupported"`` still extracts the
            claims and counts every one as hallucinated (score = ``scale``).
        id: The scorer id on results, spans and metrics.
        max_text_chars: Output text beyond this is cut before judging; the result then has
            ``flags["output_truncated"]`` and the span ``livescore.output_truncated``.
        max_context_chars: The most characters the context takes in a judge request, its
            markup included (at least :data:`MIN_MAX_CONTEXT_CHARS`). Past it the context is
            cut: ``flags["context_truncated"]`` and the span's
            ``livescore.context.truncated`` say so, ``livescore.context.chars`` gives the
            context's full length.
        judge_options: Keyword arguments for :func:`~livescore.judges.resolve_judge` when
            ``model`` is a string (timeout, client, base URL…).
        redact: Keeps personal data from the judge (see ``Scorer.with_redaction``).
        calibration: Labels fitted on yours (see ``Scorer.with_calibration``).

    Returns:
        A scorer whose results carry ``preprocess_step_result = {"claims": [...]}``,
        ``analyze_step_result = {"verdicts": [...]}``, the score, a label (see
        :func:`hallucination_label`), a reason, and ``flags["claims_total"]`` /
        ``flags["claims_hallucinated"]`` (on the span: ``livescore.claims.total`` /
        ``livescore.claims.hallucinated``). An empty output scores 0 without any judge
        call. The input is never read: a run with an empty question is scored like any
        other; a run whose output holds no answer text (a dict of fields, a message list
        without an assistant message) is skipped as not scorable.

    Raises:
        ValueError: ``scale``, ``judge_mode``, ``on_empty_context`` or a size
            limit is invalid.
        TypeError: ``context`` is not a list of strings or ``get_context`` not callable.
        livescore.judges.JudgeConfigError: No usable judge model.

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
    return judge_scorer(
        HALLUCINATION,
        model=model,
        scale=scale,
        judge_mode=judge_mode,
        id=id,
        max_text_chars=max_text_chars,
        judge_options=judge_options,
        redact=redact,
        calibration=calibration,
        context=context,
        get_context=get_context,
        max_context_chars=max_context_chars,
        on_empty_context=on_empty_context,
    )


_build = judge_catalog_entry(HALLUCINATION, create_hallucination_scorer)
