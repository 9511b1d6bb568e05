"""The criteria scorer as a :class:`~livescore.scorers.JudgeSpec`: your own criterion in plain
words, judged as a checklist (Mastra's rubric scorer and DeepEval's G-Eval in one)."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel

from livescore._text import DEFAULT_MAX_TEXT_CHARS
from livescore.judges import Judge
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
from livescore.scorers._judged import JudgeMode, check_fraction, fmt
from livescore.scorers._prompting import block, data_rule, item_blocks, one_per_item, verdict_blocks
from livescore.scorers._verdicts import StatementVerdict, tally
from livescore.scoring import CalibrationSpec, PromptStep, Scorer, StepContext

__all__ = (
    "CriteriaOneCallAnswer",
    "CriteriaVerdict",
    "CriteriaVerdicts",
    "DerivedChecks",
    "RubricOneCallAnswer",
    "create_criteria_scorer",
    "parse_rubric",
)

MAX_CHECKS = 12
"""The most checks the judge derives from a criterion."""

_SPELLINGS = {
    "yes": ("y", "true", "met", "pass", "passed", "satisfied", "fulfilled", "meets"),
    "no": ("n", "false", "not met", "fail", "failed", "unmet", "not satisfied", "violated"),
    "unsure": ("partial", "partially", "partly", "partly met", "partially met", "somewhat"),
}

_MARKER = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")


def parse_rubric(rubric: str | Sequence[str]) -> list[str]:
    """The checks of a rubric: a list of strings, or one string with a check per line
    (list markers such as ``-``, ``*``, ``1.`` are dropped).

    Raises:
        TypeError: ``rubric`` is neither a string nor a list of strings.
        ValueError: It holds no check.

    Example:
        >>> parse_rubric("- Greets the user\\n2. Names the refund amount\\n")
        ['Greets the user', 'Names the refund amount']
    """
    if isinstance(rubric, str):
        lines = rubric.splitlines()
    elif isinstance(rubric, Sequence) and all(isinstance(item, str) for item in rubric):
        lines = list(rubric)
    else:
        raise TypeError("rubric must be a string (one check per line) or a list of strings")
    checks = [_MARKER.sub("", line).strip() for line in lines]
    checks = [check for check in checks if check]
    if not checks:
        raise ValueError("rubric holds no check: give at least one non-blank line")
    return checks


class DerivedChecks(BaseModel):
    """The checks the judge derives from a criterion: ``{"checks": [...]}``."""

    checks: Claims


class CriteriaVerdict(StatementVerdict):
    """One check's verdict: ``"yes"`` met, ``"no"`` not met, ``"unsure"`` met in part.
    Spellings are normalised (``"Yes"``, ``true``, ``"met"``, ``"partially"``…)."""

    spellings = _SPELLINGS
    verdict: Literal["yes", "no", "unsure"]


class CriteriaVerdicts(BaseModel):
    """The verdict answer: ``{"verdicts": [{"statement", "verdict", "reason"}, ...]}``."""

    verdicts: list[CriteriaVerdict]


class CriteriaOneCallAnswer(CriteriaVerdicts, DerivedChecks):
    """The one-call answer without a rubric: the checks, their verdicts, the reason."""

    reason: str


class RubricOneCallAnswer(CriteriaVerdicts):
    """The one-call answer with a rubric: one verdict per rubric check, the reason."""

    reason: str


# -- prompts ----------------------------------------------------------------------------------

_TAGS = ("question", "output", "checks", "check", "verdicts", "verdict")

_DERIVING = f"""\
Turn the criterion into at most {MAX_CHECKS} concrete checks that together decide whether \
an answer meets it: each check one observable property of the answer ("The answer names \
the refund amount"), phrased so that it holds for a good answer, specific enough that two \
reviewers would agree, and without overlap. Keep every part of the criterion; add nothing \
it does not ask for."""

_RULES = """\
Decide each check for the answer, on the evidence in the answer (and the question, for \
context): "yes" when the answer clearly meets it, "no" when it does not, "unsure" when it \
meets it only in part. Do not reward effort or intent, only what the answer does. A check \
about something the answer must avoid is met when the answer avoids it."""

_EACH = (
    'each with "statement" (the check, copied), "verdict" ("yes", "no" or "unsure") and '
    '"reason" (one short sentence)'
)
_EXPLAIN = (
    "two or three sentences for the developer on what the answer meets and what it misses. "
    "Do not give a numeric score."
)
_VERDICT_JSON = '{"statement": "...", "verdict": "yes", "reason": "..."}'

CHECKS_SYSTEM = f"""\
You turn an evaluation criterion into a checklist for reviewing AI answers.

{_DERIVING}

Answer with JSON only: {{"checks": ["...", "..."]}}"""

VERDICT_SYSTEM = f"""\
You review an AI system's answer against a checklist.

{_RULES}

{data_rule(_TAGS)}

Return exactly one verdict per check, in the order given. Each verdict has "statement" \
(the check, copied), "verdict" ("yes", "no" or "unsure", lower case) and "reason" (one \
short sentence pointing at what in the answer decides it).

Answer with JSON only: {{"verdicts": [{_VERDICT_JSON}]}}"""

REASON_SYSTEM = f"""\
You explain the result of a review of an AI system's answer against a criterion to its \
developer, in plain, concise English: two or three sentences of plain text, no lists, no \
JSON.

{data_rule(_TAGS)}"""

ONE_CALL_SYSTEM = f"""\
You review an AI system's answer against an evaluation criterion in three moves, and give \
all three in one JSON answer.

1. "checks": {_DERIVING}
2. "verdicts": one verdict per check, in the same order, {_EACH}.
3. "reason": {_EXPLAIN}

{_RULES}

{data_rule(_TAGS)}

Answer with JSON only: {{"checks": ["..."], "verdicts": [{_VERDICT_JSON}], "reason": "..."}}"""

RUBRIC_ONE_CALL_SYSTEM = f"""\
You review an AI system's answer against a checklist, and give your verdicts and an \
explanation in one JSON answer.

{_RULES}

"verdicts": exactly one verdict per check, in the order given, {_EACH}. "reason", last: \
{_EXPLAIN}

{data_rule(_TAGS)}

Answer with JSON only: {{"verdicts": [{_VERDICT_JSON}], "reason": "..."}}"""


def _checklist_prompt(answer: str, checks: Sequence[str], *, explain: bool = False) -> str:
    """Asks for one verdict per check on ``answer`` (its blocks), then a reason: ``explain``."""
    then, verb = (", then explain", "give") if explain else ("", "answer with")
    wanted = (
        '{"verdicts": [...], "reason": "..."}'
        if explain
        else '{"verdicts": [{"statement": ..., "verdict": "yes" | "no" | "unsure", "reason": ...}]}'
    )
    return (
        "Decide for each check in the <checks> block whether the answer in the <output> "
        f"block meets it{then}.\n\n{answer}\n\n{item_blocks('checks', 'check', checks)}\n\n"
        f"{one_per_item(len(checks), 'check', 'checks', verb=verb)}, as JSON only: {wanted}."
    )


def _reason_prompt(criteria: str, shown: Shown) -> str:
    score = shown.score_text
    return (
        f"An AI answer was reviewed against this criterion: {criteria}\n"
        f"Its score is {score} on a scale from 0 (no check met) to {shown.scale:g} (every "
        "check met); a check met in part counts half by default.\n\n"
        f"<verdicts>\n{verdict_blocks(shown.verdicts, 'check')}\n</verdicts>\n\n"
        f'Explain the score. Start with "The score is {score} because" and say what '
        "the answer meets and what it misses."
    )


def _derived_checks(criteria: str) -> Callable[..., PromptStep[Any]]:
    """The three-step mode's checks: derived once and kept (they depend on the criterion alone)."""
    kept: list[str] = []
    lock = threading.Lock()

    def keep(answer: DerivedChecks, ctx: StepContext) -> dict[str, Any]:
        with lock:  # the first answer kept wins: every later score has its checklist
            if not kept:  # a judge that finds nothing to split keeps the criterion
                kept.extend(answer.checks[:MAX_CHECKS] or [criteria])
            return {"checks": list(kept)}

    return lambda skip_if: PromptStep(
        description="Turn the criterion into checks",
        output_schema=DerivedChecks,
        system=CHECKS_SYSTEM,
        create_prompt=lambda ctx: (
            "The criterion, written by the developer of an AI system:\n\n"
            f'{criteria}\n\nAnswer with JSON only: {{"checks": [...]}}.'
        ),
        parse=keep,
        skip_if=lambda ctx: skip_if(ctx) or bool(kept),
        skip_result=lambda ctx: {"checks": list(kept)},
    )


def _count_reason(ctx: StepContext) -> str:
    verdicts = ctx.analyze_step_result["verdicts"]
    counts = tally(verdicts)
    total = len(verdicts)
    missed = [v["statement"] for v in verdicts if v["verdict"] != "yes"]
    if not missed:
        what = f"the answer meets all {total} checks" if total > 1 else "the answer meets it"
    else:
        shown = "; ".join(missed[:3]) + ("; …" if len(missed) > 3 else "")
        what = (
            f"the answer meets {counts['yes']} of {total} checks"
            + (f" ({counts['unsure']} in part)" if counts["unsure"] else "")
            + f"; not met: {shown}"
        )
    return f"The score is {fmt(ctx.score)} because {what}."


def _text_output(ctx: StepContext) -> bool:
    ctx.output_text  # noqa: B018 (an output that is not text: not scorable, no call)
    return False  # an empty answer is judged too: it meets no check


def _answer(shown: Shown) -> str:
    question = shown.question  # read from the run on each access
    asked = f"{block('question', question)}\n\n" if question else ""
    return f"{asked}{block('output', shown.output)}"


def _spec(criteria: str, fixed: list[str] | None, weight: float) -> JudgeSpec:
    """The criteria scorer as data: the rubric's checks, else those the judge derives."""

    def one_call_prompt(shown: Shown) -> str:
        if fixed is not None:
            checks = shown.ctx.preprocess_step_result["checks"]
            return _checklist_prompt(_answer(shown), checks, explain=True)
        return (
            f"Review the answer in the <output> block against this criterion: {criteria}"
            f"\n\n{_answer(shown)}\n\n"
            'Answer with JSON only: {"checks": [...], "verdicts": [...], "reason": "..."}.'
        )

    escaped = criteria.replace("{", "{{").replace("}", "}}")
    return JudgeSpec(
        name="criteria",
        family="answer",
        summary="share of the checks of your criterion the answer meets",
        check="criteria",
        items="checks",
        noun="check",
        defect="not met",
        verdict=CriteriaVerdict,
        defect_words=frozenset({"no", "unsure"}),
        counts={"met": "yes", "partial": "unsure"},
        counted="checks the answer meets",
        attributes={"livescore.checks.total": "checks of the criterion judged"},
        predicts=None,
        higher_is_better=True,
        weights={"unsure": weight},
        description=f"Share of the checks of a criterion the answer meets: {escaped}",
        always_explain=True,
        split=None if fixed is None else (lambda output: list(fixed)),
        extract=_derived_checks(criteria),
        nothing_to_judge=_text_output,
        # A one-call answer that lists no checks meets none (three-step mode always has one).
        scoring=ScoringPolicy(no_items=lambda ctx: 0.0),
        no_items_reason=lambda ctx: "",
        count_reason=_count_reason,
        prompts=JudgePrompts(
            verdict_system=VERDICT_SYSTEM,
            reason_system=REASON_SYSTEM,
            one_call_system=ONE_CALL_SYSTEM if fixed is None else RUBRIC_ONE_CALL_SYSTEM,
            verdict=lambda shown: _checklist_prompt(_answer(shown), shown.items),
            reason=lambda shown: _reason_prompt(criteria, shown),
            one_call=one_call_prompt,
            verdicts_schema=CriteriaVerdicts,
            one_call_schema=CriteriaOneCallAnswer if fixed is None else RubricOneCallAnswer,
        ),
    )


# -- the scorer -------------------------------------------------------------------------------


def create_criteria_scorer(
    *,
    model: str | Judge,
    criteria: str,
    rubric: str | Sequence[str] | None = None,
    partial_weight: float = 0.5,
    scale: float = 1.0,
    judge_mode: JudgeMode = "three_step",
    id: str = "criteria",
    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
    judge_options: Mapping[str, Any] | None = None,
    redact: RedactSpec | None = None,
    calibration: CalibrationSpec | None = None,
) -> Scorer:
    """Score an answer against your own criterion, written in plain words.

    The criterion becomes a checklist (your ``rubric``, or checks the judge derives from the
    criterion once and reuses), the judge decides each check for the answer (met, not met,
    met in part) with a reason, and the score is the share met. The question, when the run
    has one, is shown as context. Higher is better. In three-step mode a score takes two
    calls, and three for the first score without a rubric (the one that derives the checks).

    Args:
        criteria: What a good answer does, in plain words ("The answer is polite, names
            the refund amount and offers a next step").
        rubric: The checks, to fix them: a list of strings, or one string with a check per
            line (``-``, ``*``, ``1.`` markers are dropped).
        partial_weight: What a check met in part counts (0 to 1).
        id: The scorer id on results, spans and metrics: name it after your criterion.

    The other arguments are those of :func:`~livescore.scorers.judge_scorer`.

    Returns:
        Results with ``preprocess_step_result["checks"]``, one verdict per check and
        ``flags["checks_total"]`` / ``["checks_met"]`` / ``["checks_partial"]``. An empty
        answer is judged like any other (a check such as "never promises a date" holds).

    Raises:
        ValueError: An empty criterion or rubric, or a bad ``partial_weight``.
        TypeError: ``criteria`` is not a string, or ``rubric`` not a string or strings.

    Example:
        >>> from livescore.testing import ScriptedJudge
        >>> judge = ScriptedJudge([
        ...     {"verdicts": [
        ...         {"statement": "Greets the user", "verdict": "yes", "reason": "Says hi."},
        ...         {"statement": "Names the amount", "verdict": "no", "reason": "No amount."}]},
        ...     "The score is 0.5 because the amount is missing.",
        ... ])
        >>> scorer = create_criteria_scorer(
        ...     model=judge, id="refund-reply", criteria="A friendly, precise refund reply",
        ...     rubric=["Greets the user", "Names the amount"])
        >>> result = scorer.run_sync({"input": "Refund?", "output": "Hi! It is on its way."})
        >>> result.score, result.label, result.usage.calls
        (0.5, 'moderate', 2)
    """
    arguments = dict(locals())  # judge_scorer's arguments, and the three of this scorer
    for own in ("criteria", "rubric", "partial_weight"):
        del arguments[own]
    if not isinstance(criteria, str):
        raise TypeError("criteria must be a string: what a good answer does, in plain words")
    if not criteria.strip():
        raise ValueError("criteria is empty: say what a good answer does, in plain words")
    fixed = parse_rubric(rubric) if rubric is not None else None
    weight = check_fraction(partial_weight, name="partial_weight")
    return judge_scorer(_spec(criteria.strip(), fixed, weight), **arguments)


_build = judge_catalog_entry(
    _spec("", None, 0.5),  # its catalog facts hold for any criterion
    create_criteria_scorer,
    argument="CRITERION: what a good answer does, in plain words",
    keyword="criteria",
    argument_required=True,
    examples=("criteria:The reply is polite and names the refund amount.",),
)
