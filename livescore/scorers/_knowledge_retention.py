"""The knowledge-retention scorer: facts the user gave that a later reply forgets or contradicts."""

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
from livescore.scoring import CalibrationSpec, Scorer, StepContext

__all__ = (
    "RetentionOneCallAnswer",
    "RetentionVerdict",
    "RetentionVerdicts",
    "create_knowledge_retention_scorer",
)


RetentionVerdict, RetentionVerdicts, RetentionOneCallAnswer = conv.answer_schemas(
    "RetentionVerdict",
    """One fact's verdict: ``"yes"`` when a later reply of the assistant forgets the fact
    (asks for it again, or goes on as if it had not been said) or contradicts it; ``"no"``
    when the replies keep it (or never need it). ``turn``: the turn of the reply at fault,
    for ``"yes"``.""",
    {
        "yes": ("y", "true", "forgotten", "forgot", "contradicted", "lost"),
        "no": ("n", "false", "kept", "retained", "remembered"),
    },
    "RetentionOneCallAnswer",
    "The one-call answer: the facts the user gave, one verdict per fact, and the reason.",
    listed="facts",
    turn=True,
)

_RULES = """\
For each fact the user gave, read the assistant's replies after the turn the fact comes \
from:
- "yes" (forgotten): a later reply asks the user for it again, goes on as if it had not \
been said where it matters (offers what the user ruled out, uses another number, name or \
date), or contradicts it. Give "turn": the number of the first reply at fault.
- "no" (kept): every later reply that needs the fact keeps it, or no later reply needs \
it. "turn" is null.
Judge memory only: whether a reply is correct or helpful otherwise does not matter."""


def _count_reason(ctx: StepContext) -> str:
    forgotten, total = conv.faults(ctx, "yes")
    if not forgotten:
        return conv.because(ctx, f"{conv.every(total, 'fact', 'facts')} the user gave are kept.")
    turns = ctx.flags["turns_at_fault"]
    where = f"{conv.turns_phrase(turns)} forget or contradict" if turns else "replies forget"
    return conv.because(
        ctx,
        f"{where} {len(forgotten)} of {total} facts the user gave: "
        + conv.listing(str(v["statement"]) for v in forgotten),
    )


def _spec(max_chars: int) -> JudgeSpec:
    """The knowledge-retention scorer as data, the transcript cut to ``max_chars``."""
    return JudgeSpec(
        name="knowledge-retention",
        family="conversation",
        summary="share of the facts the user gave that later replies keep (a conversation)",
        predicts="forgetful",
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
        extract=lambda skip_if: conv.digest_step("facts", max_chars, skip_if=skip_if),
        prompts=conv.judge_prompts(
            lambda ctx: (conv.conversation_block(ctx, max_chars),),
            (RetentionVerdicts, RetentionOneCallAnswer),
            check="knowledge-retention",
            noun="fact",
            plural="facts",
            task="You review an AI assistant's memory in a conversation with a user",
            rules=_RULES,
            listing="every fact the user gave that the assistant may need later (names, "
            "numbers, dates, places, preferences, constraints), one per item, each starting "
            'with its turn in brackets: "[turn 2] ...".',
            statement="the fact, copied",
            words='"yes" = forgotten or contradicted later, "no" = kept',
            turn="the first reply at fault, or null",
            examples=(conv.example("no", turn="null"), conv.example("no", turn="null")),
            explain="naming the turns that forget or contradict what the user said, or saying "
            "that nothing was forgotten",
            ask="Decide for each fact in the <facts> block whether a later reply of the "
            "assistant in the conversation forgets or contradicts it.",
            one_call_ask="Review the assistant's memory in the conversation below: list the "
            "facts the user gave, give one verdict per fact, and explain.",
            found="A knowledge-retention check found that the assistant forgot or contradicted "
            "{yes} of {total} facts the user gave.",
            scale=("everything forgotten", "everything kept"),
            reason_ask="and name the turns at fault and what they forgot, or say that nothing "
            "was forgotten.",
            attribute="forgotten",
        ),
        nothing_to_judge=conv.needs_user_messages(
            "the conversation has no user message, so no facts"
        ),
        conversation=ConversationPolicy(
            at_fault="turns that forget or contradict a fact",
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

    The judge lists the facts the user gave (order numbers, names, dates, preferences,
    constraints: the user digest completeness reads too), then decides for each one whether
    a later reply forgets it (asks for it again, goes on as if it were never said) or
    contradicts it. The score is the share of facts kept, times ``scale``; higher is better.

    Args:
        max_text_chars: The transcript the judge reads is cut to about this many characters
            (each message gets an equal share when it does not fit).

    The other arguments are those of :func:`~livescore.scorers.judge_scorer`.

    Returns:
        A conversation scorer, its facts each ``"[turn N] ..."`` and each verdict with the
        ``turn`` at fault. A conversation in which the user gave no facts is skipped as not
        scorable.

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
    return judge_scorer(_spec(max_text_chars), **locals())  # every argument is judge_scorer's


_build = judge_catalog_entry(_spec(DEFAULT_MAX_TEXT_CHARS), create_knowledge_retention_scorer)
