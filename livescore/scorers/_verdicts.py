"""The shape most judge scorers share: items → one verdict per item → score → reason.

Context precision and context relevance (context pieces), criteria (checks), answer
similarity and the conversation scorers all judge a list of items one verdict each.
:func:`build_verdict_scorer` builds both forms of such a scorer from its parts, with the
hallucination scorer's rules:

- three-step mode: the items (a judge extraction, or code), then one verdict per item (a
  wrong count gets one corrective retry, then the step fails), then the reason;
- one-call mode: one structured answer holding the items (when the judge extracts them),
  the verdicts and, last, the reason; the same result fields;
- no items: no verdict call and no reason call; what the score is then (a number, or not
  scorable) is the scorer's rule;
- a verdict that leaves the item it judges blank gets it filled in from the item list.

The scorers whose parts fit a :class:`~livescore.scorers._judge_spec.JudgeSpec` are built
from it instead (toxicity, bias, hallucination, faithfulness, answer relevancy), with the
logprob mode.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar

from pydantic import BaseModel, field_validator

from livescore._text import DEFAULT_MAX_TEXT_CHARS
from livescore.judges import Judge
from livescore.pii import RedactSpec
from livescore.scorers._judged import JudgeMode, normalise_word
from livescore.scoring import (
    CalibrationSpec,
    ContextFunction,
    PromptStep,
    Scorer,
    ScorerLevel,
    StepContext,
    StepFunction,
    create_scorer,
)

__all__ = (
    "StatementVerdict",
    "VerdictScorerParts",
    "build_verdict_scorer",
    "items_of",
    "tally",
)


class StatementVerdict(BaseModel):
    """One item's verdict: the item (``statement``), the judge's ``verdict`` and a ``reason``.

    A scorer subclasses it with its own docstring (the judge sees it in the answer's schema),
    narrows ``verdict`` to its words (``Literal["yes", "no"]``) and sets ``spellings``: the
    judge's other ways of writing each word, read as that word (see
    :func:`~livescore.scorers._judged.normalise_word`); anything else is rejected and the
    judge asked again.

    Example:
        >>> from typing import Literal
        >>> class Verdict(StatementVerdict):
        ...     "A verdict."
        ...     spellings = {"yes": ("y", "true"), "no": ("n", "false")}
        ...     verdict: Literal["yes", "no"]
        >>> Verdict(statement="s", verdict=" True. ", reason="r").verdict
        'yes'
    """

    spellings: ClassVar[Mapping[str, Iterable[str]]] = {}

    statement: str
    verdict: str
    reason: str

    @field_validator("verdict", mode="before")
    @classmethod
    def _normalise(cls, value: object) -> object:
        return normalise_word(value, cls.spellings)


def tally(verdicts: Iterable[Mapping[str, Any]], field: str = "verdict") -> Counter[str]:
    """How many ``verdicts`` say each word (a missing word counts 0).

    Example:
        >>> counts = tally([{"verdict": "yes"}, {"verdict": "no"}, {"verdict": "yes"}])
        >>> counts["yes"], counts["unsure"]
        (2, 0)
    """
    return Counter(verdict[field] for verdict in verdicts)


FillVerdict = Callable[[dict[str, Any], str, int], dict[str, Any]]


def _fill_statement(verdict: dict[str, Any], item: str, index: int) -> dict[str, Any]:
    statement = verdict.get("statement")
    if isinstance(statement, str) and not statement.strip():
        verdict["statement"] = item
    return verdict


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class VerdictScorerParts:
    """What makes one verdict scorer (see the module docstring).

    Attributes:
        items_key: The preprocess result's key for the items (``"claims"``).
        noun: One item in words (``"claim"``), for counts in messages.
        nouns: Several items (``"claims"``).
        extract: The three-step preprocess: a :class:`PromptStep` the judge answers, or a
            code step; either returns ``{items_key: [...]}``.
        extract_in_one_call: Whether the one-call answer holds the items too (a judge
            extraction); otherwise the code step runs first and the one call judges them.
        list_field: The verdict answer's list (``"verdicts"``, ``"evaluations"``).
        verdict_schema: The verdict answer (``{list_field: [...]}``, maybe more fields).
        verdict_system: The verdict step's system prompt.
        verdict_prompt: ``(ctx, items) -> prompt``.
        fill: ``(verdict dict, item, position) -> verdict dict``: ties a verdict to its
            item (default: a blank ``statement`` becomes the item).
        score: ``(ctx, analysis) -> score`` when there are items (``analysis`` is the
            analyze step's result).
        no_items: ``ctx -> score`` when there are none (may raise ``NotScorable``).
        reason_system: The reason step's system prompt.
        reason_prompt: ``ctx -> prompt`` (the score and the analysis are set).
        summary: ``ctx -> reason`` built from the counts, when the judge gives none.
        no_items_reason: ``ctx -> reason`` when there are no items.
        one_call_schema: The one-call answer: the items (when extracted by the judge),
            ``list_field`` and ``reason``, in that order.
        one_call_system: Its system prompt.
        one_call_prompt: ``ctx -> prompt`` (after the code extraction, if any).
        preprocess_fields: Other fields of the one-call answer that belong to the
            preprocess result beside the items (answer similarity's ``output_units``).
        record: ``(ctx, analysis) -> None``: flags and span attributes of a score (also
            with no items: then the analysis has an empty list).
    """

    items_key: str
    noun: str
    nouns: str
    extract: PromptStep[Any] | StepFunction
    extract_in_one_call: bool
    list_field: str = "verdicts"
    verdict_schema: type[BaseModel]
    verdict_system: str
    verdict_prompt: Callable[[StepContext, list[str]], str]
    fill: FillVerdict = _fill_statement
    score: Callable[[StepContext, dict[str, Any]], float]
    no_items: Callable[[StepContext], float]
    reason_system: str
    reason_prompt: Callable[[StepContext], str]
    summary: Callable[[StepContext], str]
    no_items_reason: Callable[[StepContext], str]
    one_call_schema: type[BaseModel]
    one_call_system: str
    one_call_prompt: Callable[[StepContext], str]
    preprocess_fields: tuple[str, ...] = ()
    record: Callable[[StepContext, dict[str, Any]], None] = lambda ctx, analysis: None


def items_of(ctx: StepContext, key: str) -> list[str]:
    """The items the preprocess step found (``ctx.preprocess_step_result[key]``)."""
    items: list[str] = ctx.preprocess_step_result[key]
    return items


def build_verdict_scorer(
    parts: VerdictScorerParts,
    *,
    id: str,
    description: str,
    judge: Judge,
    judge_mode: JudgeMode,
    label: Callable[[float], str],
    context: Sequence[str] | None = None,
    get_context: ContextFunction | None = None,
    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
    level: ScorerLevel = "run",
    redact: RedactSpec | None = None,
    calibration: CalibrationSpec | None = None,
) -> Scorer:
    """A scorer from ``parts``, in ``judge_mode``; the other arguments go to
    :func:`~livescore.scoring.create_scorer` (``level="conversation"`` for a conversation
    scorer)."""
    key, field = parts.items_key, parts.list_field

    def items(ctx: StepContext) -> list[str]:
        return items_of(ctx, key)

    def analysis_of(answer: BaseModel, item_list: list[str]) -> dict[str, Any]:
        dumped = answer.model_dump()
        verdicts = [
            parts.fill(verdict, item, index)
            for index, (verdict, item) in enumerate(zip(dumped[field], item_list, strict=True))
        ]
        skipped = {field, key, "reason", *parts.preprocess_fields}
        extras = {k: v for k, v in dumped.items() if k not in skipped}
        return {field: verdicts, **extras}

    def check_count(answer: BaseModel, ctx: StepContext) -> None:
        expected, got = len(items(ctx)), len(getattr(answer, field))
        if got != expected:
            raise ValueError(
                f"expected exactly {expected} {field}, one per {parts.noun} in the given "
                f"order, but got {got}"
            )

    def check_one_call_count(answer: BaseModel, ctx: StepContext) -> None:
        expected = len(getattr(answer, key)) if parts.extract_in_one_call else len(items(ctx))
        got = len(getattr(answer, field))
        if got != expected:
            raise ValueError(
                f"expected exactly one entry in {field!r} per {parts.noun}: {expected} "
                f"{parts.nouns} but {got} {field}"
            )

    def no_analysis(ctx: StepContext) -> dict[str, Any]:
        return {field: []}

    def no_verdict_call(ctx: StepContext) -> bool:
        return not items(ctx)

    def generate_score(ctx: StepContext) -> float:
        analysis: dict[str, Any] = ctx.analyze_step_result or no_analysis(ctx)
        value = parts.score(ctx, analysis) if items(ctx) else parts.no_items(ctx)
        parts.record(ctx, analysis)
        return value

    def reason_without_judge(ctx: StepContext) -> str:
        return parts.summary(ctx) if items(ctx) else parts.no_items_reason(ctx)

    preprocess: PromptStep[Any] | StepFunction
    analyze: PromptStep[Any] | StepFunction
    generate_reason: PromptStep[Any] | StepFunction
    if judge_mode == "logprob":
        raise ValueError(f"scorer {id!r} has no logprob mode")
    if judge_mode == "three_step":
        preprocess = parts.extract
        analyze = PromptStep(
            description=f"Give one verdict per {parts.noun}",
            output_schema=parts.verdict_schema,
            system=parts.verdict_system,
            create_prompt=lambda ctx: parts.verdict_prompt(ctx, items(ctx)),
            validate=check_count,
            parse=lambda answer, ctx: analysis_of(answer, items(ctx)),
            skip_if=no_verdict_call,
            skip_result=no_analysis,
        )
        generate_reason = PromptStep(
            description="Explain the score",
            output_schema=None,
            system=parts.reason_system,
            create_prompt=parts.reason_prompt,
            parse=lambda text, ctx: str(text).strip() or parts.summary(ctx),
            skip_if=no_verdict_call,
            skip_result=reason_without_judge,
        )
    else:

        def keep_answer(answer: BaseModel, ctx: StepContext) -> dict[str, Any]:
            # One answer feeds three steps: the analysis and the reason wait in ctx.state.
            found = list(getattr(answer, key)) if parts.extract_in_one_call else items(ctx)
            ctx.state["analysis"] = analysis_of(answer, found)
            ctx.state["reason"] = str(getattr(answer, "reason", "")).strip()
            if not parts.extract_in_one_call:
                return {key: found}
            extra = {name: getattr(answer, name) for name in parts.preprocess_fields}
            return {**extra, key: found}

        one_call = PromptStep(
            description=f"List the {parts.nouns}, judge each one and explain, in one answer",
            output_schema=parts.one_call_schema,
            system=parts.one_call_system,
            create_prompt=parts.one_call_prompt,
            validate=check_one_call_count,
        )

        def analysis_from_state(ctx: StepContext) -> dict[str, Any]:
            if no_verdict_call(ctx):
                return no_analysis(ctx)
            analysis: dict[str, Any] = ctx.state["analysis"]
            return analysis

        def one_call_reason(ctx: StepContext) -> str:
            if not items(ctx):
                return parts.no_items_reason(ctx)
            judge_reason = ctx.state.get("reason", "")
            return parts.summary(ctx) + (f" {judge_reason}" if judge_reason else "")

        if parts.extract_in_one_call:
            if not isinstance(parts.extract, PromptStep):
                raise TypeError("extract_in_one_call needs a PromptStep extraction")
            # The extraction's skip rules (empty output, no context) hold in one call too.
            preprocess = dataclasses.replace(
                one_call,
                parse=keep_answer,
                skip_if=parts.extract.skip_if,
                skip_result=parts.extract.skip_result,
            )
            analyze = analysis_from_state
        else:
            preprocess = parts.extract

            def stash(answer: BaseModel, ctx: StepContext) -> dict[str, Any]:
                keep_answer(answer, ctx)
                analysis: dict[str, Any] = ctx.state["analysis"]
                return analysis

            analyze = dataclasses.replace(
                one_call, parse=stash, skip_if=no_verdict_call, skip_result=no_analysis
            )
        generate_reason = one_call_reason

    scorer = create_scorer(
        id=id,
        description=description,
        model=judge,
        preprocess=preprocess,
        analyze=analyze,
        generate_score=generate_score,
        generate_reason=generate_reason,
        context=context,
        get_context=get_context,
        label=label,
        max_text_chars=max_text_chars,
        sync_steps="inline",  # its code steps are quick; get_context still runs in a thread
        level=level,
        redact=redact,
        calibration=calibration,
    )
    if judge_mode == "three_step":
        # What a judge budget's fallback="one_call" switches to when the budget runs low.
        scorer.offer_judge_mode(
            "one_call",
            lambda: build_verdict_scorer(
                parts,
                id=id,
                description=description,
                judge=judge,
                judge_mode="one_call",
                label=label,
                context=context,
                get_context=get_context,
                max_text_chars=max_text_chars,
            ),
        )
    return scorer
