"""Small pieces every LLM-judged scorer shares (the judge mode, the judge, rounding, the
label bands) and :class:`AnalysisJudging`, the steps of a judge scorer of one structured
analysis and a reason."""

from __future__ import annotations

import abc
import json
import math
from collections.abc import Callable, Mapping
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, ClassVar, Literal, TypeAlias

from livescore._messages import message_text
from livescore.judges import Judge, JudgeConfigError, resolve_judge
from livescore.pii import RedactSpec
from livescore.runs import Run, get_user_message
from livescore.scoring import (
    CalibrationSpec,
    PromptStep,
    Scorer,
    StepContext,
    StepFunction,
    create_scorer,
)

__all__ = (
    "DEFECT_LABELS",
    "FAITHFULNESS_LABELS",
    "JUDGED_QUALITY_LABELS",
    "JUDGE_MODES",
    "STRUCTURED_MODES",
    "AnalysisJudging",
    "JudgeMode",
    "check_fraction",
    "check_scale",
    "defect_label",
    "fmt",
    "ground_truth_text",
    "judge_mode_of",
    "optional_user_text",
    "quality_label",
    "reason_step",
    "resolve_model",
    "round2",
    "share_phrase",
)

JudgeMode: TypeAlias = Literal["three_step", "one_call", "logprob"]
"""How a judge scorer asks its judge: ``"three_step"`` (one small request per step),
``"one_call"`` (one structured answer, the same result shape) or ``"logprob"`` (a one-word
verdict whose probability, read from token logprobs, is the score); see
:func:`~livescore.scorers.judge_scorer`."""

JUDGE_MODES: tuple[JudgeMode, ...] = ("three_step", "one_call", "logprob")

STRUCTURED_MODES: tuple[JudgeMode, ...] = ("three_step", "one_call")
"""The modes every judge scorer takes."""

DEFECT_LABELS = ("none", "low", "mixed", "high", "severe")
"""Labels of scores where higher is worse, best first (see :func:`defect_label`)."""

JUDGED_QUALITY_LABELS = ("poor", "low", "moderate", "high", "full")
"""Labels of judged scores where higher is better, worst first (see :func:`quality_label`)."""

FAITHFULNESS_LABELS = ("unfaithful", "low", "mixed", "high", "faithful")
"""Labels of faithfulness scores, worst first (the bands of :func:`quality_label`)."""


def judge_mode_of(
    judge_mode: object, *, scorer: str, modes: tuple[JudgeMode, ...] = STRUCTURED_MODES
) -> JudgeMode:
    """``judge_mode=`` checked against the ``modes`` the scorer takes (``ValueError``).

    Example:
        >>> judge_mode_of("three_step", scorer="x"), judge_mode_of("one_call", scorer="x")
        ('three_step', 'one_call')
    """
    for known in modes:
        if judge_mode == known:
            return known
    allowed = " or ".join(repr(m) for m in modes)
    if judge_mode in JUDGE_MODES:
        raise ValueError(
            f"{scorer}: judge_mode={judge_mode!r} is not available to this scorer (it takes "
            f"{allowed}); 'logprob' is available to hallucination and faithfulness"
        )
    raise ValueError(f"{scorer}: judge_mode must be {allowed}, not {judge_mode!r}")


def resolve_model(
    model: str | Judge | None, options: Mapping[str, Any] | None, *, scorer: str
) -> Judge:
    """The judge for ``model``, with ``options`` for a string (``JudgeConfigError``: no
    model, or options beside a judge object)."""
    if model is None or model == "":
        raise JudgeConfigError(
            f"the {scorer} scorer needs a judge: model='openai/<model>' or a Judge object"
        )
    return resolve_judge(model, **dict(options or {}))


def check_scale(scale: object) -> float:
    """``scale`` as a positive, finite float (``ValueError`` otherwise, ``True`` included)."""
    if isinstance(scale, bool) or not isinstance(scale, int | float):
        raise ValueError(f"scale must be a positive number, not {scale!r}")
    if not math.isfinite(scale) or scale <= 0:
        raise ValueError(f"scale must be a positive, finite number, not {scale!r}")
    return float(scale)


def check_fraction(value: object, *, name: str) -> float:
    """``value`` as a weight from 0 to 1 (``ValueError`` naming ``name`` otherwise)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ValueError(f"{name} must be from 0 to 1, not {value!r}")
    return float(value)


def round2(value: float) -> float:
    """``value`` rounded half-up to 2 decimals (Mastra's ``roundToTwoDecimals``).

    Example:
        >>> round2(1 / 8), round(1 / 8, 2)
        (0.13, 0.12)
    """
    return float(Decimal(repr(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def fmt(score: float | None) -> str:
    """A score as the reasons write it (``0.5``, ``1``)."""
    return f"{score:g}" if score is not None else "unknown"


def share_phrase(hits: int, total: int, noun: str, quality: str) -> str:
    """How many of ``total`` items have ``quality``, in words.

    Example:
        >>> share_phrase(0, 1, "statement", "toxic")
        'the only statement is not toxic'
        >>> share_phrase(2, 5, "opinion", "biased")
        '2 of 5 opinions are biased'
    """
    if hits == 0:
        if total == 1:
            return f"the only {noun} is not {quality}"
        return f"none of the {total} {noun}s is {quality}"
    nouns = noun if total == 1 else f"{noun}s"
    return f"{hits} of {total} {nouns} {'is' if hits == 1 else 'are'} {quality}"


def defect_label(score: float, *, scale: float = 1.0) -> str:
    """The label of a score where higher is worse: bands on ``score / scale`` (Mastra's
    hallucination bands, gaps closed at midpoints).

    Example:
        >>> defect_label(0.0), defect_label(0.2), defect_label(1.0)
        ('none', 'low', 'severe')
    """
    ratio = score / scale
    if ratio <= 0:
        return "none"
    bands = ((0.45, "low"), (0.65, "mixed"), (0.85, "high"))  # upper bounds
    return next((label for bound, label in bands if ratio < bound), "severe")


def quality_label(
    score: float, *, scale: float = 1.0, labels: tuple[str, ...] = JUDGED_QUALITY_LABELS
) -> str:
    """The label of a judged score where higher is better: the defect bands mirrored, so
    a faithfulness score of ``1 - h`` gets the mirror of the hallucination label of ``h``
    (``labels`` renames them, worst first).

    Example:
        >>> quality_label(1.0), quality_label(0.6), quality_label(0.1)
        ('full', 'high', 'poor')
        >>> quality_label(0.5, labels=FAITHFULNESS_LABELS)
        'mixed'
    """
    poor, low, moderate, high, full = labels
    ratio = score / scale
    if ratio >= 1:
        return full
    bands = ((0.55, high), (0.35, moderate), (0.15, low))  # lower bounds
    return next((label for bound, label in bands if ratio > bound), poor)


def ground_truth_text(run: Run, limit: int) -> str | None:
    """The run's ground truth as text (cut at ``limit``), or ``None`` without one: messages
    give their text, other values (a dict of expected fields) become JSON, as in Mastra.

    Example:
        >>> ground_truth_text(Run(ground_truth={"city": "Lyon"}), 100)
        '{"city": "Lyon"}'
        >>> ground_truth_text(Run(), 100) is None
        True
    """
    value = run.ground_truth
    if value is None:
        return None
    if isinstance(value, str):
        text = value
    else:
        try:
            text = message_text(value) if not isinstance(value, Mapping) else ""
        except TypeError:
            text = ""
        if not text:
            text = json.dumps(value, ensure_ascii=False, default=str)
    return text[:limit]


def optional_user_text(run: Run, limit: int) -> str | None:
    """The user's message (cut at ``limit``), or ``None`` without one."""
    try:
        text = get_user_message(run)
    except TypeError:
        return None
    return None if text is None or not text.strip() else text[:limit]


def reason_step(
    system: str,
    prompt: Callable[[StepContext], str],
    summary: Callable[[StepContext], str],
    skip_if: Callable[[StepContext], bool],
) -> PromptStep[Any]:
    """The step that asks the judge to explain the score, else ``summary`` (written in code)."""
    return PromptStep(
        description="Explain the score",
        output_schema=None,
        system=system,
        create_prompt=prompt,
        parse=lambda text, ctx: str(text).strip() or summary(ctx),
        skip_if=skip_if,
        skip_result=summary,
    )


class AnalysisJudging(abc.ABC):
    """The steps of a judge scorer whose judge gives one structured analysis, then a reason
    (prompt alignment, LLM tool-call accuracy: analyses that are not one verdict per item, so
    not a :class:`~livescore.scorers.JudgeSpec`). Three-step mode asks for the analysis, then
    the reason (two calls); in one-call mode one answer holds both, and its reason follows the
    one :meth:`summary` writes from the analysis."""

    name: ClassVar[str]  # the scorer's name in errors
    reason_system: ClassVar[str]  # the reason step's system prompt
    description: str
    preprocess: StepFunction | None = None  # a step before the analysis, where there is one

    @abc.abstractmethod
    def analyze(self, one_call: bool) -> PromptStep[Any]:
        """The analysis step; it parses the judge's answer with :meth:`keep`."""

    @abc.abstractmethod
    def analysis_of(self, answer: Any, ctx: StepContext) -> dict[str, Any]: ...

    @abc.abstractmethod
    def score(self, ctx: StepContext) -> float:
        """The score from the analysis; it records the score's flags and span attributes."""

    @abc.abstractmethod
    def label(self, score: float) -> str: ...

    @abc.abstractmethod
    def reason_prompt(self, ctx: StepContext) -> str: ...

    @abc.abstractmethod
    def summary(self, ctx: StepContext) -> str:
        """The reason written from the analysis, where the judge gives none."""

    def no_reason_call(self, ctx: StepContext) -> bool:
        return False  # three-step mode asks for every reason

    def keep(self, answer: Any, ctx: StepContext) -> dict[str, Any]:
        """The analysis; a one-call answer's reason waits in ``ctx.state`` for :meth:`explain`."""
        ctx.state["reason"] = str(getattr(answer, "reason", "")).strip()
        return self.analysis_of(answer, ctx)

    def explain(self, ctx: StepContext) -> str:
        """The one-call reason: the summary, then the judge's."""
        judge_reason = ctx.state.get("reason", "")
        return self.summary(ctx) + (f" {judge_reason}" if judge_reason else "")

    def scorer(
        self,
        *,
        model: str | Judge,
        judge_mode: JudgeMode,
        id: str,
        max_text_chars: int,
        judge_options: Mapping[str, Any] | None,
        redact: RedactSpec | None,
        calibration: CalibrationSpec | None,
    ) -> Scorer:
        """The scorer, its arguments those of :func:`~livescore.scorers.judge_scorer`."""
        one_call = judge_mode_of(judge_mode, scorer=self.name) == "one_call"
        judge = resolve_model(model, judge_options, scorer=self.name)
        explain: PromptStep[Any] | StepFunction = self.explain
        if not one_call:
            explain = reason_step(
                self.reason_system, self.reason_prompt, self.summary, self.no_reason_call
            )
        return create_scorer(
            id=id,
            description=self.description,
            model=judge,
            preprocess=self.preprocess,
            analyze=self.analyze(one_call),
            generate_score=self.score,
            generate_reason=explain,
            label=self.label,
            max_text_chars=max_text_chars,
            sync_steps="inline",
            redact=redact,
            calibration=calibration,
        )
