"""The role-adherence scorer: the turns where the agent left the role it was given.

Three-step mode (the default; at most two judge calls):

1. preprocess (code): the agent's replies, one item per turn (``"[turn N] ..."``).
2. analyze (judge): one verdict per reply against the role and the whole conversation,
   ``"yes"`` in role, ``"no"`` out of it (another persona, a task the role excludes, a
   tone the role forbids, a break of the role's rules).
3. generate_score (code): replies in role / replies, × scale, half-up to 2 decimals.
4. generate_reason (judge), naming the turns out of role.

The role is the one given (``role=``), else the system prompt the conversation's first turn
ran with; without either the conversation is not scorable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel

from livescore._catalog import ScorerOptions, catalog_entry
from livescore._text import DEFAULT_MAX_TEXT_CHARS
from livescore.judges import Judge
from livescore.pii import RedactSpec
from livescore.scorers._conversation import (
    CONVERSATION_TAGS,
    conversation_block,
    conversation_of,
    item_turn,
    listing,
    reply_items,
    role_block,
    turns_phrase,
)
from livescore.scorers._judge_spec import ConversationPolicy, JudgePrompts, JudgeSpec, judge_scorer
from livescore.scorers._judged import (
    JudgeMode,
    fmt,
)
from livescore.scorers._prompt_alignment import find_system_prompt
from livescore.scorers._prompting import data_rule, item_blocks, quote
from livescore.scorers._verdicts import StatementVerdict, tally
from livescore.scoring import CalibrationSpec, NotScorable, Scorer, StepContext

__all__ = (
    "RoleOneCallAnswer",
    "RoleVerdict",
    "RoleVerdicts",
    "create_role_adherence_scorer",
)

_SPELLINGS = {
    "yes": ("y", "true", "in role", "adheres", "consistent", "kept"),
    "no": ("n", "false", "out of role", "broke", "left", "broken", "violated"),
}


class RoleVerdict(StatementVerdict):
    """One reply's verdict: ``"yes"`` when it stays in the assistant's role, ``"no"`` when
    it leaves it (another persona, a task the role excludes, a tone or rule the role
    forbids). Spellings such as ``"in role"`` / ``"out of role"`` are read too."""

    spellings = _SPELLINGS
    verdict: Literal["yes", "no"]


class RoleVerdicts(BaseModel):
    """The verdict answer: ``{"verdicts": [{"statement", "verdict", "reason"}, ...]}``."""

    verdicts: list[RoleVerdict]


class RoleOneCallAnswer(BaseModel):
    """The one-call answer: one verdict per reply, and the reason."""

    verdicts: list[RoleVerdict]
    reason: str


_TAGS = (*CONVERSATION_TAGS, "verdicts", "verdict")

_RULES = """\
Judge each assistant reply against the role in the <role> block, reading the \
conversation around it:
- "yes": the reply speaks and acts as the role says: its persona, its scope, its tone and \
its rules. Declining something the role excludes is in role.
- "no": the reply leaves the role: it takes another persona, helps with what the role \
excludes, breaks a rule of the role, or takes a tone the role forbids (also when the \
user asked it to).
Judge the role only, not whether the reply is correct."""

VERDICT_SYSTEM = f"""\
You review whether an AI assistant stays in the role it was given, reply by reply.

{_RULES}

{data_rule(_TAGS)}

Return exactly one verdict per reply in the <replies> block, in the order given. Each \
verdict has "statement" (the reply's item, copied), "verdict" ("yes" or "no", lower case) \
and "reason" (one short sentence).

Answer with JSON only: {{"verdicts": [{{"statement": "...", "verdict": "yes", "reason": \
"..."}}]}}"""

REASON_SYSTEM = f"""\
You explain the result of a role-adherence check of an AI assistant to its developer, in \
plain, concise English: two or three sentences of plain text, no lists, no JSON.

{data_rule(_TAGS)}"""

ONE_CALL_SYSTEM = f"""\
You review whether an AI assistant stays in the role it was given, reply by reply, and \
give your verdicts and a reason in one JSON answer.

1. "verdicts": one verdict per reply in the <replies> block, in the same order, each with \
"statement" (the reply's item, copied), "verdict" ("yes" = in role, "no" = out of role) \
and "reason" (one short sentence).
2. "reason": two or three sentences for the developer naming the turns out of role and \
how, or saying that every reply stays in role. No numeric score.

{_RULES}

{data_rule(_TAGS)}

Answer with JSON only: {{"verdicts": [{{"statement": "...", "verdict": "yes", "reason": \
"..."}}], "reason": "..."}}"""


def _verdict_prompt(role: str, transcript: str, replies: Sequence[str]) -> str:
    n = len(replies)
    return (
        "Decide for each reply in the <replies> block whether the assistant stays in the "
        "role in the <role> block; the whole conversation is in the <conversation> block.\n\n"
        f"{role_block(role)}\n\n{transcript}\n\n"
        f"{item_blocks('replies', 'reply', replies)}\n\n"
        f"There {'is 1 reply' if n == 1 else f'are {n} replies'}: answer with exactly {n} "
        f"verdict{'' if n == 1 else 's'}, in the same order, as JSON only: "
        '{"verdicts": [{"statement": ..., "verdict": "yes" | "no", "reason": ...}]}.'
    )


def _reason_prompt(score_text: str, scale: float, verdicts: Sequence[Mapping[str, Any]]) -> str:
    kept = tally(verdicts)["yes"]
    items = "\n".join(
        f'<verdict index="{i}" in_role="{v["verdict"]}">\n'
        f"reply: {quote(v['statement'])}\nreason: {quote(v['reason'])}\n</verdict>"
        for i, v in enumerate(verdicts, start=1)
    )
    return (
        f"A role-adherence check found {kept} of {len(verdicts)} replies of an AI assistant "
        f"in its role. Its score is {score_text} on a scale from 0 (no reply in role) to "
        f"{scale:g} (every reply in role).\n\n"
        f"<verdicts>\n{items}\n</verdicts>\n\n"
        f'Explain the score. Start with "The score is {score_text} because", and name the '
        "turns out of role and how they leave it, or say that every reply stays in role."
    )


def _one_call_prompt(role: str, transcript: str, replies: Sequence[str]) -> str:
    return (
        "Review whether the assistant stays in the role in the <role> block, for each "
        "reply in the <replies> block (the whole conversation is in the <conversation> "
        "block), and explain.\n\n"
        f"{role_block(role)}\n\n{transcript}\n\n"
        f"{item_blocks('replies', 'reply', replies)}\n\n"
        'Answer with JSON only: {"verdicts": [...], "reason": "..."}.'
    )


def _count_reason(ctx: StepContext) -> str:
    verdicts = ctx.analyze_step_result["verdicts"]
    out = [v for v in verdicts if v["verdict"] == "no"]
    total = len(verdicts)
    if not out:
        kept = "the only reply stays" if total == 1 else f"all {total} replies stay"
        return f"The score is {fmt(ctx.score)} because {kept} in role."
    turns = [t for t in (item_turn(str(v["statement"])) for v in out) if t is not None]
    where = turns_phrase(turns) if turns else f"{len(out)} replies"
    return (
        f"The score is {fmt(ctx.score)} because {where} of {total} replies leave the "
        "role: " + listing(str(v["reason"]) for v in out)
    )


def _spec(role: str | None, max_chars: int) -> JudgeSpec:
    """The role-adherence scorer as data: the role given (else the agent's system prompt),
    the transcript cut to ``max_chars``."""

    def role_of(ctx: StepContext) -> str:
        if role is not None:
            return role
        for run in conversation_of(ctx).runs:
            found = find_system_prompt(run)
            if found:
                return found
        raise NotScorable(
            "no role to judge against: give role=... or run the agent with a system prompt"
        )

    def replies(ctx: StepContext) -> list[str]:
        role_of(ctx)  # before any call: no role, not scorable
        return reply_items(ctx)

    def transcript(ctx: StepContext) -> str:
        return conversation_block(ctx, max_chars)

    return JudgeSpec(
        name="role-adherence",
        family="conversation",
        summary="share of the agent's replies that stay in its role",
        check="role-adherence",
        items="replies",
        noun="reply",
        defect="out of role",
        verdict=RoleVerdict,
        defect_words=frozenset({"no"}),
        higher_is_better=True,
        description="Share of the agent's replies that stay in its role, from 0 to {scale}",
        always_explain=True,
        needs_items="the agent made no reply in this conversation",
        count_reason=_count_reason,
        prompts=JudgePrompts(
            verdict_system=VERDICT_SYSTEM,
            reason_system=REASON_SYSTEM,
            one_call_system=ONE_CALL_SYSTEM,
            verdict=lambda shown: _verdict_prompt(
                role_of(shown.ctx), transcript(shown.ctx), shown.items
            ),
            reason=lambda shown: _reason_prompt(shown.score_text, shown.scale, shown.verdicts),
            one_call=lambda shown: _one_call_prompt(
                role_of(shown.ctx),
                transcript(shown.ctx),
                shown.ctx.preprocess_step_result["replies"],
            ),
            verdicts_schema=RoleVerdicts,
            one_call_schema=RoleOneCallAnswer,
        ),
        items_of=replies,
        conversation=ConversationPolicy(),
    )


def create_role_adherence_scorer(
    *,
    model: str | Judge,
    role: str | None = None,
    scale: float = 1.0,
    judge_mode: JudgeMode = "three_step",
    id: str = "role-adherence",
    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
    judge_options: Mapping[str, Any] | None = None,
    redact: RedactSpec | None = None,
    calibration: CalibrationSpec | None = None,
) -> Scorer:
    """Score whether the agent stays in its role through a conversation, reply by reply.

    A conversation scorer: each of the agent's replies is judged against ``role`` (its
    persona, scope, tone and rules) with the whole conversation as context; a reply that
    takes another persona, helps with what the role excludes, or breaks its rules is out of
    role, even when the user asked for it. The score is the share of replies in role,
    times ``scale``; higher is better.

    Args:
        model: The judge: ``"openai/<model>"`` or a :class:`~livescore.judges.Judge`.
        role: The role, in words (``"A support agent for Parcelly: parcels and lockers
            only, polite, never gives legal advice"``). ``None``: the system prompt the
            conversation's first turn ran with (a conversation without one is skipped).
        scale: The score when every reply stays in role.
        judge_mode: ``"three_step"`` (verdicts, reason: up to two calls) or ``"one_call"``.
        id: The scorer id on results, spans and metrics.
        max_text_chars: The transcript the judge reads is cut to about this many
            characters.
        judge_options: Keyword arguments for :func:`~livescore.judges.resolve_judge`.
        redact: Keeps personal data from the judge (see ``Scorer.with_redaction``).
        calibration: Labels fitted on yours (see ``Scorer.with_calibration``).

    Returns:
        A conversation scorer whose results carry ``preprocess_step_result = {"replies":
        [...]}`` (``"[turn N] ..."``, the start of each reply), ``analyze_step_result =
        {"verdicts": [...]}``, the score, a label (``poor`` … ``full``), a reason naming
        the turns out of role, ``result.turns`` and ``flags["turns_at_fault"]``.

    Raises:
        ValueError: A bad ``scale`` or ``judge_mode``, or an empty ``role``.
        livescore.judges.JudgeConfigError: No usable judge model.

    Example:
        >>> from livescore.runs import Conversation
        >>> from livescore.testing import ScriptedJudge
        >>> judge = ScriptedJudge([
        ...     {"verdicts": [
        ...         {"statement": "[turn 1] Your parcel is in Lyon.", "verdict": "yes",
        ...          "reason": "Support."},
        ...         {"statement": "[turn 2] Here is a poem.", "verdict": "no",
        ...          "reason": "Not support."}]},
        ...     "The score is 0.5 because turn 2 writes a poem.",
        ... ])
        >>> scorer = create_role_adherence_scorer(model=judge, role="Parcel support only.")
        >>> result = scorer.run_sync(Conversation.from_turns([
        ...     {"input": "Where is my parcel?", "output": "Your parcel is in Lyon."},
        ...     {"input": "Write me a poem.", "output": "Here is a poem."},
        ... ]))
        >>> result.score, result.flags["turns_at_fault"]
        (0.5, [2])
    """
    if role is not None and (not isinstance(role, str) or not role.strip()):
        raise ValueError("role must be a non-empty description of the assistant's role")
    return judge_scorer(
        _spec(role, max_text_chars),
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
    "role-adherence",
    family="conversation",
    summary="share of the agent's replies that stay in its role (ROLE, else the system prompt)",
    needs_judge=True,
    argument="ROLE: the role in words (default: the conversation's system prompt)",
    predicts="out_of_role",
    factory="livescore.scorers.create_role_adherence_scorer",
    span_attributes={
        "livescore.conversation.turns_at_fault": "turns whose replies leave the role",
        "livescore.conversation.items_judged": "replies judged",
    },
    examples=("role-adherence", "role-adherence:A polite support agent for parcels only"),
)
def _build(argument: str | None, options: ScorerOptions) -> Scorer:
    return create_role_adherence_scorer(
        model=options.require_model(), role=argument, judge_mode=options.judge_mode
    )
