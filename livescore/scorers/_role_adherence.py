"""The role-adherence scorer: the turns where the agent left the role it was given."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from livescore._text import DEFAULT_MAX_TEXT_CHARS
from livescore.judges import Judge
from livescore.pii import RedactSpec
from livescore.scorers import _conversation as conv
from livescore.scorers._judge_spec import (
    ConversationPolicy,
    JudgeSpec,
    judge_catalog_entry,
    judge_scorer,
)
from livescore.scorers._judged import JudgeMode
from livescore.scorers._prompt_alignment import find_system_prompt
from livescore.scorers._prompting import block, item_blocks
from livescore.scoring import CalibrationSpec, NotScorable, Scorer, StepContext

__all__ = ("RoleOneCallAnswer", "RoleVerdict", "RoleVerdicts", "create_role_adherence_scorer")

RoleVerdict, RoleVerdicts, RoleOneCallAnswer = conv.answer_schemas(
    "RoleVerdict",
    """One reply's verdict: ``"yes"`` when it stays in the assistant's role, ``"no"`` when
    it leaves it (another persona, a task the role excludes, a tone or rule the role
    forbids). Spellings such as ``"in role"`` / ``"out of role"`` are read too.""",
    {
        "yes": ("y", "true", "in role", "adheres", "consistent", "kept"),
        "no": ("n", "false", "out of role", "broke", "left", "broken", "violated"),
    },
    "RoleOneCallAnswer",
    "The one-call answer: one verdict per reply, and the reason.",
)

_RULES = """\
Judge each assistant reply against the role in the <role> block, reading the \
conversation around it:
- "yes": the reply speaks and acts as the role says: its persona, its scope, its tone and \
its rules. Declining something the role excludes is in role.
- "no": the reply leaves the role: it takes another persona, helps with what the role \
excludes, breaks a rule of the role, or takes a tone the role forbids (also when the \
user asked it to).
Judge the role only, not whether the reply is correct."""


def _count_reason(ctx: StepContext) -> str:
    out, total = conv.faults(ctx, "no")
    if not out:
        return conv.because(ctx, f"{conv.every(total, 'reply stays', 'replies stay')} in role.")
    turns = ctx.flags["turns_at_fault"]
    where = conv.turns_phrase(turns) if turns else f"{len(out)} replies"
    return conv.because(
        ctx,
        f"{where} of {total} replies leave the role: "
        + conv.listing(str(v["reason"]) for v in out),
    )


def _spec(role: str | None, max_chars: int) -> JudgeSpec:
    """The scorer as data: ``role`` (else the system prompt), the transcript of ``max_chars``."""

    def role_of(ctx: StepContext) -> str:
        if role is not None:
            return role
        for run in conv.conversation_of(ctx).runs:
            found = find_system_prompt(run)
            if found:
                return found
        raise NotScorable(
            "no role to judge against: give role=... or run the agent with a system prompt"
        )

    def shown_role(ctx: StepContext) -> tuple[str, str]:
        """The ``<role>`` block and the transcript."""
        return block("role", role_of(ctx)), conv.conversation_block(ctx, max_chars)

    def replies(ctx: StepContext) -> list[str]:
        role_of(ctx)  # before any call: no role, not scorable
        return conv.reply_items(ctx)

    return JudgeSpec(
        name="role-adherence",
        family="conversation",
        summary="share of the agent's replies that stay in its role (ROLE, else the system prompt)",
        predicts="out_of_role",
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
        prompts=conv.judge_prompts(
            shown_role,
            (RoleVerdicts, RoleOneCallAnswer),
            check="role-adherence",
            noun="reply",
            plural="replies",
            task="You review whether an AI assistant stays in the role it was given, reply by "
            "reply",
            rules=_RULES,
            per="reply in the <replies> block",
            statement="the reply's item, copied",
            words='"yes" = in role, "no" = out of role',
            explain="naming the turns out of role and how, or saying that every reply stays in "
            "role",
            ask="Decide for each reply in the <replies> block whether the assistant stays in the "
            "role in the <role> block; the whole conversation is in the <conversation> block.",
            one_call_ask="Review whether the assistant stays in the role in the <role> block, for "
            "each reply in the <replies> block (the whole conversation is in the <conversation> "
            "block), and explain.",
            one_call_blocks=lambda ctx: (
                *shown_role(ctx),
                item_blocks("replies", "reply", ctx.preprocess_step_result["replies"]),
            ),
            found="A role-adherence check found {yes} of {total} replies of an AI assistant in "
            "its role.",
            scale=("no reply in role", "every reply in role"),
            reason_ask="and name the turns out of role and how they leave it, or say that every "
            "reply stays in role.",
            attribute="in_role",
        ),
        items_of=replies,
        conversation=ConversationPolicy(at_fault="turns whose replies leave the role"),
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

    Each reply is judged against ``role`` (its persona, scope, tone and rules), the whole
    conversation as context: a reply that takes another persona, helps with what the role
    excludes, or breaks its rules is out of role, even when the user asked for it. The
    score is the share of replies in role, times ``scale``; higher is better.

    Args:
        role: The role, in words (``"Parcel support only: polite, no legal advice"``).
            ``None``: the system prompt the conversation's first turn ran with (a
            conversation without one is skipped).
        max_text_chars: The transcript the judge reads is cut to about this many characters.

    The other arguments are those of :func:`~livescore.scorers.judge_scorer`.

    Returns:
        A conversation scorer, its replies each ``"[turn N] ..."`` (their start).

    Raises:
        ValueError: An empty ``role``.

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
    arguments = dict(locals())  # judge_scorer's arguments, and role
    del arguments["role"]
    if role is not None and (not isinstance(role, str) or not role.strip()):
        raise ValueError("role must be a non-empty description of the assistant's role")
    return judge_scorer(_spec(role, max_text_chars), **arguments)


_build = judge_catalog_entry(
    _spec(None, DEFAULT_MAX_TEXT_CHARS),
    create_role_adherence_scorer,
    argument="ROLE: the role in words (default: the conversation's system prompt)",
    keyword="role",
    examples=("role-adherence:A polite support agent for parcels only",),
)
