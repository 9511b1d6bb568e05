"""The conversation-hallucination scorer: the claims of every reply against every tool result
of every turn."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from livescore._text import DEFAULT_MAX_TEXT_CHARS
from livescore.judges import Judge
from livescore.pii import RedactSpec
from livescore.runs import Conversation, get_run_context
from livescore.scorers import _conversation as conv
from livescore.scorers._claims import EXTRACT_SYSTEM, ExtractedClaims, extract_prompt
from livescore.scorers._context import (
    DEFAULT_MAX_CONTEXT_CHARS,
    check_max_context_chars,
    context_for_judge,
    context_items,
    no_context_reason,
)
from livescore.scorers._hallucination_prompts import _JUDGING_RULES
from livescore.scorers._judge_spec import (
    ConversationPolicy,
    JudgeSpec,
    judge_catalog_entry,
    judge_scorer,
)
from livescore.scorers._judged import JudgeMode
from livescore.scorers._prompting import CONVERSATION_TAGS, block, data_rule
from livescore.scoring import CalibrationSpec, NotScorable, PromptStep, Scorer, StepContext

__all__ = (
    "ConversationClaimVerdict",
    "ConversationClaimVerdicts",
    "ConversationHallucinationOneCallAnswer",
    "conversation_tool_results",
    "create_conversation_hallucination_scorer",
)

ConversationClaimVerdict, ConversationClaimVerdicts, ConversationHallucinationOneCallAnswer = (
    conv.answer_schemas(
        "ConversationClaimVerdict",
        """One claim's verdict: ``"yes"`` when the tool results contradict it or do not back it
        (a hallucination), ``"no"`` when they back it.""",
        {
            "yes": ("y", "true", "hallucinated", "hallucination", "unsupported", "contradicted"),
            "no": ("n", "false", "supported", "grounded", "not hallucinated"),
        },
        "ConversationHallucinationOneCallAnswer",
        'The one-call answer: the replies\' claims (each ``"[turn N] ..."``), one verdict per\n'
        "claim, and the reason.",
        listed="claims",
    )
)


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
        found.extend(conv.turn_item(number, piece) for piece in get_run_context(run))
    return found


_TURNS_RULE = """\
Each claim starts with the turn whose reply made it, in brackets ("[turn 4] ..."), and \
each document of the context with the turn whose tool call returned it: a tool result of \
any turn, earlier or later, may back or contradict a claim of any turn."""


def _replies_text(conversation: Conversation, max_chars: int) -> str:
    replies = conv.messages(conversation, "assistant")
    cap = max(200, max_chars // max(1, len(replies)))
    return "\n".join(conv.turn_item(n, conv.clip(text, cap)) for n, text in replies)


def _count_reason(ctx: StepContext) -> str:
    bad, total = conv.faults(ctx, "yes")
    if not bad:
        return conv.because(
            ctx, f"{conv.every(total, 'claim is', 'claims are')} backed by the tool results."
        )
    turns = ctx.flags["turns_at_fault"]
    where = f" in {conv.turns_phrase(turns)}" if turns else ""
    return conv.because(
        ctx,
        f"{len(bad)} of {total} claims{where} are not backed by the tool results: "
        + conv.listing(str(v["statement"]) for v in bad),
    )


def _replies(ctx: StepContext, max_chars: int) -> list[tuple[int, str]]:
    """``(turn, reply)``, each reply cut to ``max_chars`` (made once per score)."""
    found: list[tuple[int, str]] | None = ctx.state.get("replies")
    if found is None:
        found = ctx.state["replies"] = [
            (n, text[:max_chars])
            for n, text in conv.messages(conv.conversation_of(ctx), "assistant")
        ]
    return found


def _nothing_to_judge(ctx: StepContext, max_chars: int) -> bool:
    if not context_items(ctx):
        raise NotScorable(no_context_reason("claims", hint="the conversation has no tool result"))
    return not _replies(ctx, max_chars)


def _claims_step(max_chars: int, skip_if: Callable[[StepContext], bool]) -> PromptStep[Any]:
    """Each reply's claims: one request per reply, the one the run-level scorers send."""

    def claims_of(answers: Any, ctx: StepContext) -> dict[str, Any]:
        found = zip(_replies(ctx, max_chars), answers, strict=True)
        return {
            "claims": [
                conv.turn_item(number, claim)
                for (number, _), answer in found
                for claim in ExtractedClaims.model_validate(answer).claims
            ]
        }

    return PromptStep(
        description="Extract each reply's claims (one request per reply)",
        output_schema=ExtractedClaims,
        system=EXTRACT_SYSTEM,
        create_prompt=lambda ctx: [extract_prompt(text) for _, text in _replies(ctx, max_chars)],
        skip_if=skip_if,
        skip_result=lambda ctx: {"claims": []},
        parse=claims_of,
    )


def _spec(max_chars: int, max_context_chars: int) -> JudgeSpec:
    """The scorer as data: the replies cut to ``max_chars``, the tool results to the other."""

    def context_block(ctx: StepContext) -> str:
        return context_for_judge(ctx, max_context_chars).block

    return JudgeSpec(
        name="conversation-hallucination",
        family="conversation",
        summary="share of the claims of the agent's replies that the tool results of every "
        "turn do not back",
        predicts="hallucinated",
        check="conversation-hallucination",
        items="claims",
        noun="claim",
        defect="hallucinated",
        verdict=ConversationClaimVerdict,
        counts={"hallucinated": "yes"},
        description="Share of the claims of the agent's replies that the conversation's tool "
        "results do not back, from 0 to {scale}",
        always_explain=True,
        no_items_reason=lambda ctx: conv.because(
            ctx, "the agent's replies make no checkable claim."
        ),
        count_reason=_count_reason,
        extract=lambda skip_if: _claims_step(max_chars, skip_if),
        prompts=conv.judge_prompts(
            lambda ctx: (context_block(ctx),),
            (ConversationClaimVerdicts, ConversationHallucinationOneCallAnswer),
            check="hallucination",
            noun="claim",
            plural="claims",
            task="You are a strict fact-checker. You compare the claims an AI assistant made over "
            "a conversation with the tool results it received, and decide, for each claim, "
            "whether it is a hallucination",
            one_call_task="You are a strict fact-checker. You review the replies an AI assistant "
            "gave over a conversation against the tool results it received",
            rules=f"{_TURNS_RULE}\n\n{_JUDGING_RULES}",
            listing="the factual claims of every reply in the <output> block: single statements "
            "that could be checked, each standing alone, in the reply's own wording, each "
            'starting with the turn of its reply in brackets ("[turn 2] ..."). Leave out '
            "greetings and questions.",
            statement="the claim, copied",
            words='"yes" = hallucinated, "no" = backed by the tool results',
            reason="one short sentence: the tool result that backs or contradicts the claim, or "
            "what is missing",
            examples=(conv.example("yes"), conv.example("no")),
            explain="naming the turns whose replies hallucinate and what the tool results say "
            "instead, or saying that every claim is backed",
            ask="Decide for each claim in the <claims> block whether it is a hallucination, "
            "judging only by the tool results in the <context> block.",
            one_call_ask="Check the assistant's replies in the <output> block against the tool "
            "results in the <context> block: list their claims, give one verdict per claim, and "
            "explain.",
            one_call_blocks=lambda ctx: (
                context_block(ctx),
                block("output", _replies_text(conv.conversation_of(ctx), max_chars)),
            ),
            found="A hallucination check of a conversation found {yes} of {total} claims of an "
            "AI assistant's replies hallucinated (contradicted by, or missing from, the tool "
            "results of the conversation).",
            scale=("no hallucination", "everything hallucinated"),
            reason_ask="name the turns whose replies hallucinate and what the tool results say "
            "instead, or say that every claim is backed.",
            attribute="hallucinated",
            reviewed="an AI assistant's conversation",
            rule=data_rule(
                (*CONVERSATION_TAGS, "output", "context", "document", "claims", "claim", "verdicts")
            ),
        ),
        nothing_to_judge=lambda ctx: _nothing_to_judge(ctx, max_chars),
        attributes={
            "livescore.context.truncated": "the tool results sent to the judge were cut at "
            "max_context_chars",
            "livescore.context.chars": "the tool results' length before the cut",
        },
        conversation=ConversationPolicy(
            at_fault="turns whose replies make unbacked claims",
            turn=lambda verdict, claim: (
                conv.item_turn(str(verdict["statement"])) or conv.item_turn(claim)
            ),
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

    Each reply's claims are judged by the hallucination scorer's rules against every tool
    result (and retrieved document) of every turn, earlier or later. The score is the share
    of claims hallucinated, times ``scale``; lower is better.

    Args:
        max_text_chars: Each reply is cut to this many characters before its claims are
            extracted.

    The other arguments are those of :func:`~livescore.scorers.judge_scorer`.

    Returns:
        A conversation scorer, its claims each ``"[turn N] ..."``. A conversation without
        any tool result is skipped as not scorable.

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
    return judge_scorer(  # every other argument is judge_scorer's
        _spec(max_text_chars, max_context_chars), get_context=conversation_tool_results, **locals()
    )


_build = judge_catalog_entry(
    _spec(DEFAULT_MAX_TEXT_CHARS, DEFAULT_MAX_CONTEXT_CHARS),
    create_conversation_hallucination_scorer,
)
