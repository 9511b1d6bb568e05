"""``run_evals``: the same scorers as live scoring, over a dataset.

Each item runs through a target (an agent an integration can run, any callable) or carries
a ready output; the scorers then see the item's run exactly as they would see a live one.
Failures are values here too: a target that raises or a scorer that fails is recorded on
its item and counted, and the evaluation goes on.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
import logging
import time
import uuid
import warnings
from collections.abc import AsyncIterable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
from opentelemetry import trace
from opentelemetry._logs import LoggerProvider
from opentelemetry.trace import SpanKind, Status, StatusCode

from livescore._emit import DEFAULT_EMIT, EmitSignal
from livescore._threads import run_in_thread
from livescore._usage import format_usd
from livescore.judges import JudgeBudget
from livescore.otel import ContentCapture, Emitter, OTelEmitter
from livescore.otel import attributes as attrs
from livescore.pii import Detect, Pseudonyms, RedactSpec, as_detector
from livescore.runs import CONTEXT_METADATA_KEY, Conversation, Run, Step, ToolCall
from livescore.scoring import CalibrationSpec, RunMemo, Scorer, ScoreResult
from livescore.sinks import ScoreSink, with_sinks

from ._calibrate import calibrate_scorers
from ._cost import DEFAULT_ESTIMATE_ITEMS, CostEstimate, cost_cap, sample_indices, spent
from ._result import EvalCollector, EvalResult, ItemResult, StopKind
from ._targets import AgentTarget, resolve_target

__all__ = (
    "CONTEXT_METADATA_KEY",
    "ITEM_KEYS",
    "OnItemComplete",
    "Target",
    "estimate_cost",
    "get_item_context",
    "run_evals",
    "run_evals_sync",
    "split_item_keys",
)

logger = logging.getLogger("livescore.evals")

ITEM_KEYS = frozenset(
    {"input", "question", "output", "ground_truth", "context", "id", "metadata", "steps", "turns"}
)
"""The keys a dataset item may have; any other key is kept in the item's ``metadata``.

``question`` is another name for ``input`` (the hallucination benchmark's), read only when
the item has no ``input``, exactly as ``livescore eval`` reads a dataset line."""

Target = Callable[[Any], Any] | Any
"""A callable ``(input) -> output``, or an agent an installed integration can run (a
LangChain Runnable or ``create_agent`` agent with ``livescore-langchain``)."""

OnItemComplete = Callable[[ItemResult], Any]
"""``on_item_complete(item_result)``, sync or async."""

EVAL_ITEM_SPAN = "eval_item"
LIVESCORE_EVAL_ID = "livescore.eval.id"
LIVESCORE_EVAL_ITEM_INDEX = "livescore.eval.item.index"
LIVESCORE_EVAL_ITEM_ID = "livescore.eval.item.id"
EVAL_TURN_SPAN = "eval_turn"
LIVESCORE_EVAL_TURN = "livescore.eval.turn"


def split_item_keys(raw: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split an item into its known keys and the others (which become metadata).

    One rule for ``run_evals`` and ``livescore eval``: an unknown key never fails an item
    by itself; it travels in the item's ``metadata`` and one warning names every unknown
    key. ``question`` is the input when there is no ``input``; with both, ``input`` is the
    input and ``question`` stays in the metadata.

    Example:
        >>> split_item_keys({"input": "q", "output": "a", "source": "faq"})
        ({'input': 'q', 'output': 'a'}, {'source': 'faq'})
        >>> split_item_keys({"question": "q", "output": "a"})
        ({'input': 'q', 'output': 'a'}, {})
    """
    # ``question`` stands for ``input`` only where there is none (and keeps its place).
    alias = "input" not in raw
    known = {
        ("input" if alias and k == "question" else k): v for k, v in raw.items() if k in ITEM_KEYS
    }
    unknown = {str(k): v for k, v in raw.items() if k not in ITEM_KEYS}
    if not alias and "question" in known:
        unknown["question"] = known.pop("question")
    return known, unknown


def _compact_run(run: Run) -> Run:
    """What ``run_evals(keep_runs=False)`` keeps of an item's run: its ids, name, input,
    output, ground truth and error, and of its steps only the tool calls' names and
    arguments (what the HTML report lists). The steps' messages, tool results, documents
    and the run's metadata are let go: a run of a stored trace holds every message of every
    model call, far more than its result needs.

    Example:
        >>> from livescore import Run
        >>> from livescore.runs import Step, ToolCall
        >>> run = Run(input="2+2?", output="4", steps=[Step(kind="model", output="4"),
        ...     Step(kind="tool", name="add", tool_call=ToolCall("add", args={"a": 2}, result=4))])
        >>> [(s.tool_call.name, s.tool_call.args, s.tool_call.result)
        ...  for s in _compact_run(run).steps if s.tool_call is not None]
        [('add', {'a': 2}, None)]
    """
    steps = [
        Step(
            kind=step.kind,
            name=step.name,
            index=step.index,
            tool_call=ToolCall(step.tool_call.name, args=step.tool_call.args),
        )
        for step in run.steps
        if step.kind == "tool" and step.tool_call is not None
    ]
    return dataclasses.replace(run, steps=steps, metadata={})


def get_item_context(run: Run, step: Step | None = None) -> list[str] | None:
    """The static context a dataset item carried, for a scorer's ``get_context``.

    :func:`run_evals` puts an item's ``context`` in ``run.metadata["context"]``; pass this
    function as ``get_context`` to judge against it.

    Example:
        >>> from livescore import Run
        >>> get_item_context(Run(metadata={"context": ["Paris is in France."]}))
        ['Paris is in France.']
    """
    value = run.metadata.get(CONTEXT_METADATA_KEY)
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


def _check_scorers(scorers: Sequence[Scorer]) -> list[Scorer]:
    if isinstance(scorers, Scorer):
        return [scorers]
    checked = list(scorers)
    if not checked:
        raise ValueError("run_evals needs at least one scorer")
    seen: set[str] = set()
    for scorer in checked:
        if not isinstance(scorer, Scorer):
            raise TypeError(f"scorers must be livescore Scorer objects, not {scorer!r}")
        if scorer.id in seen:
            raise ValueError(f"two scorers share the id {scorer.id!r}; ids must be unique")
        seen.add(scorer.id)
    return checked


class _InvalidItem(ValueError):
    def __init__(self, message: str, unknown_keys: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.unknown_keys = tuple(unknown_keys)


@dataclass(slots=True)
class _Item:
    input: Any
    output: Any
    has_output: bool
    ground_truth: Any
    context: list[str] | None
    id: str | None
    metadata: dict[str, Any]
    unknown_keys: tuple[str, ...] = ()
    steps: list[Step] | None = None
    run: Run | None = None  # an item given as a Run: scored whole (its steps, its span)
    conversation: Conversation | None = None  # an item with ``turns``


def _parse_item(raw: Any) -> _Item:
    if isinstance(raw, Run):
        context = get_item_context(raw)
        return _Item(
            input=raw.input,
            output=raw.output,
            has_output=raw.output is not None,
            ground_truth=raw.ground_truth,
            context=context,
            id=None,
            metadata=dict(raw.metadata),
            run=raw,
        )
    if not isinstance(raw, Mapping):
        raise _InvalidItem(f"an item must be a mapping (dict) or a Run, not {type(raw).__name__}")
    raw, unknown = split_item_keys(raw)
    if "turns" in raw:
        return _parse_conversation_item(raw, unknown)
    if "input" not in raw:
        # The likeliest cause is a typo: name the keys that were not read.
        names = ", ".join(repr(k) for k in list(unknown)[:5])
        hint = f" (it has unknown key(s) {names}: a typo?)" if unknown else ""
        raise _InvalidItem(f"the item has no 'input'{hint}", tuple(unknown))
    context = raw.get("context")
    if context is not None:
        if isinstance(context, str):
            context = [context]
        elif not isinstance(context, Sequence) or not all(isinstance(c, str) for c in context):
            raise _InvalidItem("'context' must be a string or a list of strings", tuple(unknown))
        else:
            context = list(context)
    metadata = raw.get("metadata")
    if metadata is not None and not isinstance(metadata, Mapping):
        raise _InvalidItem("'metadata' must be a mapping", tuple(unknown))
    steps = _item_steps(raw.get("steps"), tuple(unknown))
    item_id = raw.get("id")
    return _Item(
        input=raw["input"],
        output=raw.get("output"),
        has_output="output" in raw,
        ground_truth=raw.get("ground_truth"),
        context=context,
        id=None if item_id is None else str(item_id),
        # The item's own metadata wins over an unknown key of the same name.
        metadata={**unknown, **(metadata or {})},
        unknown_keys=tuple(unknown),
        steps=steps,
    )


def _parse_conversation_item(raw: Mapping[str, Any], unknown: dict[str, Any]) -> _Item:
    """An item with ``turns``: a conversation, its last turn standing for its run."""
    metadata = raw.get("metadata")
    if metadata is not None and not isinstance(metadata, Mapping):
        raise _InvalidItem("'metadata' must be a mapping", tuple(unknown))
    item_id = raw.get("id")
    turns = raw["turns"]
    if not isinstance(turns, Sequence) or isinstance(turns, str | bytes) or not turns:
        raise _InvalidItem(
            "'turns' must be a non-empty list of {input, output} objects", tuple(unknown)
        )
    try:
        conversation = Conversation.from_turns(turns, id=None if item_id is None else str(item_id))
    except ValueError as exc:
        raise _InvalidItem(str(exc), tuple(unknown)) from None
    last = conversation.runs[-1]
    return _Item(
        input=last.input,
        output=last.output,
        has_output=True,
        ground_truth=last.ground_truth,
        context=None,
        id=None if item_id is None else str(item_id),
        metadata={**unknown, **(metadata or {})},
        unknown_keys=tuple(unknown),
        conversation=conversation,
    )


def _item_steps(value: Any, unknown: tuple[str, ...]) -> list[Step] | None:
    """An item's ``steps``: :class:`~livescore.runs.Step` objects or their dict form."""
    if value is None:
        return None
    if not isinstance(value, Sequence) or isinstance(value, str | bytes):
        raise _InvalidItem("'steps' must be a list of steps", unknown)
    steps: list[Step] = []
    for entry in value:
        if isinstance(entry, Step):
            steps.append(entry)
            continue
        if not isinstance(entry, Mapping):
            raise _InvalidItem("'steps' must be a list of Step objects or step dicts", unknown)
        try:
            steps.extend(Run.from_dict({"steps": [entry]}).steps)
        except (TypeError, ValueError, AttributeError) as exc:
            raise _InvalidItem(
                f"'steps' holds a step that cannot be read: {exc}", unknown
            ) from None
    return steps


async def _iterate(data: Iterable[Any] | AsyncIterable[Any]) -> AsyncIterable[Any]:
    if isinstance(data, AsyncIterable):
        async for raw in data:
            yield raw
    else:
        for raw in data:
            yield raw


class _Evaluation:
    """The state of one ``run_evals`` call."""

    def __init__(
        self,
        scorers: list[Scorer],
        invoker: AgentTarget | None,
        on_item_complete: OnItemComplete | None,
        tracer: trace.Tracer,
        emitter: Emitter,
        remote: Any = None,
        redact: Detect | None = None,
        plan: _Plan | None = None,
    ) -> None:
        self.plan = plan = plan if plan is not None else _Plan()
        self.keep_runs = plan.keep_runs
        self.collector = EvalCollector(
            [s.id for s in scorers], keep_items=plan.keep_items, labels=plan.labels
        )
        self.judges = list({id(j): j for s in scorers if (j := s.judge) is not None}.values())
        self.stop_when_judge_unreachable = plan.stop_when_judge_unreachable
        self.unreachable: str | None = None  # why the run stopped: no judge to score with
        self.feeding: anyio.CancelScope | None = None  # the items in flight, to cancel
        self.remote = remote  # a livescore.fleet RemoteScoring: scores go to the fleet
        self.redact = redact  # the scorers redact; the item's record is redacted here too
        self.scorers = scorers
        self.invoker = invoker
        self.on_item_complete = on_item_complete
        self.tracer = tracer
        self.emitter = emitter
        self.eval_id = uuid.uuid4().hex
        self.unknown_keys: dict[str, int] = {}

    async def evaluate(
        self, index: int, raw: Any, release: Callable[[], None] | None = None
    ) -> ItemResult:
        try:
            item = _parse_item(raw)
        except _InvalidItem as exc:
            for key in exc.unknown_keys:  # named in the warning even when the item fails
                self.unknown_keys[key] = self.unknown_keys.get(key, 0) + 1
            result = ItemResult(index=index, error=str(exc), error_type="invalid_item")
            await self._complete(result)
            return result
        for key in item.unknown_keys:
            self.unknown_keys[key] = self.unknown_keys.get(key, 0) + 1
        result = ItemResult(
            index=index,
            input=item.input,
            output=item.output,
            ground_truth=item.ground_truth,
            context=item.context,
            id=item.id,
            metadata=item.metadata,
        )
        if item.conversation is not None:
            result.conversation = item.conversation
        run = await self._produce_run(item, result)
        if self.remote is not None and release is not None:
            # The fleet scores it: the item's slot goes to the next item's target now.
            release()
        # One memo per item: scorers that send the judge the same request (claims
        # extraction for hallucination and faithfulness) share one call, and with
        # redaction, one set of placeholders, which the item's record uses too.
        memo = RunMemo()
        if run is not None:
            result.run = run
            result.output = run.output
            await self._score(run, result, result.conversation, memo)
        if self.redact is not None:
            await self._redact_item(result, memo.pseudonyms(self.redact))
        await self._complete(result)
        return result

    async def _redact_item(self, result: ItemResult, pseudonyms: Pseudonyms) -> None:
        """The item's record as its scores saw it: placeholders, not personal data."""

        def redact() -> None:
            result.input = pseudonyms.redact_value(result.input)
            result.output = pseudonyms.redact_value(result.output)
            result.ground_truth = pseudonyms.redact_value(result.ground_truth)
            if result.context is not None:
                result.context = [pseudonyms.redact(c) for c in result.context]
            if result.run is not None:
                result.run = pseudonyms.redact_run(result.run)
            if result.conversation is not None:
                result.conversation = pseudonyms.redact_conversation(result.conversation)

        result.pseudonyms = pseudonyms
        try:
            await anyio.to_thread.run_sync(redact)
        except Exception as exc:
            # The record must not keep what could not be redacted.
            result.input = result.output = result.ground_truth = None
            result.context = result.run = result.conversation = None
            result.error = (
                f"personal-data redaction failed ({type(exc).__name__}); the item's text "
                "was left out of its record"
            )
            result.error_type = "redaction"

    async def _produce_run(self, item: _Item, result: ItemResult) -> Run | None:
        if item.conversation is not None:
            return self._conversation_run(item, result)
        if self.invoker is None and not item.has_output:
            result.error = "the item has no 'output' and run_evals was given no target"
            result.error_type = "invalid_item"
            return None
        stored = item.run
        if self.invoker is None and stored is not None and stored.span_id is not None:
            # A run read back from a trace (livescore.traces.load_traces) already has its
            # span: the scores nest under it, so a dashboard holding the trace shows them.
            run = dataclasses.replace(stored, metadata=dict(stored.metadata))
            run.metadata.setdefault("source", "eval")
            if run.error is not None:
                result.error = run.error
                result.error_type = "target_error"
                result.run = run
                return None
            return run
        started = time.perf_counter()
        try:
            produced, trace_ids = await self._call_in_span(item, result.index)
        except Exception as exc:
            result.error = str(exc) or type(exc).__name__
            result.error_type = type(exc).__name__
            result.duration_s = time.perf_counter() - started
            return None
        result.duration_s = time.perf_counter() - started
        if isinstance(produced, Run):
            run = produced
        else:
            # A ready output may come with the steps that led to it (a dataset line's
            # ``steps``, an earlier ``--out`` record): tool scorers read them.
            run = Run(output=produced)
            if self.invoker is None and item.steps:
                run.steps = list(item.steps)
        if run.input is None:
            run.input = item.input
        if run.ground_truth is None:
            run.ground_truth = item.ground_truth
        if item.context is not None:
            run.metadata[CONTEXT_METADATA_KEY] = list(item.context)
        if item.metadata:
            run.metadata.setdefault("item", item.metadata)
        run.metadata.setdefault("source", "eval")
        # A run that already names its span (OpenInference's agent span, or a Run the
        # target built) keeps it; otherwise the item's span represents the run.
        if trace_ids is not None and run.trace_id is None:
            run.trace_id, run.span_id, run.trace_flags = trace_ids
        if run.error is not None:
            result.error = run.error
            result.error_type = "target_error"
            result.run = run
            return None
        return run

    def _conversation_run(self, item: _Item, result: ItemResult) -> Run | None:
        """Trace a conversation item (its span, a child span per turn) and return its last
        turn, the run its scores nest under."""
        conversation = item.conversation
        assert conversation is not None
        if self.invoker is not None:
            result.error = (
                "an item with 'turns' carries its outputs: run_evals does not replay "
                "conversations through a target"
            )
            result.error_type = "invalid_item"
            return None
        session = {
            attrs.GEN_AI_CONVERSATION_ID: conversation.id,
            attrs.OPENINFERENCE_SESSION_ID: conversation.id,
            attrs.LIVESCORE_SOURCE: "eval",
        }
        span_attrs: dict[str, str | int] = {
            **session,
            LIVESCORE_EVAL_ID: self.eval_id,
            LIVESCORE_EVAL_ITEM_INDEX: result.index,
        }
        if item.id is not None:
            span_attrs[LIVESCORE_EVAL_ITEM_ID] = item.id
        runs: list[Run] = []
        with self.tracer.start_as_current_span(
            EVAL_ITEM_SPAN, kind=SpanKind.INTERNAL, attributes=span_attrs
        ):
            for number, turn in conversation.turns():
                run = dataclasses.replace(turn, metadata=dict(turn.metadata))
                run.metadata.setdefault("source", "eval")
                if item.metadata:
                    run.metadata.setdefault("item", item.metadata)
                # Each turn has a span, as a live turn has its run span: the conversation's
                # scores link to every one, and nest under the last.
                with self.tracer.start_as_current_span(
                    f"{EVAL_TURN_SPAN} {number}",
                    kind=SpanKind.INTERNAL,
                    attributes={**session, LIVESCORE_EVAL_TURN: number},
                ) as span:
                    ctx = span.get_span_context()
                    if ctx.is_valid:
                        run.trace_id = format(ctx.trace_id, "032x")
                        run.span_id = format(ctx.span_id, "016x")
                        run.trace_flags = int(ctx.trace_flags)
                runs.append(run)
        result.conversation = dataclasses.replace(conversation, runs=runs)
        return runs[-1]

    async def _call_in_span(
        self, item: _Item, index: int
    ) -> tuple[Any, tuple[str, str, int] | None]:
        span_attrs: dict[str, str | int] = {}
        if self.invoker is None:
            name = EVAL_ITEM_SPAN
        else:
            name = f"{attrs.OPERATION_INVOKE_AGENT} {self.invoker.name}"
            span_attrs[attrs.GEN_AI_OPERATION_NAME] = attrs.OPERATION_INVOKE_AGENT
            span_attrs[attrs.GEN_AI_AGENT_NAME] = self.invoker.name
        span_attrs[attrs.LIVESCORE_SOURCE] = "eval"
        span_attrs[LIVESCORE_EVAL_ID] = self.eval_id
        span_attrs[LIVESCORE_EVAL_ITEM_INDEX] = index
        if item.id is not None:
            span_attrs[LIVESCORE_EVAL_ITEM_ID] = item.id
        with self.tracer.start_as_current_span(
            name, kind=SpanKind.INTERNAL, attributes=span_attrs, record_exception=True
        ) as span:
            ctx = span.get_span_context()
            ids = (
                (format(ctx.trace_id, "032x"), format(ctx.span_id, "016x"), int(ctx.trace_flags))
                if ctx.is_valid
                else None
            )
            if self.invoker is None:
                if item.run is not None:  # keep the run's steps (its tool calls and results)
                    run = dataclasses.replace(item.run, metadata=dict(item.run.metadata))
                    return run, ids
                return item.output, ids
            try:
                produced = await self.invoker(item.input)
            except Exception as exc:
                span.set_status(Status(StatusCode.ERROR, str(exc)))
                span.set_attribute(attrs.ERROR_TYPE, type(exc).__name__)
                raise
            return produced, ids

    async def _score(
        self,
        run: Run,
        result: ItemResult,
        conversation: Conversation | None = None,
        memo: RunMemo | None = None,
    ) -> None:
        if self.remote is not None:
            # The workers emit and count each score; here, what was handed to them.
            for scorer in self.scorers:
                try:
                    self.emitter.record_sampled(scorer.id)
                    self.emitter.record_handed_off(scorer.id)
                except Exception:
                    logger.exception("could not count the hand-off of %s", scorer.id)
            scored = await self.remote.score(run, conversation)
            result.scores = {s.id: scored[s.id] for s in self.scorers}
            return
        scores: dict[str, ScoreResult] = {}
        memo = memo if memo is not None else RunMemo()

        async def score_one(scorer: Scorer) -> None:
            # The one non-raising call: a failure comes back as a failed result. A
            # conversation scorer judges the whole conversation (a plain item: a
            # conversation of one turn); a run scorer, the conversation's last turn.
            subject: Run | Conversation = run
            if scorer.level == "conversation" and conversation is not None:
                subject = conversation
            scores[scorer.id] = await scorer.score(subject, memo=memo)

        # Scorers are independent: on one item they run side by side.
        async with anyio.create_task_group() as tg:
            for scorer in self.scorers:
                tg.start_soon(score_one, scorer)
        result.scores = {s.id: scores[s.id] for s in self.scorers}
        for scorer in self.scorers:
            score = result.scores[scorer.id]
            try:
                # Every item is "sampled" at rate 1, so the live accounting invariant
                # (sampled = scored + failed + skipped + dropped) holds for evals too.
                self.emitter.record_sampled(scorer.id)
                self.emitter.emit(
                    run, score, sample_rate=1.0, source="eval", scorer_version=scorer.version
                )
            except Exception:  # telemetry never fails an evaluation
                logger.exception("could not emit the score of %s", scorer.id)

    async def _complete(self, result: ItemResult) -> None:
        try:
            if self.on_item_complete is None:
                return
            value = self.on_item_complete(result)
            if inspect.isawaitable(value):
                await value
        except Exception as exc:
            # A bug in a progress callback must not throw away the evaluation's results.
            result.callback_error = f"{type(exc).__name__}: {exc}"
            logger.exception("on_item_complete raised for item %d", result.index)
        finally:
            if not self.keep_runs and result.run is not None:
                # The callback saw the whole run (``livescore eval --out`` writes it there);
                # the result keeps what the summaries and the report read.
                result.run = _compact_run(result.run)
            self.collector.add(result)
            self._stop_if_judge_unreachable(result)

    def _stop_if_judge_unreachable(self, result: ItemResult) -> None:
        if not self.stop_when_judge_unreachable or self.unreachable is not None:
            return
        if not any(s.error_type in STOPPING_ERRORS for s in result.scores.values()):
            return
        self.unreachable = unreachable_judge(self.judges)
        if self.unreachable is not None and self.feeding is not None:
            # Every later judge call would fail at once: end here, keep what was scored.
            self.feeding.cancel()


# The failures after which a judge may be of no more use: unreachable (its circuit opened)
# or refusing every call (an unknown model, a refused key: see OpenAIJudge.refused).
STOPPING_ERRORS = ("connection_error", "timeout", "auth_error", "bad_request")


def unreachable_judge(judges: Sequence[Any]) -> str | None:
    """``"the judge gpt-4o at http://…/v1 is unreachable (connection refused)"`` when one
    judge's circuit is open (every call to it now fails at once), ``"the judge x at … refuses
    every call (HTTP 404: …)"`` when it answered with a permanent refusal (every later call
    would cost one more failure), else ``None``."""
    for judge in judges:
        where = getattr(judge, "base_url", None)
        named = f"the judge {judge.model_name}{f' at {where}' if where else ''}"
        reason = getattr(judge, "unreachable", None)
        if reason:
            return f"{named} is unreachable ({reason})"
        refusal = getattr(judge, "refused", None)
        if refusal:
            return f"{named} refuses every call ({refusal})"
    return None


def _check_options(
    data: Any,
    *,
    concurrency: Any,
    max_pending: Any,
    estimate_items: Any,
    custom_emitter: bool,
    default_emitter_options: tuple[Any, Any, Any],
    capture_content: str,
    broker: str | None,
    emit: Any,
    redact: Any,
    max_cost: Any,
    sinks: Any,
) -> None:
    """The argument errors of :func:`run_evals`, before any work."""
    # With a fleet, the workers score, emit, redact and spend: those belong to them.
    on_workers = (
        (redact, "the workers score the items: redact there (livescore worker --redact)"),
        (
            emit,
            "scores are emitted on the workers: choose what they emit there "
            "(livescore worker --emit)",
        ),
        (
            max_cost,
            "the workers' judges spend: give them a budget (livescore worker "
            "--judge-budget USD/PER)",
        ),
        (
            sinks or None,
            "scores are emitted on the workers: attach the sinks there (a `sinks` list "
            "beside the scorers, or livescore worker --sinks MODULE:ATTR)",
        ),
    )
    for value, message in on_workers:
        if broker is not None and value is not None:
            raise ValueError(f"with broker=, {message}")
    for name, value, least in (
        ("concurrency", concurrency, 1),
        ("max_pending", max_pending, 1),
        ("estimate_items", estimate_items, 0),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            kind = "a positive integer" if least else "a whole number"
            raise ValueError(f"{name} must be {kind}, not {value!r}")
    if isinstance(data, Mapping | str | bytes):
        raise TypeError("data must be an iterable of items (dicts), not a single mapping or text")
    if custom_emitter and (
        any(option is not None for option in default_emitter_options) or capture_content != "full"
    ):
        raise ValueError(
            "meter_provider, logger_provider, capture_content and emit configure the default "
            "emitter; configure the emitter you pass instead"
        )
    if sinks and not isinstance(sinks, Sequence):
        raise TypeError(f"sinks must be a list of sinks, not {sinks!r}")


async def run_evals(
    data: Iterable[Mapping[str, Any] | Run] | AsyncIterable[Mapping[str, Any] | Run],
    scorers: Sequence[Scorer],
    *,
    target: Target | None = None,
    on_item_complete: OnItemComplete | None = None,
    concurrency: int = 1,
    emitter: Emitter | None = None,
    tracer_provider: trace.TracerProvider | None = None,
    meter_provider: Any = None,
    capture_content: ContentCapture = "full",
    sinks: Sequence[ScoreSink] | None = None,
    broker: str | None = None,
    max_pending: int = 1000,
    logger_provider: LoggerProvider | None = None,
    emit: str | Sequence[EmitSignal] | None = None,
    redact: RedactSpec | None = None,
    keep_runs: bool = True,
    keep_items: bool = True,
    max_cost: float | JudgeBudget | None = None,
    estimate_items: int = DEFAULT_ESTIMATE_ITEMS,
    on_estimate: Callable[[CostEstimate], Any] | None = None,
    stop_when_judge_unreachable: bool = False,
    calibration: CalibrationSpec | None = None,
    labels: Sequence[int | None] | None = None,
) -> EvalResult:
    """Run ``scorers`` over every item of ``data``; the run goes on through any failure.

    Items, targets, conversations, the context judge scorers read, failures and tracing
    follow the rules of :mod:`livescore.evals` (``livescore eval`` reads a dataset by the
    same); the docs' evals page shows cost caps, early stops and large runs. Every score goes
    through :meth:`Scorer.score <livescore.Scorer.score>`, the one non-raising call;
    ``on_item_complete`` is called once per item in completion order, and what it raises is
    kept in ``item.callback_error``.

    Args:
        data: Items, as any iterable or async iterable, read lazily.
        scorers: The scorers to run on every item (unique ids).
        target: What produces each item's output: a callable ``(input) -> output``, sync
            or async, an agent an installed integration runs, or ``None``.
        on_item_complete: Called with each :class:`ItemResult` when it is done.
        concurrency: How many items run at once (scorers of one item run side by side).
        emitter: Where scores go (an :class:`~livescore.otel.Emitter`); by default an
            :class:`~livescore.otel.OTelEmitter` built from the telemetry arguments.
        tracer_provider: Where item spans (and, without ``emitter``, score spans) go.
        meter_provider: Without ``emitter``: where score metrics go.
        capture_content: Without ``emitter``: ``"full"``, ``"truncated"`` or ``"none"`` text.
        sinks: Dashboards each score also goes to; flushed (after the emitter), not shut
            down, before the call returns.
        broker: Score on the worker fleet (``"redis://host:6379/0"``): targets run here,
            the ``livescore worker`` processes score, redact, emit and spend their budgets.
        max_pending: With ``broker``: items published and not yet scored, at most.
        logger_provider: Without ``emitter``: where ``gen_ai.evaluation.result`` events go.
        emit: Without ``emitter``: ``"spans"``, ``"events"`` or both (the default).
        redact: Keep personal data from the judge and from the items' records
            (:meth:`~livescore.Scorer.with_redaction`).
        keep_runs: With ``False``, once ``on_item_complete`` has seen it, ``item.run`` keeps
            only its ids, texts and tool calls (what the summaries and the report read).
        keep_items: With ``False``, the result keeps running totals, not the items.
        labels: With ``keep_items=False``: 0/1 labels by item index, for the quality figures.
        max_cost: A cap on the judge spend in US dollars (or a
            :class:`~livescore.judges.JudgeBudget`), estimated first on a sequence.
        estimate_items: With ``max_cost``: the sample scored first (``0``: none).
        on_estimate: Called with the sample's :class:`CostEstimate`.
        stop_when_judge_unreachable: End the run, keeping what was scored, when a judge
            becomes unreachable or refuses every call.
        calibration: A :class:`~livescore.scoring.Calibration` or its file: the scorers it
            names label their scores by it (:func:`calibrate_scorers`).

    Returns:
        An :class:`EvalResult`: aggregates by scorer id, the items in data order, judge
        usage, duration, failures, and why the run stopped early (``stopped``).

    Raises:
        ValueError: No scorer, duplicate ids, a bad count, ``emitter`` with the default
            emitter's options, a worker's option with ``broker``, or a ``max_cost`` a
            judge cannot price (``JudgeConfigError``); ``CalibrationError`` for a
            ``calibration`` that cannot be used.
        livescore.fleet.BrokerUnavailableError: ``broker`` does not answer.
        TypeError: A scorer or the target of the wrong kind, or an agent whose integration
            is not installed (the message says what to install).

    Example:
        >>> import anyio
        >>> from livescore import create_scorer
        >>> length = create_scorer(
        ...     id="short", description="1 when the answer is short",
        ...     generate_score=lambda ctx: float(len(ctx.output_text) < 20),
        ... )
        >>> data = [{"input": "2+2?", "output": "4"}, {"input": "Why?", "output": "x" * 30}]
        >>> result = anyio.run(lambda: run_evals(data, [length]))
        >>> result.scores["short"].mean
        0.5
    """
    _check_options(
        data,
        concurrency=concurrency,
        max_pending=max_pending,
        estimate_items=estimate_items,
        custom_emitter=emitter is not None,
        default_emitter_options=(meter_provider, logger_provider, emit),
        capture_content=capture_content,
        broker=broker,
        emit=emit,
        redact=redact,
        max_cost=max_cost,
        sinks=sinks,
    )
    checked, detect = _prepared_scorers(scorers, calibration, redact)
    if emitter is None:
        emitter = OTelEmitter(
            tracer_provider=tracer_provider,
            meter_provider=meter_provider,
            capture_content=capture_content,
            logger_provider=logger_provider,
            emit=DEFAULT_EMIT if emit is None else emit,
        )
    invoker = resolve_target(target) if target is not None else None
    plan = _Plan(concurrency, max_pending, keep_items, keep_runs, estimate_items, on_estimate)
    plan.stop_when_judge_unreachable, plan.labels = stop_when_judge_unreachable, labels
    if max_cost is not None:
        plan.budget = cost_cap(max_cost, (s.judge for s in checked))
    provider = tracer_provider if tracer_provider is not None else trace.get_tracer_provider()
    tracer = provider.get_tracer(attrs.INSTRUMENTATION_SCOPE)
    emitter = with_sinks(emitter, sinks) if sinks else emitter
    if broker is not None:
        from livescore.fleet import open_remote_scoring

        async with open_remote_scoring(broker, checked) as remote:
            run = _Evaluation(
                checked, invoker, on_item_complete, tracer, emitter, remote, plan=plan
            )
            return await _run_all(data, run, sinks)
    run = _Evaluation(checked, invoker, on_item_complete, tracer, emitter, None, detect, plan)
    return await _run_all(data, run, sinks)


def _prepared_scorers(
    scorers: Sequence[Scorer], calibration: CalibrationSpec | None, redact: RedactSpec | None
) -> tuple[list[Scorer], Detect | None]:
    """The scorers checked, calibrated and redacting as asked; the redaction's detector."""
    checked = _check_scorers(scorers)
    if calibration is not None:
        checked, _ = calibrate_scorers(checked, calibration)
    detect = as_detector(redact) if redact is not None else None
    if detect is not None:
        checked = [scorer.with_redaction(detect) for scorer in checked]
    return checked, detect


@dataclass(slots=True)
class _Plan:
    """What one ``run_evals`` call was asked for besides the items and the scorers."""

    concurrency: int = 1
    max_pending: int = 1000
    keep_items: bool = True
    keep_runs: bool = True
    estimate_items: int = DEFAULT_ESTIMATE_ITEMS
    on_estimate: Callable[[CostEstimate], Any] | None = None
    stop_when_judge_unreachable: bool = False
    budget: JudgeBudget | None = None  # max_cost's
    labels: Sequence[int | None] | None = None


async def _run_all(
    data: Iterable[Any] | AsyncIterable[Any],
    evaluation: _Evaluation,
    sinks: Sequence[ScoreSink] | None,
) -> EvalResult:
    plan = evaluation.plan
    started = time.perf_counter()
    stopped: StopKind | None = None
    stop_reason = ""
    estimate: CostEstimate | None = None
    if plan.budget is not None and isinstance(data, Sequence) and plan.estimate_items:
        # Estimate first, from an evenly spread sample; the rest only when it fits the cap.
        sample = sample_indices(len(data), plan.estimate_items)
        sampled = EvalCollector([])
        kept = evaluation.collector
        evaluation.collector = _Tee(kept, sampled)
        await _feed(((i, data[i]) for i in sample), evaluation, plan)
        evaluation.collector = kept
        if evaluation.unreachable is None:  # else no estimate: the sample was cut short
            estimate = CostEstimate.of(
                sampled.result().items, total=len(data), concurrency=plan.concurrency
            )
            if plan.on_estimate is not None:
                plan.on_estimate(estimate)
        usd = plan.budget.usd
        if estimate is not None and estimate.above(usd):
            stopped = "estimate_over_max_cost"
            stop_reason = (
                f"the estimated judge cost {format_usd(estimate.cost)} is above max_cost "
                f"{format_usd(usd)}: the rest of the items were not scored"
            )
        elif estimate is not None:
            picked = set(sample)
            rest = (i for i in range(len(data)) if i not in picked)
            if not await _feed(((i, data[i]) for i in rest), evaluation, plan):
                stopped = "max_cost"
    elif not await _feed(_numbered(data), evaluation, plan):
        stopped = "max_cost"
    if evaluation.unknown_keys:
        counts = ", ".join(f"{k!r} ({n} item(s))" for k, n in evaluation.unknown_keys.items())
        warnings.warn(
            f"run_evals kept unknown item key(s) as metadata: {counts}; the keys it reads "
            f"are {', '.join(sorted(ITEM_KEYS))}",
            UserWarning,
            stacklevel=3,  # run_evals' caller (this runs in a helper of run_evals)
        )
    result = evaluation.collector.result()
    if evaluation.unreachable is not None:
        stopped, stop_reason = "judge_unreachable", evaluation.unreachable
    elif stopped == "max_cost":
        total = f" of {len(data)}" if isinstance(data, Sequence) else ""
        usd = plan.budget.usd if plan.budget is not None else None
        stop_reason = (
            f"the judge spend reached max_cost {format_usd(usd)} after "
            f"{result.item_count}{total} item(s)"
        )
    result.stopped, result.stop_reason, result.estimate = stopped, stop_reason, estimate
    if sinks:
        # Spans first (Phoenix annotates spans it has), then the dashboards' scores; in a
        # thread, as a flush waits on other threads' deliveries.
        await run_in_thread(evaluation.emitter.flush, None)
    result.duration_s = time.perf_counter() - started
    return result


async def _numbered(data: Iterable[Any] | AsyncIterable[Any]) -> AsyncIterable[tuple[int, Any]]:
    index = 0
    async for raw in _iterate(data):
        yield index, raw
        index += 1


async def _feed(
    numbered: Iterable[tuple[int, Any]] | AsyncIterable[tuple[int, Any]],
    evaluation: _Evaluation,
    plan: _Plan,
) -> bool:
    """Evaluate the ``(index, item)`` pairs, ``plan.concurrency`` at a time; ``False`` when
    the cost cap stopped the feeding with an item left."""
    limiter = anyio.CapacityLimiter(plan.concurrency)
    # With a fleet, an item leaves ``limiter`` once its target ran; this bounds the items
    # published and still waiting for their scores (without one it never binds).
    pending = anyio.CapacityLimiter(
        plan.max_pending if evaluation.remote is not None else plan.concurrency
    )
    fed_all = True

    async def work(index: int, raw: Any, token: object) -> None:
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                limiter.release_on_behalf_of(token)

        try:
            await evaluation.evaluate(index, raw, release)
        finally:
            release()
            pending.release_on_behalf_of(token)

    async with anyio.create_task_group() as tg:
        evaluation.feeding = tg.cancel_scope
        async for index, raw in _iterate(numbered):
            if evaluation.unreachable is not None:
                break
            if spent(plan.budget):
                fed_all = False
                break
            token = object()
            # Acquire before reading on, so a huge (or endless) iterable is read only as
            # fast as items finish.
            await pending.acquire_on_behalf_of(token)
            await limiter.acquire_on_behalf_of(token)
            tg.start_soon(work, index, raw, token)
    evaluation.feeding = None
    return fed_all


class _Tee(EvalCollector):
    """Adds each item to two collectors (the run's, and the estimate's sample)."""

    def __init__(self, first: EvalCollector, second: EvalCollector) -> None:
        super().__init__([])
        self.first, self.second = first, second

    def add(self, item: ItemResult) -> None:
        self.first.add(item)
        self.second.add(item)


async def estimate_cost(
    data: Sequence[Mapping[str, Any] | Run],
    scorers: Sequence[Scorer],
    *,
    items: int = DEFAULT_ESTIMATE_ITEMS,
    concurrency: int = 1,
    **options: Any,
) -> EvalResult:
    """Score an evenly spread sample of ``data`` and extrapolate the whole run's judge cost
    and time (what ``livescore eval --estimate`` prints).

    Args:
        data: The items (a sequence: the sample is spread over its length).
        scorers: The scorers the run would use.
        items: How many items the sample holds.
        concurrency: Items in flight, for the sample and for the time estimated.
        **options: Any other :func:`run_evals` argument (``target``,
            ``on_item_complete``…); the items keep their indices in ``data``.

    Returns:
        The sample's :class:`EvalResult`, its ``estimate`` the :class:`CostEstimate` of
        the whole run (``None`` when the sample was cut short:
        ``stop_when_judge_unreachable``).

    Example:
        >>> import anyio
        >>> from livescore import create_scorer
        >>> short = create_scorer(id="short", description="1 when the answer is short",
        ...     generate_score=lambda ctx: float(len(ctx.output_text) < 20))
        >>> data = [{"input": "q", "output": "a"}] * 100
        >>> estimate = anyio.run(lambda: estimate_cost(data, [short], items=5)).estimate
        >>> estimate.sample, estimate.total, estimate.calls_per_item
        (5, 100, 0.0)
    """
    if not isinstance(data, Sequence) or isinstance(data, str | bytes):
        raise TypeError("estimate_cost needs a sequence of items (a list), to spread its sample")
    sample = sample_indices(len(data), items)
    callback: OnItemComplete | None = options.pop("on_item_complete", None)

    def renumber(item: ItemResult) -> Any:
        item.index = sample[item.index]  # run_evals numbers the sample it was given
        return callback(item) if callback is not None else None

    options["keep_items"] = True
    result = await run_evals(
        [data[i] for i in sample],
        scorers,
        concurrency=concurrency,
        on_item_complete=renumber,
        **options,
    )
    if result.stopped is None:
        result.estimate = CostEstimate.of(result.items, total=len(data), concurrency=concurrency)
    return result


def run_evals_sync(
    data: Iterable[Mapping[str, Any] | Run],
    scorers: Sequence[Scorer],
    *,
    target: Target | None = None,
    on_item_complete: OnItemComplete | None = None,
    concurrency: int = 1,
    emitter: Emitter | None = None,
    tracer_provider: trace.TracerProvider | None = None,
    meter_provider: Any = None,
    capture_content: ContentCapture = "full",
    sinks: Sequence[ScoreSink] | None = None,
    broker: str | None = None,
    max_pending: int = 1000,
    logger_provider: LoggerProvider | None = None,
    emit: str | Sequence[EmitSignal] | None = None,
    redact: RedactSpec | None = None,
    keep_runs: bool = True,
    keep_items: bool = True,
    max_cost: float | JudgeBudget | None = None,
    estimate_items: int = DEFAULT_ESTIMATE_ITEMS,
    on_estimate: Callable[[CostEstimate], Any] | None = None,
    stop_when_judge_unreachable: bool = False,
    calibration: CalibrationSpec | None = None,
    labels: Sequence[int | None] | None = None,
) -> EvalResult:
    """:func:`run_evals` for synchronous code (scripts); same arguments, same result.

    Raises:
        RuntimeError: Called while an event loop is running (use ``await run_evals(...)``).

    Example:
        >>> from livescore import create_scorer
        >>> exact = create_scorer(
        ...     id="exact", description="1 when the output equals the ground truth",
        ...     generate_score=lambda ctx: float(ctx.output_text == ctx.run.ground_truth),
        ... )
        >>> run_evals_sync([{"input": "2+2?", "output": "4", "ground_truth": "4"}],
        ...                [exact]).scores["exact"].mean
        1.0
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError(
            "run_evals_sync was called inside a running event loop; use await run_evals(...)"
        )
    call = functools.partial(
        run_evals,
        data,
        scorers,
        target=target,
        on_item_complete=on_item_complete,
        concurrency=concurrency,
        emitter=emitter,
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        capture_content=capture_content,
        sinks=sinks,
        broker=broker,
        max_pending=max_pending,
        logger_provider=logger_provider,
        emit=emit,
        redact=redact,
        keep_runs=keep_runs,
        keep_items=keep_items,
        max_cost=max_cost,
        estimate_items=estimate_items,
        on_estimate=on_estimate,
        stop_when_judge_unreachable=stop_when_judge_unreachable,
        calibration=calibration,
        labels=labels,
    )
    return anyio.run(call)
