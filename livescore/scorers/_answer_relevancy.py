"""The answer relevancy scorer as a :class:`~livescore.scorers.JudgeSpec` with prompts of its
own: the share of the answer's statements that address the question."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, Literal

from livescore._text import DEFAULT_MAX_TEXT_CHARS
from livescore.judges import Judge
from livescore.pii import RedactSpec
from livescore.scorers._judge_spec import (
    JudgePrompts,
    JudgeSpec,
    Shown,
    judge_catalog_entry,
    judge_schemas,
    judge_scorer,
)
from livescore.scorers._judged import JudgeMode, check_fraction, fmt
from livescore.scorers._prompting import (
    block,
    data_rule,
    explain_system,
    item_blocks,
    one_per_item,
    verdict_blocks,
)
from livescore.scorers._verdicts import StatementVerdict, tally
from livescore.scoring import CalibrationSpec, NotScorable, PromptStep, Scorer, StepContext

__all__ = (
    "ANSWER_RELEVANCY",
    "ExtractedStatements",
    "RelevancyVerdict",
    "RelevancyVerdicts",
    "create_answer_relevancy_scorer",
)

_SPELLINGS = {
    "yes": ("y", "true", "relevant", "directly relevant", "fully relevant", "answers"),
    "no": ("n", "false", "irrelevant", "not relevant", "unrelated", "off topic"),
    "unsure": (
        "partial",
        "partially",
        "partly",
        "partially relevant",
        "partly relevant",
        "somewhat relevant",
        "related",
        "maybe",
        "unknown",
    ),
}


class RelevancyVerdict(StatementVerdict):
    """One statement's verdict: ``"yes"`` it answers the question, ``"unsure"`` it is
    related without answering it, ``"no"`` it is beside the point. Spellings are
    normalised (``"Yes"``, ``"relevant"``, ``"partially relevant"``…)."""

    spellings = _SPELLINGS
    verdict: Literal["yes", "no", "unsure"]


# -- prompts ----------------------------------------------------------------------------------

_TAGS = ("question", "output", "statements", "statement", "verdicts", "verdict")

_SPLITTING = """\
- Split the text into the statements it makes: one sentence is usually one statement; \
split a sentence that joins separate points ("X, and also Y"), keep together what only \
makes sense together.
- Keep everything, not only facts: greetings, offers of help, apologies, refusals, \
opinions and error messages are statements too. A one-word answer is one statement.
- Keep the text's own wording. An empty text has no statements."""

_RULES = """\
Judge each statement only by its connection to the question, not by whether it is true:
- "yes": it answers the question or a part of it directly (a place for "where", a person \
for "who", the asked-for number, the requested step).
- "unsure": it is about what was asked without answering it: related context, the right \
kind of information about a nearby subject, a partial or hedged answer, or a direct \
answer that looks wrong.
- "no": it has no real connection to what was asked: pleasantries, offers of help, \
background about the subject that does not touch the question, unrelated topics, empty \
or meaningless text."""

EXTRACT_SYSTEM = f"""\
You break a text into its statements, for a review of how relevant each one is.

{_SPLITTING}

{data_rule(_TAGS)}

Answer with JSON only: {{"statements": ["...", "..."]}}"""

VERDICT_SYSTEM = f"""\
You judge whether each statement of an AI system's answer is relevant to the question \
it was asked.

{_RULES}

{data_rule(_TAGS)}

Return exactly one verdict per statement, in the order given. Each verdict has \
"statement" (copied), "verdict" ("yes", "no" or "unsure", lower case) and "reason" (one \
short sentence).

Answer with JSON only: {{"verdicts": [{{"statement": "...", "verdict": "yes", "reason": \
"..."}}]}}"""

REASON_SYSTEM = explain_system("answer-relevancy", _TAGS)

ONE_CALL_SYSTEM = f"""\
You judge how relevant an AI system's answer is to the question it was asked, in three \
moves, and give all three in one JSON answer.

1. "statements": the answer's statements.
{_SPLITTING}
2. "verdicts": one verdict per statement, in the same order, each with "statement" \
(copied), "verdict" ("yes", "no" or "unsure") and "reason" (one short sentence).
3. "reason": two or three sentences for the developer on what in the answer addresses the \
question and what does not. Do not give a numeric score.

{_RULES}

{data_rule(_TAGS)}

Answer with JSON only: {{"statements": ["..."], "verdicts": [{{"statement": "...", \
"verdict": "yes", "reason": "..."}}], "reason": "..."}}"""


def _extract(skip_if: Callable[[StepContext], bool]) -> PromptStep[Any]:
    return PromptStep(
        description="Extract the statements the answer states",
        output_schema=ExtractedStatements,
        system=EXTRACT_SYSTEM,
        create_prompt=lambda ctx: (
            "List the statements of the text in the <output> block.\n\n"
            f"{block('output', ctx.output_text)}\n\n"
            'Answer with JSON only: {"statements": [...]}.'
        ),
        skip_if=skip_if,
        skip_result=lambda ctx: {"statements": []},
    )


def _verdict_prompt(shown: Shown) -> str:
    return (
        "Decide for each statement in the <statements> block whether it is relevant to the "
        "question in the <question> block.\n\n"
        f"{block('question', shown.question)}\n\n"
        f"{item_blocks('statements', 'statement', shown.items)}\n\n"
        f"{one_per_item(len(shown.items), 'statement', 'statements')}, as JSON only: "
        '{"verdicts": [{"statement": ..., "verdict": "yes" | "no" | "unsure", "reason": ...}]}.'
    )


def _reason_prompt(shown: Shown) -> str:
    counts, score = tally(shown.verdicts), shown.score_text
    return (
        f"An answer-relevancy check found {counts['yes']} of {len(shown.verdicts)} statements "
        f"of an AI answer relevant to the question, {counts['unsure']} partly relevant and "
        f"{counts['no']} irrelevant. Its score is {score} on a scale from 0 (nothing "
        f"relevant) to {shown.scale:g} (everything relevant).\n\n"
        f"{block('question', shown.question)}\n\n"
        f"<verdicts>\n{verdict_blocks(shown.verdicts, 'statement')}\n</verdicts>\n\n"
        f'Explain the score. Start with "The score is {score} because" and say what '
        "in the answer addresses the question and what does not."
    )


def _one_call_prompt(shown: Shown) -> str:
    return (
        "Judge how relevant the answer in the <output> block is to the question in the "
        "<question> block: list its statements, give one verdict per statement, and explain."
        f"\n\n{block('question', shown.question)}\n\n{block('output', shown.output)}\n\n"
        'Answer with JSON only: {"statements": [...], "verdicts": [...], "reason": "..."}.'
    )


def _nothing_to_judge(ctx: StepContext) -> bool:
    if not ctx.input_text.strip():  # checked before any call, as is the answer
        raise NotScorable("the input is empty: there is no question to judge relevance against")
    if not ctx.output_text.strip():
        raise NotScorable("the output is empty: there are no statements to judge")
    return False


def _count_reason(ctx: StepContext) -> str:
    verdicts = ctx.analyze_step_result["verdicts"]
    counts = tally(verdicts)
    total = len(verdicts)
    if counts["yes"] == total:
        what = (
            "the only statement answers the question"
            if total == 1
            else f"all {total} statements address the question"
        )
    else:
        what = (
            f"{counts['yes']} of {total} statements answer the question, "
            f"{counts['unsure']} are partly relevant and {counts['no']} are not relevant"
        )
    return f"The score is {fmt(ctx.score)} because {what}."


ANSWER_RELEVANCY = JudgeSpec(
    name="answer-relevancy",
    family="answer",
    summary="share of the answer's statements relevant to the question",
    check="answer-relevancy",
    items="statements",
    noun="statement",
    defect="irrelevant",
    verdict=RelevancyVerdict,
    defect_words=frozenset({"no", "unsure"}),
    counts={"relevant": "yes", "unsure": "unsure"},
    counted="statements relevant to the question",
    higher_is_better=True,
    weights={"unsure": 0.3},
    description="Share of the answer's statements relevant to the question (partly relevant "
    "ones count {weight}), from 0 to {scale}",
    always_explain=True,
    nothing_to_judge=_nothing_to_judge,
    needs_items="the output makes no statements the judge could find, so its relevance "
    "cannot be measured",
    extract=_extract,
    prompts=JudgePrompts(
        verdict_system=VERDICT_SYSTEM,
        reason_system=REASON_SYSTEM,
        one_call_system=ONE_CALL_SYSTEM,
        verdict=_verdict_prompt,
        reason=_reason_prompt,
        one_call=_one_call_prompt,
    ),
    count_reason=_count_reason,
)
"""The answer relevancy spec; its factory sets the weight of a partly relevant statement."""

RelevancyVerdicts, _, ExtractedStatements = judge_schemas(ANSWER_RELEVANCY)


# -- the scorer -------------------------------------------------------------------------------


def create_answer_relevancy_scorer(
    *,
    model: str | Judge,
    uncertainty_weight: float = 0.3,
    scale: float = 1.0,
    judge_mode: JudgeMode = "three_step",
    id: str = "answer-relevancy",
    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
    judge_options: Mapping[str, Any] | None = None,
    redact: RedactSpec | None = None,
    calibration: CalibrationSpec | None = None,
) -> Scorer:
    """Score how relevant an answer is to its question, statement by statement.

    Each statement of the answer is relevant (``"yes"``: it answers the question or part of
    it), partly relevant (``"unsure"``: about the question without answering it) or
    irrelevant (``"no"``); correctness is not judged. The score is (yes +
    ``uncertainty_weight`` × unsure) / statements × ``scale``. Higher is better.

    Args:
        uncertainty_weight: What a partly relevant statement counts (0 to 1; Mastra's 0.3).

    The other arguments are those of :func:`~livescore.scorers.judge_scorer`.

    Returns:
        Results with ``preprocess_step_result["statements"]``, one verdict per statement
        and ``flags["statements_total"]`` / ``["statements_relevant"]`` /
        ``["statements_unsure"]``. A run with no question, an empty answer or one with no
        statements is skipped as not scorable (Mastra scores 0).

    Raises:
        ValueError: ``uncertainty_weight`` outside 0 to 1.

    Example:
        >>> from livescore.testing import ScriptedJudge
        >>> judge = ScriptedJudge([
        ...     {"statements": ["The sky is blue by day.", "I had toast today."]},
        ...     {"verdicts": [
        ...         {"statement": "The sky is blue by day.", "verdict": "yes",
        ...          "reason": "Answers."},
        ...         {"statement": "I had toast today.", "verdict": "no",
        ...          "reason": "Unrelated."}]},
        ...     "The score is 0.5 because one of two statements answers the question.",
        ... ])
        >>> scorer = create_answer_relevancy_scorer(model=judge)
        >>> result = scorer.run_sync({"input": "What colour is the sky by day?",
        ...                           "output": "The sky is blue by day. I had toast today."})
        >>> result.score, result.label
        (0.5, 'moderate')
    """
    arguments = dict(locals())  # judge_scorer's arguments, and uncertainty_weight
    weight = check_fraction(arguments.pop("uncertainty_weight"), name="uncertainty_weight")
    spec = dataclasses.replace(
        ANSWER_RELEVANCY,
        weights={"unsure": weight},
        description=ANSWER_RELEVANCY.description.replace("{weight}", f"{weight:g}"),
    )
    return judge_scorer(spec, **arguments)


_build = judge_catalog_entry(ANSWER_RELEVANCY, create_answer_relevancy_scorer)
