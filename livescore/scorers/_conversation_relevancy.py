"""The conversation-relevancy scorer: each reply judged against a sliding window of the turns
before it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from livescore._text import DEFAULT_MAX_TEXT_CHARS
from livescore.judges import Judge
from livescore.pii import RedactSpec
from livescore.runs import Run
from livescore.scorers import _conversation as conv
from livescore.scorers._judge_spec import (
    ConversationPolicy,
    JudgeSpec,
    judge_catalog_entry,
    judge_scorer,
)
from livescore.scorers._judged import JudgeMode
from livescore.scorers._prompting import quote
from livescore.scoring import CalibrationSpec, Scorer, StepContext

__all__ = (
    "DEFAULT_WINDOW",
    "RelevancyTurnVerdict",
    "RelevancyTurnVerdicts",
    "TurnRelevancyOneCallAnswer",
    "create_conversation_relevancy_scorer",
)

DEFAULT_WINDOW = 3
"""Turns before a reply that its relevance is judged against (besides the message it
answers)."""

RelevancyTurnVerdict, RelevancyTurnVerdicts, TurnRelevancyOneCallAnswer = conv.answer_schemas(
    "RelevancyTurnVerdict",
    """One reply's verdict: ``"yes"`` when it is relevant to its window (it answers the
    message it replies to, in the light of the turns before it), ``"no"`` when it is beside
    the point (another topic, a question that was not asked, a stale answer).""",
    {
        "yes": ("y", "true", "relevant", "on topic", "pertinent"),
        "no": ("n", "false", "irrelevant", "not relevant", "off topic", "unrelated"),
    },
    "TurnRelevancyOneCallAnswer",
    "The one-call answer: one verdict per reply, and the reason.",
)

_RULES = """\
Each reply in the <replies> block comes with its window: the turns just before it and \
the user message it answers. Judge the reply against its window only:
- "yes": it responds to what the user said in the window: it answers, asks a needed \
clarifying question, or follows up on the turns before it.
- "no": it is beside the point: another topic, an answer to a question nobody asked in the \
window, a repetition of an earlier answer that ignores the new message, or filler.
Judge relevance only, not correctness or style."""


def _replies_block(ctx: StepContext, window: int, max_chars: int) -> str:
    """The ``<replies>`` block: each reply with its ``window`` turns, cut to ``max_chars``."""
    conversation, items = conv.conversation_of(ctx), ctx.preprocess_step_result["replies"]
    runs = dict(conversation.turns())
    cap = max(200, max_chars // max(1, len(items) * (2 * window + 2)))

    def said(run: Run, role: Literal["user", "assistant"]) -> str:
        return quote(conv.clip(conv.message(run, role), cap))

    parts = []
    for index, item in enumerate(items, start=1):
        turn = conv.item_turn(item)
        run = runs.get(turn) if turn is not None else None
        if turn is None or run is None:
            continue
        window_turns = [
            conv.turn_block(earlier, said(runs[earlier], "user"), said(runs[earlier], "assistant"))
            for earlier in range(max(conversation.first_turn, turn - window), turn)
        ]
        lines = [
            f'<reply index="{index}" item="{quote(item).replace(chr(34), chr(39))}">',
            "<window>",
            *window_turns,
            conv.turn_block(turn, said(run, "user")),
            "</window>",
            f"<assistant>{said(run, 'assistant')}</assistant>",
            "</reply>",
        ]
        parts.append("\n".join(lines))
    return "<replies>\n" + "\n".join(parts) + "\n</replies>"


def _count_reason(ctx: StepContext) -> str:
    off, total = conv.faults(ctx, "no")
    if not off:
        return conv.because(
            ctx, f"{conv.every(total, 'reply fits', 'replies fit')} the turns before them."
        )
    turns = ctx.flags["turns_at_fault"]
    where = conv.turns_phrase(turns) if turns else f"{len(off)} replies"
    return conv.because(
        ctx,
        f"the replies of {where} ({len(off)} of {total}) are beside the point: "
        + conv.listing(str(v["reason"]) for v in off),
    )


def _spec(window: int, max_chars: int) -> JudgeSpec:
    """The scorer as data, each reply shown with ``window`` turns, cut to ``max_chars``."""
    return JudgeSpec(
        name="conversation-relevancy",
        family="conversation",
        summary="share of the agent's replies relevant to the WINDOW turns before them",
        predicts="irrelevant",
        check="conversation-relevancy",
        items="replies",
        noun="reply",
        defect="irrelevant",
        verdict=RelevancyTurnVerdict,
        defect_words=frozenset({"no"}),
        higher_is_better=True,
        description=f"Share of the agent's replies relevant to the {window} turns before them, "
        "from 0 to {scale}",
        always_explain=True,
        needs_items="the agent made no reply in this conversation",
        count_reason=_count_reason,
        prompts=conv.judge_prompts(
            lambda ctx: (_replies_block(ctx, window, max_chars),),
            (RelevancyTurnVerdicts, TurnRelevancyOneCallAnswer),
            check="conversation-relevancy",
            noun="reply",
            plural="replies",
            task="You review whether each reply of an AI assistant is relevant to the "
            "conversation just before it",
            rules=_RULES,
            statement='the reply\'s item, copied from its "item" attribute',
            words='"yes" = relevant, "no" = beside the point',
            explain="naming the turns whose replies are beside the point, or saying that every "
            "reply is relevant",
            ask="Decide for each reply in the <replies> block whether it is relevant to its "
            "window.",
            one_call_ask="Review whether each reply in the <replies> block is relevant to its "
            "window, and explain.",
            found="A conversation-relevancy check found {yes} of {total} replies of an AI "
            "assistant relevant to the turns before them.",
            scale=("no reply relevant", "every reply relevant"),
            reason_ask="and name the turns whose replies are beside the point, or say that every "
            "reply is relevant.",
            attribute="relevant",
            lists_items=False,
        ),
        items_of=conv.reply_items,
        conversation=ConversationPolicy(at_fault="turns whose replies are beside the point"),
    )


def create_conversation_relevancy_scorer(
    *,
    model: str | Judge,
    window: int = DEFAULT_WINDOW,
    scale: float = 1.0,
    judge_mode: JudgeMode = "three_step",
    id: str = "conversation-relevancy",
    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
    judge_options: Mapping[str, Any] | None = None,
    redact: RedactSpec | None = None,
    calibration: CalibrationSpec | None = None,
) -> Scorer:
    """Score whether each of the agent's replies fits the conversation just before it.

    Each reply is judged against the user message it answers and the ``window`` turns
    before it: one that changes the subject, answers a question nobody asked, or repeats an
    earlier answer while ignoring the new message is beside the point. The score is the
    share of relevant replies, times ``scale``; higher is better.

    Args:
        window: Turns before each reply that it is judged against (0: only the message it
            answers).
        max_text_chars: The replies and windows the judge reads are cut to about this many
            characters in all.

    The other arguments are those of :func:`~livescore.scorers.judge_scorer`.

    Raises:
        ValueError: A negative ``window``.

    Example:
        >>> from livescore.runs import Conversation, Run
        >>> from livescore.testing import ScriptedJudge
        >>> judge = ScriptedJudge([
        ...     {"verdicts": [
        ...         {"statement": "[turn 1] It left Lyon.", "verdict": "yes", "reason": "ok"},
        ...         {"statement": "[turn 2] It left Lyon.", "verdict": "no",
        ...          "reason": "Ignores the new question."}]},
        ...     "The score is 0.5 because turn 2 repeats the first answer.",
        ... ])
        >>> scorer = create_conversation_relevancy_scorer(model=judge, window=2)
        >>> result = scorer.run_sync(Conversation.from_turns([
        ...     {"input": "Where is my parcel?", "output": "It left Lyon."},
        ...     {"input": "Can I pick it up myself?", "output": "It left Lyon."},
        ... ]))
        >>> result.score, result.flags["turns_at_fault"]
        (0.5, [2])
    """
    arguments = dict(locals())  # judge_scorer's arguments, and window
    del arguments["window"]
    if isinstance(window, bool) or not isinstance(window, int) or window < 0:
        raise ValueError(f"window must be a whole number of turns (0 or more), not {window!r}")
    return judge_scorer(_spec(window, max_text_chars), **arguments)


def _window_of(argument: str) -> int:
    try:  # a negative one is the factory's ValueError
        return int(argument)
    except ValueError:
        raise ValueError(
            f"conversation-relevancy: the window is a whole number of turns, not {argument!r}"
        ) from None


_build = judge_catalog_entry(
    _spec(DEFAULT_WINDOW, DEFAULT_MAX_TEXT_CHARS),
    create_conversation_relevancy_scorer,
    argument="WINDOW: turns before each reply to judge it against (default 3)",
    keyword="window",
    parse=_window_of,
    examples=("conversation-relevancy:2",),
)
