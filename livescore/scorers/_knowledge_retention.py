"""The knowledge-retention scorer: facts the user gave that a later reply forgets or contradicts.

Three-step mode (the default; at most three judge calls):

1. preprocess (judge): the user digest, the facts the user gave (and what the user asked
   for), each with its turn: the same request as the completeness scorer's first step, so
   the conversation's memo asks it once for both.
2. analyze (judge): one verdict per fact against the whole conversation, ``"yes"`` when a
   later reply forgets it (asks for it again, acts as if it were never said) or contradicts
   it, with the turn of that reply.
3. generate_score (code): 1 - forgotten / facts, × scale, half-up to 2 decimals. No facts:
   not scorable.
4. generate_reason (judge), naming the turns at fault.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel

from livescore._catalog import ScorerOptions, catalog_entry
from livescore._text import DEFAULT_MAX_TEXT_CHARS
from livescore.judges import Judge
from livescore.pii import RedactSpec
from livescore.scorers._claims import Claims
from livescore.scorers._conversation import (
    CONVERSATION_TAGS,
    conversation_block,
    digest_step,
    listing,
    needs_user_messages,
    turns_phrase,
)
from livescore.scorers._judge_spec import ConversationPolicy, JudgePrompts, JudgeSpec, judge_scorer
from livescore.scorers._judged import (
    JudgeMode,
    fmt,
)
from livescore.scorers._prompting import data_rule, item_blocks, quote
from livescore.scorers._verdicts import StatementVerdict, tally
from livescore.scoring import CalibrationSpec, Scorer, StepContext

__all__ = (
    "RetentionOneCallAnswer",
    "RetentionVerdict",
    "RetentionVerdicts",
    "create_knowledge_retention_scorer",
)


_SPELLINGS = {
    "yes": ("y", "true", "forgotten", "forgot", "contradicted", "lost"),
    "no": ("n", "false", "kept", "retained", "remembered"),
}


class RetentionVerdict(StatementVerdict):
    """One fact's verdict: ``"yes"`` when a later reply of the assistant forgets the fact
    (asks for it again, or goes on as if it had not been said) or contradicts it; ``"no"``
    when the replies keep it (or never need it). ``turn``: the turn of the reply at fault,
    for ``"yes"``."""

    spellings = _SPELLINGS
    verdict: Literal["yes", "no"]
    turn: int | None = None


class RetentionVerdicts(BaseModel):
    """The verdict answer: ``{"verdicts": [{"statement", "verdict", "reason", "turn"}]}``."""

    verdicts: list[RetentionVerdict]


class RetentionOneCallAnswer(BaseModel):
    """The one-call answer: the facts the user gave, one verdict per fact, and the reason."""

    facts: Claims
    verdicts: list[RetentionVerdict]
    reason: str


_TAGS = (*CONVERSATION_TAGS, "verdicts", "verdict")

_RULES = """\
For each fact the user gave, read the assistant's replies after the turn the fact comes \
from:
- "yes" (forgotten): a later reply asks the user for it again, goes on as if it had not \
been said where it matters (offers what the user ruled out, uses another number, name or \
date), or contradicts it. Give "turn": the number of the first reply at fault.
- "no" (kept): every later reply that needs the fact keeps it, or no later reply needs \
it. "turn" is null.
Judge memory only: whether a reply is correct or helpful otherwise does not matter."""

VERDICT_SYSTEM = f"""\
You review an AI assistant's memory in a conversation with a user.

{_RULES}

{data_rule(_TAGS)}

Return exactly one verdict per fact, in the order given. Each verdict has "statement" \
(the fact, copied), "verdict" ("yes" or "no", lower case), "reason" (one short sentence) \
and "turn" (a number, or null).

Answer with JSON only: {{"verdicts": [{{"statement": "...", "verdict": "no", "reason": \
"...", "turn": null}}]}}"""

REASON_SYSTEM = f"""\
You explain the result of a knowledge-retention check of an AI assistant to its \
developer, in plain, concise English: two or three sentences of plain text, no lists, no \
JSON.

{data_rule(_TAGS)}"""

ONE_CALL_SYSTEM = f"""\
You review an AI assistant's memory in a conversation with a user, in three moves, and \
give all three in one JSON answer.

1. "facts": every fact the user gave that the assistant may need later (names, numbers, \
dates, places, preferences, constraints), one per item, each starting with its turn in \
brackets: "[turn 2] ...".
2. "verdicts": one verdict per fact, in the same order, each with "statement" (the fact, \
copied), "verdict" ("yes" = forgotten or contradicted later, "no" = kept), "reason" (one \
short sentence) and "turn" (the first reply at fault, or null).
3. "reason": two or three sentences for the developer naming the turns that forget or \
contradict what the user said, or saying that nothing was forgotten. No numeric score.

{_RULES}

{data_rule(_TAGS)}

Answer with JSON only: {{"facts": ["[turn 1] ..."], "verdicts": [{{"statement": "...", \
"verdict": "no", "reason": "...", "turn": null}}], "reason": "..."}}"""


def _verdict_prompt(transcript: str, facts: Sequence[str]) -> str:
    n = len(facts)
    return (
        "Decide for each fact in the <facts> block whether a later reply of the assistant "
        "in the conversation forgets or contradicts it.\n\n"
        f"{transcript}\n\n"
        f"{item_blocks('facts', 'fact', facts)}\n\n"
        f"There {'is 1 fact' if n == 1 else f'are {n} facts'}: answer with exactly {n} "
        f"verdict{'' if n == 1 else 's'}, in the same order, as JSON only: "
        '{"verdicts": [{"statement": ..., "verdict": "yes" | "no", "reason": ..., '
        '"turn": ...}]}.'
    )


def _reason_prompt(score_text: str, scale: float, verdicts: Sequence[Mapping[str, Any]]) -> str:
    forgotten = tally(verdicts)["yes"]
    items = "\n".join(
        f'<verdict index="{i}" forgotten="{v["verdict"]}" turn="{v.get("turn")}">\n'
        f"fact: {quote(v['statement'])}\nreason: {quote(v['reason'])}\n</verdict>"
        for i, v in enumerate(verdicts, start=1)
    )
    return (
        f"A knowledge-retention check found that the assistant forgot or contradicted "
        f"{forgotten} of {len(verdicts)} facts the user gave. Its score is {score_text} on a "
        f"scale from 0 (everything forgotten) to {scale:g} (everything kept).\n\n"
        f"<verdicts>\n{items}\n</verdicts>\n\n"
        f'Explain the score. Start with "The score is {score_text} because", and name the '
        "turns at fault and what they forgot, or say that nothing was forgotten."
    )


def _one_call_prompt(transcript: str) -> str:
    return (
        "Review the assistant's memory in the conversation below: list the facts the user "
        "gave, give one verdict per fact, and explain.\n\n"
        f"{transcript}\n\n"
        'Answer with JSON only: {"facts": [...], "verdicts": [...], "reason": "..."}.'
    )


def _count_reason(ctx: StepContext) -> str:
    verdicts = ctx.analyze_step_result["verdicts"]
    forgotten = [v for v in verdicts if v["verdict"] == "yes"]
    total = len(verdicts)
    if not forgotten:
        kept = "the only fact" if total == 1 else f"all {total} facts"
        return f"The score is {fmt(ctx.score)} because {kept} the user gave are kept."
    turns = [t for t in (v.get("turn") for v in forgotten) if t is not None]
    where = f"{turns_phrase(turns)} forget or contradict" if turns else "replies forget"
    return (
        f"The score is {fmt(ctx.score)} because {where} {len(forgotten)} of {total} "
        "facts the user gave: " + listing(str(v["statement"]) for v in forgotten)
    )


def _spec(max_chars: int) -> JudgeSpec:
    """The knowledge-retention scorer as data, the transcript cut to ``max_chars``."""
    nothing = needs_user_messages("the conversation has no user message, so no facts")

    def transcript(ctx: StepContext) -> str:
        return conversation_block(ctx, max_chars)

    return JudgeSpec(
        name="knowledge-retention",
        family="conversation",
        summary="share of the facts the user gave that the agent keeps",
        check="knowledge-retention",
        items="facts",
        noun="fact",
        defect="forgotten",
        verdict=RetentionVerdict,
        defect_words=frozenset({"yes"}),
        counts={"forgotten": "yes"},
        higher_is_better=True,
        description="Share of the facts the user gave that the agent keeps, from 0 to {scale}",
        always_explain=True,
        needs_items="the user gave no facts for the assistant to retain",
        count_reason=_count_reason,
        # The user digest: the request knowledge retention and completeness share.
        extract=lambda skip_if: digest_step("facts", max_chars, skip_if=skip_if),
        prompts=JudgePrompts(
            verdict_system=VERDICT_SYSTEM,
            reason_system=REASON_SYSTEM,
            one_call_system=ONE_CALL_SYSTEM,
            verdict=lambda shown: _verdict_prompt(transcript(shown.ctx), shown.items),
            reason=lambda shown: _reason_prompt(shown.score_text, shown.scale, shown.verdicts),
            one_call=lambda shown: _one_call_prompt(transcript(shown.ctx)),
            verdicts_schema=RetentionVerdicts,
            one_call_schema=RetentionOneCallAnswer,
        ),
        nothing_to_judge=nothing,
        conversation=ConversationPolicy(
            turn=lambda verdict, item: verdict.get("turn"),
            counts=True,
        ),
    )


def create_knowledge_retention_scorer(
    *,
    model: str | Judge,
    scale: float = 1.0,
    judge_mode: JudgeMode = "three_step",
    id: str = "knowledge-retention",
    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
    judge_options: Mapping[str, Any] | None = None,
    redact: RedactSpec | None = None,
    calibration: CalibrationSpec | None = None,
) -> Scorer:
    """Score whether the agent remembers what the user told it earlier in a conversation.

    A conversation scorer: the judge lists the facts the user gave (order numbers, names,
    dates, preferences, constraints), then decides for each one whether a later reply
    forgets it (asks for it again, goes on as if it were never said) or contradicts it.
    The score is the share of facts kept, times ``scale``; higher is better.

    Args:
        model: The judge: ``"openai/<model>"`` or a :class:`~livescore.judges.Judge`.
        scale: The score when nothing is forgotten.
        judge_mode: ``"three_step"`` (facts, verdicts, reason: up to three calls; the facts
            come from the user digest the completeness scorer shares) or ``"one_call"``.
        id: The scorer id on results, spans and metrics.
        max_text_chars: The transcript the judge reads is cut to about this many
            characters (each message gets an equal share when it does not fit).
        judge_options: Keyword arguments for :func:`~livescore.judges.resolve_judge`.
        redact: Keeps personal data from the judge (see ``Scorer.with_redaction``).
        calibration: Labels fitted on yours (see ``Scorer.with_calibration``).

    Returns:
        A conversation scorer (``level="conversation"``) whose results carry
        ``preprocess_step_result = {"facts": [...]}`` (each item ``"[turn N] ..."``),
        ``analyze_step_result = {"verdicts": [...]}`` (with the ``turn`` at fault), the
        score, a label (``poor`` … ``full``), a reason naming the turns at fault,
        ``result.turns`` (the turns covered) and ``flags["turns_at_fault"]``. A
        conversation in which the user gave no facts is skipped as not scorable.

    Raises:
        ValueError: A bad ``scale`` or ``judge_mode``.
        livescore.judges.JudgeConfigError: No usable judge model.

    Example:
        >>> from livescore.runs import Conversation
        >>> from livescore.testing import ScriptedJudge
        >>> judge = ScriptedJudge([
        ...     {"facts": ["[turn 1] The user's order number is 48213."], "intentions": []},
        ...     {"verdicts": [{"statement": "[turn 1] The user's order number is 48213.",
        ...                    "verdict": "yes", "reason": "Asked again.", "turn": 2}]},
        ...     "The score is 0 because turn 2 asks for the order number again.",
        ... ])
        >>> scorer = create_knowledge_retention_scorer(model=judge)
        >>> result = scorer.run_sync(Conversation.from_turns([
        ...     {"input": "Order 48213 has not arrived.", "output": "Let me check."},
        ...     {"input": "Any news?", "output": "What is your order number?"},
        ... ]))
        >>> result.score, result.flags["turns_at_fault"]
        (0.0, [2])
    """
    return judge_scorer(
        _spec(max_text_chars),
        model=model,
        scale=scale,
        judge_mode=judge_mode,
        id=id,
        max_text_chars=max_text_chars,
        judge_options=judge_options,
        redact=redact,
        calibration=calibration,
    )


@catalog_entry(
    "knowledge-retention",
    family="conversation",
    summary="share of the facts the user gave that later replies keep (a conversation)",
    needs_judge=True,
    predicts="forgetful",
    factory="livescore.scorers.create_knowledge_retention_scorer",
    span_attributes={
        "livescore.conversation.turns_at_fault": "turns that forget or contradict a fact",
        "livescore.conversation.items_judged": "facts judged",
    },
    examples=("knowledge-retention",),
)
def _build(argument: str | None, options: ScorerOptions) -> Scorer:
    return create_knowledge_retention_scorer(
        model=options.require_model(), judge_mode=options.judge_mode
    )
