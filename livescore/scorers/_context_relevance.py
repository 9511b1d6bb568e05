"""The context relevance scorer: was the context the agent got relevant to the question, and
did its answer use it? (Mastra's formula)"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel

from livescore._text import DEFAULT_MAX_TEXT_CHARS
from livescore.judges import Judge
from livescore.pii import RedactSpec
from livescore.scorers._claims import Claims
from livescore.scorers._context import (
    DEFAULT_MAX_CONTEXT_CHARS,
    at_position,
    context_source,
    pieces_attributes,
    pieces_of,
    pieces_prompt,
    pieces_reason,
    pieces_systems,
    record_pieces,
)
from livescore.scorers._judge_spec import (
    JudgePrompts,
    JudgeSpec,
    ScoringPolicy,
    Shown,
    judge_catalog_entry,
    judge_scorer,
)
from livescore.scorers._judged import JudgeMode, check_fraction, fmt
from livescore.scorers._prompting import block, explain_system, quote
from livescore.scorers._verdicts import spelling_validator
from livescore.scoring import CalibrationSpec, ContextFunction, NotScorable, Scorer, StepContext

__all__ = (
    "RELEVANCE_WEIGHTS",
    "ContextPieceEvaluation",
    "ContextRelevanceAnalysis",
    "ContextRelevanceOneCallAnswer",
    "create_context_relevance_scorer",
)

RELEVANCE_WEIGHTS = {"high": 1.0, "medium": 0.7, "low": 0.3, "none": 0.0}
"""What each relevance level adds to the score (Mastra's weights)."""

_LEVELS = {
    "high": ("highly relevant", "very relevant", "essential", "direct", "directly relevant"),
    "medium": ("moderate", "moderately relevant", "mid", "somewhat relevant", "supporting"),
    "low": ("slightly relevant", "tangential", "barely relevant", "minor"),
    "none": ("irrelevant", "not relevant", "unrelated", "no", "zero", "nothing"),
}


class ContextPieceEvaluation(BaseModel):
    """One context piece's verdict: how relevant it is to the question (``"high"``,
    ``"medium"``, ``"low"``, ``"none"``) and whether the answer used it. ``context_index``
    is its position (from 0) in the order the agent got the pieces."""

    context_index: int
    relevance_level: Literal["high", "medium", "low", "none"]
    was_used: bool
    reasoning: str
    _spelling = spelling_validator("relevance_level", _LEVELS)


class ContextRelevanceAnalysis(BaseModel):
    """The analysis answer: one evaluation per piece, and the information that was missing."""

    evaluations: list[ContextPieceEvaluation]
    missing_context: Claims


class ContextRelevanceOneCallAnswer(BaseModel):
    """The one-call answer: the evaluations, the missing information, and the reason."""

    evaluations: list[ContextPieceEvaluation]
    missing_context: Claims
    reason: str


_TAGS = ("question", "output", "context", "document", "verdicts", "verdict")

_RULES = """\
For each context piece:
- "relevance_level": "high" when it answers the question or holds information the answer \
needs; "medium" when it gives helpful supporting or background information; "low" when \
it is only loosely related; "none" when it is unrelated.
- "was_used": true when the answer clearly draws on the piece (states its information or \
follows from it), false otherwise.
Then "missing_context": the information a good answer to the question needs that no piece \
provides (an empty list when nothing is missing). Judge by the content only, never by \
your own knowledge of the world."""

_EACH = (
    'in the order of the pieces, each with "context_index" (the piece\'s index), '
    '"relevance_level", "was_used" and "reasoning" (one short sentence)'
)
_ON = "how relevant and how used the context was, and what was missing"

REASON_SYSTEM = explain_system("context-relevance", _TAGS)
ANALYZE_SYSTEM, ONE_CALL_SYSTEM = pieces_systems(
    "You judge whether the context an AI agent received was relevant to the question it "
    "answered, and whether its answer used it",
    _RULES,
    _TAGS,
    returned=f'Return exactly one evaluation per context piece, {_EACH}; then "missing_context".',
    example='{"evaluations": [{"context_index": 0, "relevance_level": "high", "was_used": '
    'true, "reasoning": "..."}], "missing_context": []}',
    each=f'"evaluations": exactly one per context piece, {_EACH}. "missing_context": as above.',
    on=_ON,
)


def _counts(analysis: Mapping[str, Any]) -> tuple[int, int, int, int]:
    """How many pieces were judged, relevant (high or medium), used; how much was missing."""
    evaluations = analysis["evaluations"]
    relevant = sum(1 for e in evaluations if e["relevance_level"] in ("high", "medium"))
    used = sum(1 for e in evaluations if e["was_used"])
    return len(evaluations), relevant, used, len(analysis.get("missing_context", ()))


def _record(ctx: StepContext, analysis: Mapping[str, Any]) -> None:
    pieces, relevant, used, missing = _counts(analysis)
    record_pieces(ctx, pieces, relevant)
    levels = dict.fromkeys(RELEVANCE_WEIGHTS, 0)
    for evaluation in analysis["evaluations"]:
        levels[evaluation["relevance_level"]] += 1
    ctx.flags["context_levels"] = levels
    ctx.flags["context_used"] = used
    ctx.flags["missing_context"] = missing


def _count_reason(ctx: StepContext) -> str:
    pieces, relevant, used, missing = _counts(ctx.analyze_step_result)
    return (
        f"The score is {fmt(ctx.score)} because {relevant} of {pieces} context pieces are "
        f"relevant to the question and the answer used {used}; {missing} piece(s) of needed "
        "information were missing."
    )


def _spec(unused: float, missing: float, max_missing: float, max_context_chars: int) -> JudgeSpec:
    """The context relevance scorer as data, with its penalties (Mastra's formula)."""

    def breakdown(analysis: Mapping[str, Any]) -> tuple[float, int, float]:
        evaluations = analysis["evaluations"]
        base = sum(RELEVANCE_WEIGHTS[e["relevance_level"]] for e in evaluations) / len(evaluations)
        unused_high = sum(
            1 for e in evaluations if e["relevance_level"] == "high" and not e["was_used"]
        )
        return base, unused_high, min(len(analysis["missing_context"]) * missing, max_missing)

    def score(analysis: Mapping[str, Any]) -> float:
        base, unused_high, missed = breakdown(analysis)
        return max(0.0, base - unused_high * unused - missed)

    def question(ctx: StepContext) -> str:
        text = ctx.input_text
        if not text.strip():
            raise NotScorable("the input is empty: there is no question to judge the context by")
        return text

    def prompt_part(shown: Shown) -> str:
        ctx = shown.ctx
        return (
            "Judge each piece of the <context> block, in order: how relevant it is to the "
            "question in the <question> block, and whether the answer in the <output> block "
            "used it. Then list the information that was missing.\n\n"
            f"{block('question', question(ctx))}\n\n{block('output', ctx.output_text)}\n\n"
            f"{pieces_prompt(ctx, max_context_chars, 'evaluation')}"
        )

    def reason(shown: Shown) -> str:
        analysis = shown.ctx.analyze_step_result
        base, unused_high, missed = breakdown(analysis)
        missing_items = "\n".join(f"- {quote(m)}" for m in analysis["missing_context"])
        return pieces_reason(
            "A context-relevance check rated each context piece an AI agent received (relevance "
            "weights: high 1, medium 0.7, low 0.3, none 0) and whether the answer used it. "
            f"Mean relevance {base:.2f}; {unused_high} highly relevant piece(s) unused "
            f"(−{unused_high * unused:.2f}); missing information −{missed:.2f}. Its score is "
            f"{shown.score_text} on a scale from 0 to {shown.scale:g}.",
            shown.score_text,
            (
                (
                    f'index="{e["context_index"]}" relevance="{e["relevance_level"]}" '
                    f'used="{str(e["was_used"]).lower()}"',
                    e["reasoning"],
                )
                for e in analysis["evaluations"]
            ),
            _ON,
            more=f"Missing information:\n{missing_items or '(none)'}\n\n",
        )

    return JudgeSpec(
        name="context-relevance",
        family="context",
        summary="how relevant the context was to the question, and how well the answer used it",
        check="context-relevance",
        items="pieces",
        noun="context piece",
        plural="context pieces",
        defect="irrelevant",
        verdict=ContextPieceEvaluation,
        higher_is_better=True,
        description="How relevant the agent's context was to the question and how well the "
        "answer used it, from 0 to {scale}",
        always_explain=True,
        items_of=pieces_of(max_context_chars, "relevance", question),
        scoring=ScoringPolicy(score=score, record=_record, fill=at_position),
        attributes=pieces_attributes("pieces relevant to the question"),
        predicts=None,
        count_reason=_count_reason,
        prompts=JudgePrompts(
            verdict_system=ANALYZE_SYSTEM,
            reason_system=REASON_SYSTEM,
            one_call_system=ONE_CALL_SYSTEM,
            verdict=lambda shown: (
                f"{prompt_part(shown)}, as JSON only: "
                '{"evaluations": [{"context_index": ..., "relevance_level": "high" | "medium" | '
                '"low" | "none", "was_used": true | false, "reasoning": ...}], "missing_context": '
                "[...]}."
            ),
            reason=reason,
            one_call=lambda shown: (
                f"{prompt_part(shown)}, then explain, as "
                'JSON only: {"evaluations": [...], "missing_context": [...], "reason": "..."}.'
            ),
            verdicts_schema=ContextRelevanceAnalysis,
            one_call_schema=ContextRelevanceOneCallAnswer,
            verdicts_field="evaluations",
        ),
    )


def create_context_relevance_scorer(
    *,
    model: str | Judge,
    context: Sequence[str] | None = None,
    get_context: ContextFunction | None = None,
    scale: float = 1.0,
    unused_penalty: float = 0.1,
    missing_penalty: float = 0.15,
    max_missing_penalty: float = 0.5,
    judge_mode: JudgeMode = "three_step",
    id: str = "context-relevance",
    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
    max_context_chars: int = DEFAULT_MAX_CONTEXT_CHARS,
    judge_options: Mapping[str, Any] | None = None,
    redact: RedactSpec | None = None,
    calibration: CalibrationSpec | None = None,
) -> Scorer:
    """Score how relevant the agent's context was to the question, and how well it was used.

    The judge rates each context piece's relevance to the question (high, medium, low or
    none), says whether the answer used it, and lists information a good answer needed that
    no piece gave. Score = mean relevance weight (1, 0.7, 0.3, 0) − ``unused_penalty`` per
    highly relevant piece left unused − ``missing_penalty`` per missing item (at most
    ``max_missing_penalty``), at least 0, × ``scale`` (Mastra's formula). Higher is better.

    Args:
        unused_penalty: Taken off per highly relevant piece the answer did not use.
        missing_penalty: Taken off per item of missing information.
        max_missing_penalty: The most the missing information takes off in all.

    The other arguments are those of :func:`~livescore.scorers.judge_scorer`.

    Returns:
        A scorer whose ``analyze_step_result`` is ``{"evaluations": [...], "missing_context":
        [...]}`` (one evaluation per piece, in order), with ``flags["context_levels"]``
        (pieces per level), ``["context_used"]`` and ``["missing_context"]``. A run without
        context or without a question is skipped before any call (Mastra scores no context 1).

    Raises:
        ValueError: A penalty that is not a number from 0 to 1.

    Example:
        >>> from livescore.testing import ScriptedJudge
        >>> judge = ScriptedJudge([
        ...     {"evaluations": [
        ...         {"context_index": 0, "relevance_level": "High", "was_used": True,
        ...          "reasoning": "Gives the hours."},
        ...         {"context_index": 1, "relevance_level": "none", "was_used": False,
        ...          "reasoning": "About parking."}],
        ...      "missing_context": []},
        ...     "The score is 0.5 because one piece of two is relevant.",
        ... ])
        >>> scorer = create_context_relevance_scorer(
        ...     model=judge, context=["Open 9 to 5.", "Parking is free."])
        >>> result = scorer.run_sync({"input": "When are you open?", "output": "9 to 5."})
        >>> result.score, result.analyze_step_result["evaluations"][1]["relevance_level"]
        (0.5, 'none')
    """
    penalties = (
        check_fraction(unused_penalty, name="unused_penalty"),
        check_fraction(missing_penalty, name="missing_penalty"),
        check_fraction(max_missing_penalty, name="max_missing_penalty"),
    )
    get_context, max_context_chars = context_source(context, get_context, max_context_chars)
    spec = _spec(*penalties, max_context_chars)
    del unused_penalty, missing_penalty, max_missing_penalty, penalties
    return judge_scorer(**locals())  # the spec, and every other argument is judge_scorer's


# Its catalog facts hold for any penalties.
_build = judge_catalog_entry(
    _spec(0.1, 0.15, 0.5, DEFAULT_MAX_CONTEXT_CHARS), create_context_relevance_scorer
)
