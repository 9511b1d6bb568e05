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
    assistant_replies,
    conversation_of,
    item_turn,
    listing,
    record_turns,
    turn_item,
    turns_phrase,
)
from livescore.scorers._judged import (
    JudgeMode,
    check_scale,
    fmt,
    judge_mode_of,
    quality_label,
    resolve_model,
    round2,
)
from livescore.scorers._prompting import data_rule, quote
from livescore.scorers._verdicts import (
    StatementVerdict,
    VerdictScorerParts,
    build_verdict_scorer,
    tally,
)
from livescore.scoring import CalibrationSpec, NotScorable, Scorer, StepContext

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

_EXCERPT = 160

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
    scale = check_scale(scale)
    mode = judge_mode_of(judge_mode, scorer="conversation-relevancy")
    if isinstance(window, bool) or not isinstance(window, int) or window < 0:
        raise ValueError(f"window must be a whole number of turns (0 or more), not {window!r}")
    judge = resolve_model(model, judge_options, scorer="conversation-relevancy")

    def replies(ctx: StepContext) -> dict[str, Any]:
        found = [
            turn_item(n, text if len(text) <= _EXCERPT else text[:_EXCERPT] + "…")
            for n, text in assistant_replies(conversation_of(ctx))
        ]
        return {"replies": found}

    def block(ctx: StepContext) -> str:
        rendered: str | None = ctx.state.get("replies_block")
        if rendered is None:
            items = ctx.preprocess_step_result["replies"]
            rendered = replies_block(conversation_of(ctx), items, window, max_text_chars)
            ctx.state["replies_block"] = rendered
        return rendered

    def score(ctx: StepContext, analysis: dict[str, Any]) -> float:
        verdicts = analysis["verdicts"]
        return round2(tally(verdicts)["yes"] / len(verdicts) * scale)

    def no_replies(ctx: StepContext) -> float:
        raise NotScorable("the agent made no reply in this conversation")

    def record(ctx: StepContext, analysis: dict[str, Any]) -> None:
        verdicts = analysis["verdicts"]
        off = [item_turn(str(v["statement"])) for v in verdicts if v["verdict"] == "no"]
        record_turns(ctx, off, len(verdicts))

    def summary(ctx: StepContext) -> str:
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

    parts = VerdictScorerParts(
        items_key="replies",
        noun="reply",
        nouns="replies",
        extract=replies,
        extract_in_one_call=False,
        verdict_schema=RelevancyTurnVerdicts,
        verdict_system=VERDICT_SYSTEM,
        verdict_prompt=lambda ctx, items: _verdict_prompt(block(ctx), len(items)),
        score=score,
        no_items=no_replies,
        reason_system=REASON_SYSTEM,
        reason_prompt=lambda ctx: _reason_prompt(
            fmt(ctx.score), scale, ctx.analyze_step_result["verdicts"]
        ),
        summary=summary,
        no_items_reason=lambda ctx: "",  # never reached: no reply is not scorable
        one_call_schema=TurnRelevancyOneCallAnswer,
        one_call_system=ONE_CALL_SYSTEM,
        one_call_prompt=lambda ctx: _one_call_prompt(block(ctx)),
        record=record,
    )
    return build_verdict_scorer(
        parts,
        id=id,
        description=(
            f"Share of the agent's replies relevant to the {window} turns before them, from "
            f"0 to {scale:g}"
        ),
        judge=judge,
        judge_mode=mode,
        label=lambda s: quality_label(s, scale=scale),
        max_text_chars=max_text_chars,
        level="conversation",
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
