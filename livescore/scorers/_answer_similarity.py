"""The answer similarity scorer as a :class:`~livescore.scorers.JudgeSpec`: how much of the
run's ground truth the answer conveys, unit by unit, scored with Mastra's weights."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel

from livescore._text import DEFAULT_MAX_TEXT_CHARS
from livescore.judges import Judge
from livescore.otel import attributes as A
from livescore.pii import RedactSpec
from livescore.scorers._claims import Claims
from livescore.scorers._judge_spec import (
    JudgePrompts,
    JudgeSpec,
    ScoringPolicy,
    Shown,
    judge_catalog_entry,
    judge_scorer,
)
from livescore.scorers._judged import JudgeMode, fmt, ground_truth_text
from livescore.scorers._prompting import block, data_rule, item_blocks, one_per_item, quote
from livescore.scorers._verdicts import spelling_validator, tally
from livescore.scoring import CalibrationSpec, NotScorable, PromptStep, Scorer, StepContext

__all__ = (
    "MATCH_WEIGHTS",
    "AnswerSimilarityOneCallAnswer",
    "Contradiction",
    "ExtractedUnits",
    "UnitMatch",
    "UnitMatches",
    "create_answer_similarity_scorer",
    "similarity_from_matches",
)

MATCH_WEIGHTS = {"exact": 1.2, "semantic": 0.8, "partial": 0.4, "missing": -0.15}
"""What each match type adds (Mastra's: 1 + the exact-match bonus 0.2, the semantic
threshold 0.8, half of it, the missing penalty); the sum is divided by 1.2 per unit."""

CONTRADICTION_PENALTY = 1.0
EXTRA_PENALTY = 0.05
MAX_EXTRA_PENALTY = 0.2

_MATCH_SPELLINGS = {
    "exact": ("identical", "same", "verbatim", "exact match"),
    "semantic": ("equivalent", "paraphrase", "semantic match", "meaning"),
    "partial": ("partly", "partially", "partial match", "incomplete"),
    "missing": ("none", "absent", "no match", "not found", "omitted", "contradicted"),
}


def similarity_from_matches(
    match_types: Sequence[str], *, contradictions: int = 0, extras: int = 0
) -> float:
    """The similarity (0 to 1) of an answer whose ground-truth units matched as
    ``match_types``, with ``contradictions`` and ``extras`` (units only in the answer).

    Example:
        >>> similarity_from_matches(["exact", "exact"])
        1.0
        >>> round(similarity_from_matches(["exact", "semantic"]), 4)  # (1.2 + 0.8) / 2.4
        0.8333
        >>> similarity_from_matches(["exact"], contradictions=1)
        0.0
    """
    if not match_types:
        return 0.0
    total = sum(MATCH_WEIGHTS[t] for t in match_types) / (len(match_types) * MATCH_WEIGHTS["exact"])
    total -= contradictions * CONTRADICTION_PENALTY
    total -= min(extras * EXTRA_PENALTY, MAX_EXTRA_PENALTY)
    return max(0.0, min(1.0, total))


class ExtractedUnits(BaseModel):
    """The unit-extraction answer: the answer's units and the ground truth's."""

    output_units: Claims
    ground_truth_units: Claims


class UnitMatch(BaseModel):
    """How one ground-truth unit appears in the answer (``output_unit`` ``None`` when
    missing). Spellings of ``match_type`` are normalised (``"Exact"``, ``"paraphrase"``…)."""

    ground_truth_unit: str
    output_unit: str | None
    match_type: Literal["exact", "semantic", "partial", "missing"]
    explanation: str

    _spelling = spelling_validator("match_type", _MATCH_SPELLINGS)


class Contradiction(BaseModel):
    """A unit of the answer that contradicts one of the ground truth."""

    output_unit: str
    ground_truth_unit: str
    explanation: str


class UnitMatches(BaseModel):
    """The comparison answer: one match per ground-truth unit, the answer's extra units,
    and its contradictions."""

    matches: list[UnitMatch]
    extra_in_output: Claims
    contradictions: list[Contradiction]


class AnswerSimilarityOneCallAnswer(UnitMatches, ExtractedUnits):
    """The one-call answer: both unit lists, the comparison, and the reason."""

    reason: str


# -- prompts ----------------------------------------------------------------------------------

_TAGS = ("output", "ground_truth", "units", "unit", "matches", "match")

_UNITS = """\
A semantic unit is one fact, claim, quantity (with its unit) or concept a text conveys. \
Split each text into its units, keep related details together, word each unit so it \
stands alone, and state the same idea the same way in both lists so they can be compared."""

_MATCHING = """\
For each ground-truth unit, find how the answer conveys it:
- "exact": the same information, worded the same or nearly so;
- "semantic": the same information, worded differently;
- "partial": some of it, with important details missing;
- "missing": not in the answer, or stated wrongly (a wrong name, number or fact is \
"missing", and the wrong statement goes in "contradictions").
"extra_in_output": the answer's units that the ground truth does not have. \
"contradictions": each answer unit that contradicts a ground-truth unit, with both units."""

EXTRACT_SYSTEM = f"""\
You break an answer and a reference (ground-truth) answer into their semantic units, to \
compare them.

{_UNITS}

{data_rule(_TAGS)}

Answer with JSON only: {{"output_units": ["..."], "ground_truth_units": ["..."]}}"""

MATCH_SYSTEM = f"""\
You compare the semantic units of an AI system's answer with those of a reference \
(ground-truth) answer.

{_MATCHING}

{data_rule(_TAGS)}

Return exactly one match per ground-truth unit, in the order given, each with \
"ground_truth_unit" (copied), "output_unit" (the answer's unit, or null when missing), \
"match_type" and "explanation" (one short sentence).

Answer with JSON only: {{"matches": [{{"ground_truth_unit": "...", "output_unit": "...", \
"match_type": "semantic", "explanation": "..."}}], "extra_in_output": [], \
"contradictions": []}}"""

REASON_SYSTEM = f"""\
You explain how close an AI system's answer is to the reference answer, for its \
developer, in plain, concise English: two or three sentences of plain text, no lists, no \
JSON.

{data_rule(_TAGS)}"""

ONE_CALL_SYSTEM = f"""\
You compare an AI system's answer with a reference (ground-truth) answer in three moves, \
and give all of them in one JSON answer.

1. "output_units" and "ground_truth_units": {_UNITS}
2. "matches": one per ground-truth unit, in the same order, each with \
"ground_truth_unit" (copied), "output_unit" (or null), "match_type" and "explanation"; \
then "extra_in_output" and "contradictions". {_MATCHING}
3. "reason": two or three sentences for the developer on what the answer gets right and \
what it misses or gets wrong. Do not give a numeric score.

{data_rule(_TAGS)}

Answer with JSON only: {{"output_units": [], "ground_truth_units": [], "matches": [], \
"extra_in_output": [], "contradictions": [], "reason": "..."}}"""


def _texts_prompt(ask: str, output: str, ground_truth: str, answer: str) -> str:
    texts = f"{block('output', output)}\n\n{block('ground_truth', ground_truth)}"
    return f"{ask}\n\n{texts}\n\nAnswer with JSON only: {answer}."


def _match_prompt(shown: Shown) -> str:
    answer_units, truth = shown.ctx.preprocess_step_result["output_units"], shown.items
    listed = item_blocks("units", "unit", answer_units) if answer_units else "<units>\n</units>"
    count = one_per_item(
        len(truth), "ground-truth unit", "ground-truth units", answer="match", answers="matches"
    )
    return (
        "Compare the answer's units (the first <units> block) with the reference answer's "
        "units (the <ground_truth> block).\n\n"
        f"{listed}\n\n"
        f"<ground_truth>\n{item_blocks('units', 'unit', truth)}\n</ground_truth>"
        f"\n\n{count}, as JSON only: "
        '{"matches": [...], "extra_in_output": [...], "contradictions": [...]}.'
    )


def _reason_prompt(shown: Shown) -> str:
    analysis, score = shown.ctx.analyze_step_result, shown.score_text
    items = "\n".join(
        f'<match index="{i}" type="{m["match_type"]}">\n'
        f"ground truth: {quote(m['ground_truth_unit'])}\n"
        f"answer: {quote(m['output_unit'] or '(missing)')}\n</match>"
        for i, m in enumerate(analysis["matches"], start=1)
    )
    contradictions = "\n".join(
        f"- {quote(c['output_unit'])} (ground truth: {quote(c['ground_truth_unit'])})"
        for c in analysis["contradictions"]
    )
    return (
        f"An answer was compared with the reference answer unit by unit. Its similarity "
        f"score is {score} on a scale from 0 to {shown.scale:g}.\n\n"
        f"<matches>\n{items}\n</matches>\n\n"
        f"Contradictions:\n{contradictions or '(none)'}\n"
        f"Units only in the answer: {len(analysis['extra_in_output'])}\n\n"
        f'Explain the score. Start with "The score is {score} because" and say what '
        "the answer gets right and what it misses or gets wrong."
    )


# -- the scorer -------------------------------------------------------------------------------


def _score(analysis: Mapping[str, Any]) -> float:
    return similarity_from_matches(
        [m["match_type"] for m in analysis["matches"]],
        contradictions=len(analysis["contradictions"]),
        extras=len(analysis["extra_in_output"]),
    )


def _match_counts(analysis: Mapping[str, Any]) -> dict[str, int]:
    counts = tally(analysis["matches"], "match_type")
    return {match_type: counts[match_type] for match_type in MATCH_WEIGHTS}


def _record(ctx: StepContext, analysis: Mapping[str, Any]) -> None:
    counts = _match_counts(analysis)
    units = len(analysis["matches"])
    contradictions = len(analysis.get("contradictions", ()))
    ctx.flags["match_types"] = counts
    ctx.flags["ground_truth_units"] = units
    ctx.flags["contradictions"] = contradictions
    ctx.flags["extra_in_output"] = len(analysis.get("extra_in_output", ()))
    ctx.attributes[A.LIVESCORE_GROUND_TRUTH_UNITS] = units
    ctx.attributes[A.LIVESCORE_GROUND_TRUTH_MATCHED] = units - counts["missing"]
    ctx.attributes[A.LIVESCORE_GROUND_TRUTH_CONTRADICTIONS] = contradictions


def _count_reason(ctx: StepContext) -> str:
    analysis = ctx.analyze_step_result
    counts = _match_counts(analysis)
    total, contradictions = len(analysis["matches"]), len(analysis["contradictions"])
    what = (
        f"of {total} ground-truth unit{'' if total == 1 else 's'}, {counts['exact']} "
        f"match exactly, {counts['semantic']} in meaning, {counts['partial']} in part and "
        f"{counts['missing']} are missing"
    )
    if contradictions:
        what += f"; the answer contradicts the ground truth {contradictions} time"
        what += "" if contradictions == 1 else "s"
    return f"The score is {fmt(ctx.score)} because {what}."


def _fill(match: dict[str, Any], item: str, index: int) -> None:
    if not str(match.get("ground_truth_unit", "")).strip():
        match["ground_truth_unit"] = item


def _no_units(ctx: StepContext) -> float:
    if not ctx.output_text.strip():
        return 0.0
    raise NotScorable("the ground truth holds no fact or claim the judge could compare")


def _spec(max_chars: int) -> JudgeSpec:
    """The answer similarity scorer as data: the ground truth cut to ``max_chars``."""

    def ground_truth(ctx: StepContext) -> str:
        text = ground_truth_text(ctx.run, max_chars)
        if text is None or not text.strip():
            raise NotScorable(
                "no ground truth: answer similarity compares the answer with the run's "
                "expected answer (a dataset item's ground_truth), and this run has none"
            )
        return text

    def nothing_to_extract(ctx: StepContext) -> bool:
        ground_truth(ctx)  # before any call
        return not ctx.output_text.strip()

    def extract(skip_if: Callable[[StepContext], bool]) -> PromptStep[Any]:
        return PromptStep(
            description="Extract the semantic units of the answer and the ground truth",
            output_schema=ExtractedUnits,
            system=EXTRACT_SYSTEM,
            create_prompt=lambda ctx: _texts_prompt(
                "List the semantic units of the answer in the <output> block and of the "
                "reference answer in the <ground_truth> block.",
                ctx.output_text,
                ground_truth(ctx),
                '{"output_units": [...], "ground_truth_units": [...]}',
            ),
            skip_if=skip_if,
            skip_result=lambda ctx: {"output_units": [], "ground_truth_units": []},
        )

    return JudgeSpec(
        name="answer-similarity",
        family="answer",
        summary="how closely the answer conveys the item's ground_truth, unit by unit",
        check="answer-similarity",
        items="ground_truth_units",
        noun="ground-truth unit",
        plural="ground-truth units",
        defect="missing",
        verdict=UnitMatch,
        higher_is_better=True,
        description="How closely the answer conveys its ground truth, from 0 to {scale} "
        "(every unit stated the same way)",
        always_explain=True,
        extract=extract,
        nothing_to_judge=nothing_to_extract,
        scoring=ScoringPolicy(score=_score, record=_record, fill=_fill, no_items=_no_units),
        attributes={
            "livescore.ground_truth.units": "the ground truth's semantic units",
            "livescore.ground_truth.matched": "units the answer matches (exactly, in meaning or "
            "in part)",
            "livescore.ground_truth.contradictions": "units the answer contradicts",
        },
        predicts=None,
        no_items_reason=lambda ctx: (
            f"The score is {fmt(ctx.score)} because the answer is empty: it conveys none of "
            "the ground truth."
        ),
        count_reason=_count_reason,
        prompts=JudgePrompts(
            verdict_system=MATCH_SYSTEM,
            reason_system=REASON_SYSTEM,
            one_call_system=ONE_CALL_SYSTEM,
            verdict=_match_prompt,
            reason=_reason_prompt,
            one_call=lambda shown: _texts_prompt(
                "Compare the answer in the <output> block with the reference answer in the "
                "<ground_truth> block.",
                shown.output,
                ground_truth(shown.ctx),
                '{"output_units": [...], "ground_truth_units": [...], "matches": [...], '
                '"extra_in_output": [...], "contradictions": [...], "reason": "..."}',
            ),
            verdicts_schema=UnitMatches,
            one_call_schema=AnswerSimilarityOneCallAnswer,
            verdicts_field="matches",
            preprocess_fields=("output_units",),
        ),
    )


def create_answer_similarity_scorer(
    *,
    model: str | Judge,
    scale: float = 1.0,
    judge_mode: JudgeMode = "three_step",
    id: str = "answer-similarity",
    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
    judge_options: Mapping[str, Any] | None = None,
    redact: RedactSpec | None = None,
    calibration: CalibrationSpec | None = None,
) -> Scorer:
    """Score how closely an answer conveys its ground truth, meaning by meaning.

    Both texts are broken into semantic units; each ground-truth unit is matched in the
    answer (exactly, in meaning, in part, or missing), contradictions and extra units are
    noted, and the score follows Mastra's weights (:func:`similarity_from_matches`): 1 for
    every unit stated the same way, about 0.67 for a full paraphrase, less for gaps, 0 for
    a contradiction. Higher is better. Its arguments are those of
    :func:`~livescore.scorers.judge_scorer`.

    Returns:
        Results with ``preprocess_step_result`` ``{"output_units", "ground_truth_units"}``,
        ``analyze_step_result`` ``{"matches", "extra_in_output", "contradictions"}`` and the
        counts per match type in ``flags``. A run without a ground truth is skipped before
        any call (Mastra raises, or scores 0); an empty answer scores 0 with no call.

    Example:
        >>> from livescore.testing import ScriptedJudge
        >>> judge = ScriptedJudge([
        ...     {"output_units": ["Paris is the capital"], "ground_truth_units": [
        ...         "Paris is the capital of France"]},
        ...     {"matches": [{"ground_truth_unit": "Paris is the capital of France",
        ...                   "output_unit": "Paris is the capital", "match_type": "exact",
        ...                   "explanation": "Same fact."}],
        ...      "extra_in_output": [], "contradictions": []},
        ...     "The score is 1 because the answer states the one fact.",
        ... ])
        >>> scorer = create_answer_similarity_scorer(model=judge)
        >>> result = scorer.run_sync({"input": "Capital of France?", "output": "Paris.",
        ...                           "ground_truth": "Paris is the capital of France."})
        >>> result.score, result.label
        (1.0, 'full')
        >>> scorer.run_sync({"input": "Capital?", "output": "Paris."}).status
        'skipped'
    """
    return judge_scorer(_spec(max_text_chars), **locals())  # every argument is judge_scorer's


_build = judge_catalog_entry(_spec(DEFAULT_MAX_TEXT_CHARS), create_answer_similarity_scorer)
