"""The prompt alignment scorer: does the answer do what its prompt asked, the way it asked?"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import suppress
from typing import Annotated, Any, Literal, TypeAlias, cast, get_args

from pydantic import BaseModel, Field

from livescore._catalog import ScorerOptions, catalog_entry
from livescore._messages import message_text
from livescore._text import DEFAULT_MAX_TEXT_CHARS
from livescore.judges import Judge
from livescore.otel import attributes as A
from livescore.pii import RedactSpec
from livescore.runs import Run
from livescore.scorers._judged import (
    AnalysisJudging,
    JudgeMode,
    check_scale,
    fmt,
    quality_label,
    round2,
)
from livescore.scorers._prompting import block, data_rule, explain_system, quote
from livescore.scoring import CalibrationSpec, NotScorable, PromptStep, Scorer, StepContext

__all__ = (
    "ALIGNMENT_WEIGHTS",
    "AlignmentAnalysis",
    "AlignmentMode",
    "AlignmentOneCallAnswer",
    "BothAlignmentAnalysis",
    "BothAlignmentOneCallAnswer",
    "create_prompt_alignment_scorer",
    "find_system_prompt",
)

AlignmentMode: TypeAlias = Literal["user", "system", "both"]
"""What the answer is judged against: the user's prompt, the system prompt, or both."""

_MODES: tuple[AlignmentMode, ...] = get_args(AlignmentMode)

ALIGNMENT_WEIGHTS: dict[str, dict[str, float]] = {
    "user": {
        "intent_alignment": 0.4,
        "requirements_fulfillment": 0.3,
        "completeness": 0.2,
        "response_appropriateness": 0.1,
    },
    "system": {
        "intent_alignment": 0.35,
        "requirements_fulfillment": 0.35,
        "completeness": 0.15,
        "response_appropriateness": 0.15,
    },
}
"""The weight of each dimension, per prompt (Mastra's); ``both`` is 0.7 user + 0.3 system."""

BOTH_WEIGHTS = {"user": 0.7, "system": 0.3}

Unit = Annotated[float, Field(ge=0, le=1)]


class IntentAlignment(BaseModel):
    """Whether the answer addresses the prompt's purpose (0 to 1)."""

    score: Unit
    primary_intent: str
    is_addressed: bool
    reasoning: str


class Requirement(BaseModel):
    """One explicit or clearly implied requirement, and whether the answer fulfils it."""

    requirement: str
    is_fulfilled: bool
    reasoning: str


class RequirementsFulfillment(BaseModel):
    """The prompt's requirements (their share fulfilled is computed, not asked)."""

    requirements: list[Requirement]


class Completeness(BaseModel):
    """Whether the answer covers everything asked (0 to 1), and what it leaves out."""

    score: Unit
    missing_elements: list[str]
    reasoning: str


class ResponseAppropriateness(BaseModel):
    """Whether format and tone fit what was asked (0 to 1)."""

    score: Unit
    format_alignment: bool
    tone_alignment: bool
    reasoning: str


class AlignmentAnalysis(BaseModel):
    """The answer against one prompt, on the four dimensions (Mastra's names)."""

    intent_alignment: IntentAlignment
    requirements_fulfillment: RequirementsFulfillment
    completeness: Completeness
    response_appropriateness: ResponseAppropriateness
    overall_assessment: str


class BothAlignmentAnalysis(BaseModel):
    """``evaluation_mode="both"``: the answer against each prompt, separately."""

    user: AlignmentAnalysis
    system: AlignmentAnalysis


class AlignmentOneCallAnswer(AlignmentAnalysis):
    """The one-call answer against one prompt: the analysis, then the reason."""

    reason: str


class BothAlignmentOneCallAnswer(BothAlignmentAnalysis):
    """The one-call answer of ``evaluation_mode="both"``: both analyses, then the reason."""

    reason: str


def find_system_prompt(run: Run) -> str | None:
    """The system prompt the agent ran with, as recorded in the run; ``None`` if absent.

    Looked for, in order: system (or developer) messages in the run's input; in the input of
    its first model turn (where the LangChain integration records the prompt the model got);
    ``run.metadata["system_prompt"]`` or ``["instructions"]``.

    Example:
        >>> find_system_prompt(Run(input=[{"role": "system", "content": "Be brief."},
        ...                               {"role": "user", "content": "Hi"}]))
        'Be brief.'
        >>> find_system_prompt(Run(input="Hi")) is None
        True
    """
    first_turn = next((step.input for step in run.steps if step.kind == "model"), None)
    found = _system_text(run.input) or _system_text(first_turn)
    if found:
        return found
    for key in ("system_prompt", "instructions"):
        value = run.metadata.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def _role(message: Any) -> str | None:
    if isinstance(message, Mapping):
        role = message.get("role") or message.get("type")
    else:
        role = getattr(message, "role", None) or getattr(message, "type", None)
    return role if isinstance(role, str) else None


def _system_text(value: Any) -> str | None:
    if isinstance(value, Mapping) and "messages" in value:
        value = value["messages"]
    if isinstance(value, str | bytes | bytearray) or not isinstance(value, Sequence):
        return None
    texts: list[str] = []
    for message in value:
        if isinstance(message, Sequence) and not isinstance(message, str | bytes | bytearray):
            texts.append(_system_text(message) or "")  # a chat model's batch: [[messages]]
        elif _role(message) in ("system", "developer"):
            with suppress(TypeError):  # a message without text
                texts.append(message_text(message))
    return "\n\n".join(text for text in texts if text.strip()) or None


# -- prompts ----------------------------------------------------------------------------------

_TAGS = ("user_prompt", "system_prompt", "output", "analysis")

_SYSTEM = """\
You judge how well an AI system's answer aligns with the prompt it was given{task}.

Judge the answer against the prompt on four dimensions:
- "intent_alignment": the prompt's primary purpose ("primary_intent"), whether the answer \
addresses it ("is_addressed"), and a "score" from 0 (misses it) to 1 (fully addresses it).
- "requirements_fulfillment": every explicit or clearly implied requirement of the \
prompt ("requirements": tasks, constraints, formats, rules), each with "is_fulfilled". For \
a system prompt, the requirements are its rules and constraints.
- "completeness": a "score" from 0 to 1 for how fully the answer covers what the prompt \
asks, and the "missing_elements".
- "response_appropriateness": whether the format ("format_alignment") and the tone \
("tone_alignment") fit what the prompt asks or implies, and a "score" from 0 to 1.
Each part has a short "reasoning"; "overall_assessment" sums it up. Judge alignment with \
the prompt, not the correctness of facts.{reason}

{data_rule}

Answer with JSON only, following the schema."""

ANALYZE_SYSTEM = _SYSTEM.format(task="", reason="", data_rule=data_rule(_TAGS))

ONE_CALL_SYSTEM = _SYSTEM.format(
    task=", and explain, in one JSON answer",
    reason='\nLast, "reason": two or three sentences for the developer on the main strengths '
    "and gaps of the alignment. Do not give a numeric score in it.",
    data_rule=data_rule(_TAGS),
)

_TARGET = {
    "user": "the user's prompt in the <user_prompt> block",
    "system": "the system prompt (the agent's standing instructions) in the <system_prompt> block",
    "both": "the user's prompt in the <user_prompt> block and, separately, the system prompt "
    "in the <system_prompt> block",
}

# -- the scorer -------------------------------------------------------------------------------


class _Alignment(AnalysisJudging):
    """The prompt alignment scorer's steps, for one evaluation mode."""

    name = "prompt-alignment"
    reason_system = explain_system("prompt-alignment", _TAGS)

    def __init__(
        self, mode: AlignmentMode, system_prompt: str | None, scale: float, max_text_chars: int
    ) -> None:
        self.mode, self.system_prompt = mode, system_prompt
        self.scale, self.max_text_chars = scale, max_text_chars
        self.description = f"How well the answer follows the {mode} prompt, from 0 to {scale:g}"

    def prompts(self, ctx: StepContext) -> dict[str, str]:
        """The prompts the mode judges against, by tag; a run without one is not scorable."""
        found = {}
        if self.mode in ("user", "both"):
            found["user_prompt"] = ctx.input_text  # no user text: not scorable (StepContext's)
            if not found["user_prompt"].strip():
                raise NotScorable("the user's prompt is empty: nothing to align the answer with")
        if self.mode in ("system", "both"):
            system = self.system_prompt or find_system_prompt(ctx.run)
            if not system or not system.strip():
                raise NotScorable(
                    f"no system prompt (evaluation_mode={self.mode!r}): pass system_prompt=..., "
                    "or record the system message in the run (its input, its first model "
                    "turn's input, or metadata['system_prompt'])"
                )
            found["system_prompt"] = system[: self.max_text_chars]
        return found

    def empty_output(self, ctx: StepContext) -> bool:
        self.prompts(ctx)  # before any call: a run that cannot be scored costs nothing
        return not ctx.output_text.strip()

    def analyze(self, one_call: bool) -> PromptStep[Any]:
        schema: type[BaseModel] = AlignmentOneCallAnswer if one_call else AlignmentAnalysis
        shape = "{the analysis"
        if self.mode == "both":
            schema = BothAlignmentOneCallAnswer if one_call else BothAlignmentAnalysis
            shape = '{"user": {analysis against the user prompt}, "system": {analysis against '
            shape += "the system prompt}"
        shape += ', "reason": "..."}' if one_call else "}"

        def prompt(ctx: StepContext) -> str:
            texts = {**self.prompts(ctx), "output": ctx.output_text}
            blocks = "\n\n".join(block(tag, text) for tag, text in texts.items())
            return (
                f"Judge how well the answer in the <output> block aligns with "
                f"{_TARGET[self.mode]}.\n\n{blocks}\n\nAnswer with JSON only: {shape}."
            )

        return PromptStep(
            description=f"Judge the answer against the {self.mode} prompt"
            + (" and explain" if one_call else ""),
            output_schema=schema,
            system=ONE_CALL_SYSTEM if one_call else ANALYZE_SYSTEM,
            create_prompt=prompt,
            parse=self.keep,
            skip_if=self.empty_output,
            skip_result=lambda ctx: {"scores": {}},
        )

    def analysis_of(self, answer: Any, ctx: StepContext) -> dict[str, Any]:
        # The reason of a one-call answer is not part of the analysis.
        result: dict[str, Any] = answer.model_dump(exclude={"reason"})
        if self.mode != "both":
            result = {self.mode: result}
        # Kept to 4 decimals: a sum of weights such as 0.4 + 0.3 + 0.2 + 0.1 is not 1.0
        # in floating point.
        result["scores"] = {
            t: round(_prompt_score(t, result[t]), 4) for t in ("user", "system") if t in result
        }
        return result

    def score(self, ctx: StepContext) -> float:
        result = ctx.analyze_step_result
        scores = result["scores"]  # one per prompt judged; none for an empty answer
        requirements = [r for target in scores for r in _requirements(result[target])]
        total, fulfilled = len(requirements), _fulfilled(requirements)
        ctx.flags.update(requirements_total=total, requirements_fulfilled=fulfilled)
        ctx.attributes[A.LIVESCORE_ALIGNMENT_MODE] = self.mode
        ctx.attributes[A.LIVESCORE_REQUIREMENTS_TOTAL] = total
        ctx.attributes[A.LIVESCORE_REQUIREMENTS_FULFILLED] = fulfilled
        weights = BOTH_WEIGHTS if self.mode == "both" else {self.mode: 1.0}
        value = sum(weights[target] * score for target, score in scores.items())
        return round2(value * self.scale)

    def label(self, score: float) -> str:
        return quality_label(score, scale=self.scale)

    def no_reason_call(self, ctx: StepContext) -> bool:
        return not ctx.analyze_step_result["scores"]  # an empty answer

    def reason_prompt(self, ctx: StepContext) -> str:
        result, score_text = ctx.analyze_step_result, fmt(ctx.score)
        parts = []
        for target, score in result["scores"].items():
            analysis = result[target]
            requirements = _requirements(analysis)
            missed = "; ".join(
                quote(r["requirement"]) for r in requirements if not r["is_fulfilled"]
            )
            parts.append(
                f'<analysis prompt="{target}" score="{fmt(score)}">\n'
                f"intent {analysis['intent_alignment']['score']:g}: "
                f"{quote(analysis['intent_alignment']['reasoning'])}\n"
                f"requirements {_fulfilled(requirements)} of {len(requirements)} fulfilled"
                + (f"; not fulfilled: {missed}" if missed else "")
                + f"\ncompleteness {analysis['completeness']['score']:g}: "
                f"{quote(analysis['completeness']['reasoning'])}\n"
                f"appropriateness {analysis['response_appropriateness']['score']:g}: "
                f"{quote(analysis['response_appropriateness']['reasoning'])}\n"
                f"overall: {quote(analysis['overall_assessment'])}\n</analysis>"
            )
        joined = "\n".join(parts)
        weights = ""
        if self.mode == "both":
            weights = "; the user prompt counts 70% and the system prompt 30%"
        return (
            f"A prompt-alignment check ({self.mode} prompt) scored an AI answer {score_text} on "
            f"a scale from 0 to {self.scale:g} (intent 40%, requirements 30%, completeness 20%, "
            f"format and tone 10%; for a system prompt 35/35/15/15{weights}).\n\n{joined}\n\n"
            f'Explain the score. Start with "The score is {score_text} because" and name the main '
            "strengths and gaps."
        )

    def summary(self, ctx: StepContext) -> str:
        scores = ctx.analyze_step_result["scores"]
        if not scores:
            return f"The score is {fmt(ctx.score)} because the answer is empty."
        parts = ", ".join(f"{t} prompt {fmt(round2(s))}" for t, s in scores.items())
        fulfilled = ctx.flags.get("requirements_fulfilled", 0)
        total = ctx.flags.get("requirements_total", 0)
        return (
            f"The score is {fmt(ctx.score)} because the alignment is {parts}, with {fulfilled} "
            f"of {total} requirements fulfilled."
        )


def create_prompt_alignment_scorer(
    *,
    model: str | Judge,
    evaluation_mode: AlignmentMode = "user",
    system_prompt: str | None = None,
    scale: float = 1.0,
    judge_mode: JudgeMode = "three_step",
    id: str = "prompt-alignment",
    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
    judge_options: Mapping[str, Any] | None = None,
    redact: RedactSpec | None = None,
    calibration: CalibrationSpec | None = None,
) -> Scorer:
    """Score how well the answer follows its prompt: intent, requirements, completeness,
    format and tone.

    Per prompt the score is 0.4 intent + 0.3 requirements (the share fulfilled, counted
    from the judge's list) + 0.2 completeness + 0.1 format and tone; against the system
    prompt 0.35 / 0.35 / 0.15 / 0.15. ``"both"`` judges the answer against each prompt
    separately and combines them 70 / 30 (Mastra copies the user score into the system
    one). Higher is better.

    Args:
        evaluation_mode: The prompt judged against: ``"user"`` (the user's message),
            ``"system"`` (the agent's system prompt: its rules and constraints) or ``"both"``.
        system_prompt: The agent's system prompt, when you know it up front; otherwise it
            is read from each run (see :func:`find_system_prompt`).

    The other arguments are those of :func:`~livescore.scorers.judge_scorer`.

    Returns:
        A scorer whose ``analyze_step_result`` holds the analysis of each prompt judged
        (``"user"``, ``"system"``) and their ``"scores"``, with
        ``flags["requirements_total"]`` / ``["requirements_fulfilled"]``. An empty answer
        scores 0 without a call; a run without the prompt the mode needs is skipped.

    Raises:
        ValueError: A bad ``evaluation_mode``, or an empty ``system_prompt``.

    Example:
        >>> from livescore.testing import ScriptedJudge
        >>> analysis = {
        ...     "intent_alignment": {"score": 1, "primary_intent": "A haiku",
        ...                          "is_addressed": True, "reasoning": "It is one."},
        ...     "requirements_fulfillment": {"requirements": [
        ...         {"requirement": "About autumn", "is_fulfilled": False,
        ...          "reasoning": "It is about spring."}]},
        ...     "completeness": {"score": 1, "missing_elements": [], "reasoning": "Whole."},
        ...     "response_appropriateness": {"score": 1, "format_alignment": True,
        ...                                  "tone_alignment": True, "reasoning": "Fine."},
        ...     "overall_assessment": "A spring haiku."}
        >>> judge = ScriptedJudge([analysis, "The score is 0.7 because the season is wrong."])
        >>> scorer = create_prompt_alignment_scorer(model=judge)
        >>> result = scorer.run_sync({"input": "Write a haiku about autumn.",
        ...                           "output": "Cherry blossoms fall..."})
        >>> result.score, result.label
        (0.7, 'high')
    """
    arguments = dict(locals())  # passed on to AnalysisJudging.scorer, but for these three
    for own in ("evaluation_mode", "system_prompt", "scale"):
        del arguments[own]
    if evaluation_mode not in _MODES:
        raise ValueError(
            f"evaluation_mode must be 'user', 'system' or 'both', not {evaluation_mode!r}"
        )
    if system_prompt is not None and not (isinstance(system_prompt, str) and system_prompt.strip()):
        raise ValueError("system_prompt must be a non-empty string (or None to read it from runs)")
    alignment = _Alignment(evaluation_mode, system_prompt, check_scale(scale), max_text_chars)
    return alignment.scorer(**arguments)


def _requirements(analysis: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return cast(list[Mapping[str, Any]], analysis["requirements_fulfillment"]["requirements"])


def _fulfilled(requirements: Sequence[Mapping[str, Any]]) -> int:
    return sum(1 for r in requirements if r["is_fulfilled"])


def _prompt_score(target: str, analysis: Mapping[str, Any]) -> float:
    requirements = _requirements(analysis)
    # Computed, not asked: a prompt with no requirement leaves nothing unfulfilled.
    fulfilled = _fulfilled(requirements) / len(requirements) if requirements else 1.0
    return float(
        sum(
            weight * (fulfilled if name == "requirements_fulfillment" else analysis[name]["score"])
            for name, weight in ALIGNMENT_WEIGHTS[target].items()
        )
    )


# -- in the catalog ---------------------------------------------------------------------------


@catalog_entry(
    "prompt-alignment",
    family="answer",
    summary="how well the answer follows its prompt: intent, requirements, "
    "completeness, format and tone",
    needs_judge=True,
    argument="MODE: user (default), system or both",
    factory="livescore.scorers.create_prompt_alignment_scorer",
    span_attributes={
        "livescore.alignment.mode": "the prompt judged against: user, system or both",
        "livescore.requirements.total": "requirements found in the prompt",
        "livescore.requirements.fulfilled": "requirements the answer fulfils",
    },
    examples=("prompt-alignment", "prompt-alignment:both"),
)
def _build(argument: str | None, options: ScorerOptions) -> Scorer:
    mode = cast(AlignmentMode, argument or "user")
    if mode not in _MODES:
        raise ValueError(f"prompt-alignment judges against user, system or both, not {mode!r}")
    return create_prompt_alignment_scorer(
        model=options.require_model(),
        evaluation_mode=mode,
        judge_mode=options.judge_mode,
    )
