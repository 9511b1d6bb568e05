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
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, field_validator

from livescore.judges import Judge, JudgeConfigError, resolve_judge
from livescore.otel import attributes as A
from livescore.runs import get_run_context
from livescore.scorers._claims import Claims, ExtractedClaims, claims_extraction_step
from livescore.scorers._hallucination_prompts import (
    ONE_CALL_SYSTEM,
    REASON_SYSTEM,
    VERDICT_SYSTEM,
    RenderedContext,
    one_call_prompt,
    reason_prompt,
    render_context,
    verdict_prompt,
)
from livescore.scorers._judged import JudgeMode, judge_mode_of
from livescore.scoring import (
    DEFAULT_MAX_TEXT_CHARS,
    ContextFunction,
    NotScorable,
    PromptStep,
    Scorer,
    StepContext,
    StepFunction,
    create_scorer,
)

__all__ = (
    "DEFAULT_MAX_CONTEXT_CHARS",
    "HALLUCINATION_LABELS",
    "MIN_MAX_CONTEXT_CHARS",
    "ClaimVerdict",
    "ClaimVerdicts",
    "EmptyContextPolicy",
    "ExtractedClaims",
    "HallucinationMode",
    "OneCallAnswer",
    "create_hallucination_scorer",
    "hallucination_label",
)

HallucinationMode: TypeAlias = JudgeMode
"""``"three_step"``: claims, verdicts and reason in three judge calls (the seed's pipeline).
``"one_call"``: all three in one structured answer, cheaper and a little less careful. The
same as :data:`livescore.scorers.JudgeMode`, the ``judge_mode=`` of every judge scorer."""

EmptyContextPolicy: TypeAlias = Literal["skip", "all_unsupported"]
"""What to do when there is no context: ``"skip"`` the run (not scorable), or count every
claim as unsupported (``"all_unsupported"``, the seed's literal behaviour: score = scale)."""

HALLUCINATION_LABELS = ("none", "low", "mixed", "high", "severe")
"""Every label :func:`hallucination_label` can return, from best to worst."""

DEFAULT_MAX_CONTEXT_CHARS = 100_000
"""Longest context block sent to the judge, in characters: every item, its markup and its
escaping together. Past it the context is cut (and ``livescore.context.truncated`` set)."""

MIN_MAX_CONTEXT_CHARS = 100
"""The smallest ``max_context_chars``: room for the block's own markup and some text."""

_CONTEXT_KEY = "hallucination.context"
_RENDERED_KEY = "hallucination.rendered_context"

NO_CONTEXT_REASON = (
    "no context to judge against: the scorer has no static `context` and `get_context` "
    "returned nothing for this run (by default: no given context, no successful tool call "
    "and no retrieved document); pass on_empty_context='all_unsupported' to score such "
    "runs as fully unsupported"
)

# Spellings judges use for a verdict. Anything else is rejected and the judge asked again.
_YES = frozenset(
    {"yes", "y", "true", "hallucinated", "hallucination", "unsupported", "not supported"}
)
_NO = frozenset({"no", "n", "false", "not hallucinated", "supported", "grounded", "faithful"})


class ClaimVerdict(BaseModel):
    """One claim's verdict. ``verdict`` is ``"yes"`` when the claim is hallucinated.

    Judges' spellings are normalised: ``"Yes"``, ``" YES "``, ``true`` and ``"hallucinated"``
    read as ``"yes"``; ``"No"``, ``false`` and ``"supported"`` as ``"no"``.
    """

    statement: str
    verdict: Literal["yes", "no"]
    reason: str

    @field_validator("verdict", mode="before")
    @classmethod
    def _normalise_verdict(cls, value: object) -> object:
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, str):
            words = value.strip().strip(".!\"'").lower().replace("_", " ").replace("-", " ")
            key = " ".join(words.split())
            if key in _YES:
                return "yes"
            if key in _NO:
                return "no"
        return value  # the Literal check then rejects it with a clear message


class ClaimVerdicts(BaseModel):
    """The verdict answer: ``{"verdicts": [{"statement", "verdict", "reason"}, ...]}``."""

    verdicts: list[ClaimVerdict]


class OneCallAnswer(BaseModel):
    """The one-call answer: claims, one verdict per claim, and a short explanation."""

    claims: Claims
    verdicts: list[ClaimVerdict]
    reason: str


def hallucination_label(score: float, *, scale: float = 1.0) -> str:
    """The label of a hallucination score, from the seed's interpretation bands.

    The label reads ``score / scale`` so it does not depend on the scale. The seed's bands
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
    _check_scale(scale)
    ratio = score / scale
    if ratio <= 0:
        return "none"
    if ratio < 0.45:
        return "low"
    if ratio < 0.65:
        return "mixed"
    if ratio < 0.85:
        return "high"
    return "severe"


def create_hallucination_scorer(
    *,
    model: str | Judge,
    scale: float = 1.0,
    context: Sequence[str] | None = None,
    get_context: ContextFunction | None = None,
    mode: HallucinationMode | None = None,
    judge_mode: JudgeMode | None = None,
    on_empty_context: EmptyContextPolicy = "skip",
    id: str = "hallucination",
    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
    max_context_chars: int = DEFAULT_MAX_CONTEXT_CHARS,
    judge_options: Mapping[str, Any] | None = None,
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
        mode: ``"three_step"`` (claims, verdicts, reason: up to three judge calls, the
            default) or ``"one_call"`` (one structured answer with all three; same result
            fields). The scorer's original keyword, kept as it is.
        judge_mode: The same choice under the keyword every judge scorer takes (give one
            of the two; both with different values is an error).
        on_empty_context: With no context (none given, or ``get_context`` returned nothing):
            ``"skip"`` marks the run not scorable; ``"all_unsupported"`` still extracts the
            claims and counts every one as hallucinated (score = ``scale``), as the seed does.
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
        ValueError: ``scale``, ``mode`` / ``judge_mode``, ``on_empty_context`` or a size
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
    _check_scale(scale)
    chosen_mode = judge_mode_of(judge_mode, mode, scorer="hallucination")
    if on_empty_context not in ("skip", "all_unsupported"):
        raise ValueError(
            f"on_empty_context must be 'skip' or 'all_unsupported', not {on_empty_context!r}"
        )
    if get_context is not None and not callable(get_context):
        raise TypeError("get_context must be a function get_context(run, step)")
    if isinstance(max_context_chars, bool) or not isinstance(max_context_chars, int):
        raise TypeError("max_context_chars must be an int")
    if max_context_chars < MIN_MAX_CONTEXT_CHARS:
        raise ValueError(
            f"max_context_chars must be at least {MIN_MAX_CONTEXT_CHARS}, not {max_context_chars}"
        )
    judge = _resolve(model, judge_options)
    if context is None and get_context is None:
        get_context = get_run_context

    def context_of(ctx: StepContext) -> list[str]:
        # Once per score: a context can hold a million items.
        items: list[str] | None = ctx.state.get(_CONTEXT_KEY)
        if items is None:
            items = ctx.state[_CONTEXT_KEY] = [c for c in ctx.context or () if c.strip()]
        return items

    def context_for_judge(ctx: StepContext) -> RenderedContext:
        rendered: RenderedContext | None = ctx.state.get(_RENDERED_KEY)
        if rendered is None:
            items = context_of(ctx)
            rendered = ctx.state[_RENDERED_KEY] = render_context(items, max_context_chars)
            if rendered.truncated:
                chars = sum(len(item) for item in items)
                ctx.flags["context_truncated"] = True
                ctx.flags["context_chars"] = chars
                ctx.attributes[A.LIVESCORE_CONTEXT_TRUNCATED] = True
                ctx.attributes[A.LIVESCORE_CONTEXT_CHARS] = chars
        return rendered

    def nothing_to_extract(ctx: StepContext) -> bool:
        # An empty output claims nothing: score 0 whatever the context, and no judge call.
        if not ctx.output_text.strip():
            return True
        # Checked before the first judge call, so a run without evidence costs nothing.
        if on_empty_context == "skip" and not context_of(ctx):
            raise NotScorable(NO_CONTEXT_REASON)
        return False

    def no_verdicts_needed(ctx: StepContext) -> bool:
        return not _claims(ctx) or not context_of(ctx)

    def verdicts_without_judge(ctx: StepContext) -> dict[str, Any]:
        # Only reached with claims when on_empty_context="all_unsupported".
        return {"verdicts": _all_unsupported(_claims(ctx))}

    def generate_score(ctx: StepContext) -> float:
        verdicts = ctx.analyze_step_result["verdicts"]
        hallucinated = sum(1 for v in verdicts if v["verdict"] == "yes")
        ctx.flags["claims_total"] = len(verdicts)
        ctx.flags["claims_hallucinated"] = hallucinated
        ctx.attributes[A.LIVESCORE_CLAIMS_TOTAL] = len(verdicts)
        ctx.attributes[A.LIVESCORE_CLAIMS_HALLUCINATED] = hallucinated
        if not context_of(ctx) and verdicts:
            ctx.flags["context_missing"] = True
        return _round2(hallucinated / len(verdicts) * scale) if verdicts else 0.0

    def reason_without_judge(ctx: StepContext) -> str:
        score = _fmt(ctx.score)
        if not ctx.output_text.strip():
            return f"The score is {score} because the output is empty, so it makes no claims."
        claims = _claims(ctx)
        if not claims:
            return f"The score is {score} because the output makes no factual claims to check."
        return (
            f"The score is {score} because no context was given, so none of the "
            f"{_n_claims(len(claims))} can be backed by it."
        )

    preprocess: PromptStep[Any]
    analyze: PromptStep[Any] | StepFunction
    generate_reason: PromptStep[Any] | StepFunction
    if chosen_mode == "three_step":
        # The same request as the faithfulness scorer's: a run's memo sends it once.
        preprocess = claims_extraction_step(skip_if=nothing_to_extract)
        analyze = PromptStep(
            description="Judge each claim against the context",
            output_schema=ClaimVerdicts,
            system=VERDICT_SYSTEM,
            create_prompt=lambda ctx: verdict_prompt(_claims(ctx), context_for_judge(ctx)),
            validate=_check_verdict_count,
            parse=_verdicts_result,
            skip_if=no_verdicts_needed,
            skip_result=verdicts_without_judge,
        )
        generate_reason = PromptStep(
            description="Explain the score",
            output_schema=None,
            system=REASON_SYSTEM,
            create_prompt=lambda ctx: reason_prompt(
                score_text=_fmt(ctx.score),
                scale=scale,
                verdicts=ctx.analyze_step_result["verdicts"],
            ),
            parse=lambda text, ctx: str(text).strip() or _summary(ctx),
            skip_if=no_verdicts_needed,
            skip_result=reason_without_judge,
        )
    else:
        preprocess = PromptStep(
            description="Extract claims, judge each against the context, explain",
            output_schema=OneCallAnswer,
            system=ONE_CALL_SYSTEM,
            create_prompt=lambda ctx: one_call_prompt(ctx.output_text, context_for_judge(ctx)),
            validate=_check_one_call_count,
            parse=_keep_one_call_answer,
            skip_if=nothing_to_extract,
            skip_result=lambda ctx: {"claims": []},
        )

        def one_call_verdicts(ctx: StepContext) -> dict[str, Any]:
            if no_verdicts_needed(ctx):
                return verdicts_without_judge(ctx)
            return {"verdicts": ctx.state["verdicts"]}

        def one_call_reason(ctx: StepContext) -> str:
            if no_verdicts_needed(ctx):
                return reason_without_judge(ctx)
            judge_reason = ctx.state["reason"]
            return _summary(ctx) + (f" {judge_reason}" if judge_reason else "")

        analyze, generate_reason = one_call_verdicts, one_call_reason

    return create_scorer(
        id=id,
        description=(
            "Share of the output's factual claims that the context contradicts or does not "
            f"support, from 0 (none) to {scale:g} (all)"
        ),
        model=judge,
        preprocess=preprocess,
        analyze=analyze,
        generate_score=generate_score,
        generate_reason=generate_reason,
        context=context,
        get_context=get_context,
        label=lambda score: hallucination_label(score, scale=scale),
        max_text_chars=max_text_chars,
        sync_steps="inline",  # its code steps are quick; get_context still runs in a thread
    )


# -- helpers --------------------------------------------------------------------------------


def _check_scale(scale: object) -> None:
    if isinstance(scale, bool) or not isinstance(scale, int | float):
        raise ValueError(f"scale must be a positive number, not {scale!r}")
    if not math.isfinite(scale) or scale <= 0:
        raise ValueError(f"scale must be a positive, finite number, not {scale!r}")


def _resolve(model: str | Judge | None, options: Mapping[str, Any] | None) -> Judge:
    if model is None or model == "":
        raise JudgeConfigError(
            "the hallucination scorer needs a judge: model='openai/<model>' or a Judge object"
        )
    return resolve_judge(model, **dict(options or {}))


def _claims(ctx: StepContext) -> list[str]:
    claims: list[str] = ctx.preprocess_step_result["claims"]
    return claims


def _all_unsupported(claims: list[str]) -> list[dict[str, Any]]:
    return [
        {"statement": claim, "verdict": "yes", "reason": "No context was given to back it."}
        for claim in claims
    ]


def _check_verdict_count(answer: ClaimVerdicts, ctx: StepContext) -> None:
    expected = len(_claims(ctx))
    if len(answer.verdicts) != expected:
        raise ValueError(
            f"expected exactly {expected} verdicts, one per claim in the given order, "
            f"but got {len(answer.verdicts)}"
        )


def _check_one_call_count(answer: OneCallAnswer, ctx: StepContext) -> None:
    if len(answer.verdicts) != len(answer.claims):
        raise ValueError(
            f"expected exactly one verdict per claim: {len(answer.claims)} claims but "
            f"{len(answer.verdicts)} verdicts"
        )


def _verdicts_result(answer: ClaimVerdicts, ctx: StepContext) -> dict[str, Any]:
    # A judge that leaves "statement" blank still gets its verdict tied to the right claim.
    return {
        "verdicts": [
            {**v.model_dump(), "statement": v.statement.strip() or claim}
            for v, claim in zip(answer.verdicts, _claims(ctx), strict=True)
        ]
    }


def _keep_one_call_answer(answer: OneCallAnswer, ctx: StepContext) -> dict[str, Any]:
    # One answer feeds three steps: the claims are this step's result, the rest waits in
    # ctx.state for analyze and generate_reason.
    ctx.state["verdicts"] = [
        {**v.model_dump(), "statement": v.statement.strip() or claim}
        for v, claim in zip(answer.verdicts, answer.claims, strict=True)
    ]
    ctx.state["reason"] = answer.reason.strip()
    return {"claims": list(answer.claims)}


def _round2(value: float) -> float:
    # Half-up, like Mastra's roundToTwoDecimals (Python's round() would give 0.12 for 1/8).
    return float(Decimal(repr(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def _fmt(score: float | None) -> str:
    return f"{score:g}" if score is not None else "unknown"


def _summary(ctx: StepContext) -> str:
    """A reason built from the counts, for when the judge gave none."""
    total = ctx.flags["claims_total"]
    hallucinated = ctx.flags["claims_hallucinated"]
    if total == 1:
        summary = f"the only claim is {'not ' if hallucinated else ''}backed by the context"
    elif hallucinated == 0:
        summary = f"all {total} claims are backed by the context"
    else:
        summary = f"{hallucinated} of {total} claims are not backed by the context"
    return f"The score is {_fmt(ctx.score)} because {summary}."


def _n_claims(n: int) -> str:
    return "1 claim" if n == 1 else f"{n} claims"
