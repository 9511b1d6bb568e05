"""The scorer pipeline: ``get_context → preprocess → analyze → generate_score → generate_reason``.

Each step is a plain function (sync or async) of a :class:`StepContext`, or a
:class:`PromptStep` that the scorer's judge answers with structured output. Only
``generate_score`` is required. This is the Python form of Mastra's ``createScorer``.
"""

from __future__ import annotations

import inspect
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeAlias, TypeVar

import anyio
from pydantic import BaseModel

from livescore.judges._protocol import Judge, JudgeError, JudgeUsage
from livescore.runs._model import Run, RunLike, Step, coerce_run
from livescore.runs._readers import (
    NOT_SCORABLE_METADATA_KEY,
    get_assistant_message,
    get_user_message,
    message_text,
)
from livescore.scoring._result import NotScorable, ScoreResult, ScorerRunError

__all__ = (
    "DEFAULT_MAX_TEXT_CHARS",
    "ContextFunction",
    "PromptStep",
    "Scorer",
    "StepContext",
    "StepFunction",
    "create_scorer",
)

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")

DEFAULT_MAX_TEXT_CHARS = 50_000
"""Longest input, output or context text (in characters) a scorer reads before truncating.

Megabyte outputs are cut, not sent whole to a judge; the cut is recorded in ``flags``."""


@dataclass(slots=True)
class StepContext:
    """What every step sees.

    Attributes:
        run: The run being scored.
        step: The agent step being scored (the final model turn for a run-level score).
        context: Ground truth resolved once per score by ``get_context`` (or the static
            context); ``None`` when the scorer has neither.
        input_text: The user's message as text, truncated to the scorer's limit.
        output_text: The agent's answer as text, truncated to the scorer's limit.
        preprocess_step_result: Set once preprocess has run.
        analyze_step_result: Set once analyze has run.
        score: Set once generate_score has run.
        flags: Facts recorded on the result (truncation, …); steps may add to it.
        state: Scratch space the steps of one score share (a prompt step's ``parse`` may
            keep part of an answer here for a later step); not recorded in the result.
    """

    run: Run
    step: Step | None
    context: list[str] | None
    input_text: str
    output_text: str
    preprocess_step_result: Any = None
    analyze_step_result: Any = None
    score: float | None = None
    flags: dict[str, Any] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)


StepFunction: TypeAlias = Callable[[StepContext], Any]
"""A step written in code: ``(ctx) -> value`` or ``async (ctx) -> value``."""

ContextFunction: TypeAlias = Callable[[Run, Step | None], Any]
"""``get_context(run, step)``: returns a list of strings (or one string, or ``None``),
sync or async."""


@dataclass(frozen=True, slots=True)
class PromptStep(Generic[M]):
    """A step the judge answers.

    Attributes:
        description: What the step does (shown in docs and errors).
        output_schema: A pydantic model the answer must fit; ``None`` asks for free text.
            The step result is the answer as a plain dict (``model_dump()``), or the text.
        create_prompt: Builds the user prompt from the context.
        system: The system prompt (the judge's standing instructions).
        validate: Optional extra check of a well-formed answer; raise ``ValueError`` to ask
            the judge once more with the problem spelled out.
        skip_if: Optional predicate; when it returns true the judge is not called (no
            prompt, no cost) and the step result is ``skip_result(ctx)`` instead. For
            answers known without a model: nothing to extract from an empty output.
        skip_result: The step result when ``skip_if`` holds (sync or async); ``None`` when
            not given.
        parse: Optional ``(answer, ctx) -> step result``, replacing the default
            ``model_dump()`` (or the text itself); lets one answer feed several steps.

    Example:
        >>> from pydantic import BaseModel
        >>> class Claims(BaseModel):
        ...     claims: list[str]
        >>> step = PromptStep(
        ...     description="Extract claims",
        ...     output_schema=Claims,
        ...     create_prompt=lambda ctx: f"List the claims in: {ctx.output_text}",
        ...     skip_if=lambda ctx: not ctx.output_text.strip(),
        ...     skip_result=lambda ctx: {"claims": []},
        ... )
    """

    description: str
    output_schema: type[M] | None
    create_prompt: Callable[[StepContext], str]
    system: str = "You are a careful evaluator. Answer exactly in the requested format."
    validate: Callable[[M, StepContext], None] | None = None
    skip_if: Callable[[StepContext], bool] | None = None
    skip_result: StepFunction | None = None
    parse: Callable[[M, StepContext], Any] | None = None


Step_: TypeAlias = StepFunction | PromptStep[Any]
LabelFunction: TypeAlias = Callable[[float], str | None]


class Scorer:
    """A named scoring pipeline. Build one with :func:`create_scorer` or a prebuilt factory.

    Attributes:
        id: Stable id used in results, spans, metrics and the CLI.
        description: What the scorer measures.
        judge: The judge for prompt steps, or ``None`` for a code-only scorer.
        version: Recorded on every score (``livescore.scorer.version``).
    """

    def __init__(
        self,
        *,
        id: str,
        description: str,
        generate_score: Step_,
        judge: Judge | None = None,
        preprocess: Step_ | None = None,
        analyze: Step_ | None = None,
        generate_reason: Step_ | None = None,
        context: Sequence[str] | None = None,
        get_context: ContextFunction | None = None,
        label: LabelFunction | None = None,
        version: str = "1",
        max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
    ) -> None:
        if not id or not isinstance(id, str):
            raise ValueError("a scorer needs a non-empty string id")
        if generate_score is None:
            raise ValueError("generate_score is required")
        steps = {
            "preprocess": preprocess,
            "analyze": analyze,
            "generate_score": generate_score,
            "generate_reason": generate_reason,
        }
        for name, step in steps.items():
            if step is not None and not (isinstance(step, PromptStep) or callable(step)):
                raise TypeError(f"{name} must be a function or a PromptStep, not {step!r}")
            if isinstance(step, PromptStep) and judge is None:
                raise ValueError(
                    f"scorer {id!r}: {name} is a PromptStep, so the scorer needs a judge "
                    "(judge='openai/<model>' or a Judge object)"
                )
        if context is not None and (
            isinstance(context, str) or not all(isinstance(c, str) for c in context)
        ):
            raise TypeError("context must be a list of strings")
        if max_text_chars < 1:
            raise ValueError("max_text_chars must be positive")
        self.id = id
        self.description = description
        self.judge = judge
        self.version = version
        self.max_text_chars = max_text_chars
        self._steps = steps
        self._context = list(context) if context is not None else None
        self._get_context = get_context
        self._label = label

    def __repr__(self) -> str:
        judge = f", judge={self.judge.model!r}" if self.judge is not None else ""
        return f"Scorer(id={self.id!r}{judge})"

    def label_for(self, score: float) -> str | None:
        """The label of a score (``None`` when the scorer defines no labels)."""
        return self._label(score) if self._label is not None else None

    async def run(self, run: RunLike, *, step: Step | None = None) -> ScoreResult:
        """Score one run, raising when a step fails (for direct use; see :meth:`score`).

        Args:
            run: A :class:`~livescore.Run` or a mapping with ``input``, ``output``,
                ``ground_truth`` and ``run_id``.
            step: The agent step to score; the run's final model turn by default.

        Returns:
            A result with ``status`` ``"scored"`` or ``"skipped"``.

        Raises:
            ScorerRunError: A step failed; ``.step`` names it, ``.result`` holds the
                partial result.
            TypeError: ``run`` is not a run.
        """
        result, error = await self._execute(coerce_run(run), step, None)
        if error is not None:
            raise ScorerRunError(result.failed_step or "input", result, error) from error
        return result

    async def score(
        self,
        run: RunLike,
        *,
        step: Step | None = None,
        # A parameter, not the caller's fail_after: the result must name the step that
        # overran and keep the usage of the steps that finished.
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> ScoreResult:
        """Score one run and never raise: a failure is a result with ``status="failed"``.

        This is the one call live scoring, ``run_evals`` and fleet workers use, so a
        failure becomes a value in exactly one place. Only cancellation propagates.

        Args:
            run: A :class:`~livescore.Run` or a mapping (an unreadable one fails in step
                ``"input"``).
            step: The agent step to score; the run's final model turn by default.
            timeout: Seconds the whole score may take. Past it the score fails with
                ``error_type="timeout"``, the step that overran as ``failed_step``, and the
                judge usage of the steps that finished.

        Returns:
            A result whose ``status`` is ``"scored"``, ``"skipped"`` or ``"failed"`` (then
            ``failed_step``, ``error`` and ``error_type`` say what went wrong).

        Example:
            >>> import anyio
            >>> scorer = create_scorer(id="len", description="Length",
            ...                        generate_score=lambda ctx: 1 / len(ctx.output_text))
            >>> result = anyio.run(lambda: scorer.score({"input": "hi", "output": ""}))
            >>> result.status, result.failed_step, result.error_type
            ('failed', 'generate_score', 'ZeroDivisionError')
        """
        try:
            coerced = coerce_run(run)
        except Exception as exc:
            result = ScoreResult(
                run_id=_run_id_of(run),
                scorer_id=self.id,
                judge_model=self.judge.model if self.judge is not None else None,
            )
            _record_failure(result, "input", exc)
            return result
        result, _ = await self._execute(coerced, step, timeout)
        return result

    async def _execute(
        self,
        run: Run,
        step: Step | None,
        timeout: float | None,  # noqa: ASYNC109
    ) -> tuple[ScoreResult, Exception | None]:
        started = time.perf_counter()
        result = ScoreResult(
            run_id=run.run_id,
            scorer_id=self.id,
            judge_model=self.judge.model if self.judge is not None else None,
        )
        error: Exception | None = None
        current = "input"
        overran: str | None = None  # the step during which the time ran out

        def check_time() -> None:
            nonlocal overran
            late = timeout is not None and time.perf_counter() - started > timeout
            if overran is None and late:
                overran = current

        # move_on_after, not fail_after: a step that raises TimeoutError itself is that
        # step's failure, not the scorer's timeout.
        with anyio.move_on_after(timeout) as scope:
            try:
                ctx = self._start(run, step, result)
                current = "get_context"
                ctx.context = await self._resolve_context(run, ctx.step)
                check_time()
                for current in ("preprocess", "analyze", "generate_score", "generate_reason"):
                    await self._run_step(current, ctx, result)
                    check_time()
            except NotScorable as skip:
                result.status = "skipped"
                result.reason = skip.reason
                result.score = None
            except Exception as exc:
                error = exc
                _record_failure(result, current, exc)
        result.duration_s = time.perf_counter() - started
        if scope.cancelled_caught:
            overran = current
        if error is None and overran is not None:
            # A synchronous step can overrun without reaching a checkpoint where the
            # cancel scope could fire: the elapsed time decides too.
            assert timeout is not None
            error = TimeoutError(
                f"scorer {self.id!r} took longer than {timeout:g} s (in step {overran!r})"
            )
            _record_failure(result, overran, error)
            result.error_type = "timeout"
        return result, error

    def run_sync(self, run: RunLike, *, step: Step | None = None) -> ScoreResult:
        """Score one run from synchronous code (scripts, notebooks without a running loop).

        Example:
            >>> from livescore.scorers import create_keyword_coverage_scorer
            >>> scorer = create_keyword_coverage_scorer()
            >>> scorer.run_sync({"input": "React hooks", "output": "Hooks in React"}).score
            1.0
        """
        return anyio.run(lambda: self.run(run, step=step))

    # -- pipeline internals -------------------------------------------------------------

    def _start(self, run: Run, step: Step | None, result: ScoreResult) -> StepContext:
        not_scorable = run.metadata.get(NOT_SCORABLE_METADATA_KEY)
        if not_scorable:  # an integration knows the run has nothing to judge
            raise NotScorable(str(not_scorable))
        flags = result.flags
        try:
            input_text = get_user_message(run)
            output_text = get_assistant_message(run)
        except TypeError as exc:
            raise TypeError(f"run {run.run_id!r}: input and output must be text: {exc}") from exc
        return StepContext(
            run=run,
            step=step if step is not None else run.final_step,
            context=None,
            input_text=_truncate(input_text, self.max_text_chars, "input_truncated", flags),
            output_text=_truncate(output_text, self.max_text_chars, "output_truncated", flags),
            flags=flags,
        )

    async def _resolve_context(self, run: Run, step: Step | None) -> list[str] | None:
        # get_context overrides the static context and is called once per score (Mastra
        # calls it once per step, which doubles its cost and can disagree with itself).
        if self._get_context is None:
            return self._context
        value = self._get_context(run, step)
        if inspect.isawaitable(value):
            value = await value
        if value is None:
            return []
        if isinstance(value, str):
            return [value]
        if not isinstance(value, Sequence):
            raise TypeError(
                f"get_context must return a list of strings, not {type(value).__name__}"
            )
        return [v if isinstance(v, str) else message_text(v) for v in value]

    async def _run_step(self, name: str, ctx: StepContext, result: ScoreResult) -> None:
        step = self._steps[name]
        if step is None:
            return
        prompt: str | None
        if isinstance(step, PromptStep) and step.skip_if is not None and step.skip_if(ctx):
            skip_result = step.skip_result
            value, prompt = (await _call(skip_result, ctx) if skip_result else None), None
        elif isinstance(step, PromptStep):
            value, prompt = await self._ask_judge(name, step, ctx, result)
        else:
            value, prompt = await _call(step, ctx), None
        if name == "preprocess":
            ctx.preprocess_step_result = result.preprocess_step_result = value
            result.preprocess_prompt = prompt
        elif name == "analyze":
            ctx.analyze_step_result = result.analyze_step_result = value
            result.analyze_prompt = prompt
        elif name == "generate_score":
            score = _as_score(value)
            ctx.score = result.score = score
            result.label = self.label_for(score)
        else:
            result.reason = None if value is None else str(value)
            result.generate_reason_prompt = prompt

    async def _ask_judge(
        self, name: str, step: PromptStep[Any], ctx: StepContext, result: ScoreResult
    ) -> tuple[Any, str]:
        assert self.judge is not None  # checked in __init__
        prompt = step.create_prompt(ctx)
        usage = result.step_usage.setdefault(name, JudgeUsage())
        value: Any
        try:
            if step.output_schema is None:
                text_reply = await self.judge.generate_text(system=step.system, prompt=prompt)
                reply_usage, value = text_reply.usage, text_reply.value
            else:
                check = step.validate
                validate = (lambda answer: check(answer, ctx)) if check is not None else None
                reply = await self.judge.generate_object(
                    system=step.system,
                    prompt=prompt,
                    schema=step.output_schema,
                    validate=validate,
                )
                reply_usage, value = reply.usage, reply.value
        except JudgeError as exc:
            usage.add(exc.usage)
            raise
        usage.add(reply_usage)
        result.usage.add(reply_usage)
        # The answer was paid for: count it before parse, which may still fail.
        if step.parse is not None:
            value = step.parse(value, ctx)
        elif name == "generate_score":
            value = getattr(value, "score", value)
        elif isinstance(value, BaseModel):
            value = value.model_dump()
        return value, prompt


def _record_failure(result: ScoreResult, step: str, exc: Exception) -> None:
    result.status = "failed"
    result.score = None
    result.label = None
    result.failed_step = step
    result.error = str(exc) or type(exc).__name__
    result.error_type = exc.error_type if isinstance(exc, JudgeError) else type(exc).__name__
    if isinstance(exc, JudgeError):
        result.usage.add(exc.usage)


def _run_id_of(run: object) -> str:
    value = run.get("run_id") if isinstance(run, dict) else getattr(run, "run_id", None)
    return value if isinstance(value, str) and value else "unknown"


async def _call(fn: Callable[[StepContext], Any], ctx: StepContext) -> Any:
    value = fn(ctx)
    if inspect.isawaitable(value):
        value = await value
    return value


def _as_score(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"generate_score must return a number, not {type(value).__name__}")
    score = float(value)
    if not math.isfinite(score):
        raise ValueError(f"generate_score returned {score}, which is not a finite number")
    return score


def _truncate(text: str, limit: int, flag: str, flags: dict[str, Any]) -> str:
    if len(text) <= limit:
        return text
    flags[flag] = True
    flags[flag.replace("_truncated", "_chars")] = len(text)
    return text[:limit]


def create_scorer(
    *,
    id: str,
    description: str,
    generate_score: StepFunction | PromptStep[Any],
    judge: Judge | str | None = None,
    preprocess: StepFunction | PromptStep[Any] | None = None,
    analyze: StepFunction | PromptStep[Any] | None = None,
    generate_reason: StepFunction | PromptStep[Any] | None = None,
    context: Sequence[str] | None = None,
    get_context: ContextFunction | None = None,
    label: Callable[[float], str | None] | None = None,
    version: str = "1",
    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
) -> Scorer:
    """Build a scorer from steps, each a function (sync or async) or a :class:`PromptStep`.

    Args:
        id: Stable id (``"my-scorer"``) used in results, spans, metrics and the CLI.
        description: What the scorer measures.
        generate_score: Required. Returns the score (a finite number).
        judge: ``"openai/<model>"``, a :class:`~livescore.judges.Judge`, or ``None`` for a
            code-only scorer.
        preprocess: Optional first step; its result is ``ctx.preprocess_step_result``.
        analyze: Optional second step; its result is ``ctx.analyze_step_result``.
        generate_reason: Optional last step; returns the explanation text.
        context: Static ground truth, as ``ctx.context``.
        get_context: ``get_context(run, step)`` resolving ground truth at scoring time; it
            overrides ``context`` and runs once per score.
        label: Maps a score to a low-cardinality label.
        version: Recorded on every score.
        max_text_chars: Input and output text beyond this length is truncated (and flagged).

    Example:
        >>> scorer = create_scorer(
        ...     id="answer-length",
        ...     description="Share of a 100-character budget the answer uses",
        ...     generate_score=lambda ctx: min(len(ctx.output_text) / 100, 1.0),
        ... )
        >>> scorer.run_sync({"input": "hi", "output": "x" * 50}).score
        0.5
    """
    from livescore.judges import resolve_judge

    return Scorer(
        id=id,
        description=description,
        generate_score=generate_score,
        judge=resolve_judge(judge) if judge is not None else None,
        preprocess=preprocess,
        analyze=analyze,
        generate_reason=generate_reason,
        context=context,
        get_context=get_context,
        label=label,
        version=version,
        max_text_chars=max_text_chars,
    )
