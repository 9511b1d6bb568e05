"""The context precision scorer: are the context pieces useful for the reference answer the
first ones the agent got? (mean average precision of their order)"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel

from livescore._text import DEFAULT_MAX_TEXT_CHARS
from livescore.judges import Judge
from livescore.pii import RedactSpec
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
from livescore.scorers._judged import JudgeMode, fmt, ground_truth_text, optional_user_text
from livescore.scorers._prompting import block, explain_system
from livescore.scorers._verdicts import spelling_validator, tally
from livescore.scoring import CalibrationSpec, ContextFunction, NotScorable, Scorer, StepContext

__all__ = (
    "ContextPrecisionVerdict",
    "ContextPrecisionVerdicts",
    "create_context_precision_scorer",
    "mean_average_precision",
)

_SPELLINGS = {
    "yes": ("y", "true", "relevant", "useful", "needed"),
    "no": ("n", "false", "irrelevant", "not relevant", "not useful", "unneeded"),
}


def mean_average_precision(relevant: Sequence[bool]) -> float:
    """Mean average precision of one ranking: ``relevant[i]`` says if piece ``i`` is useful.

    Example:
        >>> mean_average_precision([True, False, True])  # (1/1 + 2/3) / 2
        0.8333333333333333
        >>> mean_average_precision([False, True]), mean_average_precision([False])
        (0.5, 0.0)
    """
    found = 0
    total = 0.0
    for position, is_relevant in enumerate(relevant, start=1):
        if is_relevant:
            found += 1
            total += found / position
    return total / found if found else 0.0


class ContextPrecisionVerdict(BaseModel):
    """One context piece's verdict: ``"yes"`` when it is useful for the reference answer.
    ``context_index`` is the piece's position (from 0) in the order the agent got them."""

    context_index: int
    verdict: Literal["yes", "no"]
    reason: str
    _spelling = spelling_validator("verdict", _SPELLINGS)


class ContextPrecisionVerdicts(BaseModel):
    """The verdict answer: ``{"verdicts": [{"context_index", "verdict", "reason"}, ...]}``."""

    verdicts: list[ContextPrecisionVerdict]


_TAGS = ("question", "reference", "context", "document", "verdicts", "verdict")

_RULES = """\
A context piece is useful ("yes") when it holds information the reference answer needs: \
a fact, figure, name or step the answer states or relies on. It is not useful ("no") when \
it only shares the topic, gives background the answer does not use, or is unrelated. \
Judge each piece on its own, by its content, whatever its position."""

_ON = "which pieces help and where they come in the order"

REASON_SYSTEM = explain_system("context-precision", _TAGS)
VERDICT_SYSTEM, ONE_CALL_SYSTEM = pieces_systems(
    "You judge which pieces of the context an AI agent received are useful for a reference "
    "answer to a question",
    _RULES,
    _TAGS,
    returned="Return exactly one verdict per context piece, in the order of the pieces. Each "
    'verdict has "context_index" (the piece\'s index), "verdict" ("yes" or "no", lower case) '
    'and "reason" (one short sentence).',
    example='{"verdicts": [{"context_index": 0, "verdict": "yes", "reason": "..."}]}',
    each='"verdicts": exactly one verdict per context piece, in the order of the pieces, each '
    'with "context_index" (the piece\'s index), "verdict" ("yes" or "no") and "reason" (one '
    "short sentence).",
    on=_ON,
)


def _score(analysis: Mapping[str, Any]) -> float:
    return mean_average_precision([v["verdict"] == "yes" for v in analysis["verdicts"]])


def _record(ctx: StepContext, analysis: Mapping[str, Any]) -> None:
    verdicts = analysis["verdicts"]
    useful = tally(verdicts)["yes"]
    record_pieces(ctx, len(verdicts), useful)
    ctx.flags["context_relevant"] = useful


def _count_reason(ctx: StepContext) -> str:
    verdicts = ctx.analyze_step_result["verdicts"]
    useful = [str(v["context_index"]) for v in verdicts if v["verdict"] == "yes"]
    what = f"none of the {len(verdicts)} context pieces is useful for the answer"
    if useful:
        what = (
            f"{len(useful)} of {len(verdicts)} context pieces are useful, at position"
            f"{'' if len(useful) == 1 else 's'} {', '.join(useful[:10])} (from 0)"
        )
    return f"The score is {fmt(ctx.score)} because {what}."


def _reason_prompt(shown: Shown) -> str:
    verdicts, score = shown.verdicts, shown.score_text
    return pieces_reason(
        f"A context-precision check found {tally(verdicts)['yes']} of {len(verdicts)} context "
        "pieces useful, in the order the agent received them. Its score, the mean average "
        f"precision of that order, is {score} on a scale from 0 (nothing useful) to "
        f"{shown.scale:g} (every useful piece ahead of every other one).",
        score,
        ((f'index="{v["context_index"]}" useful="{v["verdict"]}"', v["reason"]) for v in verdicts),
        _ON,
    )


def _spec(max_chars: int, max_context_chars: int) -> JudgeSpec:
    """The context precision scorer as data (the question and reference cut to ``max_chars``)."""

    def reference(ctx: StepContext) -> str:
        cached: str | None = ctx.state.get("reference")
        if cached is None:
            given = ground_truth_text(ctx.run, max_chars)
            cached = given if given is not None and given.strip() else ctx.output_text
            if not cached.strip():
                raise NotScorable(
                    "no reference answer: the run has no ground truth and its output is empty"
                )
            ctx.state["reference"] = cached
        return cached

    def prompt_part(shown: Shown) -> str:
        question = optional_user_text(shown.ctx.run, max_chars)
        asked = f"{block('question', question)}\n\n" if question else ""
        return (
            "Decide for each piece of the <context> block, in order, whether it is useful for "
            "the reference answer in the <reference> block"
            + (" to the question in the <question> block" if question else "")
            + f".\n\n{asked}{block('reference', reference(shown.ctx))}\n\n"
            + pieces_prompt(shown.ctx, max_context_chars, "verdict")
        )

    return JudgeSpec(
        name="context-precision",
        family="context",
        summary="mean average precision of the context order: useful pieces first",
        check="context-precision",
        items="pieces",
        noun="context piece",
        plural="context pieces",
        defect="not useful",
        verdict=ContextPrecisionVerdict,
        defect_words=frozenset({"no"}),
        higher_is_better=True,
        description="Mean average precision of the context order: useful pieces first scores "
        "{scale}, nothing useful 0",
        always_explain=True,
        items_of=pieces_of(max_context_chars, "context precision", reference),
        scoring=ScoringPolicy(score=_score, record=_record, fill=at_position),
        attributes=pieces_attributes("pieces useful for the reference answer"),
        predicts=None,
        count_reason=_count_reason,
        prompts=JudgePrompts(
            verdict_system=VERDICT_SYSTEM,
            reason_system=REASON_SYSTEM,
            one_call_system=ONE_CALL_SYSTEM,
            verdict=lambda shown: (
                f"{prompt_part(shown)}, as JSON only: "
                '{"verdicts": [{"context_index": ..., "verdict": "yes" | "no", "reason": ...}]}.'
            ),
            reason=_reason_prompt,
            one_call=lambda shown: (
                f"{prompt_part(shown)}, then explain, as "
                'JSON only: {"verdicts": [...], "reason": "..."}.'
            ),
            verdicts_schema=ContextPrecisionVerdicts,
        ),
    )


def create_context_precision_scorer(
    *,
    model: str | Judge,
    context: Sequence[str] | None = None,
    get_context: ContextFunction | None = None,
    scale: float = 1.0,
    judge_mode: JudgeMode = "three_step",
    id: str = "context-precision",
    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
    max_context_chars: int = DEFAULT_MAX_CONTEXT_CHARS,
    judge_options: Mapping[str, Any] | None = None,
    redact: RedactSpec | None = None,
    calibration: CalibrationSpec | None = None,
) -> Scorer:
    """Score whether the useful context came first: mean average precision of the order.

    The judge marks each context piece useful or not for the reference answer (the run's
    ground truth when it has one, else the agent's own answer, as Mastra does), and the
    score rewards useful pieces that come early in the order the agent received them: 1
    (× ``scale``) when every useful piece precedes every other one, lower as useful pieces
    sink, 0 when none is useful. Higher is better.

    Its arguments are those of :func:`~livescore.scorers.judge_scorer` (``context``: the
    pieces, in order).

    Returns:
        A scorer whose ``analyze_step_result["verdicts"]`` holds ``{"context_index",
        "verdict", "reason"}`` per piece, in order, with ``flags["context_relevant"]``. A run
        without context, or without a reference (no ground truth and an empty answer), is
        skipped before any call.

    Example:
        >>> from livescore.testing import ScriptedJudge
        >>> judge = ScriptedJudge([
        ...     {"verdicts": [
        ...         {"context_index": 0, "verdict": "no", "reason": "About diet."},
        ...         {"context_index": 1, "verdict": "yes", "reason": "States the benefit."}]},
        ...     "The score is 0.5 because the useful piece comes second.",
        ... ])
        >>> scorer = create_context_precision_scorer(
        ...     model=judge, context=["Eat vegetables.", "Exercise strengthens the heart."])
        >>> result = scorer.run_sync({"input": "Why exercise?",
        ...                           "output": "It strengthens the heart."})
        >>> result.score, result.label
        (0.5, 'moderate')
    """
    # The spec needs the context limit checked; every argument is judge_scorer's.
    get_context, max_context_chars = context_source(context, get_context, max_context_chars)
    return judge_scorer(_spec(max_text_chars, max_context_chars), **locals())


_build = judge_catalog_entry(
    _spec(DEFAULT_MAX_TEXT_CHARS, DEFAULT_MAX_CONTEXT_CHARS), create_context_precision_scorer
)
