"""The conversation-hallucination scorer: the claims of every reply against every tool result
of every turn.

Ground truth comes from the whole conversation: a tool result of turn 1 backs a claim made
in turn 4, and a claim of turn 4 that contradicts it is a hallucination.

Three-step mode (the default):

1. preprocess (judge): each reply's factual claims, one request per reply: the very request
   the hallucination and faithfulness scorers send for a run's answer. So when those scored
   the turns live, or this scorer scored the conversation before it resumed, the
   conversation's memo already holds the answers and nothing is asked again.
2. analyze (judge): one verdict per claim against the conversation's tool results,
   ``"yes"`` meaning hallucinated.
3. generate_score (code): hallucinated / claims × scale, half-up to 2 decimals; 0 with no
   claims.
4. generate_reason (judge), naming the turns whose replies hallucinate.

One-call mode asks for the claims (each with its turn), the verdicts and the reason in one
answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel

from livescore._catalog import ScorerOptions, catalog_entry
from livescore._text import DEFAULT_MAX_TEXT_CHARS
from livescore.judges import Judge
from livescore.pii import RedactSpec
from livescore.runs import Conversation, get_run_context
from livescore.scorers._claims import EXTRACT_SYSTEM, Claims, ExtractedClaims, extract_prompt
from livescore.scorers._context import (
    DEFAULT_MAX_CONTEXT_CHARS,
    check_max_context_chars,
    context_for_judge,
    context_items,
    no_context_reason,
)
from livescore.scorers._conversation import (
    CONVERSATION_TAGS,
    assistant_replies,
    conversation_of,
    item_turn,
    listing,
    turn_item,
    turns_phrase,
)
from livescore.scorers._hallucination_prompts import _JUDGING_RULES
from livescore.scorers._judge_spec import ConversationPolicy, JudgePrompts, JudgeSpec, judge_scorer
from livescore.scorers._judged import (
    JudgeMode,
    fmt,
)
from livescore.scorers._prompting import block, data_rule, item_blocks, quote
from livescore.scorers._verdicts import StatementVerdict, tally
from livescore.scoring import (
    CalibrationSpec,
    NotScorable,
    PromptStep,
    Scorer,
    StepContext,
)

__all__ = (
    "ConversationClaimVerdict",
    "ConversationClaimVerdicts",
    "ConversationHallucinationOneCallAnswer",
    "conversation_tool_results",
    "create_conversation_hallucination_scorer",
)

_SPELLINGS = {
    "yes": ("y", "true", "hallucinated", "hallucination", "unsupported", "contradicted"),
    "no": ("n", "false", "supported", "grounded", "not hallucinated"),
}


class ConversationClaimVerdict(StatementVerdict):
    """One claim's verdict: ``"yes"`` when the tool results contradict it or do not back it
    (a hallucination), ``"no"`` when they back it."""

    spellings = _SPELLINGS
    verdict: Literal["yes", "no"]


class ConversationClaimVerdicts(BaseModel):
    """The verdict answer: ``{"verdicts": [{"statement", "verdict", "reason"}, ...]}``."""

    verdicts: list[ConversationClaimVerdict]


class ConversationHallucinationOneCallAnswer(BaseModel):
    """The one-call answer: the replies' claims (each ``"[turn N] ..."``), one verdict per
    claim, and the reason."""

    claims: Claims
    verdicts: list[ConversationClaimVerdict]
    reason: str


def conversation_tool_results(conversation: Conversation, step: Any = None) -> list[str]:
    """Every turn's ground truth (tool results, retrieved documents), each piece prefixed
    with its turn: the default ``get_context`` of the conversation-hallucination scorer.

    Example:
        >>> conversation = Conversation.from_turns([{"input": "Where?", "output": "Lyon.",
        ...     "tool_calls": [{"name": "track", "args": {}, "result": "Lyon"}]}])
        >>> conversation_tool_results(conversation)
        ['[turn 1] {"tool": "track", "result": "Lyon"}']
    """
    found: list[str] = []
    for number, run in conversation.turns():
        found.extend(turn_item(number, piece) for piece in get_run_context(run))
    return found


_TAGS = (*CONVERSATION_TAGS, "output", "context", "document", "claims", "claim", "verdicts")

_TURNS_RULE = """\
Each claim starts with the turn whose reply made it, in brackets ("[turn 4] ..."), and \
each document of the context with the turn whose tool call returned it: a tool result of \
any turn, earlier or later, may back or contradict a claim of any turn."""

VERDICT_SYSTEM = f"""\
You are a strict fact-checker. You compare the claims an AI assistant made over a \
conversation with the tool results it received, and decide, for each claim, whether it is \
a hallucination.

{_TURNS_RULE}

{_JUDGING_RULES}

{data_rule(_TAGS)}

Return exactly one verdict per claim, in the order given. Each verdict has "statement" \
(the claim, copied), "verdict" ("yes" or "no", lower case) and "reason" (one short \
sentence: the tool result that backs or contradicts the claim, or what is missing).

Answer with JSON only: {{"verdicts": [{{"statement": "...", "verdict": "yes", "reason": \
"..."}}]}}"""

REASON_SYSTEM = f"""\
You explain the result of a hallucination check of an AI assistant's conversation to its \
developer, in plain, concise English: two or three sentences of plain text, no lists, no \
JSON.

{data_rule(_TAGS)}"""

ONE_CALL_SYSTEM = f"""\
You are a strict fact-checker. You review the replies an AI assistant gave over a \
conversation against the tool results it received, in three moves, and give all three in \
one JSON answer.

1. "claims": the factual claims of every reply in the <output> block: single statements \
that could be checked, each standing alone, in the reply's own wording, each starting with \
the turn of its reply in brackets ("[turn 2] ..."). Leave out greetings and questions.
2. "verdicts": one verdict per claim, in the same order, each with "statement" (the claim, \
copied), "verdict" ("yes" = hallucinated, "no" = backed by the tool results) and "reason" \
(one short sentence).
3. "reason": two or three sentences for the developer naming the turns whose replies \
hallucinate and what the tool results say instead, or saying that every claim is backed. \
No numeric score.

{_TURNS_RULE}

{_JUDGING_RULES}

{data_rule(_TAGS)}

Answer with JSON only: {{"claims": ["[turn 1] ..."], "verdicts": [{{"statement": "...", \
"verdict": "no", "reason": "..."}}], "reason": "..."}}"""


def _verdict_prompt(claims: Sequence[str], context_block: str) -> str:
    n = len(claims)
    return (
        "Decide for each claim in the <claims> block whether it is a hallucination, judging "
        "only by the tool results in the <context> block.\n\n"
        f"{context_block}\n\n"
        f"{item_blocks('claims', 'claim', claims)}\n\n"
        f"There {'is 1 claim' if n == 1 else f'are {n} claims'}: answer with exactly {n} "
        f"verdict{'' if n == 1 else 's'}, in the same order, as JSON only: "
        '{"verdicts": [{"statement": ..., "verdict": "yes" | "no", "reason": ...}]}.'
    )


def _reason_prompt(score_text: str, scale: float, verdicts: Sequence[Mapping[str, Any]]) -> str:
    hallucinated = tally(verdicts)["yes"]
    items = "\n".join(
        f'<verdict index="{i}" hallucinated="{v["verdict"]}">\n'
        f"claim: {quote(v['statement'])}\nreason: {quote(v['reason'])}\n</verdict>"
        for i, v in enumerate(verdicts, start=1)
    )
    return (
        f"A hallucination check of a conversation found {hallucinated} of {len(verdicts)} "
        f"claims of an AI assistant's replies hallucinated (contradicted by, or missing from, "
        f"the tool results of the conversation). Its score is {score_text} on a scale from 0 "
        f"(no hallucination) to {scale:g} (everything hallucinated).\n\n"
        f"<verdicts>\n{items}\n</verdicts>\n\n"
        f'Explain the score. Start with "The score is {score_text} because", name the turns '
        "whose replies hallucinate and what the tool results say instead, or say that every "
        "claim is backed."
    )


def _replies_text(conversation: Conversation, max_chars: int) -> str:
    replies = assistant_replies(conversation)
    cap = max(200, max_chars // max(1, len(replies)))
    return "\n".join(
        turn_item(n, text if len(text) <= cap else text[:cap] + " […]") for n, text in replies
    )


def _one_call_prompt(replies: str, context_block: str) -> str:
    return (
        "Check the assistant's replies in the <output> block against the tool results in "
        "the <context> block: list their claims, give one verdict per claim, and explain."
        f"\n\n{context_block}\n\n{block('output', replies)}\n\n"
        'Answer with JSON only: {"claims": [...], "verdicts": [...], "reason": "..."}.'
    )


def _count_reason(ctx: StepContext) -> str:
    verdicts = ctx.analyze_step_result["verdicts"]
    bad = [v for v in verdicts if v["verdict"] == "yes"]
    total = len(verdicts)
    if not bad:
        backed = "the only claim is" if total == 1 else f"all {total} claims are"
        return f"The score is {fmt(ctx.score)} because {backed} backed by the tool results."
    turns = ctx.flags.get("turns_at_fault") or []
    where = f" in {turns_phrase(turns)}" if turns else ""
    return (
        f"The score is {fmt(ctx.score)} because {len(bad)} of {total} claims{where} are "
        "not backed by the tool results: " + listing(str(v["statement"]) for v in bad)
    )


def _spec(max_chars: int, max_context_chars: int) -> JudgeSpec:
    """The conversation-hallucination scorer as data: the replies cut to ``max_chars``,
    the tool results to ``max_context_chars``."""

    def context_block(ctx: StepContext) -> str:
        return context_for_judge(ctx, max_context_chars).block

    def replies(ctx: StepContext) -> list[tuple[int, str]]:
        found: list[tuple[int, str]] | None = ctx.state.get("replies")
        if found is None:
            found = ctx.state["replies"] = [
                (n, text[:max_chars]) for n, text in assistant_replies(conversation_of(ctx))
            ]
        return found

    def nothing_to_judge(ctx: StepContext) -> bool:
        if not context_items(ctx):
            raise NotScorable(
                no_context_reason("claims", hint="the conversation has no tool result")
            )
        return not replies(ctx)

    def claims_of(answers: Any, ctx: StepContext) -> dict[str, Any]:
        # One answer per reply: the step asks one request per reply.
        claims = [
            turn_item(number, claim)
            for (number, _), answer in zip(replies(ctx), answers, strict=True)
            for claim in ExtractedClaims.model_validate(answer).claims
        ]
        return {"claims": claims}

    def extract(skip_if: Callable[[StepContext], bool]) -> PromptStep[Any]:
        return PromptStep(
            description="Extract each reply's claims (one request per reply)",
            output_schema=ExtractedClaims,
            system=EXTRACT_SYSTEM,  # the claims extraction the run-level scorers send
            create_prompt=lambda ctx: [extract_prompt(text) for _, text in replies(ctx)],
            skip_if=skip_if,
            skip_result=lambda ctx: {"claims": []},
            parse=claims_of,
        )

    return JudgeSpec(
        name="conversation-hallucination",
        family="conversation",
        summary="share of the claims of the agent's replies its tool results do not back",
        check="conversation-hallucination",
        items="claims",
        noun="claim",
        defect="hallucinated",
        verdict=ConversationClaimVerdict,
        counts={"hallucinated": "yes"},
        description="Share of the claims of the agent's replies that the conversation's tool "
        "results do not back, from 0 to {scale}",
        always_explain=True,
        no_items_reason=lambda ctx: (
            f"The score is {fmt(ctx.score)} because the agent's replies make no checkable claim."
        ),
        count_reason=_count_reason,
        extract=extract,
        prompts=JudgePrompts(
            verdict_system=VERDICT_SYSTEM,
            reason_system=REASON_SYSTEM,
            one_call_system=ONE_CALL_SYSTEM,
            verdict=lambda shown: _verdict_prompt(shown.items, context_block(shown.ctx)),
            reason=lambda shown: _reason_prompt(shown.score_text, shown.scale, shown.verdicts),
            one_call=lambda shown: _one_call_prompt(
                _replies_text(conversation_of(shown.ctx), max_chars), context_block(shown.ctx)
            ),
            verdicts_schema=ConversationClaimVerdicts,
            one_call_schema=ConversationHallucinationOneCallAnswer,
        ),
        nothing_to_judge=nothing_to_judge,
        conversation=ConversationPolicy(
            turn=lambda verdict, claim: item_turn(str(verdict["statement"])) or item_turn(claim),
            counts=True,
        ),
    )


def create_conversation_hallucination_scorer(
    *,
    model: str | Judge,
    scale: float = 1.0,
    judge_mode: JudgeMode = "three_step",
    id: str = "conversation-hallucination",
    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
    max_context_chars: int = DEFAULT_MAX_CONTEXT_CHARS,
    judge_options: Mapping[str, Any] | None = None,
    redact: RedactSpec | None = None,
    calibration: CalibrationSpec | None = None,
) -> Scorer:
    """Score how much of what the agent said over a conversation its tool results do not back.

    A conversation scorer. The ground truth is the whole conversation's: every tool result
    (and retrieved document) of every turn, so a claim in turn 4 is checked against what a
    tool returned in turn 1 too. The score is the share of the replies' claims that are
    hallucinated (contradicted by the tool results, or not in them), times ``scale``: 0 is
    fully grounded, higher is worse. The judging rules are the hallucination scorer's.

    In three-step mode each reply's claims are extracted with the same request the
    hallucination and faithfulness scorers send for a run's answer, one request per reply:
    through the conversation's memo, a reply whose claims were extracted before (by those
    scorers on the live turn, or by this one before the conversation resumed) costs no
    call.

    Args:
        model: The judge: ``"openai/<model>"`` or a :class:`~livescore.judges.Judge`.
        scale: The score of a conversation where every claim is hallucinated.
        judge_mode: ``"three_step"`` (one extraction request per reply, then the verdicts
            and the reason) or ``"one_call"`` (claims, verdicts and reason in one answer).
        id: The scorer id on results, spans and metrics.
        max_text_chars: Each reply is cut to this many characters before its claims are
            extracted.
        max_context_chars: The tool results sent to the judge are cut to this many
            characters in all.
        judge_options: Keyword arguments for :func:`~livescore.judges.resolve_judge`.
        redact: Keeps personal data from the judge (see ``Scorer.with_redaction``).
        calibration: Labels fitted on yours (see ``Scorer.with_calibration``).

    Returns:
        A conversation scorer whose results carry ``preprocess_step_result = {"claims":
        [...]}`` (each ``"[turn N] ..."``), ``analyze_step_result = {"verdicts": [...]}``,
        the score, a label (``none`` … ``severe``), a reason naming the turns that
        hallucinate, ``result.turns`` and ``flags["turns_at_fault"]``. A conversation
        without any tool result is skipped as not scorable (nothing to judge against).

    Raises:
        ValueError: A bad ``scale``, ``judge_mode`` or ``max_context_chars``.
        livescore.judges.JudgeConfigError: No usable judge model.

    Example:
        >>> from livescore.runs import Conversation
        >>> from livescore.testing import ScriptedJudge
        >>> judge = ScriptedJudge([
        ...     {"claims": ["The parcel is in Lyon."]},
        ...     {"claims": ["The parcel arrives on Monday."]},
        ...     {"verdicts": [
        ...         {"statement": "[turn 1] The parcel is in Lyon.", "verdict": "no",
        ...          "reason": "The tracking says Lyon."},
        ...         {"statement": "[turn 2] The parcel arrives on Monday.", "verdict": "yes",
        ...          "reason": "The estimate says Thursday."}]},
        ...     "The score is 0.5 because turn 2 gives Monday where the estimate says Thursday.",
        ... ])
        >>> scorer = create_conversation_hallucination_scorer(model=judge)
        >>> result = scorer.run_sync(Conversation.from_turns([
        ...     {"input": "Where is my parcel?", "output": "The parcel is in Lyon.",
        ...      "tool_calls": [{"name": "track", "args": {}, "result": "Lyon depot"}]},
        ...     {"input": "When will it come?", "output": "The parcel arrives on Monday.",
        ...      "tool_calls": [{"name": "eta", "args": {}, "result": "Thursday"}]},
        ... ]))
        >>> result.score, result.flags["turns_at_fault"]
        (0.5, [2])
    """
    max_context_chars = check_max_context_chars(max_context_chars)
    return judge_scorer(
        _spec(max_text_chars, max_context_chars),
        model=model,
        scale=scale,
        judge_mode=judge_mode,
        id=id,
        max_text_chars=max_text_chars,
        judge_options=judge_options,
        redact=redact,
        calibration=calibration,
        get_context=conversation_tool_results,
    )


@catalog_entry(
    "conversation-hallucination",
    family="conversation",
    summary="share of the claims of the agent's replies that the tool results of every "
    "turn do not back",
    needs_judge=True,
    higher_is_better=False,
    predicts="hallucinated",
    factory="livescore.scorers.create_conversation_hallucination_scorer",
    span_attributes={
        "livescore.conversation.turns_at_fault": "turns whose replies make unbacked claims",
        "livescore.conversation.items_judged": "claims judged",
        "livescore.context.truncated": "the tool results sent to the judge were cut at "
        "max_context_chars",
        "livescore.context.chars": "the tool results' length before the cut",
    },
    examples=("conversation-hallucination",),
)
def _build(argument: str | None, options: ScorerOptions) -> Scorer:
    return create_conversation_hallucination_scorer(
        model=options.require_model(), judge_mode=options.judge_mode
    )
