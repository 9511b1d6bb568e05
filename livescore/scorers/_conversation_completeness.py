"""The conversation-completeness scorer: the user's intentions, and which ones were met.

Three-step mode (the default; at most three judge calls):

1. preprocess (judge): the user digest, what the user asked for (and the facts the user
   gave), each with its turn: the same request as the knowledge-retention scorer's first
   step, so the conversation's memo asks it once for both.
2. analyze (judge): one verdict per intention against the whole conversation, ``"yes"``
   when the assistant satisfied it (with the turn that did), ``"no"`` when it was left
   unanswered, dropped or refused without a reason.
3. generate_score (code): satisfied / intentions, × scale, half-up to 2 decimals. No
   intentions: not scorable.
4. generate_reason (judge), naming the turns whose requests were left unmet.
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
    item_turn,
    listing,
    record_turns,
    strip_turn,
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
from livescore.scorers._prompting import data_rule, item_blocks, quote
from livescore.scorers._verdicts import (
    StatementVerdict,
    VerdictScorerParts,
    build_verdict_scorer,
    tally,
)
from livescore.scoring import CalibrationSpec, NotScorable, Scorer, StepContext

__all__ = (
    "CompletenessOneCallAnswer",
    "IntentionVerdict",
    "IntentionVerdicts",
    "create_conversation_completeness_scorer",
)


_SPELLINGS = {
    "yes": ("y", "true", "satisfied", "met", "done", "fulfilled", "answered"),
    "no": ("n", "false", "unsatisfied", "unmet", "not satisfied", "missed", "dropped"),
}


class IntentionVerdict(StatementVerdict):
    """One intention's verdict: ``"yes"`` when the assistant satisfied it in some reply
    (``turn``: that reply's turn), ``"no"`` when it was left unanswered, dropped, or
    refused without a reason (``turn`` null)."""

    spellings = _SPELLINGS
    verdict: Literal["yes", "no"]
    turn: int | None = None


class IntentionVerdicts(BaseModel):
    """The verdict answer: ``{"verdicts": [{"statement", "verdict", "reason", "turn"}]}``."""

    verdicts: list[IntentionVerdict]


class CompletenessOneCallAnswer(BaseModel):
    """The one-call answer: the user's intentions, one verdict each, and the reason."""

    intentions: Claims
    verdicts: list[IntentionVerdict]
    reason: str


_TAGS = (*CONVERSATION_TAGS, "verdicts", "verdict")

_RULES = """\
For each thing the user asked for, read the assistant's replies from the turn it was \
asked:
- "yes" (satisfied): a reply does what was asked or answers it, or explains plainly why \
it cannot (a policy, missing access) and offers what it can. Give "turn": the reply that \
satisfied it.
- "no" (not satisfied): no reply does it or answers it, the assistant changed the \
subject, promised to do it and never did, or refused without a reason. "turn" is null.
Judge whether each request was met, not how well the replies are written."""

VERDICT_SYSTEM = f"""\
You review whether an AI assistant did what the user asked, over a whole conversation.

{_RULES}

{data_rule(_TAGS)}

Return exactly one verdict per intention, in the order given. Each verdict has \
"statement" (the intention, copied), "verdict" ("yes" or "no", lower case), "reason" (one \
short sentence) and "turn" (a number, or null).

Answer with JSON only: {{"verdicts": [{{"statement": "...", "verdict": "yes", "reason": \
"...", "turn": 2}}]}}"""

REASON_SYSTEM = f"""\
You explain the result of a conversation-completeness check of an AI assistant to its \
developer, in plain, concise English: two or three sentences of plain text, no lists, no \
JSON.

{data_rule(_TAGS)}"""

ONE_CALL_SYSTEM = f"""\
You review whether an AI assistant did what the user asked, over a whole conversation, \
in three moves, and give all three in one JSON answer.

1. "intentions": everything the user asked the assistant to do, find out or answer \
(questions and follow-up requests count; greetings and thanks do not), one per item, each \
starting with its turn in brackets: "[turn 2] ...".
2. "verdicts": one verdict per intention, in the same order, each with "statement" (the \
intention, copied), "verdict" ("yes" = satisfied, "no" = not), "reason" (one short \
sentence) and "turn" (the reply that satisfied it, or null).
3. "reason": two or three sentences for the developer naming what was left unmet and the \
turns it was asked in, or saying that everything was done. No numeric score.

{_RULES}

{data_rule(_TAGS)}

Answer with JSON only: {{"intentions": ["[turn 1] ..."], "verdicts": [{{"statement": \
"...", "verdict": "yes", "reason": "...", "turn": 1}}], "reason": "..."}}"""


def _verdict_prompt(transcript: str, intentions: Sequence[str]) -> str:
    n = len(intentions)
    return (
        "Decide for each intention in the <intentions> block whether the assistant "
        "satisfied it in the conversation.\n\n"
        f"{transcript}\n\n"
        f"{item_blocks('intentions', 'intention', intentions)}\n\n"
        f"There {'is 1 intention' if n == 1 else f'are {n} intentions'}: answer with exactly {n} "
        f"verdict{'' if n == 1 else 's'}, in the same order, as JSON only: "
        '{"verdicts": [{"statement": ..., "verdict": "yes" | "no", "reason": ..., '
        '"turn": ...}]}.'
    )


def _reason_prompt(score_text: str, scale: float, verdicts: Sequence[Mapping[str, Any]]) -> str:
    met = tally(verdicts)["yes"]
    items = "\n".join(
        f'<verdict index="{i}" satisfied="{v["verdict"]}" turn="{v.get("turn")}">\n'
        f"intention: {quote(v['statement'])}\nreason: {quote(v['reason'])}\n</verdict>"
        for i, v in enumerate(verdicts, start=1)
    )
    return (
        f"A conversation-completeness check found that the assistant satisfied {met} of "
        f"{len(verdicts)} things the user asked for. Its score is {score_text} on a scale "
        f"from 0 (nothing done) to {scale:g} (everything done).\n\n"
        f"<verdicts>\n{items}\n</verdicts>\n\n"
        f'Explain the score. Start with "The score is {score_text} because", and name what '
        "was left unmet and the turns it was asked in, or say that everything was done."
    )


def _one_call_prompt(transcript: str) -> str:
    return (
        "Review whether the assistant did what the user asked in the conversation below: "
        "list the user's intentions, give one verdict per intention, and explain.\n\n"
        f"{transcript}\n\n"
        'Answer with JSON only: {"intentions": [...], "verdicts": [...], "reason": "..."}.'
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

    A conversation scorer: the judge lists the user's intentions (every question and
    request, with the turn it was asked in), then decides for each one whether some reply
    satisfied it (or explained plainly why it cannot be done). The score is the share
    satisfied, times ``scale``; higher is better.

    Args:
        model: The judge: ``"openai/<model>"`` or a :class:`~livescore.judges.Judge`.
        scale: The score when everything was done.
        judge_mode: ``"three_step"`` (intentions, verdicts, reason: up to three calls; the
            intentions come from the user digest the knowledge-retention scorer shares) or
            ``"one_call"``.
        id: The scorer id on results, spans and metrics.
        max_text_chars: The transcript the judge reads is cut to about this many
            characters.
        judge_options: Keyword arguments for :func:`~livescore.judges.resolve_judge`.
        redact: Keeps personal data from the judge (see ``Scorer.with_redaction``).
        calibration: Labels fitted on yours (see ``Scorer.with_calibration``).

    Returns:
        A conversation scorer whose results carry ``preprocess_step_result =
        {"intentions": [...]}`` (each ``"[turn N] ..."``),
        ``analyze_step_result = {"verdicts": [...]}``, the score, a label (``poor`` …
        ``full``), a reason naming what was left unmet, ``result.turns`` and
        ``flags["turns_at_fault"]`` (the turns whose requests were left unmet). A
        conversation in which the user asked for nothing is skipped as not scorable.

    Raises:
        ValueError: A bad ``scale`` or ``judge_mode``.
        livescore.judges.JudgeConfigError: No usable judge model.

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
    scale = check_scale(scale)
    mode = judge_mode_of(judge_mode, scorer="conversation-completeness")
    judge = resolve_model(model, judge_options, scorer="conversation-completeness")

    def transcript(ctx: StepContext) -> str:
        return conversation_block(ctx, max_text_chars)

    def score(ctx: StepContext, analysis: dict[str, Any]) -> float:
        verdicts = analysis["verdicts"]
        return round2(tally(verdicts)["yes"] / len(verdicts) * scale)

    def no_intentions(ctx: StepContext) -> float:
        raise NotScorable("the user asked for nothing: there is no request to complete")

    def record(ctx: StepContext, analysis: dict[str, Any]) -> None:
        verdicts = analysis["verdicts"]
        unmet = [item_turn(str(v["statement"])) for v in verdicts if v["verdict"] == "no"]
        record_turns(ctx, unmet, len(verdicts))
        ctx.flags["intentions_total"] = len(verdicts)
        ctx.flags["intentions_satisfied"] = tally(verdicts)["yes"]

    def summary(ctx: StepContext) -> str:
        verdicts = ctx.analyze_step_result["verdicts"]
        unmet = [v for v in verdicts if v["verdict"] == "no"]
        total = len(verdicts)
        if not unmet:
            done = "the only request" if total == 1 else f"all {total} requests"
            return f"The score is {fmt(ctx.score)} because {done} of the user were met."
        turns = [t for t in (item_turn(str(v["statement"])) for v in unmet) if t is not None]
        where = f" (asked in {turns_phrase(turns)})" if turns else ""
        return (
            f"The score is {fmt(ctx.score)} because {len(unmet)} of {total} requests of the "
            f"user were left unmet{where}: "
            + listing(strip_turn(str(v["statement"])) for v in unmet)
        )

    parts = VerdictScorerParts(
        items_key="intentions",
        noun="intention",
        nouns="intentions",
        extract=digest_step(
            "intentions", max_text_chars, "the conversation has no user message, so no request"
        ),
        extract_in_one_call=True,
        verdict_schema=IntentionVerdicts,
        verdict_system=VERDICT_SYSTEM,
        verdict_prompt=lambda ctx, items: _verdict_prompt(transcript(ctx), items),
        score=score,
        no_items=no_intentions,
        reason_system=REASON_SYSTEM,
        reason_prompt=lambda ctx: _reason_prompt(
            fmt(ctx.score), scale, ctx.analyze_step_result["verdicts"]
        ),
        summary=summary,
        no_items_reason=lambda ctx: "",  # never reached: no intention is not scorable
        one_call_schema=CompletenessOneCallAnswer,
        one_call_system=ONE_CALL_SYSTEM,
        one_call_prompt=lambda ctx: _one_call_prompt(transcript(ctx)),
        record=record,
    )
    return build_verdict_scorer(
        parts,
        id=id,
        description=f"Share of the user's requests the agent met, from 0 to {scale:g}",
        judge=judge,
        judge_mode=mode,
        label=lambda s: quality_label(s, scale=scale),
        max_text_chars=max_text_chars,
        level="conversation",
        redact=redact,
        calibration=calibration,
    )


@catalog_entry(
    "conversation-completeness",
    family="conversation",
    summary="share of the user's requests the agent met over the conversation",
    needs_judge=True,
    predicts="incomplete",
    factory="livescore.scorers.create_conversation_completeness_scorer",
    span_attributes={
        "livescore.conversation.turns_at_fault": "turns whose requests were left unmet",
        "livescore.conversation.items_judged": "intentions judged",
    },
    examples=("conversation-completeness",),
)
def _build(argument: str | None, options: ScorerOptions) -> Scorer:
    return create_conversation_completeness_scorer(
        model=options.require_model(), judge_mode=options.judge_mode
    )
