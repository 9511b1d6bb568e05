"""The conversation-completeness scorer: the user's intentions, and which ones were met."""

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
    "CompletenessOneCallAnswer",
    "IntentionVerdict",
    "IntentionVerdicts",
    "create_conversation_completeness_scorer",
)

IntentionVerdict, IntentionVerdicts, CompletenessOneCallAnswer = conv.answer_schemas(
    "IntentionVerdict",
    """One intention's verdict: ``"yes"`` when the assistant satisfied it in some reply
    (``turn``: that reply's turn), ``"no"`` when it was left unanswered, dropped, or
    refused without a reason (``turn`` null).""",
    {
        "yes": ("y", "true", "satisfied", "met", "done", "fulfilled", "answered"),
        "no": ("n", "false", "unsatisfied", "unmet", "not satisfied", "missed", "dropped"),
    },
    "CompletenessOneCallAnswer",
    "The one-call answer: the user's intentions, one verdict each, and the reason.",
    listed="intentions",
    turn=True,
)

_RULES = """\
For each thing the user asked for, read the assistant's replies from the turn it was \
asked:
- "yes" (satisfied): a reply does what was asked or answers it, or explains plainly why \
it cannot (a policy, missing access) and offers what it can. Give "turn": the reply that \
satisfied it.
- "no" (not satisfied): no reply does it or answers it, the assistant changed the \
subject, promised to do it and never did, or refused without a reason. "turn" is null.
Judge whether each request was met, not how well the replies are written."""


def _count_reason(ctx: StepContext) -> str:
    unmet, total = conv.faults(ctx, "no")
    if not unmet:
        return conv.because(
            ctx, f"{conv.every(total, 'request', 'requests')} of the user were met."
        )
    turns = ctx.flags["turns_at_fault"]
    where = f" (asked in {conv.turns_phrase(turns)})" if turns else ""
    return conv.because(
        ctx,
        f"{len(unmet)} of {total} requests of the user were left unmet{where}: "
        + conv.listing(conv.strip_turn(str(v["statement"])) for v in unmet),
    )


def _spec(max_chars: int) -> JudgeSpec:
    """The conversation-completeness scorer as data, the transcript cut to ``max_chars``."""
    return JudgeSpec(
        name="conversation-completeness",
        family="conversation",
        summary="share of the user's requests the agent met over the conversation",
        predicts="incomplete",
        check="conversation-completeness",
        items="intentions",
        noun="intention",
        defect="unmet",
        verdict=IntentionVerdict,
        defect_words=frozenset({"no"}),
        counts={"satisfied": "yes"},
        higher_is_better=True,
        description="Share of the user's requests the agent met, from 0 to {scale}",
        always_explain=True,
        needs_items="the user asked for nothing: there is no request to complete",
        count_reason=_count_reason,
        # The user digest: the request knowledge retention and completeness share.
        extract=lambda skip_if: conv.digest_step("intentions", max_chars, skip_if=skip_if),
        prompts=conv.judge_prompts(
            lambda ctx: (conv.conversation_block(ctx, max_chars),),
            (IntentionVerdicts, CompletenessOneCallAnswer),
            check="conversation-completeness",
            noun="intention",
            plural="intentions",
            task="You review whether an AI assistant did what the user asked, over a whole "
            "conversation",
            rules=_RULES,
            listing="everything the user asked the assistant to do, find out or answer "
            "(questions and follow-up requests count; greetings and thanks do not), one per "
            'item, each starting with its turn in brackets: "[turn 2] ...".',
            statement="the intention, copied",
            words='"yes" = satisfied, "no" = not',
            turn="the reply that satisfied it, or null",
            examples=(conv.example("yes", turn="2"), conv.example("yes", turn="1")),
            explain="naming what was left unmet and the turns it was asked in, or saying that "
            "everything was done",
            ask="Decide for each intention in the <intentions> block whether the assistant "
            "satisfied it in the conversation.",
            one_call_ask="Review whether the assistant did what the user asked in the "
            "conversation below: list the user's intentions, give one verdict per intention, "
            "and explain.",
            found="A conversation-completeness check found that the assistant satisfied {yes} "
            "of {total} things the user asked for.",
            scale=("nothing done", "everything done"),
            reason_ask="and name what was left unmet and the turns it was asked in, or say that "
            "everything was done.",
            attribute="satisfied",
        ),
        nothing_to_judge=conv.needs_user_messages(
            "the conversation has no user message, so no request"
        ),
        conversation=ConversationPolicy(
            at_fault="turns whose requests were left unmet", counts=True
        ),
    )


def create_conversation_completeness_scorer(
    *,
    model: str | Judge,
    scale: float = 1.0,
    judge_mode: JudgeMode = "three_step",
    id: str = "conversation-completeness",
    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
    judge_options: Mapping[str, Any] | None = None,
    redact: RedactSpec | None = None,
    calibration: CalibrationSpec | None = None,
) -> Scorer:
    """Score whether the agent did everything the user asked for over a conversation.

    The judge lists the user's intentions (every question and request, from the user digest
    knowledge retention reads too), then decides for each one whether some reply satisfied
    it or explained plainly why it cannot be done. The score is the share satisfied, times
    ``scale``; higher is better.

    Args:
        max_text_chars: The transcript the judge reads is cut to about this many characters.

    The other arguments are those of :func:`~livescore.scorers.judge_scorer`.

    Returns:
        A conversation scorer, its intentions each ``"[turn N] ..."`` and each verdict with
        the ``turn`` that met it. A conversation in which the user asked for nothing is
        skipped as not scorable.

    Example:
        >>> from livescore.runs import Conversation
        >>> from livescore.testing import ScriptedJudge
        >>> judge = ScriptedJudge([
        ...     {"facts": [], "intentions": ["[turn 1] Track order 48213.",
        ...                                  "[turn 2] Change the delivery address."]},
        ...     {"verdicts": [
        ...         {"statement": "[turn 1] Track order 48213.", "verdict": "yes",
        ...          "reason": "Tracked.", "turn": 1},
        ...         {"statement": "[turn 2] Change the delivery address.", "verdict": "no",
        ...          "reason": "Never done.", "turn": None}]},
        ...     "The score is 0.5 because the address change asked in turn 2 was not done.",
        ... ])
        >>> scorer = create_conversation_completeness_scorer(model=judge)
        >>> result = scorer.run_sync(Conversation.from_turns([
        ...     {"input": "Where is order 48213?", "output": "It left Lyon today."},
        ...     {"input": "Please send it to my office.", "output": "Have a nice day!"},
        ... ]))
        >>> result.score, result.flags["turns_at_fault"]
        (0.5, [2])
    """
    return judge_scorer(_spec(max_text_chars), **locals())  # every argument is judge_scorer's


_build = judge_catalog_entry(_spec(DEFAULT_MAX_TEXT_CHARS), create_conversation_completeness_scorer)
