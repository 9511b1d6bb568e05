"""The faithfulness scorer: the share of the output's claims that the context backs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from livescore._text import DEFAULT_MAX_TEXT_CHARS
from livescore.judges import Judge
from livescore.pii import RedactSpec
from livescore.scorers._context import DEFAULT_MAX_CONTEXT_CHARS, no_context_reason
from livescore.scorers._hallucination_prompts import ClaimsWording
from livescore.scorers._judge_spec import judge_catalog_entry, judge_schemas, judge_scorer
from livescore.scorers._judged import FAITHFULNESS_LABELS, JudgeMode
from livescore.scorers._prompting import data_rule, explain_system
from livescore.scorers._verdicts import StatementVerdict
from livescore.scoring import CalibrationSpec, ContextFunction, Scorer

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

REASON_SYSTEM = explain_system("faithfulness", _TAGS)

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


FAITHFULNESS = ClaimsWording(
    verdict_system=VERDICT_SYSTEM,
    reason_system=REASON_SYSTEM,
    one_call_system=ONE_CALL_SYSTEM,
    decide='whether the <context> block backs it ("yes"), contradicts it ("no") or '
    'does not contain it ("unsure")',
    found="A faithfulness check of an AI output found {yes} of {total} claims backed "
    "by the context ({no} contradicted, {unsure} not in it). Its score is {score} on a "
    "scale from 0 (no claim backed) to {scale} (every claim backed).",
    explain="claims the context contradicts or does not contain and what it says "
    "instead (or that it is silent), or say that the context backs every claim",
    attribute="verdict",
    only={
        "yes": "the only claim is backed by the context",
        "no": "the context contradicts the only claim",
        "unsure": "the context does not contain the only claim",
    },
    backed="yes",
    unbacked="unsure",
    all_backed="the context backs all {total} claims",
    share="{yes} of {total} claims are backed by the context ({no} contradicted, "
    "{unsure} not in it)",
    empty="the output is empty: it claims nothing",
    no_claims="the output makes no factual claims, so nothing in it is unfaithful",
    logprob="{supported:.2f} on the context backing every claim of the output",
).spec(
    name="faithfulness",
    summary="share of the answer's claims the context backs (context: the item's, else "
    "the run's tool results); claims shared with hallucination",
    check="faithfulness",
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
    no_context=no_context_reason("claims"),
)
"""The faithfulness scorer as data (see :class:`~livescore.scorers._judge_spec.JudgeSpec`)."""

FaithfulnessVerdicts = judge_schemas(FAITHFULNESS)[0]


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

    The mirror of :func:`~livescore.scorers.create_hallucination_scorer`, with a third
    verdict that tells a contradiction from a claim the context is silent about: each claim
    is backed by the context (``"yes"``), contradicted by it (``"no"``) or not in it
    (``"unsure"``), judged by the context alone; only backed claims count, and higher is
    better. With the hallucination scorer on the same run and judge, the claims are
    extracted once.

    Args:
        judge_mode: As :func:`~livescore.scorers.judge_scorer`'s; ``"logprob"`` scores the
            judge's probability that the context backs every claim, × ``scale``.

    The other arguments are those of :func:`~livescore.scorers.judge_scorer`.

    Returns:
        A scorer whose ``analyze_step_result["verdicts"]`` say ``"yes"``, ``"no"`` or
        ``"unsure"`` per claim. An empty output, or one with no claims, scores ``scale``
        (Mastra gives 0).

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
    return judge_scorer(FAITHFULNESS, **locals())  # every argument is judge_scorer's


_build = judge_catalog_entry(FAITHFULNESS, create_faithfulness_scorer)
