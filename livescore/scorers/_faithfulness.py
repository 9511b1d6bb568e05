"""The faithfulness scorer: the share of the output's claims that the context backs.

Three-step mode (the default; at most three judge calls):

1. preprocess (judge): the output's claims, ``{"claims": [...]}``, with the very request
   the hallucination scorer sends, so a run scored by both extracts its claims once (the
   run's :class:`~livescore.scoring.RunMemo`). An empty output has none: no call.
2. analyze (judge): one verdict per claim, ``{"verdicts": [{"statement", "verdict":
   "yes" | "no" | "unsure", "reason"}]}``: backed by the context, contradicted by it, or
   not in it. Verdicts are read case-insensitively (Mastra counts only an exact ``"yes"``).
3. generate_score (code): supported / total × scale, half-up to 2 decimals; no claims →
   ``scale`` (nothing in the output is unfaithful).
4. generate_reason (judge): ``"The score is X because …"``.

One-call mode asks for claims, verdicts and reason in one answer and fills the same fields.

Logprob mode sends the hallucination scorer's one-word question on the whole output (is
every statement supported by the context? "yes" or "no", one token) and scores the judge's
probability of "yes" × scale: the chance that the context backs every claim, not the share of
claims backed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from livescore._text import DEFAULT_MAX_TEXT_CHARS
from livescore.judges import Judge
from livescore.pii import RedactSpec
from livescore.scorers._claims import claims_extraction_step
from livescore.scorers._context import DEFAULT_MAX_CONTEXT_CHARS, no_context_reason
from livescore.scorers._hallucination_prompts import (
    LOGPROB_CHOICES,
    LOGPROB_SYSTEM,
    logprob_prompt,
)
from livescore.scorers._judge_spec import (
    JudgePrompts,
    JudgeSpec,
    LogprobSpec,
    judge_catalog_entry,
    judge_schemas,
    judge_scorer,
)
from livescore.scorers._judged import FAITHFULNESS_LABELS, JudgeMode, fmt
from livescore.scorers._prompting import RenderedContext, block, data_rule, item_blocks, quote
from livescore.scorers._verdicts import StatementVerdict, tally
from livescore.scoring import CalibrationSpec, ContextFunction, Scorer, StepContext

__all__ = (
    "FAITHFULNESS",
    "FaithfulnessVerdict",
    "FaithfulnessVerdicts",
    "create_faithfulness_scorer",
)

_SPELLINGS = {
    "yes": ("y", "true", "supported", "backed", "faithful", "entailed", "consistent"),
    "no": ("n", "false", "contradicted", "contradicts", "contradiction", "refuted", "wrong"),
    "unsure": (
        "unknown",
        "unverifiable",
        "not mentioned",
        "not in context",
        "not in the context",
        "unsupported",
        "not supported",
        "idk",
        "maybe",
        "neutral",
        "not enough information",
    ),
}


class FaithfulnessVerdict(StatementVerdict):
    """One claim's verdict: ``"yes"`` backed by the context, ``"no"`` contradicted by it,
    ``"unsure"`` not in it. Spellings are normalised (``"Yes"``, ``true``, ``"supported"``,
    ``"contradicted"``, ``"not mentioned"``…)."""

    spellings = _SPELLINGS
    verdict: Literal["yes", "no", "unsure"]


# -- prompts ----------------------------------------------------------------------------------

_TAGS = ("output", "context", "document", "claims", "claim", "verdicts", "verdict")

_RULES = """\
Decide each claim with the context as your only source of truth:
- "yes" (supported): the context states the claim, or it follows plainly from what the \
context states. Looser precision is still "yes": a vaguer date, a rounded number, details \
left out.
- "no" (contradicted): the context says something the claim disagrees with: another date, \
number, name, place or outcome.
- "unsure" (not in the context): the context neither states nor contradicts the claim. \
A claim that is true in the real world but absent from the context is "unsure": never use \
your own knowledge.
- A hedged claim ("may", "probably") is judged by the fact it hedges: "yes" when the \
context states that fact, "unsure" when it is absent.
- Subjective or evaluative claims ("the best", "pioneering") are "unsure" unless the \
context itself says so."""

VERDICT_SYSTEM = f"""\
You check whether an AI system's claims are faithful to a context: backed by it, \
contradicted by it, or not in it.

{_RULES}

{data_rule(_TAGS)}

Return exactly one verdict per claim, in the order given. Each verdict has "statement" \
(the claim, copied), "verdict" ("yes", "no" or "unsure", lower case) and "reason" (one \
short sentence naming the part of the context that backs or contradicts the claim, or \
saying that it is absent).

Answer with JSON only: {{"verdicts": [{{"statement": "...", "verdict": "yes", "reason": \
"..."}}]}}"""

REASON_SYSTEM = f"""\
You explain the result of a faithfulness check to the developer of an AI system, in \
plain, concise English: two or three sentences of plain text, no lists, no JSON.

{data_rule(_TAGS)}"""

ONE_CALL_SYSTEM = f"""\
You check whether an AI system's output is faithful to a context, in three moves, and \
give all three in one JSON answer.

1. "claims": break the output into the factual claims it makes. A claim is a single \
statement that could be checked as true or false. Split sentences that say several \
things, make each claim stand alone, keep the output's wording, precision and hedging. \
Leave out greetings, questions and text that asserts nothing. No checkable claim: an \
empty list.
2. "verdicts": one verdict per claim, in the same order, each with "statement" (the \
claim, copied), "verdict" ("yes", "no" or "unsure") and "reason" (one short sentence).
3. "reason": two or three sentences for the developer that name the claims the context \
contradicts or does not contain, or say that the context backs every claim. Do not give \
a numeric score.

{_RULES}

{data_rule(_TAGS)}

Answer with JSON only: {{"claims": ["..."], "verdicts": [{{"statement": "...", "verdict": \
"yes", "reason": "..."}}], "reason": "..."}}"""


def _verdict_prompt(claims: Sequence[str], context: RenderedContext) -> str:
    n = len(claims)
    return (
        "Decide for each claim in the <claims> block whether the <context> block backs it "
        '("yes"), contradicts it ("no") or does not contain it ("unsure").\n\n'
        f"{context.block}\n\n"
        f"{item_blocks('claims', 'claim', claims)}\n\n"
        f"There {'is 1 claim' if n == 1 else f'are {n} claims'}: answer with exactly {n} "
        f"verdict{'' if n == 1 else 's'}, in the same order, as JSON only: "
        '{"verdicts": [{"statement": ..., "verdict": "yes" | "no" | "unsure", "reason": ...}]}.'
    )


def _reason_prompt(*, score_text: str, scale: float, verdicts: Sequence[Mapping[str, Any]]) -> str:
    counts = tally(verdicts)
    items = "\n".join(
        f'<verdict index="{i}" verdict="{v["verdict"]}">\n'
        f"claim: {quote(v['statement'])}\nreason: {quote(v['reason'])}\n</verdict>"
        for i, v in enumerate(verdicts, start=1)
    )
    return (
        f"A faithfulness check of an AI output found {counts['yes']} of {len(verdicts)} "
        f"claims backed by the context ({counts['no']} contradicted, {counts['unsure']} not "
        f"in it). Its score is {score_text} on a scale from 0 (no claim backed) to "
        f"{scale:g} (every claim backed).\n\n"
        f"<verdicts>\n{items}\n</verdicts>\n\n"
        f'Explain the score. Start with "The score is {score_text} because", name the '
        "claims the context contradicts or does not contain and what it says instead (or "
        "that it is silent), or say that the context backs every claim."
    )


def _one_call_prompt(output: str, context: RenderedContext) -> str:
    return (
        "Check the text in the <output> block against the <context> block: list its claims, "
        "give one verdict per claim, and explain the result.\n\n"
        f"{context.block}\n\n"
        f"{block('output', output)}\n\n"
        'Answer with JSON only: {"claims": [...], "verdicts": [...], "reason": "..."}.'
    )


def _count_reason(ctx: StepContext) -> str:
    verdicts = ctx.analyze_step_result["verdicts"]
    counts = tally(verdicts)
    total = len(verdicts)
    if total == 1:
        what = {
            "yes": "the only claim is backed by the context",
            "no": "the context contradicts the only claim",
            "unsure": "the context does not contain the only claim",
        }[verdicts[0]["verdict"]]
    elif counts["yes"] == total:
        what = f"the context backs all {total} claims"
    else:
        what = (
            f"{counts['yes']} of {total} claims are backed by the context "
            f"({counts['no']} contradicted, {counts['unsure']} not in it)"
        )
    return f"The score is {fmt(ctx.score)} because {what}."


def _no_claims_reason(ctx: StepContext) -> str:
    if not ctx.output_text.strip():
        return f"The score is {fmt(ctx.score)} because the output is empty: it claims nothing."
    return (
        f"The score is {fmt(ctx.score)} because the output makes no factual claims, so "
        "nothing in it is unfaithful."
    )


def _logprob_reason(ctx: StepContext, unsupported: float) -> str:
    if not ctx.flags.get("verdict_from_logprobs"):
        word = "no" if unsupported >= 0.5 else "yes"
        return (
            f"The score is {fmt(ctx.score)} because the judge answered {word} to whether "
            "the context supports every statement (it gave no token probabilities, so "
            "the score is 0 or the scale)."
        )
    return (
        f"The score is {fmt(ctx.score)} because the judge puts a probability of "
        f"{1 - unsupported:.2f} on the context backing every claim of the output (one "
        "word, read from its token probabilities)."
    )


FAITHFULNESS = JudgeSpec(
    name="faithfulness",
    family="grounding",
    summary="share of the answer's claims the context backs (context: the item's, else "
    "the run's tool results); claims shared with hallucination",
    check="faithfulness",
    items="claims",
    noun="claim",
    defect="unsupported",
    verdict=FaithfulnessVerdict,
    defect_words=frozenset({"no", "unsure"}),
    counts={"supported": "yes", "contradicted": "no", "unsure": "unsure"},
    counted="claims the context backs",
    higher_is_better=True,
    labels=FAITHFULNESS_LABELS,
    predicts="hallucinated",
    description="Share of the output's claims that the context backs, from 0 (none) to "
    "{scale} (all)",
    grounded=True,
    no_context=no_context_reason("claims"),
    always_explain=True,
    # The hallucination scorer's request, word for word: a run's memo shares it.
    extract=claims_extraction_step,
    prompts=JudgePrompts(
        verdict_system=VERDICT_SYSTEM,
        reason_system=REASON_SYSTEM,
        one_call_system=ONE_CALL_SYSTEM,
        verdict=lambda shown: _verdict_prompt(shown.items, shown.context),
        reason=lambda shown: _reason_prompt(
            score_text=shown.score_text, scale=shown.scale, verdicts=shown.verdicts
        ),
        one_call=lambda shown: _one_call_prompt(shown.output, shown.context),
    ),
    # The hallucination scorer's question: the two scores mirror each other.
    logprob=LogprobSpec(
        system=LOGPROB_SYSTEM,
        prompt=logprob_prompt,
        choices=LOGPROB_CHOICES,
        verdicts={"yes": "yes", "no": "unsure"},
        reason=_logprob_reason,
    ),
    no_items_reason=_no_claims_reason,
    count_reason=_count_reason,
)
"""The faithfulness scorer as data (see :class:`~livescore.scorers._judge_spec.JudgeSpec`)."""

FaithfulnessVerdicts = judge_schemas(FAITHFULNESS)[0]


# -- the scorer -------------------------------------------------------------------------------


def create_faithfulness_scorer(
    *,
    model: str | Judge,
    context: Sequence[str] | None = None,
    get_context: ContextFunction | None = None,
    scale: float = 1.0,
    judge_mode: JudgeMode = "three_step",
    id: str = "faithfulness",
    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
    max_context_chars: int = DEFAULT_MAX_CONTEXT_CHARS,
    judge_options: Mapping[str, Any] | None = None,
    redact: RedactSpec | None = None,
    calibration: CalibrationSpec | None = None,
) -> Scorer:
    """Score how much of an output the context backs: supported claims / claims × scale.

    The output's claims are judged against the context only, never the judge's own
    knowledge: each is supported (``"yes"``), contradicted (``"no"``) or not in the context
    (``"unsure"``); only supported claims count. Higher is better: 1 (× ``scale``) means the
    context backs every claim. It is the mirror of the hallucination scorer, with a third
    verdict that tells a contradiction from a claim the context is silent about. Scored
    with the hallucination scorer on the same run and judge, the claims are extracted once.

    Args:
        model: The judge: ``"openai/<model>"`` or a :class:`~livescore.judges.Judge`.
        context: Static ground truth, one string per fact or document.
        get_context: ``get_context(run, step)``, sync or async, returning the run's ground
            truth; it overrides ``context``. With neither, it is
            :func:`livescore.get_run_context`: the context given with the run, else its
            successful tool calls and retrieved documents.
        scale: The score when every claim is backed (a positive number).
        judge_mode: ``"three_step"`` (claims, verdicts, reason: up to three calls),
            ``"one_call"`` (one answer with all three; same result fields) or
            ``"logprob"`` (one one-token call on the whole output: the score is the judge's
            probability that the context backs every claim, × scale).
        id: The scorer id on results, spans and metrics.
        max_text_chars: Output text beyond this is cut before judging (and flagged).
        max_context_chars: The most characters the context block takes in a request
            (at least 100); past it the context is cut and the cut recorded.
        judge_options: Keyword arguments for :func:`~livescore.judges.resolve_judge` when
            ``model`` is a string.
        redact: Keeps personal data from the judge (see ``Scorer.with_redaction``).
        calibration: Labels fitted on yours (see ``Scorer.with_calibration``).

    Returns:
        A scorer whose results carry ``preprocess_step_result = {"claims": [...]}``,
        ``analyze_step_result = {"verdicts": [...]}``, the score, a label (``unfaithful``
        at or below 0.15 of the scale, ``low``, ``mixed`` above 0.35, ``high`` above 0.55,
        ``faithful`` at the full scale), a reason, ``flags["claims_total"]``,
        ``["claims_supported"]``, ``["claims_contradicted"]``, ``["claims_unsure"]``, and
        the span attributes ``livescore.claims.total`` / ``livescore.claims.supported``.
        No context → skipped as not scorable, before any judge call. An empty output, or
        one with no claims, scores ``scale``: nothing in it is unfaithful (Mastra gives 0).

    Raises:
        ValueError: ``scale``, ``judge_mode`` or ``max_context_chars`` is invalid.
        TypeError: ``context`` is not a list of strings or ``get_context`` not callable.
        livescore.judges.JudgeConfigError: No usable judge model.

    Example:
        >>> from livescore.testing import ScriptedJudge
        >>> judge = ScriptedJudge([
        ...     {"claims": ["The Eiffel Tower is in Paris.", "It is 500 m tall."]},
        ...     {"verdicts": [
        ...         {"statement": "The Eiffel Tower is in Paris.", "verdict": "Yes",
        ...          "reason": "Stated."},
        ...         {"statement": "It is 500 m tall.", "verdict": "no",
        ...          "reason": "The context says 330 m."}]},
        ...     "The score is 0.5 because the height contradicts the context.",
        ... ])
        >>> scorer = create_faithfulness_scorer(
        ...     model=judge, context=["The Eiffel Tower, in Paris, is 330 m tall."])
        >>> result = scorer.run_sync({"input": "Tell me about it.",
        ...                           "output": "It is in Paris and 500 m tall."})
        >>> result.score, result.label
        (0.5, 'mixed')
    """
    return judge_scorer(
        FAITHFULNESS,
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
    )


_build = judge_catalog_entry(FAITHFULNESS, create_faithfulness_scorer)
