"""A judge scorer as data: :class:`JudgeSpec` and the policies a spec may carry, the prompts,
answer schemas, flags and reasons derived from it, and :func:`judge_scorer`, which runs any
spec in its judge modes (see docs/scorers/custom.md)."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypeAlias, get_args

from pydantic import BaseModel, create_model

from livescore import _attributes as A
from livescore._catalog import ScorerOptions, catalog_entry
from livescore._text import DEFAULT_MAX_TEXT_CHARS
from livescore.judges import Classification, Judge
from livescore.pii import RedactSpec
from livescore.scorers._claims import Claims
from livescore.scorers._context import (
    CUT_ATTRIBUTES,
    DEFAULT_MAX_CONTEXT_CHARS,
    context_for_judge,
    context_items,
    context_source,
    plain_context_for_judge,
)
from livescore.scorers._conversation import item_turn, record_turns, turn_attributes
from livescore.scorers._judged import (
    JUDGE_MODES,
    JUDGED_QUALITY_LABELS,
    STRUCTURED_MODES,
    JudgeMode,
    check_scale,
    defect_label,
    fmt,
    judge_mode_of,
    optional_user_text,
    quality_label,
    reason_step,
    resolve_model,
    round2,
    share_phrase,
)
from livescore.scorers._prompting import (
    RenderedContext,
    block,
    data_rule,
    explain_system,
    item_blocks,
    one_per_item,
    verdict_blocks,
)
from livescore.scorers._verdicts import StatementVerdict, tally
from livescore.scoring import (
    CalibrationSpec,
    ContextFunction,
    NotScorable,
    PromptStep,
    Scorer,
    StepContext,
    StepFunction,
    create_scorer,
)

EmptyContextPolicy: TypeAlias = Literal["skip", "all_unsupported"]
"""What a grounded scorer does with no context (see :func:`judge_scorer`)."""

__all__ = (
    "ConversationPolicy",
    "EmptyContextPolicy",
    "JudgePrompts",
    "JudgeSpec",
    "LogprobSpec",
    "ScoringPolicy",
    "Shown",
    "StatementVerdict",
    "judge_catalog_entry",
    "judge_schemas",
    "judge_scorer",
)

QUESTION_CHARS = 2_000
"""The most characters of the question a judge is shown (it is context, not what is judged)."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class JudgeSpec:
    """What makes one verdict scorer; its prompts, answer schemas, score, label, flags, span
    attributes, reasons and catalog entry are derived from it.

    Attributes:
        name: The scorer's id, catalog name and ``--scorer`` name (``"toxicity"``).
        family: Its catalog family (``"safety"``).
        summary: What it measures, for the catalog and ``--help``.
        check: The check in words: "a ``toxicity`` check found…".
        items: The items judged, plural (``"statements"``): the result's key, the flags
            ``<items>_total`` and ``<items>_<defect>``, the ``livescore.<items>.*`` attributes.
        noun: One item (``"statement"``).
        defect: What a defect item is (``"toxic"``).
        verdict: The verdict answer's item (a :class:`StatementVerdict` subclass): its words,
            their ``spellings`` and the docstring the judge reads.
        defect_words: The verdict words that mark a defect.
        rules: The one paragraph that tells the judge what a defect is.
        split: ``output -> items`` in code; ``None``: the judge lists them (``item_rules``).
        item_rules: What counts as an item, for a judge that lists them.
        shows_question: The judge sees the run's question beside the items (as context only).
        advice: What a defect's verdict reason does beyond saying why.
        explain: What the judge's reason quotes.
        none_found: The best score in words (``"nothing toxic"``).
        empty_answer: Why an empty answer scores 0.
        no_items: Why an answer without items scores 0, when the judge lists them.
        counts: The flags ``<items>_<key>``, each counting one verdict word (default: the
            defect); the first is also the attribute ``livescore.<items>.<key>``.
        counted: What the first count counts, for the attribute list.
        higher_is_better: The score counts the items that are not defects (labelled with
            ``labels``, worst first); otherwise the defects (labelled ``none`` to ``severe``).
        labels: The labels of a higher-is-better score.
        predicts: The dataset label its score predicts (default: ``defect``; ``None``: none).
        description: The scorer's description, ``{scale}`` filled in.
        grounded: The items are judged against a context (the factory's context arguments).
        no_context: Why a run without context is skipped (before any call).
        always_explain: The judge explains every score, not only one with a defect.
        strip_statements: A verdict's ``statement`` is kept stripped.
        extract: ``extract(skip_if=...) -> PromptStep``: the judge's item list as a step of
            its own (the claims request the grounding scorers share).
        prompts: The scorer's own prompts, where the derived ones do not fit.
        logprob: The logprob mode, where the scorer has one.
        no_items_reason: ``ctx -> reason`` with no items; ``count_reason``: from the counts.
        weights: What a verdict word counts in a higher-is-better score, where not 1 (0 for a
            defect word): a partly relevant statement's ``{"unsure": 0.3}``.
        needs_items: Why a run without items is not scorable.
        conversation: What makes it a conversation scorer.
        items_of: ``ctx -> items`` made in code from the run, in place of ``split``; it may
            raise ``NotScorable`` before any call.
        plural: The items in words where not ``items`` (``"context pieces"``).
        scoring: A score that is not a share of the items.
        nothing_to_judge: ``ctx -> bool``, ``True`` when there is nothing to judge, or
            ``NotScorable``: in place of the checks before any call (empty output, context).
        attributes: Span attributes its own code sets, or derived ones said otherwise: name
            → what it holds, for the catalog.
    """

    name: str
    family: str
    summary: str
    check: str
    items: str
    noun: str
    defect: str
    verdict: type[BaseModel]
    defect_words: frozenset[str] = frozenset({"yes"})
    rules: str = ""
    split: Callable[[str], list[str]] | None = None
    item_rules: str = ""
    shows_question: bool = False
    advice: str = ""
    explain: str = ""
    none_found: str = ""
    empty_answer: str = ""
    no_items: str = ""
    counts: Mapping[str, str] | None = None
    counted: str = ""
    higher_is_better: bool = False
    labels: tuple[str, ...] = ()
    predicts: str | None = ""
    description: str = ""
    grounded: bool = False
    no_context: str = ""
    always_explain: bool = False
    strip_statements: bool = False
    extract: Callable[..., PromptStep[Any]] | None = None
    prompts: JudgePrompts | None = None
    logprob: LogprobSpec | None = None
    no_items_reason: Callable[[StepContext], str] | None = None
    count_reason: Callable[[StepContext], str] | None = None
    weights: Mapping[str, float] | None = None
    needs_items: str = ""
    conversation: ConversationPolicy | None = None
    nothing_to_judge: Callable[[StepContext], bool] | None = None
    items_of: Callable[[StepContext], list[str]] | None = None
    plural: str = ""
    scoring: ScoringPolicy | None = None
    attributes: Mapping[str, str] = dataclasses.field(default_factory=dict)

    @property
    def listed(self) -> bool:
        """Whether the judge lists the items (no code makes them)."""
        return self.split is None and self.items_of is None

    @property
    def words(self) -> tuple[str, ...]:
        """The verdict words, as the judge writes them."""
        return tuple(get_args(self.verdict.model_fields["verdict"].annotation))

    @property
    def counted_words(self) -> Mapping[str, str]:
        """The flags' keys and the verdict word each counts."""
        return self.counts or {self.defect: min(self.defect_words)}

    @property
    def span_attributes(self) -> dict[str, str]:
        """The ``livescore.*`` attributes its scores carry, with what each records."""
        found: dict[str, str] = {}
        if self.conversation is not None:
            at_fault = self.conversation.at_fault or f"turns of {self.defect} {self.items}"
            found = turn_attributes(at_fault, f"{self.items} judged")
        elif self.scoring is None or self.scoring.record is None:
            first = next(iter(self.counted_words))
            found = {
                f"livescore.{self.items}.total": f"{self.items} judged",
                f"livescore.{self.items}.{first}": self.counted or f"{self.defect} {self.items}",
            }
        if self.grounded:
            found |= CUT_ATTRIBUTES
        if self.logprob is not None:
            found |= _LOGPROB_ATTRIBUTES
            if not self.grounded:
                found[A.LIVESCORE_VERDICT_PROBABILITY] = (
                    f"logprob mode: the judge's probability that the output is {self.defect}"
                )
        return found | dict(self.attributes)


@dataclasses.dataclass(frozen=True, slots=True)
class Shown:
    """What a prompt shows the judge: the answer, the items (verdict prompt), the user's
    message cut to the scorer's ``max_text_chars`` (``""`` without one), the context block
    (for a grounded spec), the verdicts and the score as the reason starts with it (reason
    prompt), the scale, and the step's context for a prompt that shows more (a
    conversation's turns)."""

    output: str
    items: Sequence[str]
    context: RenderedContext
    verdicts: Sequence[Mapping[str, Any]]
    score_text: str
    scale: float
    ctx: StepContext
    max_text_chars: int

    @property
    def question(self) -> str:
        # Read only by the prompts that show it: most never do.
        return optional_user_text(self.ctx.run, self.max_text_chars) or ""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class JudgePrompts:
    """A scorer's own prompts, in place of the derived ones: the system prompts and the
    ``shown -> prompt`` functions of the verdict, reason and one-call steps.

    Attributes:
        one_call_schema, verdicts_schema: The answers' schemas, where not the derived ones.
        verdicts_field: The verdict answer's list, where it is not ``"verdicts"``.
        preprocess_fields: The one-call answer's fields that belong to the preprocess
            result beside the items (answer similarity's ``output_units``).
    """

    verdict_system: str
    reason_system: str
    one_call_system: str
    verdict: Callable[[Shown], str]
    reason: Callable[[Shown], str]
    one_call: Callable[[Shown], str]
    one_call_schema: type[BaseModel] | None = None
    verdicts_schema: type[BaseModel] | None = None
    verdicts_field: str = "verdicts"
    preprocess_fields: tuple[str, ...] = ()


def _named_turn(verdict: Mapping[str, Any], item: str) -> int | None:
    return item_turn(str(verdict["statement"]))


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ConversationPolicy:
    """A conversation scorer (``level="conversation"``): the turns of its defect items are
    recorded (``flags["turns_at_fault"]``, ``flags["items_judged"]``, the
    ``livescore.conversation.*`` attributes) in place of the ``livescore.<items>.*`` ones.

    Attributes:
        at_fault: What its turns at fault are, for the catalog (default: derived).
        turn: ``(verdict, item) -> turn`` of a defect (default: the turn its item names).
        counts: Whether the flags ``<items>_total`` and the spec's counts are set too.
    """

    at_fault: str = ""
    turn: Callable[[Mapping[str, Any], str], int | None] = _named_turn
    counts: bool = False


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ScoringPolicy:
    """A score that is not the share of defect items (context precision's mean average
    precision, context relevance's penalties); each field replaces a default where set.

    Attributes:
        score: ``analysis -> fraction`` (the analyze step's result), times the scale.
        record: ``(ctx, analysis) -> None``: the flags and span attributes.
        fill: ``(verdict, item, position) -> None``: ties a verdict to its item, in place
            of filling a blank ``statement`` (a context piece's position).
        no_items: ``ctx -> score`` with no items (it may raise ``NotScorable``).
    """

    score: Callable[[Mapping[str, Any]], float] | None = None
    record: Callable[[StepContext, Mapping[str, Any]], None] | None = None
    fill: Callable[[dict[str, Any], str, int], None] | None = None
    no_items: Callable[[StepContext], float] | None = None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class LogprobSpec:
    """The logprob mode: one word on the whole output, its probability read from the
    judge's token logprobs; the score is that probability (of the defect word, or of the
    other for a higher-is-better score) × scale.

    Attributes:
        prompt: ``(output, context as plain text, question or None) -> prompt``.
        choices: ``(good word, defect word)``, words whose first tokens differ.
        verdicts: The scorer's verdict word for each choice.
        reason: ``(ctx, probability of the defect word) -> reason``.
    """

    system: str
    prompt: Callable[[str, str, str | None], str]
    choices: tuple[str, str]
    verdicts: Mapping[str, str]
    reason: Callable[[StepContext, float], str]


_LOGPROB_ATTRIBUTES = {
    "livescore.verdict.probability": "logprob mode: the judge's probability that the "
    "output makes a claim the context does not support",
    "livescore.verdict.from_logprobs": "logprob mode: read from token logprobs (false: "
    "the judge gave none, the probability is a structured answer's 0 or 1)",
}


# -- what the judge is asked ------------------------------------------------------------------


def _answer(name: str, doc: str, **fields: Any) -> type[BaseModel]:
    model: type[BaseModel] = create_model(name, __doc__=doc, **fields)
    return model


def judge_schemas(
    spec: JudgeSpec,
) -> tuple[type[BaseModel], type[BaseModel], type[BaseModel] | None]:
    """The answer schemas the judge is sent for ``spec``: the verdicts, the one-call answer,
    and the item list where the judge lists the items; the spec's own where it has them."""
    listing, verdicts, one_call = _schemas(spec.verdict, spec.items, spec.noun, listed=spec.listed)
    if (own := spec.prompts) is not None:
        verdicts, one_call = own.verdicts_schema or verdicts, own.one_call_schema or one_call
    return verdicts, one_call, listing


@functools.cache
def _schemas(
    verdict: type[BaseModel], items: str, noun: str, *, listed: bool
) -> tuple[type[BaseModel] | None, type[BaseModel], type[BaseModel]]:
    """The answers the judge gives: the item list (when it lists them), the verdicts, and
    the one-call answer; named and described as the judge reads them (made once)."""
    prefix = verdict.__name__.removesuffix("Verdict")
    verdict_list: Any = list.__class_getitem__(verdict)
    verdicts_schema = _answer(
        f"{prefix}Verdicts",
        'The verdict answer: ``{"verdicts": [{"statement", "verdict", "reason"}, ...]}``.',
        verdicts=(verdict_list, ...),
    )
    listing = {items: (Claims, ...)} if listed else {}
    one_call_schema = _answer(
        f"{prefix}OneCallAnswer",
        f"The one-call answer: {f'the {items}, ' if listed else ''}one verdict per {noun}, "
        "and the reason.",
        **listing,
        verdicts=(verdict_list, ...),
        reason=(str, ...),
    )
    if not listed:
        return None, verdicts_schema, one_call_schema
    extract_schema = _answer(
        f"Extracted{items.title()}",
        f'The {noun}-extraction answer: ``{{"{items}": [...]}}`` (blanks dropped).',
        **listing,
    )
    return extract_schema, verdicts_schema, one_call_schema


def _derived_prompts(spec: JudgeSpec) -> JudgePrompts:
    """The prompts made from the spec's words, for a spec without prompts of its own."""
    listed, items, noun, defect = spec.listed, spec.items, spec.noun, spec.defect
    tags = ("output" if listed else "question", items, noun, "verdicts", "verdict")
    rule = data_rule(tags)
    copied = "(copied)" if noun == "statement" else f"(the {noun}, copied)"
    good = next(word for word in spec.words if word not in spec.defect_words)
    yes_no = f'"verdict" ("{min(spec.defect_words)}" when {defect}, "{good}" otherwise'
    verdict_json = '{"statement": "...", "verdict": "no", "reason": "..."}'
    subject = f"{items} stated in" if listed else f"the {items} of"
    subject = f"{subject} an AI system's answer"
    each = f'each with "statement" {copied}, {yes_no}) and "reason" (one short sentence)'
    reason_part = (
        f"two or three sentences for the developer that quote what is {defect}, or say "
        "that nothing is. Do not give a numeric score."
    )
    if not listed:
        one_call_system = (
            f"You review {subject} for {spec.check}, and give your verdicts and an "
            f"explanation in one JSON answer.\n\n{spec.rules}\n\n"
            f'"verdicts": exactly one verdict per {noun}, in the order given, {each}. '
            f'"reason", last: {reason_part}\n\n{rule}\n\n'
            f'Answer with JSON only: {{"verdicts": [{verdict_json}], "reason": "..."}}'
        )
    else:
        one_call_system = (
            f"You review an AI system's answer for {spec.check} in three moves, and give all "
            "three in one JSON answer.\n\n"
            f'1. "{items}": the {items} the answer states. {spec.item_rules}\n'
            f'2. "verdicts": one verdict per {noun}, in the same order, {each}.\n'
            f'3. "reason": {reason_part}\n\n{spec.rules}\n\n{rule}\n\n'
            f'Answer with JSON only: {{"{items}": ["..."], "verdicts": [{verdict_json}], '
            '"reason": "..."}'
        )
    return JudgePrompts(
        verdict_system=(
            f"You review {subject} for {spec.check}.\n\n{spec.rules}\n\n{rule}\n\n"
            f"Return exactly one verdict per {noun}, in the order given. Each verdict has "
            f'"statement" {copied}, {yes_no}, lower case) and "reason" (one short '
            f"sentence; for a {defect} {noun}, {spec.advice}).\n\n"
            f'Answer with JSON only: {{"verdicts": [{verdict_json}]}}'
        ),
        reason_system=explain_system(spec.check, tags, also=f" Quote the {defect} words."),
        one_call_system=one_call_system,
        verdict=lambda shown: _verdict_prompt(spec, shown.ctx, shown.items),
        reason=lambda shown: _reason_prompt(spec, shown.ctx, shown.scale),
        one_call=lambda shown: _one_call_prompt(spec, shown.ctx),
    )


def _items_part(spec: JudgeSpec, ctx: StepContext, items: Sequence[str]) -> str:
    noun, nouns = spec.noun, spec.items
    listed = item_blocks(nouns, noun, items)
    if not spec.shows_question:
        return (
            f"Decide for each {noun} in the <{nouns}> block whether it is {spec.defect}.\n\n"
            f"{listed}\n\n{one_per_item(len(items), noun, nouns)}"
        )
    question = optional_user_text(ctx.run, QUESTION_CHARS)
    shown = f"{block('question', question)}\n\n" if question else ""
    return (
        f"Decide for each {noun} in the <{nouns}> block, taken from an AI system's answer to "
        "the question in the <question> block (when there is one), whether it is "
        f"{spec.defect}.\n\n{shown}{listed}\n\n"
        f"{one_per_item(len(items), noun, nouns, verb='give')}"
    )


def _verdict_prompt(spec: JudgeSpec, ctx: StepContext, items: Sequence[str]) -> str:
    words = " | ".join(f'"{word}"' for word in spec.words)
    return (
        f"{_items_part(spec, ctx, items)}, as JSON only: "
        f'{{"verdicts": [{{"statement": ..., "verdict": {words}, "reason": ...}}]}}.'
    )


def _reason_prompt(spec: JudgeSpec, ctx: StepContext, scale: float) -> str:
    verdicts = ctx.analyze_step_result["verdicts"]
    defects = [v for v in verdicts if v["verdict"] in spec.defect_words]
    listed = verdict_blocks(defects, spec.noun, word=None)
    score = fmt(ctx.score)
    where = "in" if spec.listed else "of"
    return (
        f"A {spec.check} check found {len(defects)} of {len(verdicts)} {spec.items} {where} an "
        f"AI answer {spec.defect}. Its score is {score} on a scale from 0 ({spec.none_found}) "
        f"to {scale:g} (every {spec.noun} {spec.defect}). The {spec.defect} {spec.items}:\n\n"
        f"<verdicts>\n{listed}\n</verdicts>\n\n"
        f'Explain the score. Start with "The score is {score} because" and {spec.explain}.'
    )


def _one_call_prompt(spec: JudgeSpec, ctx: StepContext) -> str:
    if not spec.listed:
        items = ctx.preprocess_step_result[spec.items]
        return (
            f"{_items_part(spec, ctx, items)}, then explain, as JSON only: "
            '{"verdicts": [...], "reason": "..."}.'
        )
    return (
        f"Review the text in the <output> block for {spec.check}: list its {spec.items}, give "
        f"one verdict per {spec.noun}, and explain.\n\n{block('output', ctx.output_text)}\n\n"
        f'Answer with JSON only: {{"{spec.items}": [...], "verdicts": [...], "reason": "..."}}.'
    )


def _listing(spec: JudgeSpec, skip_if: Callable[[StepContext], bool]) -> PromptStep[Any]:
    """The derived preprocess step of a judge that lists the items."""
    items, rule = spec.items, data_rule(("output", spec.items, spec.noun, "verdicts", "verdict"))
    return PromptStep(
        description=f"Extract the {items} the answer states",
        output_schema=judge_schemas(spec)[2],
        system=(
            f"You list the {items} a text states, for a {spec.check} review.\n\n"
            f"{spec.item_rules}\n\n{rule}\n\n"
            f'Answer with JSON only: {{"{items}": ["...", "..."]}}'
        ),
        create_prompt=lambda ctx: (
            f"List the {items} the text in the <output> block states.\n\n"
            f"{block('output', ctx.output_text)}\n\n"
            f'Answer with JSON only: {{"{items}": [...]}}.'
        ),
        skip_if=skip_if,
        skip_result=lambda ctx: {items: []},
    )


# -- the scorer -------------------------------------------------------------------------------


def judge_scorer(
    spec: JudgeSpec,
    *,
    model: str | Judge,
    scale: float = 1.0,
    judge_mode: JudgeMode = "three_step",
    id: str | None = None,
    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
    judge_options: Mapping[str, Any] | None = None,
    redact: RedactSpec | None = None,
    calibration: CalibrationSpec | None = None,
    context: Sequence[str] | None = None,
    get_context: ContextFunction | None = None,
    max_context_chars: int = DEFAULT_MAX_CONTEXT_CHARS,
    on_empty_context: EmptyContextPolicy = "skip",
) -> Scorer:
    """The scorer ``spec`` describes: the share of the answer's items that are defects (or,
    for a higher-is-better spec, that are not), from 0 to ``scale`` (half-up to 2 decimals).

    Every prebuilt judge scorer takes these arguments; its docstring describes only the rest.

    Args:
        spec: The scorer as data (:class:`JudgeSpec`).
        model: The judge: ``"openai/<model>"`` (an OpenAI-compatible API, configured by
            ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL``) or a :class:`~livescore.judges.Judge`.
        scale: The best score for a higher-is-better scorer, else the worst (positive).
        judge_mode: ``"three_step"`` (the default: the judge's verdicts, then a reason, each
            its own call), ``"one_call"`` (one structured answer with both: cheaper, a little
            less careful, the same result fields) or, where the scorer offers it,
            ``"logprob"`` (one one-token call: the score is the judge's probability of the
            defect word; ``flags["verdict_probability"]``, ``flags["verdict_from_logprobs"]``).
        id: The scorer id on results, spans and metrics (by default ``spec.name``).
        max_text_chars: Question, answer and reference text beyond this is cut before
            judging; the result then has ``flags["output_truncated"]`` and the span
            ``livescore.output_truncated``.
        judge_options: :func:`~livescore.judges.resolve_judge`'s keyword arguments for a
            string ``model`` (timeout, client, base URL…).
        redact: Keeps personal data from the judge (see ``Scorer.with_redaction``).
        calibration: Labels fitted on yours (see ``Scorer.with_calibration``).
        context: For a scorer that judges against a context: static ground truth, one
            string per fact or document.
        get_context: ``get_context(run, step)``, sync or async, returning the run's ground
            truth. It overrides ``context`` and is called once per score (a synchronous one
            in a worker thread, so it may block); if it raises, the score fails in step
            ``"get_context"``. With neither it is :func:`livescore.get_run_context`: the
            context given with the run (a dataset item's), else the run's successful tool
            calls and retrieved documents.
        max_context_chars: The most characters the context takes in a judge request, its
            markup included; past it the context is cut (``flags["context_truncated"]``,
            ``livescore.context.truncated``; ``livescore.context.chars``: its full length).
        on_empty_context: With no context: ``"skip"`` marks the run not scorable;
            ``"all_unsupported"`` still judges the answer and counts every item a defect.

    Returns:
        A scorer whose results carry the items (``preprocess_step_result``), one verdict per
        item (``analyze_step_result["verdicts"]``), the score, a label, a reason, and the
        flags and span attributes the spec names (:attr:`JudgeSpec.span_attributes`). An
        empty answer scores without a judge call; a run the scorer cannot read (no answer
        text, no context where one is needed) is skipped as not scorable before any call.

    Raises:
        ValueError: A bad ``scale``, ``judge_mode``, ``on_empty_context`` or
            ``max_context_chars``.
        TypeError: ``context`` is not a list of strings or ``get_context`` not callable.
        livescore.judges.JudgeConfigError: No usable judge model.
    """
    scale = check_scale(scale)
    modes = JUDGE_MODES if spec.logprob is not None else STRUCTURED_MODES
    mode = judge_mode_of(judge_mode, scorer=spec.name, modes=modes)
    if spec.grounded:
        if on_empty_context not in ("skip", "all_unsupported"):
            raise ValueError(
                f"on_empty_context must be 'skip' or 'all_unsupported', not {on_empty_context!r}"
            )
        get_context, max_context_chars = context_source(context, get_context, max_context_chars)
    judge = resolve_model(model, judge_options, scorer=spec.name)
    judging = _Judging(spec, scale, max_text_chars, max_context_chars, on_empty_context)
    described = f"Share of the answer's {spec.items} that are {spec.defect}, from 0 to {{scale}}"

    def build(
        mode: JudgeMode, redact: RedactSpec | None, calibration: CalibrationSpec | None
    ) -> Scorer:
        steps_of = {"three_step": judging.three_step, "one_call": judging.one_call}
        steps_of["logprob"] = judging.logprob
        preprocess, analyze, generate_reason = steps_of[mode]()
        return create_scorer(
            id=spec.name if id is None else id,
            description=(spec.description or described).format(scale=f"{scale:g}"),
            model=judge,
            preprocess=preprocess,
            analyze=analyze,
            generate_score=judging.score,
            generate_reason=generate_reason,
            context=context,
            get_context=get_context,
            label=judging.label,
            max_text_chars=max_text_chars,
            sync_steps="inline",  # its code steps are quick; get_context still runs in a thread
            level="run" if spec.conversation is None else "conversation",
            redact=redact,
            calibration=calibration,
        )

    scorer = build(mode, redact, calibration)
    if mode == "three_step":
        # What a judge budget's fallback="one_call" switches to (the scorer redacts and
        # calibrates around it).
        scorer.offer_judge_mode("one_call", lambda: build("one_call", None, None))
    return scorer


_Step: TypeAlias = "PromptStep[Any] | StepFunction"


class _Judging:
    """The code of one scorer's steps: its spec with the factory's settings."""

    def __init__(
        self,
        spec: JudgeSpec,
        scale: float,
        max_text_chars: int,
        max_context_chars: int,
        on_empty_context: EmptyContextPolicy,
    ) -> None:
        self.spec, self.scale = spec, scale
        self.max_text_chars, self.max_context_chars = max_text_chars, max_context_chars
        self.on_empty_context = on_empty_context
        self.prompts = spec.prompts or _derived_prompts(spec)
        self.verdicts_schema, self.one_call_schema, _ = judge_schemas(spec)
        self.key, self.noun, self.nouns = spec.items, spec.noun, spec.plural or spec.items
        self.field = self.prompts.verdicts_field
        self.preprocess_fields = self.prompts.preprocess_fields
        # Read on every score: worked out once here.
        self.counted = tuple(spec.counted_words.items())
        self.words = spec.words if "verdict" in spec.verdict.model_fields else ()
        self.fill = spec.scoring.fill if spec.scoring is not None else None
        self.not_analysis = {self.field, self.key, "reason", *self.preprocess_fields}

    # -- the three modes: (preprocess, analyze, generate_reason) --------------------------------

    def three_step(self) -> tuple[_Step, _Step, _Step]:
        """Items, one verdict per item, a reason: a judge call each where needed."""
        analyze: PromptStep[Any] = PromptStep(
            description=f"Give one verdict per {self.noun}",
            output_schema=self.verdicts_schema,
            system=self.prompts.verdict_system,
            create_prompt=self.verdict_prompt,
            validate=self.check_count,
            parse=lambda answer, ctx: self.analysis_of(answer, self.items(ctx)),
            skip_if=self.no_verdict_call,
            skip_result=self.verdicts_without_judge,
        )
        explain = reason_step(
            self.prompts.reason_system, self.reason_prompt, self.summary, self.no_reason_call
        )
        return self.extract(), analyze, explain

    def one_call(self) -> tuple[_Step, _Step, _Step]:
        """One answer holds what three steps give; the later steps read it from ctx.state."""
        key = self.key
        one_call: PromptStep[Any] = PromptStep(
            description=f"List the {key}, judge each one and explain, in one answer",
            output_schema=self.one_call_schema,
            system=self.prompts.one_call_system,
            create_prompt=self.one_call_prompt,
            validate=self.check_one_call_count,
        )

        def explain(ctx: StepContext) -> str:
            judged = "" if self.no_verdict_call(ctx) else ctx.state.get("reason", "")
            return self.summary(ctx) + (f" {judged}" if judged else "")

        if not self.spec.listed:
            analyze = dataclasses.replace(
                one_call,
                parse=self.judged,
                skip_if=self.no_verdict_call,
                skip_result=self.verdicts_without_judge,
            )
            return self.extract(), analyze, explain
        # The extraction's skip rules (empty output, no context) hold in one call too.
        preprocess = dataclasses.replace(
            one_call,
            parse=self.preprocessed,
            skip_if=self.nothing_to_judge,
            skip_result=lambda ctx: {**{name: [] for name in self.preprocess_fields}, key: []},
        )
        return preprocess, self.kept, explain

    def logprob(self) -> tuple[_Step, _Step, _Step]:
        """The whole output is the one item, judged in one word read from token logprobs."""
        lp = self.spec.logprob
        assert lp is not None
        good, bad = lp.choices

        def whole_output(ctx: StepContext) -> dict[str, Any]:
            return {self.key: [] if self.nothing_to_judge(ctx) else [ctx.output_text]}

        def read(answer: Classification, ctx: StepContext) -> dict[str, Any]:
            probability = answer.probability(bad)
            ctx.flags["verdict_probability"] = probability
            ctx.flags["verdict_from_logprobs"] = answer.from_logprobs
            ctx.attributes[A.LIVESCORE_VERDICT_PROBABILITY] = probability
            ctx.attributes[A.LIVESCORE_VERDICT_FROM_LOGPROBS] = answer.from_logprobs
            how = (
                "" if answer.from_logprobs else " (a structured answer: the judge gave no logprobs)"
            )
            verdict = {
                "statement": ctx.output_text,
                "verdict": lp.verdicts[answer.label],
                "reason": f"the judge answered {answer.label!r}; P({bad}) = {probability:.3f}{how}",
            }
            return {"verdicts": [verdict], "classification": answer.to_dict()}

        analyze: PromptStep[Any] = PromptStep(
            description=f"Judge the whole output in one word ({good} or {bad})",
            output_schema=None,
            system=lp.system,
            create_prompt=lambda ctx: lp.prompt(
                ctx.output_text,
                plain_context_for_judge(ctx, self.max_context_chars),
                optional_user_text(ctx.run, self.max_text_chars),
            ),
            parse=read,
            skip_if=self.no_verdict_call,
            skip_result=self.verdicts_without_judge,
            choices=lp.choices,
        )

        def explain(ctx: StepContext) -> str:
            probability = self.probability_of(ctx)
            return self.summary(ctx) if probability is None else lp.reason(ctx, probability)

        return whole_output, analyze, explain

    # -- the items and their verdicts ------------------------------------------------------------

    def extract(self) -> _Step:
        """The preprocess step: the items, split in code or listed by the judge."""
        spec, key = self.spec, self.key
        if (split := spec.split) is not None:
            return lambda ctx: {key: split(ctx.output_text)}
        if (made := spec.items_of) is not None:
            return lambda ctx: {key: made(ctx)}
        if spec.extract is not None:
            return spec.extract(skip_if=self.nothing_to_judge)
        return _listing(spec, self.nothing_to_judge)

    def items(self, ctx: StepContext) -> list[str]:
        found: list[str] = ctx.preprocess_step_result[self.key]
        return found

    def defects(self, verdicts: Sequence[Mapping[str, Any]]) -> int:
        return sum(1 for verdict in verdicts if verdict["verdict"] in self.spec.defect_words)

    def analysis_of(self, answer: BaseModel, found: list[str]) -> dict[str, Any]:
        dumped, field, fill = answer.model_dump(), self.field, self.fill
        verdicts = dumped[field]
        for index, (verdict, item) in enumerate(zip(verdicts, found, strict=True)):
            if fill is not None:
                fill(verdict, item, index)
                continue
            statement = verdict["statement"]
            if self.spec.strip_statements:
                verdict["statement"] = statement.strip() or item
            elif not statement.strip():  # a verdict that leaves its item blank
                verdict["statement"] = item
        # The answer's other fields belong to the analysis (context relevance's missing
        # information).
        skipped = self.not_analysis
        return {field: verdicts, **{k: v for k, v in dumped.items() if k not in skipped}}

    def preprocessed(self, answer: Any, ctx: StepContext) -> dict[str, Any]:
        """A one-call answer's items; its analysis and reason wait in ctx.state."""
        found = list(getattr(answer, self.key))
        ctx.state["analysis"] = self.analysis_of(answer, found)
        ctx.state["reason"] = str(answer.reason).strip()
        extra = {name: getattr(answer, name) for name in self.preprocess_fields}
        return {**extra, self.key: found}

    def judged(self, answer: Any, ctx: StepContext) -> dict[str, Any]:
        """A one-call answer's analysis, its reason kept for the reason step."""
        analysis = self.analysis_of(answer, self.items(ctx))
        ctx.state["reason"] = str(answer.reason).strip()
        return analysis

    def kept(self, ctx: StepContext) -> dict[str, Any]:
        """The analysis a one-call answer gave with its items."""
        if self.no_verdict_call(ctx):
            return self.verdicts_without_judge(ctx)
        analysis: dict[str, Any] = ctx.state["analysis"]
        return analysis

    def check_count(self, answer: Any, ctx: StepContext) -> None:
        expected, got = len(self.items(ctx)), len(getattr(answer, self.field))
        if got != expected:
            raise ValueError(
                f"expected exactly {expected} {self.field}, one per {self.noun} in the given "
                f"order, but got {got}"
            )

    def check_one_call_count(self, answer: Any, ctx: StepContext) -> None:
        listed = self.spec.listed
        expected = len(getattr(answer, self.key)) if listed else len(self.items(ctx))
        got = len(getattr(answer, self.field))
        if got != expected:
            raise ValueError(
                f"expected exactly one entry in {self.field!r} per {self.noun}: {expected} "
                f"{self.nouns} but {got} {self.field}"
            )

    def nothing_to_judge(self, ctx: StepContext) -> bool:
        spec = self.spec
        if spec.nothing_to_judge is not None:
            return spec.nothing_to_judge(ctx)
        if not ctx.output_text.strip():
            return True  # an empty answer has no items: score it without a judge call
        # Checked before the first judge call, so a run without evidence costs nothing.
        if spec.grounded and self.on_empty_context == "skip" and not context_items(ctx):
            raise NotScorable(spec.no_context)
        return False

    def fixed(self, ctx: StepContext) -> list[dict[str, Any]] | None:
        """Every item a defect, without the judge: "all_unsupported" with no context."""
        grounded = self.spec.grounded and self.on_empty_context == "all_unsupported"
        if not grounded or context_items(ctx):
            return None
        word, reason = min(self.spec.defect_words), "No context was given to back it."
        return [{"statement": item, "verdict": word, "reason": reason} for item in self.items(ctx)]

    def no_verdict_call(self, ctx: StepContext) -> bool:
        return not self.items(ctx) or self.fixed(ctx) is not None

    def no_reason_call(self, ctx: StepContext) -> bool:
        if self.no_verdict_call(ctx):
            return True
        return not (self.spec.always_explain or self.defects(ctx.analyze_step_result[self.field]))

    def verdicts_without_judge(self, ctx: StepContext) -> dict[str, Any]:
        return {self.field: (self.fixed(ctx) if self.items(ctx) else None) or []}

    def probability_of(self, ctx: StepContext) -> float | None:
        found = (ctx.analyze_step_result or {}).get("classification")
        if not isinstance(found, Mapping) or self.spec.logprob is None:
            return None  # no call: nothing to judge, or fixed verdicts
        return float(found["probabilities"].get(self.spec.logprob.choices[1], 0.0))

    # -- the score and its reason ----------------------------------------------------------------

    def label(self, score: float) -> str:
        if self.spec.higher_is_better:
            labels = self.spec.labels or JUDGED_QUALITY_LABELS
            return quality_label(score, scale=self.scale, labels=labels)
        return defect_label(score, scale=self.scale)

    def score(self, ctx: StepContext) -> float:
        analysis = ctx.analyze_step_result or {self.field: []}
        value = self.value(ctx, analysis)
        scoring = self.spec.scoring
        if scoring is not None and scoring.record is not None:
            scoring.record(ctx, analysis)
        else:
            self.record(ctx, analysis[self.field])
        return value

    def value(self, ctx: StepContext, analysis: Mapping[str, Any]) -> float:
        spec, scale, scoring = self.spec, self.scale, self.spec.scoring
        verdicts = analysis[self.field]
        total = len(verdicts)
        probability = self.probability_of(ctx)
        if probability is not None:
            return round((1 - probability if spec.higher_is_better else probability) * scale, 4)
        if not total and scoring is not None and scoring.no_items is not None:
            return scoring.no_items(ctx)
        if not total:
            if spec.needs_items and not self.items(ctx):
                raise NotScorable(spec.needs_items)
            return scale if spec.higher_is_better else 0.0
        if scoring is not None and scoring.score is not None:
            return round2(scoring.score(analysis) * scale)
        if not spec.higher_is_better:
            return round2(self.defects(verdicts) / total * scale)
        counts, weights = tally(verdicts), spec.weights or {}
        counted = sum(
            weights.get(word, 0.0 if word in spec.defect_words else 1.0) * counts[word]
            for word in self.words
        )
        return round2(counted / total * scale)

    def record(self, ctx: StepContext, verdicts: Sequence[Mapping[str, Any]]) -> None:
        """The score's flags and span attributes."""
        spec, key, total = self.spec, self.key, len(verdicts)
        conversation = spec.conversation
        if conversation is not None:
            found = zip(verdicts, self.items(ctx), strict=False)
            turns = [conversation.turn(v, item) for v, item in found if self.defects([v])]
            record_turns(ctx, turns, total)
            if not conversation.counts:
                return
        ctx.flags[f"{key}_total"] = total
        if conversation is None:
            ctx.attributes[f"livescore.{key}.total"] = total
        for index, (name, word) in enumerate(self.counted):
            ctx.flags[f"{key}_{name}"] = sum(1 for v in verdicts if v["verdict"] == word)
            if index == 0 and conversation is None:
                ctx.attributes[f"livescore.{key}.{name}"] = ctx.flags[f"{key}_{name}"]
        if spec.grounded and verdicts and not context_items(ctx):
            ctx.flags["context_missing"] = True

    def summary(self, ctx: StepContext) -> str:
        """The reason written from the counts, when the judge gives none or is not asked."""
        spec = self.spec
        if not self.items(ctx):
            if spec.no_items_reason is not None:
                return spec.no_items_reason(ctx)
            why = spec.no_items if ctx.output_text.strip() and spec.no_items else ""
            why = why or f"the answer is empty: {spec.empty_answer}"
            return f"The score is {fmt(ctx.score)} because {why}."
        if spec.count_reason is not None:
            return spec.count_reason(ctx)
        verdicts = ctx.analyze_step_result[self.field]
        what = share_phrase(self.defects(verdicts), len(verdicts), self.noun, spec.defect)
        return f"The score is {fmt(ctx.score)} because {what}."

    # -- the prompts -------------------------------------------------------------------------------

    def shown(
        self,
        ctx: StepContext,
        *,
        items: Sequence[str] = (),
        context: bool = False,
        verdicts: Sequence[Mapping[str, Any]] = (),
    ) -> Shown:
        """What a prompt shows; the context only where asked, for a spec's own prompts."""
        grounded = context and self.spec.grounded and self.spec.prompts is not None
        rendered = context_for_judge(ctx, self.max_context_chars) if grounded else _NO_CONTEXT
        score, limit = fmt(ctx.score), self.max_text_chars
        return Shown(ctx.output_text, items, rendered, verdicts, score, self.scale, ctx, limit)

    def verdict_prompt(self, ctx: StepContext) -> str:
        return self.prompts.verdict(self.shown(ctx, items=self.items(ctx), context=True))

    def reason_prompt(self, ctx: StepContext) -> str:
        return self.prompts.reason(self.shown(ctx, verdicts=ctx.analyze_step_result[self.field]))

    def one_call_prompt(self, ctx: StepContext) -> str:
        return self.prompts.one_call(self.shown(ctx, context=True))


_NO_CONTEXT = RenderedContext(block="", truncated=False, documents=0)


def judge_catalog_entry(
    spec: JudgeSpec,
    factory: Callable[..., Scorer] | None = None,
    *,
    argument: str | None = None,
    keyword: str = "",
    parse: Callable[[str], object] = str,
    argument_required: bool = False,
    examples: tuple[str, ...] = (),
) -> Callable[[str | None, ScorerOptions], Scorer]:
    """Put ``spec``'s scorer in the catalog (``livescore eval --scorer NAME``,
    :func:`~livescore.scorers.build_scorer`, the docs' attribute list), every fact taken from
    the spec; built by ``factory`` (its ``create_<name>_scorer``) or :func:`judge_scorer`.
    Returns the build function it registers.

    For ``NAME:ARG``: what ``argument`` means (as in :func:`~livescore.scorers.catalog_entry`),
    the factory's ``keyword`` set to ``parse(ARG)``, whether it is required, and ``examples``.
    """

    def build(argument: str | None, options: ScorerOptions) -> Scorer:
        model, mode = options.require_model(), options.judge_mode
        if factory is None:
            return judge_scorer(spec, model=model, judge_mode=mode)
        given = {} if argument is None else {keyword: parse(argument)}
        return factory(model=model, judge_mode=mode, **given)

    module = (factory or spec.verdict).__module__
    build.__module__ = module
    build.__qualname__ = build.__name__ = "_build"
    public = "livescore.scorers" if module.startswith("livescore.scorers._") else module
    return catalog_entry(
        spec.name,
        family=spec.family,
        summary=spec.summary,
        needs_judge=True,
        argument=argument,
        argument_required=argument_required,
        higher_is_better=spec.higher_is_better,
        predicts=spec.defect if spec.predicts == "" else spec.predicts,
        factory=None if factory is None else f"{public}.{factory.__name__}",
        span_attributes=spec.span_attributes,
        examples=examples if argument_required else (spec.name, *examples),
    )(build)
