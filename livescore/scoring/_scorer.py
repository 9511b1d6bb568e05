"""The scorer pipeline: ``get_context → preprocess → analyze → generate_score → generate_reason``.

Each step is a plain function (sync or async) of a :class:`StepContext`, or a
:class:`PromptStep` that the scorer's judge answers with structured output. Only
``generate_score`` is required. This is the Python form of Mastra's ``createScorer``.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
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
    JudgeError,
    JudgeReply,
    JudgeUsage,
    budget_of,
    classify_with_object,
    price_of,
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
"""Synchronous ``get_context`` functions and steps running at once, per event loop.

They run in worker threads so that a slow one (a blocking database call, ``time.sleep``)
never stalls the other scores on the same loop; past this many, the next one waits for a
thread, and that wait counts against its scorer's timeout."""

SyncSteps: TypeAlias = Literal["thread", "inline"]
"""Where a scorer's synchronous steps run: ``"thread"`` (a worker thread, so they may
block) or ``"inline"`` (on the event loop: for quick, pure-CPU steps)."""

ScorerLevel: TypeAlias = Literal["run", "conversation"]
"""What a scorer judges: one run (``"run"``), or a whole conversation (``"conversation"``:
its steps read ``ctx.conversation``, and live it runs when the conversation goes quiet)."""

_LEVELS = ("run", "conversation")

_SYNC_HOOK_LIMITER: RunVar[anyio.CapacityLimiter] = RunVar("livescore_sync_hooks")


class StepContext:
    """What every step sees.

    Attributes:
        run: The run being scored; for a conversation scorer, the conversation's last turn.
        conversation: For a conversation scorer, the conversation being scored (its turns,
            oldest first); ``None`` for a run-level scorer.
        step: The agent step being scored (the final model turn for a run-level score).
        context: Ground truth resolved once per score by ``get_context`` (or the static
            context); ``None`` when the scorer has neither.
        input_text: The user's message as text, truncated to the scorer's limit. Reading
            it on a run whose input holds no user text at all (a dict of prompt variables,
            no input) raises :class:`NotScorable`: the score is skipped with the reason,
            never computed on an empty string. An empty message is ``""``.
        output_text: The agent's answer as text, truncated to the scorer's limit; reading
            it on a run whose output holds no answer text skips the score the same way.
        preprocess_step_result: Set once preprocess has run.
        analyze_step_result: Set once analyze has run.
        score: Set once generate_score has run.
        flags: Facts recorded on the result (truncation, …); steps may add to it.
        attributes: Span attributes recorded on the result (``ScoreResult.attributes``):
            attribute names from :mod:`livescore.otel.attributes` (or your own
            namespace) to ``str``, ``bool``, ``int`` or ``float`` values.
        state: Scratch space the steps of one score share (a prompt step's ``parse`` may
            keep part of an answer here for a later step); not recorded in the result.
    """

    __slots__ = (
        "_input_text",
        "_missing",
        "_output_text",
        "analyze_step_result",
        "attributes",
        "context",
        "conversation",
        "flags",
        "preprocess_step_result",
        "run",
        "score",
        "state",
        "step",
    )

    def __init__(
        self,
        run: Run,
        step: Step | None,
        context: list[str] | None,
        input_text: str | None,
        output_text: str | None,
        *,
        flags: dict[str, Any] | None = None,
        attributes: dict[str, AttributeValue] | None = None,
        conversation: Conversation | None = None,
    ) -> None:
        self.run = run
        self.conversation = conversation
        self.step = step
        self.context = context
        self._input_text = input_text
        self._output_text = output_text
        self.preprocess_step_result: Any = None
        self.analyze_step_result: Any = None
        self.score: float | None = None
        self.flags: dict[str, Any] = flags if flags is not None else {}
        self.attributes: dict[str, AttributeValue] = attributes if attributes is not None else {}
        self.state: dict[str, Any] = {}
        self._missing: str | None = None  # why a text a step read is not in the run

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


def _a(noun: str) -> str:
    """``"an int"``, ``"a float"``: the article a type name takes."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def _text_or_none(find: Callable[[Run], str | None], run: Run) -> str | None:
    try:
        return find(run)
    except TypeError:
        return None


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
        found = f"its {where} is {_a(type(value).__name__)}"
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

    Its small hooks (``create_prompt``, ``skip_if``, ``validate``, ``parse``) run on the
    event loop and must be quick (they build and read text); ``skip_result`` runs like a
    code step.

    Attributes:
        description: What the step does (shown in docs and errors).
        output_schema: A pydantic model the answer must fit; ``None`` asks for free text.
            The step result is the answer as a plain dict (``model_dump()``), or the text.
        choices: Ask for one of these words instead (``output_schema`` is then ignored):
            the judge's :meth:`~livescore.judges.Judge.classify`, one short call whose
            answer is a :class:`~livescore.judges.Classification` holding each word's
            probability (read from the judge's token logprobs where it gives them). Such
            a request is not shared through the run's memo.
        create_prompt: Builds the user prompt from the context; or a list of prompts, each
            asked on its own (one after another, each shared through the run's
            :class:`~livescore.scoring.RunMemo`), the step result then being the list of
            answers in order (what ``parse`` gets too). A conversation scorer asks one
            question per turn this way, so a turn asked about before is not asked again.
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
    create_prompt: Callable[[StepContext], str | Sequence[str]]
    system: str = "You are a careful evaluator. Answer exactly in the requested format."
    validate: Callable[[M, StepContext], None] | None = None
    skip_if: Callable[[StepContext], bool] | None = None
    skip_result: StepFunction | None = None
    parse: Callable[[M, StepContext], Any] | None = None
    choices: tuple[str, ...] | None = None


PipelineStep: TypeAlias = StepFunction | PromptStep[Any]
"""One step of the pipeline: a function of the :class:`StepContext` or a :class:`PromptStep`."""

LabelFunction: TypeAlias = Callable[[float], str | None]

_STEP_NAMES = ("preprocess", "analyze", "generate_score", "generate_reason")


class Scorer:
    """A named scoring pipeline. Build one with :func:`create_scorer` or a prebuilt factory.

    Attributes:
        id: Stable id used in results, spans, metrics and the CLI.
        description: What the scorer measures.
        judge: The judge for prompt steps, or ``None`` for a code-only scorer.
        version: Recorded on every score (``livescore.scorer.version``).
        sync_steps: Where synchronous code steps run (``"thread"`` or ``"inline"``).
        level: ``"run"`` or ``"conversation"`` (see :data:`ScorerLevel`).
        redact: The personal-data detector every score runs first, or ``None`` (see
            :meth:`with_redaction`).
        calibration: The :class:`~livescore.scoring.Calibration` that sets its labels, or
            ``None`` (see :meth:`with_calibration`).
    """

    def __init__(
        self,
        *,
        id: str,
        description: str,
        generate_score: PipelineStep,
        model: Judge | None = None,
        preprocess: PipelineStep | None = None,
        analyze: PipelineStep | None = None,
        generate_reason: PipelineStep | None = None,
        context: Sequence[str] | None = None,
        get_context: ContextFunction | None = None,
        label: LabelFunction | None = None,
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
        if level not in _LEVELS:
            raise ValueError(f"level must be 'run' or 'conversation', not {level!r}")
        self.id = id
        self.level: ScorerLevel = level
        self.description = description
        self.judge = model
        self.version = version
        self.max_text_chars = max_text_chars
        self.sync_steps: SyncSteps = sync_steps
        self._steps = steps
        self._context = list(context) if context is not None else None
        self._get_context = get_context
        self._label = label
        self._judge_modes: dict[str, Callable[[], Scorer]] = {}
        self._built_modes: dict[str, Scorer] = {}
        self.redact: Detect | None = as_detector(redact) if redact is not None else None
        self.calibration: Calibration | None = None
        if calibration is not None:
            self.calibration = self._checked_calibration(calibration)

    def __repr__(self) -> str:
        judge = f", judge={self.judge.model_name!r}" if self.judge is not None else ""
        level = ", level='conversation'" if self.level == "conversation" else ""
        return f"Scorer(id={self.id!r}{judge}{level})"

    def with_redaction(self, redact: RedactSpec) -> Scorer:
        """This scorer, keeping personal data from its judge and from what it records.

        Every score then replaces the personal data of the run (input, output, steps, tool
        arguments and results, conversation turns) and of the context ``get_context``
        returns with placeholders (``<PERSON_1>``, ``<EMAIL_1>``: the same value, the same
        placeholder, across everything the score reads), before any step runs. Prompts,
        explanations and step results hold only the placeholders. A detector that raises
        fails the score with ``error_type="redaction"``; the text is never sent.

        Args:
            redact: A :class:`~livescore.pii.PersonalDataRedactor`, a function
                ``detect(text) -> [(start, end, entity), ...]``, or a Presidio
                ``AnalyzerEngine``.

        Returns:
            A copy of the scorer (this one is unchanged).

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
        clone._built_modes = {}
        return clone

    def with_calibration(self, calibration: CalibrationSpec) -> Scorer:
        """This scorer, its labels set by a calibration fitted on your own labels.

        Each scored result keeps its score; its label becomes the calibration's label field
        (``"hallucinated"``) when the score is on the defect's side of the fitted threshold,
        else ``not_<field>``, and it records ``livescore.calibration`` (the calibration's
        id), ``livescore.calibration.threshold`` and, where the calibration maps scores to
        probabilities, ``livescore.calibration.probability``. A score that a judge budget
        sent to a fallback judge uses that judge's entry, and keeps its own label when the
        calibration has none for it.

        Args:
            calibration: A :class:`~livescore.scoring.Calibration` or the path of its file
                (``livescore eval --calibrate FILE``).

        Returns:
            A copy of the scorer (this one is unchanged).

        Raises:
            CalibrationError: The file cannot be read, or holds no entry for this scorer
                with this judge model (one fitted for another judge is refused here, not
                score by score).

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
        """Say that this scorer can also run in judge mode ``mode`` (``"one_call"``).

        ``build`` makes the same scorer in that mode; it is called once, when a judge
        budget's ``fallback="one_call"`` first needs it. The prebuilt verdict scorers
        (hallucination, faithfulness…) offer ``"one_call"`` when built in ``"three_step"``.

        Example:
            >>> from livescore.scorers import create_hallucination_scorer
            >>> from livescore.testing import ScriptedJudge
            >>> scorer = create_hallucination_scorer(model=ScriptedJudge([]))
            >>> scorer.judge_modes
            ('one_call',)
        """
        self._judge_modes[mode] = build

    @property
    def judge_modes(self) -> tuple[str, ...]:
        """The other judge modes this scorer offers (see :meth:`offer_judge_mode`)."""
        return tuple(self._judge_modes)

    def _in_mode(self, mode: str) -> Scorer:
        built = self._built_modes.get(mode)
        if built is None:
            built = self._built_modes[mode] = self._judge_modes[mode]()
        return built

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
                :class:`~livescore.runs.Conversation` (or a run: a conversation of one
                turn, or a mapping with ``turns``).
            step: The agent step to score; the run's final model turn by default.
            memo: Share identical judge requests with the other scorers of this run (see
                :class:`~livescore.scoring.RunMemo`).

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

        This is the one call live scoring, ``run_evals`` and fleet workers use, so a
        failure becomes a value in exactly one place. Anything a step raises fails that
        score only, ``BaseException`` included (``SystemExit``, ``GeneratorExit``, a
        ``CancelledError`` the step raised itself, an exception whose ``str()`` raises).
        Only a real cancellation of the caller propagates, and so do ``KeyboardInterrupt``
        and ``SystemExit`` on the main thread, where they are how Ctrl-C and
        ``sys.exit`` stop a program (elsewhere only the scorer's own code can raise them).

        Args:
            run: A :class:`~livescore.Run` or a mapping (an unreadable one fails in step
                ``"input"``); for a conversation scorer, a
                :class:`~livescore.runs.Conversation` (see :meth:`run`).
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
            coerced = self._subject(run)
        except Exception as exc:
            result = ScoreResult(
                run_id=_run_id_of(run),
                scorer_id=self.id,
                judge_model=self.judge.model_name if self.judge is not None else None,
            )
            _record_failure(result, "input", exc)
            return result
        result, _ = await self._execute(coerced, step, timeout, memo)
        return result

    def _subject(self, value: Any) -> Run | Conversation:
        """What this scorer judges, read from ``value`` (raises on what it cannot read)."""
        if self.level == "conversation":
            return coerce_conversation(value)
        if isinstance(value, Conversation):
            raise TypeError(
                f"scorer {self.id!r} scores runs, not conversations: give it one turn "
                "(conversation.runs[-1]), or use a conversation scorer"
            )
        return coerce_run(value)

    async def _execute(
        self,
        subject: Run | Conversation,
        step: Step | None,
        timeout: float | None,  # noqa: ASYNC109
        memo: RunMemo | None = None,
    ) -> tuple[ScoreResult, BaseException | None]:
        started = time.perf_counter()
        conversation = subject if isinstance(subject, Conversation) else None
        run = subject if isinstance(subject, Run) else (subject.last_run or Run())
        result = ScoreResult(
            run_id=run.run_id,
            scorer_id=self.id,
            judge_model=self.judge.model_name if self.judge is not None else None,
        )
        if conversation is not None:
            result.turns = CoveredTurns.of(conversation)
            if conversation.first_turn > 1:
                # Earlier turns were let go (memory bounds): the score says it covers less.
                result.flags["turns_forgotten"] = conversation.first_turn - 1
        error: BaseException | None = None
        current = "input"
        overran: str | None = None  # the step during which the time ran out
        ctx: StepContext | None = None
        judge = self.judge
        pipeline = self  # the budget's fallback may run the same scorer in another mode
        ticket: BudgetTicket | None = None

        def check_time() -> None:
            nonlocal overran
            late = timeout is not None and time.perf_counter() - started > timeout
            if overran is None and late:
                overran = current

        # move_on_after, not fail_after: a step that raises TimeoutError itself is that
        # step's failure, not the scorer's timeout.
        try:
            with anyio.move_on_after(timeout) as scope:
                try:
                    pseudonyms: Pseudonyms | None = None
                    seen_run, seen_conversation, known = run, conversation, 0
                    if self.redact is not None:
                        current = "redaction"
                        pseudonyms = (memo or RunMemo()).pseudonyms(self.redact)
                        seen_run, seen_conversation, known = await _redacted(
                            pseudonyms, run, conversation
                        )
                    ctx = self._start(seen_run, step, result, seen_conversation)
                    if judge is not None and budget_of(judge) is not None:
                        current = "budget"
                        ticket, judge, pipeline = await self._admit(judge, result)
                    current = "get_context"
                    # get_context reads the run as it was (your own lookups, on your side).
                    wanted = step if step is not None else run.final_step
                    context = await self._resolve_context(conversation or run, wanted)
                    if pseudonyms is not None and context:
                        current = "redaction"
                        context = await _redacted_context(pseudonyms, context)
                        if pseudonyms.generation != known:
                            # The context named someone the run also names where the
                            # detector missed them: the run is replaced again, with them.
                            seen_run, seen_conversation, known = await _redacted(
                                pseudonyms, run, conversation
                            )
                            ctx = self._start(seen_run, step, result, seen_conversation)
                    ctx.context = context
                    if pseudonyms is not None:
                        _note_redaction(pseudonyms, result)
                    check_time()
                    for current in _STEP_NAMES:
                        await pipeline._run_step(current, ctx, result, memo, judge)
                        _check_step_end(ctx, current, result)
                        check_time()
                except NotScorable as skip:
                    result.status = "skipped"
                    result.reason = skip.reason
                    result.score = None
                    result.label = None
                except Exception as exc:
                    error = exc
                    _record_failure(result, current, exc)
                except BaseException as exc:
                    if _ends_the_caller(exc):
                        raise
                    # KeyboardInterrupt, SystemExit, GeneratorExit or a CancelledError raised
                    # by the scorer's own code: that score fails, nothing else does.
                    error = exc
                    _record_failure(result, current, exc)
        finally:
            # Priced and settled even when the caller is cancelled: the calls were paid.
            if judge is not None:
                _price_usage(result, judge)
            if ticket is not None:
                await ticket.settle(result.usage, record=result.status != "skipped")
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
            result.status = "failed"
            _record_failure(result, overran, error)
            result.error_type = "timeout"
        if self.calibration is not None and result.status == "scored":
            result = self.calibration.apply(result)
        return result, error

    async def _admit(self, judge: Judge, result: ScoreResult) -> tuple[BudgetTicket, Judge, Scorer]:
        """Ask the judge's budget for this score: what to run it on, or a skip."""
        budget = budget_of(judge)
        assert budget is not None
        ticket = await budget.admit(self.id, judge, one_call="one_call" in self._judge_modes)
        result.attributes[A.LIVESCORE_JUDGE_BUDGET] = budget.name
        if not ticket.admitted:
            result.attributes[A.LIVESCORE_JUDGE_BUDGET_EXHAUSTED] = True
            raise NotScorable(ticket.reason)
        used = ticket.judge if ticket.judge is not None else judge
        pipeline = self._in_mode(ticket.mode) if ticket.mode is not None else self
        if ticket.fallback is not None:
            result.attributes[A.LIVESCORE_JUDGE_FALLBACK] = ticket.fallback
            result.judge_model = used.model_name
        return ticket, used, pipeline

    def run_sync(self, run: RunLike | ConversationLike, *, step: Step | None = None) -> ScoreResult:
        """Score one run from synchronous code: scripts, and notebooks too.

        Inside a running event loop (a Jupyter cell, an ``async`` framework's sync
        callback) the score runs on a new event loop in a short-lived worker thread while
        this thread waits; prefer ``await scorer.run(...)`` there, which does not block the
        loop.

        Example:
            >>> from livescore.scorers import create_keyword_coverage_scorer
            >>> scorer = create_keyword_coverage_scorer()
            >>> scorer.run_sync({"input": "React hooks", "output": "Hooks in React"}).score
            1.0
        """

        def score_on_a_new_loop() -> ScoreResult:
            return anyio.run(lambda: self.run(run, step=step))

        if not _event_loop_running():
            return score_on_a_new_loop()
        # anyio.run refuses to nest inside a running loop; a fresh thread has no loop (and
        # no copy of this thread's context, which would say that one runs).
        with ThreadPoolExecutor(1, thread_name_prefix=f"livescore-run-sync-{self.id}") as pool:
            return pool.submit(score_on_a_new_loop).result()

    # -- pipeline internals -------------------------------------------------------------

    def _start(
        self,
        run: Run,
        step: Step | None,
        result: ScoreResult,
        conversation: Conversation | None = None,
    ) -> StepContext:
        if conversation is not None:
            _check_conversation(conversation)
        not_scorable = run.metadata.get(NOT_SCORABLE_METADATA_KEY)
        if not_scorable:  # an integration knows the run has nothing to judge
            raise NotScorable(str(not_scorable))
        flags = result.flags
        attributes = result.attributes
        # A value that is not text at all (a number, bytes) is read as "no text": the steps
        # that need it skip the score with the reason, as for a mapping of prompt variables.
        input_text = _text_or_none(get_user_message, run)
        output_text = _text_or_none(get_assistant_message, run)
        if input_text is not None:
            input_text = _truncate(input_text, self.max_text_chars, "input", flags, attributes)
        if output_text is not None:
            output_text = _truncate(output_text, self.max_text_chars, "output", flags, attributes)
        for which in ("input", "output"):
            # The integration received the text already cut short (an instrumentation's
            # attribute length limit): the score says so as it does for its own cut.
            if run.metadata.get(f"{which}_truncated") is True:
                flags[f"{which}_truncated"] = True
                attributes[_TRUNCATED[which]] = True
        return StepContext(
            run=run,
            step=step if step is not None else run.final_step,
            context=None,
            input_text=input_text,
            output_text=output_text,
            flags=flags,
            attributes=attributes,
            conversation=conversation,
        )

    async def _resolve_context(
        self, run: Run | Conversation, step: Step | None
    ) -> list[str] | None:
        # get_context overrides the static context and is called once per score (Mastra
        # calls it once per step, which doubles its cost and can disagree with itself).
        if self._get_context is None:
            return self._context
        value = await _call_hook(self._get_context, run, step, in_thread=True)
        return _context_list(value)

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
        prompt: str | None
        if isinstance(step, PromptStep) and step.skip_if is not None and step.skip_if(ctx):
            skip_result = step.skip_result
            value = await _call_hook(skip_result, ctx, in_thread=in_thread) if skip_result else None
            prompt = None
        elif isinstance(step, PromptStep):
            assert judge is not None  # checked in __init__
            value, prompt = await self._ask_judge(name, step, ctx, result, memo, judge)
        else:
            value, prompt = await _call_hook(step, ctx, in_thread=in_thread), None
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
        self,
        name: str,
        step: PromptStep[Any],
        ctx: StepContext,
        result: ScoreResult,
        memo: RunMemo | None,
        judge: Judge,
    ) -> tuple[Any, str]:
        asked = step.create_prompt(ctx)
        usage = result.step_usage.setdefault(name, JudgeUsage())
        check = step.validate
        validate = (lambda answer: check(answer, ctx)) if check is not None else None
        if isinstance(asked, str):
            value = await self._ask_one(step, asked, usage, result, memo, validate, judge)
            prompt = asked
        else:
            # Several requests (one per turn of a conversation, say): each asked on its own,
            # so each is shared through the memo; one after another, so that a scripted
            # judge's answers meet their requests in order.
            prompts = list(asked)
            value = [
                await self._ask_one(step, p, usage, result, memo, validate, judge) for p in prompts
            ]
            prompt = "\n\n".join(prompts)
        # The answer was paid for: count it before parse, which may still fail.
        if step.parse is not None:
            value = step.parse(value, ctx)
        elif isinstance(asked, str):
            value = _plain_answer(name, value)
        else:
            value = [_plain_answer(name, v) for v in value]
        return value, prompt

    async def _ask_one(
        self,
        step: PromptStep[Any],
        prompt: str,
        usage: JudgeUsage,
        result: ScoreResult,
        memo: RunMemo | None,
        validate: Callable[[Any], None] | None,
        judge: Judge,
    ) -> Any:
        schema = step.output_schema
        choices = step.choices

        async def call() -> JudgeReply[Any]:
            if choices is not None:
                # A judge written before classify existed answers from a structured answer.
                classify = getattr(judge, "classify", None)
                if classify is None:
                    return await classify_with_object(
                        judge, system=step.system, prompt=prompt, choices=choices
                    )
                reply: JudgeReply[Any] = await classify(
                    system=step.system, prompt=prompt, choices=choices
                )
                return reply
            if schema is None:
                return await judge.generate_text(system=step.system, prompt=prompt)
            return await judge.generate_object(
                system=step.system, prompt=prompt, schema=schema, validate=validate
            )

        shared = False
        try:
            if memo is None or choices is not None:
                reply = await call()
            else:
                reply, shared = await memo.ask(
                    judge,
                    system=step.system,
                    prompt=prompt,
                    schema=schema,
                    call=call,
                    validate=validate,
                )
        except JudgeError as exc:
            usage.add(exc.usage)
            raise
        usage.add(reply.usage)
        result.usage.add(reply.usage)
        if shared:
            result.attributes[A.LIVESCORE_JUDGE_SHARED] = result.usage.shared
        return reply.value


async def _redacted(
    pseudonyms: Pseudonyms, run: Run, conversation: Conversation | None
) -> tuple[Run, Conversation | None, int]:
    """The run (and conversation) as the score sees them: placeholders for personal data,
    and the number of values known when they were replaced.

    In a worker thread: detection is CPU work (spaCy), and must not stall the other scores
    on the loop.
    """

    def redact() -> tuple[Run, Conversation | None, int]:
        if conversation is None:
            seen_run = pseudonyms.redact_run(run)
            return seen_run, None, pseudonyms.generation
        seen = pseudonyms.redact_conversation(conversation)
        return (seen.last_run or Run()), seen, pseudonyms.generation

    return await _guarded(redact)


async def _redacted_context(pseudonyms: Pseudonyms, context: list[str]) -> list[str]:
    redacted: list[str] = await _guarded(lambda: pseudonyms.redact_value(list(context)))
    return redacted


async def _guarded(work: Callable[[], T]) -> T:
    try:
        return cast(T, await _in_worker_thread(work))
    except Exception as exc:
        # Not the detector's message: it may quote the text it was reading.
        raise RedactionError(
            f"personal-data redaction failed ({type(exc).__name__}); nothing was sent to the judge"
        ) from exc


def _note_redaction(pseudonyms: Pseudonyms, result: ScoreResult) -> None:
    result.flags["redacted"] = True
    result.flags["redacted_values"] = pseudonyms.found
    if pseudonyms.truncated:
        result.flags["redaction_truncated_at"] = pseudonyms.max_chars


def _plain_answer(name: str, value: Any) -> Any:
    if name == "generate_score":
        return getattr(value, "score", value)
    if isinstance(value, BaseModel):
        return value.model_dump()
    if isinstance(value, Classification):
        return value.to_dict()
    return value


_SPAN_SCALARS = frozenset({str, bool, int, float})


def _check_conversation(conversation: Conversation) -> None:
    """A conversation with no turns, or with a turn recorded without content, is skipped."""
    if not conversation.runs:
        raise NotScorable(f"conversation {conversation.id!r} has no turns to judge")
    for number, run in conversation.turns():
        not_scorable = run.metadata.get(NOT_SCORABLE_METADATA_KEY)
        if not_scorable:
            raise NotScorable(f"turn {number} of the conversation: {not_scorable}")


def _check_step_end(ctx: StepContext, name: str, result: ScoreResult) -> None:
    """After a step: a swallowed missing-text skip still skips; attributes are span-safe."""
    if ctx._missing is not None:
        raise NotScorable(ctx._missing)
    for key, value in result.attributes.items():
        if type(value) in _SPAN_SCALARS and type(key) is str:  # the common case, cheaply
            continue
        if not isinstance(key, str) or not isinstance(value, str | bool | int | float):
            raise TypeError(
                f"step {name!r} set attributes[{key!r}] to a {type(value).__name__}: "
                "span attributes must be str, bool, int or float values under str names"
            )


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
        if isinstance(item, str):
            items.append(item)
            continue
        try:
            items.append(message_text(item))
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


class _Raised(Exception):
    """Carries a BaseException out of a worker thread (anyio hands those on unreliably)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error


async def _in_worker_thread(fn: Callable[..., Any], *args: Any) -> Any:
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
        return await run_in_thread(call, abandon_on_cancel=True, limiter=_sync_hook_limiter())
    except _Raised as raised:
        raise raised.error from None
    except RuntimeError:
        if started:
            raise
        # No thread could start (Python 3.12 refuses new threads in atexit handlers, where
        # the exit-time shutdown scores the last runs): call it here instead.
        return fn(*args)


def _is_async(fn: Callable[..., Any]) -> bool:
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(fn, "__call__", None)  # noqa: B004 (an object with an async __call__)
    return call is not None and inspect.iscoroutinefunction(call)


def _sync_hook_limiter() -> anyio.CapacityLimiter:
    # One per event loop: a limiter belongs to the loop it was first used on.
    try:
        return _SYNC_HOOK_LIMITER.get()
    except LookupError:
        limiter = anyio.CapacityLimiter(SYNC_HOOK_THREADS)
        _SYNC_HOOK_LIMITER.set(limiter)
        return limiter


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


def _event_loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _describe(exc: BaseException) -> str:
    return exception_message(exc) or type(exc).__name__


def _record_failure(result: ScoreResult, step: str, exc: BaseException) -> None:
    result.status = "failed"
    result.score = None
    result.label = None
    result.failed_step = step
    result.error = _describe(exc)
    result.error_type = (
        exc.error_type if isinstance(exc, JudgeError | RedactionError) else type(exc).__name__
    )
    if isinstance(exc, JudgeError):
        result.usage.add(exc.usage)


def _price_usage(result: ScoreResult, judge: Judge) -> None:
    """Put the cost of the score's judge calls on it, when the judge knows its price."""
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


def _run_id_of(run: object) -> str:
    value = run.get("run_id") if isinstance(run, dict) else getattr(run, "run_id", None)
    return value if isinstance(value, str) and value else "unknown"


def _as_score(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"generate_score must return a number, not {type(value).__name__}")
    score = float(value)
    if not math.isfinite(score):
        raise ValueError(f"generate_score returned {score}, which is not a finite number")
    return score


_TRUNCATED = {"input": A.LIVESCORE_INPUT_TRUNCATED, "output": A.LIVESCORE_OUTPUT_TRUNCATED}


def _truncate(
    text: str,
    limit: int,
    which: Literal["input", "output"],
    flags: dict[str, Any],
    attributes: dict[str, AttributeValue],
) -> str:
    if len(text) <= limit:
        return text
    flags[f"{which}_truncated"] = True
    flags[f"{which}_chars"] = len(text)
    attributes[_TRUNCATED[which]] = True
    return text[:limit]


def create_scorer(
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
) -> Scorer:
    """Build a scorer from steps, each a function (sync or async) or a :class:`PromptStep`.

    Args:
        id: Stable id (``"my-scorer"``) used in results, spans, metrics and the CLI.
        description: What the scorer measures.
        generate_score: Required. Returns the score (a finite number).
        model: The judge: ``"openai/<model>"``, a :class:`~livescore.judges.Judge`, or
            ``None`` for a code-only scorer (the same keyword as every prebuilt factory).
        preprocess: Optional first step; its result is ``ctx.preprocess_step_result``.
        analyze: Optional second step; its result is ``ctx.analyze_step_result``.
        generate_reason: Optional last step; returns the explanation text.
        context: Static ground truth, as ``ctx.context``.
        get_context: ``get_context(run, step)`` resolving ground truth at scoring time; it
            overrides ``context`` and runs once per score. A synchronous one runs in a
            worker thread (at most 16 at once per event loop), so it may block.
        label: Maps a score to a low-cardinality label.
        version: Recorded on every score.
        max_text_chars: Input and output text beyond this length is truncated (and flagged).
        sync_steps: ``"thread"`` (default) runs synchronous steps in a worker thread, so a
            step that blocks (I/O, ``time.sleep``) never stalls other scores on the live
            worker; ``"inline"`` runs them on the event loop, saving the thread hop (tens
            of microseconds) for quick, pure-CPU steps, as the prebuilt code scorers do.
        level: ``"run"`` (default) scores one run; ``"conversation"`` scores a whole
            :class:`~livescore.runs.Conversation`: the steps read ``ctx.conversation``
            (``ctx.run`` is its last turn), ``get_context`` is called as
            ``get_context(conversation, None)``, each result says which turns it covers
            (``result.turns``), and a live dispatcher runs it when the conversation goes
            quiet (see :class:`~livescore.live.LiveDispatcher`).
        redact: Keep personal data from the judge and from what the score records (see
            :meth:`Scorer.with_redaction`); ``None`` (default) sends the text as it is.
        calibration: A :class:`~livescore.scoring.Calibration` (or the path of its file)
            that sets the labels from your own labelled data (see
            :meth:`Scorer.with_calibration`); refused when fitted for another judge model.

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
    resolved: Judge | None = None
    if model is not None:
        from livescore.judges import resolve_judge

        resolved = resolve_judge(model)
    return Scorer(
        id=id,
        description=description,
        generate_score=generate_score,
        model=resolved,
        preprocess=preprocess,
        analyze=analyze,
        generate_reason=generate_reason,
        context=context,
        get_context=get_context,
        label=label,
        version=version,
        max_text_chars=max_text_chars,
        sync_steps=sync_steps,
        level=level,
        redact=redact,
        calibration=calibration,
    )
