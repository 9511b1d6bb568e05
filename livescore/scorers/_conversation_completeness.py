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
    needs_user_messages,
    strip_turn,
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


def _count_reason(ctx: StepContext) -> str:
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
        f"user were left unmet{where}: " + listing(strip_turn(str(v["statement"])) for v in unmet)
    )


def _spec(max_chars: int) -> JudgeSpec:
    """The conversation-completeness scorer as data, the transcript cut to ``max_chars``."""
    nothing = needs_user_messages("the conversation has no user message, so no request")

    def transcript(ctx: StepContext) -> str:
        return conversation_block(ctx, max_chars)

    return JudgeSpec(
        name="conversation-completeness",
        family="conversation",
        summary="share of the user's requests the agent met",
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
        extract=lambda skip_if: digest_step("intentions", max_chars, skip_if=skip_if),
        prompts=JudgePrompts(
            verdict_system=VERDICT_SYSTEM,
            reason_system=REASON_SYSTEM,
            one_call_system=ONE_CALL_SYSTEM,
            verdict=lambda shown: _verdict_prompt(transcript(shown.ctx), shown.items),
            reason=lambda shown: _reason_prompt(shown.score_text, shown.scale, shown.verdicts),
            one_call=lambda shown: _one_call_prompt(transcript(shown.ctx)),
            verdicts_schema=IntentionVerdicts,
            one_call_schema=CompletenessOneCallAnswer,
        ),
        nothing_to_judge=nothing,
        conversation=ConversationPolicy(
            counts=True,
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
