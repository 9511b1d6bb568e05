"""The conversation-relevancy scorer: each reply judged against a sliding window of the turns
before it.

Three-step mode (the default; at most two judge calls):

1. preprocess (code): the agent's replies, one item per turn (``"[turn N] ..."``).
2. analyze (judge): one verdict per reply, each shown with its window (the ``window`` turns
   before it and the message it answers): ``"yes"`` relevant, ``"no"`` beside the point.
3. generate_score (code): relevant replies / replies, × scale, half-up to 2 decimals.
4. generate_reason (judge), naming the turns whose replies are off the point.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel

from livescore._catalog import ScorerOptions, catalog_entry
from livescore._text import DEFAULT_MAX_TEXT_CHARS
from livescore.judges import Judge
from livescore.pii import RedactSpec
from livescore.runs import Conversation, get_assistant_message, get_user_message
from livescore.scorers._conversation import (
    CONVERSATION_TAGS,
    conversation_of,
    item_turn,
    listing,
    reply_items,
    turns_phrase,
)
from livescore.scorers._judge_spec import (
    ConversationPolicy,
    JudgePrompts,
    JudgeSpec,
    Shown,
    judge_scorer,
)
from livescore.scorers._judged import (
    JudgeMode,
    fmt,
)
from livescore.scorers._prompting import data_rule, quote
from livescore.scorers._verdicts import StatementVerdict, tally
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

_SPELLINGS = {
    "yes": ("y", "true", "relevant", "on topic", "pertinent"),
    "no": ("n", "false", "irrelevant", "not relevant", "off topic", "unrelated"),
}


class RelevancyTurnVerdict(StatementVerdict):
    """One reply's verdict: ``"yes"`` when it is relevant to its window (it answers the
    message it replies to, in the light of the turns before it), ``"no"`` when it is beside
    the point (another topic, a question that was not asked, a stale answer)."""

    spellings = _SPELLINGS
    verdict: Literal["yes", "no"]


class RelevancyTurnVerdicts(BaseModel):
    """The verdict answer: ``{"verdicts": [{"statement", "verdict", "reason"}, ...]}``."""

    verdicts: list[RelevancyTurnVerdict]


class TurnRelevancyOneCallAnswer(BaseModel):
    """The one-call answer: one verdict per reply, and the reason."""

    verdicts: list[RelevancyTurnVerdict]
    reason: str


_TAGS = (*CONVERSATION_TAGS, "verdicts", "verdict")

_RULES = """\
Each reply in the <replies> block comes with its window: the turns just before it and \
the user message it answers. Judge the reply against its window only:
- "yes": it responds to what the user said in the window: it answers, asks a needed \
clarifying question, or follows up on the turns before it.
- "no": it is beside the point: another topic, an answer to a question nobody asked in the \
window, a repetition of an earlier answer that ignores the new message, or filler.
Judge relevance only, not correctness or style."""

VERDICT_SYSTEM = f"""\
You review whether each reply of an AI assistant is relevant to the conversation just \
before it.

{_RULES}

{data_rule(_TAGS)}

Return exactly one verdict per reply, in the order given. Each verdict has "statement" \
(the reply's item, copied from its "item" attribute), "verdict" ("yes" or "no", lower \
case) and "reason" (one short sentence).

Answer with JSON only: {{"verdicts": [{{"statement": "...", "verdict": "yes", "reason": \
"..."}}]}}"""

REASON_SYSTEM = f"""\
You explain the result of a conversation-relevancy check of an AI assistant to its \
developer, in plain, concise English: two or three sentences of plain text, no lists, no \
JSON.

{data_rule(_TAGS)}"""

ONE_CALL_SYSTEM = f"""\
You review whether each reply of an AI assistant is relevant to the conversation just \
before it, and give your verdicts and a reason in one JSON answer.

1. "verdicts": one verdict per reply in the <replies> block, in the same order, each with \
"statement" (the reply's item, copied from its "item" attribute), "verdict" ("yes" = \
relevant, "no" = beside the point) and "reason" (one short sentence).
2. "reason": two or three sentences for the developer naming the turns whose replies are \
beside the point, or saying that every reply is relevant. No numeric score.

{_RULES}

{data_rule(_TAGS)}

Answer with JSON only: {{"verdicts": [{{"statement": "...", "verdict": "yes", "reason": \
"..."}}], "reason": "..."}}"""


def _text(read: Any, run: Any) -> str:
    try:
        return read(run) or ""
    except TypeError:
        return ""


def replies_block(
    conversation: Conversation, items: Sequence[str], window: int, max_chars: int
) -> str:
    """The ``<replies>`` block: each reply (``items``, by turn) with its window."""
    runs = dict(conversation.turns())
    cap = max(200, max_chars // max(1, len(items) * (2 * window + 2)))

    def cut(text: str) -> str:
        return quote(text if len(text) <= cap else text[:cap] + " […]")

    parts = []
    for index, item in enumerate(items, start=1):
        turn = item_turn(item)
        run = runs.get(turn) if turn is not None else None
        if turn is None or run is None:
            continue
        lines = [f'<reply index="{index}" item="{quote(item).replace(chr(34), chr(39))}">']
        lines.append("<window>")
        for earlier in range(max(conversation.first_turn, turn - window), turn):
            before = runs[earlier]
            lines.append(
                f'<turn index="{earlier}">\n<user>{cut(_text(get_user_message, before))}'
                f"</user>\n<assistant>{cut(_text(get_assistant_message, before))}"
                "</assistant>\n</turn>"
            )
        lines.append(
            f'<turn index="{turn}">\n<user>{cut(_text(get_user_message, run))}</user>\n</turn>'
        )
        lines.append("</window>")
        lines.append(f"<assistant>{cut(_text(get_assistant_message, run))}</assistant>")
        lines.append("</reply>")
        parts.append("\n".join(lines))
    return "<replies>\n" + "\n".join(parts) + "\n</replies>"


def _verdict_prompt(block: str, n: int) -> str:
    return (
        "Decide for each reply in the <replies> block whether it is relevant to its "
        "window.\n\n"
        f"{block}\n\n"
        f"There {'is 1 reply' if n == 1 else f'are {n} replies'}: answer with exactly {n} "
        f"verdict{'' if n == 1 else 's'}, in the same order, as JSON only: "
        '{"verdicts": [{"statement": ..., "verdict": "yes" | "no", "reason": ...}]}.'
    )


def _reason_prompt(score_text: str, scale: float, verdicts: Sequence[Mapping[str, Any]]) -> str:
    relevant = tally(verdicts)["yes"]
    items = "\n".join(
        f'<verdict index="{i}" relevant="{v["verdict"]}">\n'
        f"reply: {quote(v['statement'])}\nreason: {quote(v['reason'])}\n</verdict>"
        for i, v in enumerate(verdicts, start=1)
    )
    return (
        f"A conversation-relevancy check found {relevant} of {len(verdicts)} replies of an AI "
        f"assistant relevant to the turns before them. Its score is {score_text} on a scale "
        f"from 0 (no reply relevant) to {scale:g} (every reply relevant).\n\n"
        f"<verdicts>\n{items}\n</verdicts>\n\n"
        f'Explain the score. Start with "The score is {score_text} because", and name the '
        "turns whose replies are beside the point, or say that every reply is relevant."
    )


def _one_call_prompt(block: str) -> str:
    return (
        "Review whether each reply in the <replies> block is relevant to its window, and "
        f"explain.\n\n{block}\n\n"
        'Answer with JSON only: {"verdicts": [...], "reason": "..."}.'
    )


def _count_reason(ctx: StepContext) -> str:
    verdicts = ctx.analyze_step_result["verdicts"]
    off = [v for v in verdicts if v["verdict"] == "no"]
    total = len(verdicts)
    if not off:
        fits = "the only reply fits" if total == 1 else f"all {total} replies fit"
        return f"The score is {fmt(ctx.score)} because {fits} the turns before them."
    turns = [t for t in (item_turn(str(v["statement"])) for v in off) if t is not None]
    where = turns_phrase(turns) if turns else f"{len(off)} replies"
    return (
        f"The score is {fmt(ctx.score)} because the replies of {where} ({len(off)} of "
        f"{total}) are beside the point: " + listing(str(v["reason"]) for v in off)
    )


def _prompts(window: int, max_chars: int) -> JudgePrompts:
    """The prompts, each reply shown with the ``window`` turns before it."""

    def block(shown: Shown) -> str:
        ctx = shown.ctx
        rendered: str | None = ctx.state.get("replies_block")
        if rendered is None:
            items = ctx.preprocess_step_result["replies"]
            rendered = replies_block(conversation_of(ctx), items, window, max_chars)
            ctx.state["replies_block"] = rendered
        return rendered

    return JudgePrompts(
        verdict_system=VERDICT_SYSTEM,
        reason_system=REASON_SYSTEM,
        one_call_system=ONE_CALL_SYSTEM,
        verdict=lambda shown: _verdict_prompt(block(shown), len(shown.items)),
        reason=lambda shown: _reason_prompt(shown.score_text, shown.scale, shown.verdicts),
        one_call=lambda shown: _one_call_prompt(block(shown)),
        verdicts_schema=RelevancyTurnVerdicts,
        one_call_schema=TurnRelevancyOneCallAnswer,
    )


CONVERSATION_RELEVANCY = JudgeSpec(
    name="conversation-relevancy",
    family="conversation",
    summary="share of the agent's replies relevant to the WINDOW turns before them",
    check="conversation-relevancy",
    items="replies",
    noun="reply",
    defect="irrelevant",
    verdict=RelevancyTurnVerdict,
    defect_words=frozenset({"no"}),
    higher_is_better=True,
    always_explain=True,
    needs_items="the agent made no reply in this conversation",
    count_reason=_count_reason,
    prompts=_prompts(DEFAULT_WINDOW, DEFAULT_MAX_TEXT_CHARS),
    items_of=reply_items,
    conversation=ConversationPolicy(),
)
"""The conversation-relevancy scorer as data; its factory sets the window its prompts show."""


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

    A conversation scorer: each reply is judged against its sliding window, the ``window``
    turns before it and the user message it answers. A reply that answers that message (or
    asks a needed clarifying question) is relevant; one that changes the subject, answers a
    question nobody asked, or repeats an earlier answer while ignoring the new message is
    not. The score is the share of relevant replies, times ``scale``; higher is better.

    Args:
        model: The judge: ``"openai/<model>"`` or a :class:`~livescore.judges.Judge`.
        window: Turns before each reply that it is judged against (0: only the message it
            answers).
        scale: The score when every reply is relevant.
        judge_mode: ``"three_step"`` (verdicts, reason: up to two calls) or ``"one_call"``.
        id: The scorer id on results, spans and metrics.
        max_text_chars: The replies and windows the judge reads are cut to about this many
            characters in all.
        judge_options: Keyword arguments for :func:`~livescore.judges.resolve_judge`.
        redact: Keeps personal data from the judge (see ``Scorer.with_redaction``).
        calibration: Labels fitted on yours (see ``Scorer.with_calibration``).

    Returns:
        A conversation scorer whose results carry ``preprocess_step_result = {"replies":
        [...]}``, ``analyze_step_result = {"verdicts": [...]}``, the score, a label
        (``poor`` … ``full``), a reason naming the turns beside the point, ``result.turns``
        and ``flags["turns_at_fault"]``.

    Raises:
        ValueError: A negative ``window``, a bad ``scale`` or ``judge_mode``.
        livescore.judges.JudgeConfigError: No usable judge model.

    Example:
        >>> from livescore.runs import Conversation
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
    if isinstance(window, bool) or not isinstance(window, int) or window < 0:
        raise ValueError(f"window must be a whole number of turns (0 or more), not {window!r}")

    spec = dataclasses.replace(
        CONVERSATION_RELEVANCY,
        description="Share of the agent's replies relevant to the "
        f"{window} turns before them, from 0 to {{scale}}",
        prompts=_prompts(window, max_text_chars),
    )
    return judge_scorer(
        spec,
        model=model,
        scale=scale,
        judge_mode=judge_mode,
        id=id,
        max_text_chars=max_text_chars,
        judge_options=judge_options,
        redact=redact,
        calibration=calibration,
    )


def _window_of(argument: str | None) -> int:
    if argument is None:
        return DEFAULT_WINDOW
    try:
        value = int(argument)
    except ValueError:
        raise ValueError(
            f"conversation-relevancy: the window is a whole number of turns, not {argument!r}"
        ) from None
    if value < 0:
        raise ValueError("conversation-relevancy: the window is 0 or more turns")
    return value


@catalog_entry(
    "conversation-relevancy",
    family="conversation",
    summary="share of the agent's replies relevant to the WINDOW turns before them",
    needs_judge=True,
    argument="WINDOW: turns before each reply to judge it against (default 3)",
    predicts="irrelevant",
    factory="livescore.scorers.create_conversation_relevancy_scorer",
    span_attributes={
        "livescore.conversation.turns_at_fault": "turns whose replies are beside the point",
        "livescore.conversation.items_judged": "replies judged",
    },
    examples=("conversation-relevancy", "conversation-relevancy:2"),
)
def _build(argument: str | None, options: ScorerOptions) -> Scorer:
    return create_conversation_relevancy_scorer(
        model=options.require_model(), window=_window_of(argument), judge_mode=options.judge_mode
    )
