"""The scorer pipeline: ``get_context → preprocess → analyze → generate_score →
generate_reason``, each step a function of the :class:`StepContext` or a :class:`PromptStep`
the judge answers (the Python form of Mastra's ``createScorer``)."""

from __future__ import annotations

import asyncio
import copy
import functools
import inspect
import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeAlias, TypeVar, cast

import anyio
from anyio.lowlevel import RunVar
from pydantic import BaseModel

from livescore import _attributes as A
from livescore._errors import NotScorable, ScorerRunError, exception_message
from livescore._messages import message_text
from livescore._text import DEFAULT_MAX_TEXT_CHARS
from livescore._threads import run_in_thread
from livescore.judges import (
    BudgetTicket,
    Classification,
    Judge,
    JudgeBudget,
    JudgeError,
    JudgeReply,
    JudgeUsage,
    budget_of,
    classify_with_object,
    price_of,
    resolve_judge,
)
from livescore.pii import Detect, Pseudonyms, RedactionError, RedactSpec, as_detector
from livescore.runs import (
    NO_INPUT_METADATA_KEY,
    NOT_SCORABLE_METADATA_KEY,
    Conversation,
    ConversationLike,
    Run,
    RunLike,
    Step,
    coerce_conversation,
    coerce_run,
    get_assistant_message,
    get_user_message,
)
from livescore.scoring._calibration import Calibration, CalibrationSpec, as_calibration
from livescore.scoring._memo import RunMemo
from livescore.scoring._result import AttributeValue, CoveredTurns, ScoreResult

__all__ = (
    "SYNC_HOOK_THREADS",
    "ContextFunction",
    "PipelineStep",
    "PromptStep",
    "Scorer",
    "ScorerLevel",
    "StepContext",
    "StepFunction",
    "SyncSteps",
    "create_scorer",
)

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")

SYNC_HOOK_THREADS = 16
"""Synchronous ``get_context`` functions and steps running at once (in worker threads), per
event loop; past this many the next one waits, and the wait counts against its timeout."""

SyncSteps: TypeAlias = Literal["thread", "inline"]
"""Where a scorer's synchronous steps run: ``"thread"`` (a worker thread, so they may
block) or ``"inline"`` (on the event loop: for quick, pure-CPU steps)."""

ScorerLevel: TypeAlias = Literal["run", "conversation"]
"""What a scorer judges: one run, or a whole conversation (``ctx.conversation``)."""

_SYNC_HOOK_LIMITER: RunVar[anyio.CapacityLimiter] = RunVar("livescore_sync_hooks")


@dataclass(eq=False, slots=True)
class StepContext:
    """What every step sees; ``preprocess_step_result``, ``analyze_step_result`` and ``score``
    are set as their steps run.

    Attributes:
        run: The run being scored; for a conversation scorer, the conversation's last turn.
        conversation: For a conversation scorer, the conversation (its turns, oldest
            first); ``None`` for a run-level scorer.
        step: The agent step being scored (the final model turn for a run-level score).
        context: Ground truth resolved once per score by ``get_context`` (or the static
            context); ``None`` when the scorer has neither.
        input_text: The user's message as text, truncated to the scorer's limit. Reading
            it on a run whose input holds no user text (a dict of prompt variables, no
            input) raises :class:`NotScorable`: the score is skipped with the reason.
        output_text: The agent's answer as text, truncated; a run without one is skipped
            the same way.
        flags: Facts recorded on the result (truncation, …); steps may add to it.
        attributes: Span attributes recorded on the result (str, bool, int or float values).
        state: Scratch space the steps of one score share; not recorded in the result.
    """

    run: Run
    step: Step | None
    conversation: Conversation | None
    _input_text: str | None
    _output_text: str | None
    flags: dict[str, Any]
    attributes: dict[str, AttributeValue]
    context: list[str] | None = field(default=None, init=False)
    preprocess_step_result: Any = field(default=None, init=False)
    analyze_step_result: Any = field(default=None, init=False)
    score: float | None = field(default=None, init=False)
    state: dict[str, Any] = field(default_factory=dict, init=False)
    _missing: str | None = field(default=None, init=False)  # why a text a step read lacks

    @property
    def input_text(self) -> str:
        """The user's message (see the class docstring for a run without one)."""
        if self._input_text is None:
            said = self.run.metadata.get(NO_INPUT_METADATA_KEY) if self.run.input is None else None
            self._missing = (
                str(said) if said else _missing_reason(self.run.input, "input", "user text")
            )
            raise NotScorable(self._missing)
        return self._input_text

    @property
    def output_text(self) -> str:
        """The agent's answer (see the class docstring for a run without one)."""
        if self._output_text is None:
            self._missing = _missing_reason(self.run.output, "output", "answer text")
            raise NotScorable(self._missing)
        return self._output_text


def _missing_reason(value: Any, where: str, what: str) -> str:
    if value is None:
        found = f"the run has no {where}"
    elif isinstance(value, Mapping):
        keys = sorted(str(k) for k in value)
        shown = ", ".join(repr(k) for k in keys[:8]) + (", …" if len(keys) > 8 else "")
        found = f"its {where} is a mapping with keys [{shown}]"
    elif isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        found = f"its {where} is a list of {len(value)} items with no {what.split()[0]} message"
    else:
        noun = type(value).__name__
        found = f"its {where} is {'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"
    return (
        f"no {what} found in the run: {found}, not text, a chat message or a list of "
        "messages (this scorer reads it)"
    )


StepFunction: TypeAlias = Callable[[StepContext], Any]
"""A step written in code: ``(ctx) -> value`` or ``async (ctx) -> value``."""

ContextFunction: TypeAlias = Callable[[Any, Step | None], Any]
"""``get_context(run, step)``: returns a list of strings (or one string, or ``None``),
sync or async. A conversation scorer's is called as ``get_context(conversation, None)``."""


@dataclass(frozen=True, slots=True)
class PromptStep(Generic[M]):
    """A step the judge answers.

    Its hooks (``create_prompt``, ``skip_if``, ``validate``, ``parse``) run on the event
    loop and must be quick; ``skip_result`` runs like a code step.

    Attributes:
        description: What the step does (shown in docs and errors).
        output_schema: A pydantic model the answer must fit; ``None`` asks for free text.
            The step result is the answer as a plain dict (``model_dump()``), or the text.
        choices: Ask for one of these words instead (``output_schema`` is then ignored):
            the judge's :meth:`~livescore.judges.Judge.classify`, whose answer is a
            :class:`~livescore.judges.Classification`. Not shared through the run's memo.
        create_prompt: Builds the user prompt from the context; or a list of prompts, each
            asked on its own (and shared through the run's
            :class:`~livescore.scoring.RunMemo`), the step result then being the list of
            answers in order.
        system: The system prompt (the judge's standing instructions).
        validate: Optional extra check of a well-formed answer; raise ``ValueError`` to ask
            the judge once more with the problem spelled out.
        skip_if: Optional predicate; when true the judge is not called and the step result
            is ``skip_result(ctx)`` (sync or async; ``None`` when not given).
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
    create_prompt: Callable[[StepContext], str | Sequence[str]]
    system: str = "You are a careful evaluator. Answer exactly in the requested format."
    validate: Callable[[M, StepContext], None] | None = None
    skip_if: Callable[[StepContext], bool] | None = None
    skip_result: StepFunction | None = None
    parse: Callable[[M, StepContext], Any] | None = None
    choices: tuple[str, ...] | None = None


PipelineStep: TypeAlias = StepFunction | PromptStep[Any]
"""One step of the pipeline: a function of the :class:`StepContext` or a :class:`PromptStep`."""

_STEP_NAMES = ("preprocess", "analyze", "generate_score", "generate_reason")


class Scorer:
    """A named scoring pipeline: steps, each a function (sync or async) or a :class:`PromptStep`.

    ``create_scorer(...)`` builds one, as every prebuilt factory does. ``id``,
    ``description``, ``version``, ``max_text_chars``, ``sync_steps``, ``level``, ``redact``
    (the detector) and ``calibration`` stay on it as attributes, and ``model`` as ``judge``
    (the resolved judge, or ``None``).

    Args:
        id: Stable id (``"my-scorer"``) used in results, spans, metrics and the CLI.
        description: What the scorer measures.
        generate_score: Required. Returns the score (a finite number).
        model: The judge: ``"openai/<model>"``, a :class:`~livescore.judges.Judge`, or
            ``None`` for a code-only scorer.
        preprocess: Optional first step; its result is ``ctx.preprocess_step_result``.
        analyze: Optional second step; its result is ``ctx.analyze_step_result``.
        generate_reason: Optional last step; returns the explanation text.
        context: Static ground truth, as ``ctx.context``.
        get_context: ``get_context(run, step)`` resolving ground truth once per score; it
            overrides ``context``. A synchronous one runs in a worker thread, so it may
            block.
        label: Maps a score to a low-cardinality label.
        version: Recorded on every score.
        max_text_chars: Input and output text beyond this length is truncated (and flagged).
        sync_steps: ``"thread"`` (default) runs synchronous steps in a worker thread, so a
            step may block; ``"inline"`` runs them on the event loop, saving the thread hop
            for quick, pure-CPU steps.
        level: ``"run"`` (default) scores one run; ``"conversation"`` scores a whole
            :class:`~livescore.runs.Conversation` (``ctx.conversation``; ``ctx.run`` is its
            last turn; ``get_context(conversation, None)``; ``result.turns`` says which
            turns it covers); live, it runs when the conversation goes quiet.
        redact: Keep personal data from the judge and from what the score records (see
            :meth:`Scorer.with_redaction`).
        calibration: A :class:`~livescore.scoring.Calibration` (or its file's path) setting
            the labels (see :meth:`Scorer.with_calibration`).

    Example:
        >>> scorer = create_scorer(
        ...     id="answer-length",
        ...     description="Share of a 100-character budget the answer uses",
        ...     generate_score=lambda ctx: min(len(ctx.output_text) / 100, 1.0),
        ... )
        >>> scorer.run_sync({"input": "hi", "output": "x" * 50}).score
        0.5

        A conversation scorer:

        >>> turns = create_scorer(
        ...     id="turns", description="Turns so far", level="conversation",
        ...     generate_score=lambda ctx: float(ctx.conversation.last_turn),
        ... )
        >>> result = turns.run_sync({"id": "c1", "turns": [
        ...     {"input": "Hi", "output": "Hello"}, {"input": "Bye", "output": "Bye!"}]})
        >>> result.score, result.turns.count
        (2.0, 2)
    """

    def __init__(
        self,
        *,
        id: str,
        description: str,
        generate_score: PipelineStep,
        model: Judge | str | None = None,
        preprocess: PipelineStep | None = None,
        analyze: PipelineStep | None = None,
        generate_reason: PipelineStep | None = None,
        context: Sequence[str] | None = None,
        get_context: ContextFunction | None = None,
        label: Callable[[float], str | None] | None = None,
        version: str = "1",
        max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
        sync_steps: SyncSteps = "thread",
        level: ScorerLevel = "run",
        redact: RedactSpec | None = None,
        calibration: CalibrationSpec | None = None,
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
            if isinstance(step, PromptStep) and model is None:
                raise ValueError(
                    f"scorer {id!r}: {name} is a PromptStep, so the scorer needs a judge "
                    "(model='openai/<model>' or a Judge object)"
                )
        if context is not None and (
            isinstance(context, str) or not all(isinstance(c, str) for c in context)
        ):
            raise TypeError("context must be a list of strings")
        if get_context is not None and not callable(get_context):
            raise TypeError("get_context must be a function get_context(run, step)")
        if max_text_chars < 1:
            raise ValueError("max_text_chars must be positive")
        if sync_steps not in ("thread", "inline"):
            raise ValueError(f"sync_steps must be 'thread' or 'inline', not {sync_steps!r}")
        if level not in ("run", "conversation"):
            raise ValueError(f"level must be 'run' or 'conversation', not {level!r}")
        self.id = id
        self.level: ScorerLevel = level
        self.description = description
        self.judge = resolve_judge(model) if model is not None else None
        self.version = version
        self.max_text_chars = max_text_chars
        self.sync_steps: SyncSteps = sync_steps
        self._steps = steps
        self._context = list(context) if context is not None else None
        self._get_context = get_context
        self._label = label
        self._judge_modes: dict[str, Callable[[], Scorer]] = {}
        self.redact: Detect | None = as_detector(redact) if redact is not None else None
        self.calibration: Calibration | None = None
        if calibration is not None:
            self.calibration = self._checked_calibration(calibration)

    def __repr__(self) -> str:
        judge = f", judge={self.judge.model_name!r}" if self.judge is not None else ""
        level = ", level='conversation'" if self.level == "conversation" else ""
        return f"Scorer(id={self.id!r}{judge}{level})"

    def with_redaction(self, redact: RedactSpec) -> Scorer:
        """A copy of this scorer that keeps personal data from its judge and its results.

        Every score replaces the personal data of the run, its conversation and the context
        with placeholders (``<PERSON_1>``) before any step runs; a detector that raises
        fails the score with ``error_type="redaction"`` and nothing is sent.

        Args:
            redact: A :class:`~livescore.pii.PersonalDataRedactor`, a function
                ``detect(text) -> [(start, end, entity), ...]``, or a Presidio
                ``AnalyzerEngine``.

        Example:
            >>> from livescore.pii import PersonalDataRedactor
            >>> echo = create_scorer(id="echo", description="The output, as the steps see it",
            ...     generate_score=lambda ctx: 1.0, generate_reason=lambda ctx: ctx.output_text)
            >>> safe = echo.with_redaction(PersonalDataRedactor(names=False))
            >>> safe.run_sync({"input": "hi", "output": "Mail bo@example.com"}).reason
            'Mail <EMAIL_1>'
        """
        clone = copy.copy(self)
        clone.redact = as_detector(redact)
        return clone

    def with_calibration(self, calibration: CalibrationSpec) -> Scorer:
        """A copy of this scorer whose labels a calibration fitted on your labels sets.

        A score that a judge budget sent to a fallback judge uses that judge's entry, and
        keeps its own label when the calibration has none for it.

        Args:
            calibration: A :class:`~livescore.scoring.Calibration` or the path of its file.

        Raises:
            CalibrationError: The file cannot be read, or holds no entry for this scorer
                with this judge model.

        Example:
            >>> from livescore.scoring import Calibration, CalibrationEntry
            >>> calibration = Calibration("long", (
            ...     CalibrationEntry("length", None, 10.0, "high"),), created="")
            >>> length = create_scorer(id="length", description="Characters",
            ...     generate_score=lambda ctx: float(len(ctx.output_text)))
            >>> length.with_calibration(calibration).run_sync(
            ...     {"input": "hi", "output": "a long answer"}).label
            'long'
        """
        clone = copy.copy(self)
        clone.calibration = self._checked_calibration(calibration)
        return clone

    def _checked_calibration(self, spec: CalibrationSpec) -> Calibration:
        calibration = as_calibration(spec)
        calibration.entry_for(self.id, self.judge.model_name if self.judge is not None else None)
        return calibration

    def label_for(self, score: float) -> str | None:
        """The label of a score (``None`` when the scorer defines no labels)."""
        return self._label(score) if self._label is not None else None

    def offer_judge_mode(self, mode: str, build: Callable[[], Scorer]) -> None:
        """Say that ``build()`` makes this scorer in judge mode ``mode`` (``"one_call"``),
        for a judge budget's ``fallback="one_call"``; it is called once, when first needed.

        Example:
            >>> from livescore.scorers import create_hallucination_scorer
            >>> from livescore.testing import ScriptedJudge
            >>> scorer = create_hallucination_scorer(model=ScriptedJudge([]))
            >>> scorer.judge_modes
            ('one_call',)
        """
        self._judge_modes[mode] = functools.cache(build)

    @property
    def judge_modes(self) -> tuple[str, ...]:
        """The other judge modes this scorer offers (see :meth:`offer_judge_mode`)."""
        return tuple(self._judge_modes)

    async def run(
        self,
        run: RunLike | ConversationLike,
        *,
        step: Step | None = None,
        memo: RunMemo | None = None,
    ) -> ScoreResult:
        """Score one run, raising when a step fails (for direct use; see :meth:`score`).

        Args:
            run: A :class:`~livescore.Run` or a mapping with ``input``, ``output``,
                ``ground_truth`` and ``run_id``; for a conversation scorer, a
                :class:`~livescore.runs.Conversation` (or a run, or a mapping with
                ``turns``).
            step: The agent step to score; the run's final model turn by default.
            memo: Share identical judge requests with the other scorers of this run.

        Returns:
            A result with ``status`` ``"scored"`` or ``"skipped"``.

        Raises:
            ScorerRunError: A step failed; ``.step`` names it, ``.result`` holds the
                partial result.
            TypeError: ``run`` is not a run.
        """
        result, error = await self._execute(self._subject(run), step, None, memo)
        if error is not None:
            raise ScorerRunError(result.failed_step or "input", result, error) from error
        return result

    async def score(
        self,
        run: RunLike | ConversationLike,
        *,
        step: Step | None = None,
        # A parameter, not the caller's fail_after: the result must name the step that
        # overran and keep the usage of the steps that finished.
        timeout: float | None = None,  # noqa: ASYNC109
        memo: RunMemo | None = None,
    ) -> ScoreResult:
        """Score one run and never raise: a failure is a result with ``status="failed"``.

        The one call live scoring, ``run_evals`` and fleet workers use. Anything a step
        raises fails that score only, ``BaseException`` included; only a real cancellation
        of the caller propagates, and ``KeyboardInterrupt`` or ``SystemExit`` on the main
        thread.

        Args:
            run: As for :meth:`run` (an unreadable one fails in step ``"input"``).
            step: The agent step to score; the run's final model turn by default.
            timeout: Seconds the whole score may take. Past it the score fails with
                ``error_type="timeout"``, the step that overran as ``failed_step``, and the
                judge usage of the steps that finished.
            memo: Share identical judge requests with the other scorers of this run.

        Example:
            >>> import anyio
            >>> scorer = create_scorer(id="len", description="Length",
            ...                        generate_score=lambda ctx: 1 / len(ctx.output_text))
            >>> result = anyio.run(lambda: scorer.score({"input": "hi", "output": ""}))
            >>> result.status, result.failed_step, result.error_type
            ('failed', 'generate_score', 'ZeroDivisionError')
        """
        try:
            subject = self._subject(run)
        except Exception as exc:
            run_id = run.get("run_id") if isinstance(run, dict) else getattr(run, "run_id", None)
            result = self._new_result(run_id if isinstance(run_id, str) and run_id else "unknown")
            _record_failure(result, "input", exc)
            return result
        result, _ = await self._execute(subject, step, timeout, memo)
        return result

    def run_sync(self, run: RunLike | ConversationLike, *, step: Step | None = None) -> ScoreResult:
        """Score one run from synchronous code: scripts, and notebooks too.

        Inside a running event loop (a Jupyter cell) the score runs on a new loop in a
        short-lived thread while this one waits; prefer ``await scorer.run(...)`` there.

        Example:
            >>> from livescore.scorers import create_keyword_coverage_scorer
            >>> scorer = create_keyword_coverage_scorer()
            >>> scorer.run_sync({"input": "React hooks", "output": "Hooks in React"}).score
            1.0
        """

        def score_on_a_new_loop() -> ScoreResult:
            return anyio.run(lambda: self.run(run, step=step))

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return score_on_a_new_loop()
        # anyio.run refuses to nest inside a running loop; a fresh thread has no loop (and
        # no copy of this thread's context, which would say that one runs).
        with ThreadPoolExecutor(1, thread_name_prefix=f"livescore-run-sync-{self.id}") as pool:
            return pool.submit(score_on_a_new_loop).result()

    def _subject(self, value: Any) -> Run | Conversation:
        if self.level == "conversation":
            return coerce_conversation(value)
        if isinstance(value, Conversation):
            raise TypeError(
                f"scorer {self.id!r} scores runs, not conversations: give it one turn "
                "(conversation.runs[-1]), or use a conversation scorer"
            )
        return coerce_run(value)

    def _new_result(self, run_id: str) -> ScoreResult:
        judge_model = self.judge.model_name if self.judge is not None else None
        return ScoreResult(run_id=run_id, scorer_id=self.id, judge_model=judge_model)

    async def _execute(
        self,
        subject: Run | Conversation,
        step: Step | None,
        timeout: float | None,  # noqa: ASYNC109
        memo: RunMemo | None = None,
    ) -> tuple[ScoreResult, BaseException | None]:
        started = time.perf_counter()
        deadline = math.inf if timeout is None else started + timeout
        conversation = subject if isinstance(subject, Conversation) else None
        run = subject if isinstance(subject, Run) else (subject.last_run or Run())
        result = self._new_result(run.run_id)
        if conversation is not None:
            result.turns = CoveredTurns.of(conversation)
            if conversation.first_turn > 1:
                # Earlier turns were let go (memory bounds): the score says it covers less.
                result.flags["turns_forgotten"] = conversation.first_turn - 1
        where = "input"  # what runs now: a failure or a timeout names it
        overran: str | None = None  # where the time ran out
        # A judge budget may send the score to a fallback judge, or run the steps of this
        # scorer in another judge mode.
        judge, pipeline = self.judge, self
        ticket: BudgetTicket | None = None
        error: BaseException | None = None
        # move_on_after, not fail_after: a step that raises TimeoutError itself is that
        # step's failure, not the scorer's timeout.
        try:
            with anyio.move_on_after(timeout) as scope:
                try:
                    pseudonyms: Pseudonyms | None = None
                    seen_run, seen_conversation, known = run, conversation, 0
                    if self.redact is not None:
                        where = "redaction"
                        pseudonyms = (memo or RunMemo()).pseudonyms(self.redact)
                        seen_run, seen_conversation, known = await _redacted(
                            pseudonyms, run, conversation
                        )
                    ctx = self._start(seen_run, step, result, seen_conversation)
                    budget = budget_of(judge) if judge is not None else None
                    if judge is not None and budget is not None:
                        where = "budget"
                        judge, pipeline, ticket = await self._admit(budget, judge, result)
                    where = "get_context"
                    # get_context reads the run as it was (your own lookups, on your side),
                    # and is called once per score (Mastra calls it once per step).
                    context = self._context
                    if self._get_context is not None:
                        wanted = step if step is not None else run.final_step
                        found = await _call_hook(
                            self._get_context, conversation or run, wanted, in_thread=True
                        )
                        context = _context_list(found)
                    if pseudonyms is not None:
                        if context:
                            where = "redaction"
                            context = await _guarded(pseudonyms.redact_value, list(context))
                            if pseudonyms.generation != known:
                                # The context named someone the run also names where the
                                # detector missed them: the run is replaced again, with them.
                                seen_run, seen_conversation, _ = await _redacted(
                                    pseudonyms, run, conversation
                                )
                                ctx = self._start(seen_run, step, result, seen_conversation)
                        result.flags["redacted"] = True
                        result.flags["redacted_values"] = pseudonyms.found
                        if pseudonyms.truncated:
                            result.flags["redaction_truncated_at"] = pseudonyms.max_chars
                    ctx.context = context
                    for name in _STEP_NAMES:
                        # A synchronous step can overrun without reaching a checkpoint where
                        # the cancel scope could fire: the elapsed time decides too.
                        if overran is None and time.perf_counter() > deadline:
                            overran = where
                        where = name
                        await pipeline._run_step(name, ctx, result, memo, judge)
                    if overran is None and time.perf_counter() > deadline:
                        overran = where
                except NotScorable as skip:
                    result.status = "skipped"
                    result.reason = skip.reason
                    result.score = None
                    result.label = None
                except BaseException as exc:
                    if _ends_the_caller(exc):
                        raise
                    # Anything else the scorer's code raised (SystemExit, GeneratorExit, a
                    # CancelledError of its own included): that score fails, nothing else.
                    error = exc
                    _record_failure(result, where, exc)
        finally:
            # Priced and settled even when the caller is cancelled: the calls were paid.
            if judge is not None:
                _price_usage(result, judge)
            if ticket is not None:
                await ticket.settle(result.usage, record=result.status != "skipped")
        result.duration_s = time.perf_counter() - started
        if scope.cancelled_caught:
            overran = where
        if error is None and overran is not None:
            error = TimeoutError(
                f"scorer {self.id!r} took longer than {timeout:g} s (in step {overran!r})"
            )
            _record_failure(result, overran, error)
            result.error_type = "timeout"
        if self.calibration is not None and result.status == "scored":
            result = self.calibration.apply(result)
        return result, error

    async def _admit(
        self, budget: JudgeBudget, judge: Judge, result: ScoreResult
    ) -> tuple[Judge, Scorer, BudgetTicket]:
        """Ask the judge's budget for this score: the judge and steps to run it on, or a skip."""
        ticket = await budget.admit(self.id, judge, one_call="one_call" in self._judge_modes)
        result.attributes[A.LIVESCORE_JUDGE_BUDGET] = budget.name
        if not ticket.admitted:
            result.attributes[A.LIVESCORE_JUDGE_BUDGET_EXHAUSTED] = True
            raise NotScorable(ticket.reason)
        pipeline = self._judge_modes[ticket.mode]() if ticket.mode is not None else self
        used = ticket.judge if ticket.judge is not None else judge
        if ticket.fallback is not None:
            result.attributes[A.LIVESCORE_JUDGE_FALLBACK] = ticket.fallback
            result.judge_model = used.model_name
        return used, pipeline, ticket

    def _start(
        self, run: Run, step: Step | None, result: ScoreResult, conversation: Conversation | None
    ) -> StepContext:
        if conversation is not None:
            if not conversation.runs:
                raise NotScorable(f"conversation {conversation.id!r} has no turns to judge")
            for number, turn in conversation.turns():
                if said := turn.metadata.get(NOT_SCORABLE_METADATA_KEY):
                    raise NotScorable(f"turn {number} of the conversation: {said}")
        if said := run.metadata.get(NOT_SCORABLE_METADATA_KEY):
            raise NotScorable(str(said))  # an integration knows the run has nothing to judge
        return StepContext(
            run,
            step if step is not None else run.final_step,
            conversation,
            self._text(run, "input", result),
            self._text(run, "output", result),
            result.flags,
            result.attributes,
        )

    def _text(self, run: Run, which: Literal["input", "output"], result: ScoreResult) -> str | None:
        """The run's input or output text, cut to ``max_text_chars`` (and flagged when cut)."""
        try:
            text = get_user_message(run) if which == "input" else get_assistant_message(run)
        except TypeError:
            # Not text at all (a number, bytes): "no text", so the steps that need it skip
            # the score with the reason, as for a mapping of prompt variables.
            text = None
        # The integration may have received the text already cut short (an
        # instrumentation's attribute length limit): the score says so as for its own cut.
        cut = run.metadata.get(f"{which}_truncated") is True
        if text is not None and len(text) > self.max_text_chars:
            result.flags[f"{which}_truncated"] = True
            result.flags[f"{which}_chars"] = len(text)
            text, cut = text[: self.max_text_chars], True
        if cut:
            result.flags[f"{which}_truncated"] = True
            result.attributes[_TRUNCATED[which]] = True
        return text

    async def _run_step(
        self,
        name: str,
        ctx: StepContext,
        result: ScoreResult,
        memo: RunMemo | None,
        judge: Judge | None,
    ) -> None:
        step = self._steps[name]
        if step is None:
            return
        in_thread = self.sync_steps == "thread"
        prompt: str | None = None
        if isinstance(step, PromptStep) and step.skip_if is not None and step.skip_if(ctx):
            skip_result = step.skip_result
            value = await _call_hook(skip_result, ctx, in_thread=in_thread) if skip_result else None
        elif isinstance(step, PromptStep):
            assert judge is not None  # checked in __init__
            value, prompt = await _ask_judge(name, step, ctx, result, memo, judge)
        else:
            value = await _call_hook(step, ctx, in_thread=in_thread)
        if name == "preprocess":
            ctx.preprocess_step_result = result.preprocess_step_result = value
            result.preprocess_prompt = prompt
        elif name == "analyze":
            ctx.analyze_step_result = result.analyze_step_result = value
            result.analyze_prompt = prompt
        elif name == "generate_score":
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError(f"generate_score must return a number, not {type(value).__name__}")
            score = float(value)
            if not math.isfinite(score):
                raise ValueError(f"generate_score returned {score}, which is not a finite number")
            ctx.score = result.score = score
            result.label = self.label_for(score)
        else:
            result.reason = None if value is None else str(value)
            result.generate_reason_prompt = prompt
        if ctx._missing is not None:  # the step swallowed the skip of a text it lacks
            raise NotScorable(ctx._missing)
        for key, value in result.attributes.items():
            if type(value) in _SPAN_SCALARS and type(key) is str:  # the common case, cheaply
                continue
            if not isinstance(key, str) or not isinstance(value, str | bool | int | float):
                raise TypeError(
                    f"step {name!r} set attributes[{key!r}] to a {type(value).__name__}: "
                    "span attributes must be str, bool, int or float values under str names"
                )


async def _ask_judge(
    name: str,
    step: PromptStep[Any],
    ctx: StepContext,
    result: ScoreResult,
    memo: RunMemo | None,
    judge: Judge,
) -> tuple[Any, str]:
    """The step's answer (parsed) and its prompt."""
    asked = step.create_prompt(ctx)
    usage = result.step_usage.setdefault(name, JudgeUsage())
    check = step.validate
    validate = (lambda answer: check(answer, ctx)) if check is not None else None
    schema, choices, system = step.output_schema, step.choices, step.system

    async def call(prompt: str) -> JudgeReply[Any]:
        if choices is not None:
            classify = getattr(judge, "classify", None)
            if classify is None:  # a judge written before classify existed
                return await classify_with_object(
                    judge, system=system, prompt=prompt, choices=choices
                )
            reply: JudgeReply[Any] = await classify(system=system, prompt=prompt, choices=choices)
            return reply
        if schema is None:
            return await judge.generate_text(system=system, prompt=prompt)
        return await judge.generate_object(
            system=system, prompt=prompt, schema=schema, validate=validate
        )

    # Several requests (one per turn of a conversation, say) are each shared through the
    # memo, and asked one after another so that a scripted judge's answers meet them in order.
    prompts = [asked] if isinstance(asked, str) else list(asked)
    answers = []
    for prompt in prompts:
        try:
            if memo is None or choices is not None:
                reply, shared = await call(prompt), False
            else:
                reply, shared = await memo.ask(
                    judge,
                    system=system,
                    prompt=prompt,
                    schema=schema,
                    call=functools.partial(call, prompt),
                    validate=validate,
                )
        except JudgeError as exc:
            usage.add(exc.usage)  # a failed call was paid for too
            raise
        usage.add(reply.usage)
        result.usage.add(reply.usage)
        if shared:
            result.attributes[A.LIVESCORE_JUDGE_SHARED] = result.usage.shared
        answers.append(reply.value)
    # The answers were paid for: counted before parse, which may still fail.
    if isinstance(asked, str):
        value = step.parse(answers[0], ctx) if step.parse else _plain_answer(name, answers[0])
    elif step.parse is not None:
        value = step.parse(answers, ctx)
    else:
        value = [_plain_answer(name, answer) for answer in answers]
    return value, "\n\n".join(prompts)


async def _redacted(
    pseudonyms: Pseudonyms, run: Run, conversation: Conversation | None
) -> tuple[Run, Conversation | None, int]:
    """The run (and conversation) with placeholders, and how many values were known then."""

    def redact() -> tuple[Run, Conversation | None, int]:
        if conversation is None:
            return pseudonyms.redact_run(run), None, pseudonyms.generation
        seen = pseudonyms.redact_conversation(conversation)
        return (seen.last_run or Run()), seen, pseudonyms.generation

    return await _guarded(redact)


async def _guarded(work: Callable[..., T], *args: Any) -> T:
    # In a worker thread: detection is CPU work (spaCy) and must not stall the loop.
    try:
        return cast(T, await _in_worker_thread(work, *args))
    except Exception as exc:
        # Not the detector's message: it may quote the text it was reading.
        raise RedactionError(
            f"personal-data redaction failed ({type(exc).__name__}); nothing was sent to the judge"
        ) from exc


def _plain_answer(name: str, value: Any) -> Any:
    if name == "generate_score":
        return getattr(value, "score", value)
    if isinstance(value, BaseModel):
        return value.model_dump()
    if isinstance(value, Classification):
        return value.to_dict()
    return value


_SPAN_SCALARS = frozenset({str, bool, int, float})
_TRUNCATED = {"input": A.LIVESCORE_INPUT_TRUNCATED, "output": A.LIVESCORE_OUTPUT_TRUNCATED}


def _context_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, bytes | bytearray | Mapping) or not isinstance(value, Sequence):
        raise TypeError(
            "get_context must return a list of strings (or one string, or None), "
            f"not {type(value).__name__}"
        )
    items: list[str] = []
    for index, item in enumerate(value):
        try:
            items.append(item if isinstance(item, str) else message_text(item))
        except TypeError:
            raise TypeError(
                f"get_context returned a {type(item).__name__} at index {index}: each item "
                "must be a string (or a chat message)"
            ) from None
    return items


async def _call_hook(fn: Callable[..., Any], *args: Any, in_thread: bool) -> Any:
    """Call a user function, sync or async; a sync one in a worker thread when asked."""
    if in_thread and not _is_async(fn):
        value = await _in_worker_thread(fn, *args)
    else:
        value = fn(*args)
    # Plain results first: the Awaitable check below is an ABC check, slow on a hot path.
    if type(value) in _PLAIN_RESULTS:
        return value
    if inspect.isawaitable(value):
        value = await value
    return value


_PLAIN_RESULTS = frozenset({float, int, str, dict, list, type(None), bool})


def _is_async(fn: Callable[..., Any]) -> bool:
    call = getattr(fn, "__call__", None)  # noqa: B004 (an object with an async __call__)
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(call)


class _Raised(Exception):
    """Carries a BaseException out of a worker thread (anyio hands those on unreliably)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error


async def _in_worker_thread(fn: Callable[..., Any], *args: Any) -> Any:
    # One limiter per event loop: a limiter belongs to the loop it was first used on.
    limiter = _SYNC_HOOK_LIMITER.get(None)
    if limiter is None:
        limiter = anyio.CapacityLimiter(SYNC_HOOK_THREADS)
        _SYNC_HOOK_LIMITER.set(limiter)
    started = False

    def call() -> Any:
        nonlocal started
        started = True
        try:
            return fn(*args)
        except Exception:
            raise
        except BaseException as exc:  # SystemExit, GeneratorExit… raised by the hook
            raise _Raised(exc) from None

    try:
        # abandon_on_cancel: on the scorer's timeout the await returns at once (the thread
        # finishes on its own, holding its limiter slot until then).
        return await run_in_thread(call, abandon_on_cancel=True, limiter=limiter)
    except _Raised as raised:
        raise raised.error from None
    except RuntimeError:
        if started:
            raise
        # No thread could start (Python 3.12 refuses new threads in atexit handlers, where
        # the exit-time shutdown scores the last runs): call it here instead.
        return fn(*args)


def _ends_the_caller(exc: BaseException) -> bool:
    """Whether ``exc`` must propagate: a real cancellation, or Ctrl-C / exit on the main thread."""
    if isinstance(exc, KeyboardInterrupt | SystemExit):
        return threading.current_thread() is threading.main_thread()
    if not isinstance(exc, anyio.get_cancelled_exc_class()):
        return False
    if anyio.current_effective_deadline() == -math.inf:
        return True  # an anyio cancel scope around us was cancelled
    if anyio.get_cancelled_exc_class() is not asyncio.CancelledError:
        return True  # trio: user code cannot raise a stray Cancelled
    # asyncio: a real request (task.cancel(), asyncio.Runner on Ctrl-C) marks the task;
    # a CancelledError the step raised by itself does not.
    task = asyncio.current_task()
    cancelling = getattr(task, "cancelling", None)  # Python 3.11+
    return task is None or (cancelling is not None and cancelling() > 0)


def _record_failure(result: ScoreResult, step: str, exc: BaseException) -> None:
    result.status = "failed"
    result.score = None
    result.label = None
    result.failed_step = step
    result.error = exception_message(exc) or type(exc).__name__
    result.error_type = (
        exc.error_type if isinstance(exc, JudgeError | RedactionError) else type(exc).__name__
    )
    if isinstance(exc, JudgeError):
        result.usage.add(exc.usage)


def _price_usage(result: ScoreResult, judge: Judge) -> None:
    price = price_of(judge)
    usage = result.usage
    if usage.cached_input_tokens:
        result.attributes[A.LIVESCORE_JUDGE_CACHED_INPUT_TOKENS] = usage.cached_input_tokens
    if price is None:
        return
    for step_usage in result.step_usage.values():
        step_usage.cost_usd = price.cost(step_usage)
    usage.cost_usd = price.cost(usage)
    result.attributes[A.LIVESCORE_JUDGE_COST] = usage.cost_usd


create_scorer = Scorer
"""Build a scorer from steps: ``create_scorer(id=..., description=..., generate_score=...)``
is :class:`Scorer`'s constructor, under the name every scorer factory builds with."""
