"""What :func:`~livescore.evals.run_evals` returns: per-item results and per-scorer aggregates."""

from __future__ import annotations

import math
import threading
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from livescore._messages import message_text
from livescore.judges import JudgeUsage
from livescore.runs import Conversation, Run, get_assistant_message, get_user_message
from livescore.scoring import ScoreResult

if TYPE_CHECKING:
    from livescore.evals._compare import Comparison
    from livescore.evals._cost import CostEstimate
    from livescore.evals._labels import LabelQuality
    from livescore.pii import Pseudonyms

__all__ = (
    "EvalCollector",
    "EvalResult",
    "HistogramBin",
    "ItemFailure",
    "ItemResult",
    "LabelledItem",
    "ScoreAggregate",
    "ScoreDistribution",
)

StopKind = Literal["max_cost", "estimate_over_max_cost", "judge_unreachable"]
"""Why an evaluation ended before its last item (:attr:`EvalResult.stopped`)."""

HISTOGRAM_BINS = 10
"""How many equal-width bins a score distribution has."""


@dataclass(slots=True)
class ItemResult:
    """One dataset item after its run and its scores.

    Attributes:
        index: Position of the item in the data, from 0.
        input: The item's input.
        output: What the target answered (or the item's ready ``output``).
        ground_truth: The item's ``ground_truth``, when given.
        context: The item's static context (ground-truth documents), when given.
        id: The item's ``id``, when given.
        metadata: The item's ``metadata``, when given.
        run: The run the scorers saw (tool calls and results included for agent targets);
            ``None`` when the target failed before producing one. For an item with
            ``turns``: its last turn (what run scorers judge).
        conversation: For an item with ``turns``: the conversation its conversation
            scorers judged (each turn with its span); ``None`` otherwise.
        scores: Every scorer's result, by scorer id, with its step results.
        error: Why the item could not be scored (the target raised, the item is malformed);
            ``None`` when it ran.
        error_type: A short failure class (the exception's type name, ``"invalid_item"``).
        duration_s: Wall time of the target call, in seconds (0 for ready outputs).
        callback_error: What ``on_item_complete`` raised for this item, if anything.
        pseudonyms: With ``run_evals(redact=...)``: the placeholders of this item's record
            and scores, whose :meth:`~livescore.pii.Pseudonyms.restore` puts the values
            back (for a file on your own disk); never written by :meth:`to_dict`.

    Example:
        >>> item = ItemResult(index=0, input="hi", output="hello")
        >>> item.ok
        True
    """

    index: int
    input: Any = None
    output: Any = None
    ground_truth: Any = None
    context: list[str] | None = None
    id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    run: Run | None = None
    conversation: Conversation | None = None
    scores: dict[str, ScoreResult] = field(default_factory=dict)
    error: str | None = None
    error_type: str | None = None
    duration_s: float = 0.0
    callback_error: str | None = None
    pseudonyms: Pseudonyms | None = field(default=None, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        """Whether the item ran (its scores may still have failed or been skipped)."""
        return self.error is None

    @property
    def input_text(self) -> str:
        """The user's message as text (what a scorer reads as the input)."""
        return _readable(self.run, self.input, get_user_message)

    @property
    def output_text(self) -> str:
        """The agent's final answer as text (what a scorer reads as the output)."""
        return _readable(self.run, self.output, get_assistant_message)

    def to_dict(self, *, include_run: bool = False) -> dict[str, Any]:
        """A JSON-safe dict of the item (one line of ``livescore eval --out``).

        Each text is stored once: ``output`` as the target returned it, ``output_text``
        only when that is not already plain text (a list of chat messages), and the run's
        ``steps`` without repeating its input and output. A dataset line in this shape is
        read back by ``livescore eval`` and ``run_evals`` (``steps`` included).

        Args:
            include_run: Also include the run's ``steps`` (model turns, tool calls with
                their results, retrievals) and the agent's name (``agent``).

        Example:
            >>> ItemResult(index=0, input="2+2?", output="4").to_dict()["output"]
            '4'
        """
        # The run's own JSON conversion (message objects become role/content dicts).
        safe = Run(
            input=self.input,
            output=self.output,
            ground_truth=self.ground_truth,
            metadata=self.metadata,
        ).to_dict()
        data: dict[str, Any] = {
            "index": self.index,
            "id": self.id,
            "input": safe["input"],
            "output": safe["output"],
            "ground_truth": safe["ground_truth"],
            "context": self.context,
            "metadata": safe["metadata"],
            "error": self.error,
            "error_type": self.error_type,
            "duration_s": self.duration_s,
            "callback_error": self.callback_error,
            "scores": {sid: result.to_dict() for sid, result in self.scores.items()},
        }
        if not isinstance(self.output, str) and self.output is not None:
            data["output_text"] = self.output_text
        if self.conversation is not None:
            data["conversation_id"] = self.conversation.id
            # The dataset form: a results file is a dataset again.
            data["turns"] = [_turn_record(run) for run in self.conversation.runs]
            if include_run:
                data["conversation"] = self.conversation.to_dict()
        if self.run is not None:
            data["run_id"] = self.run.run_id
            data["trace_id"] = self.run.trace_id
            data["span_id"] = self.run.span_id
            if include_run:
                run = self.run.to_dict()
                if run["steps"]:
                    data["steps"] = run["steps"]
                if run["name"]:
                    data["agent"] = run["name"]
        return data


@dataclass(frozen=True, slots=True)
class ItemFailure:
    """An item that failed (its target, or one scorer on it).

    Attributes:
        index: The item's position in the data.
        error: The failure message.
        error_type: A short failure class (``"timeout"``, ``"invalid_response"``, …).
        step: The scorer step that failed (``"analyze"``…), or ``"target"``.
    """

    index: int
    error: str
    error_type: str | None = None
    step: str | None = None


@dataclass(frozen=True, slots=True)
class HistogramBin:
    """One bar of a score histogram: scores in ``[lower, upper)`` (the last bin is closed)."""

    lower: float
    upper: float
    count: int


@dataclass(slots=True)
class ScoreDistribution:
    """How a scorer's scores spread.

    Attributes:
        bins: Equal-width bins over ``[0, 1]``, or over the observed range when scores fall
            outside it (a scorer with ``scale=10``).
        labels: How many scores got each label (``{"low": 7, "high": 2}``).
    """

    bins: list[HistogramBin] = field(default_factory=list)
    labels: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class ScoreAggregate:
    """One scorer over the whole dataset.

    Attributes:
        scorer_id: The scorer's id.
        mean: Mean of the produced scores; ``None`` when none was produced.
        count: How many scores were produced (same as ``scored``).
        scored: Items scored.
        failed: Items on which the scorer failed (see ``failures``).
        skipped: Items the scorer declared not scorable (see ``skip_reasons``).
        min: Lowest score, or ``None``.
        max: Highest score, or ``None``.
        distribution: Histogram bins and label counts.
        failures: Each failure with the item index and the error.
        skip_reasons: How many items were skipped for each reason.
        usage: Judge calls and tokens this scorer spent.

    Example:
        >>> from livescore import ScoreResult
        >>> agg = ScoreAggregate.from_results("kc", [(0, ScoreResult("r", "kc", score=0.5))])
        >>> agg.mean, agg.scored
        (0.5, 1)
    """

    scorer_id: str
    mean: float | None = None
    count: int = 0
    scored: int = 0
    failed: int = 0
    skipped: int = 0
    min: float | None = None
    max: float | None = None
    distribution: ScoreDistribution = field(default_factory=ScoreDistribution)
    failures: list[ItemFailure] = field(default_factory=list)
    skip_reasons: dict[str, int] = field(default_factory=dict)
    usage: JudgeUsage = field(default_factory=JudgeUsage)

    @property
    def attempted(self) -> int:
        """Items the scorer ran on: scored + failed + skipped."""
        return self.scored + self.failed + self.skipped

    @classmethod
    def from_results(
        cls, scorer_id: str, results: Sequence[tuple[int, ScoreResult]]
    ) -> ScoreAggregate:
        """Aggregate ``(item index, result)`` pairs of one scorer."""
        tally = _Tally()
        for index, result in results:
            tally.add(index, result)
        return tally.aggregate(scorer_id)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict of the aggregate."""
        return {
            "scorer_id": self.scorer_id,
            "mean": self.mean,
            "count": self.count,
            "scored": self.scored,
            "failed": self.failed,
            "skipped": self.skipped,
            "min": self.min,
            "max": self.max,
            "distribution": {
                "bins": [
                    {"lower": b.lower, "upper": b.upper, "count": b.count}
                    for b in self.distribution.bins
                ],
                "labels": dict(self.distribution.labels),
            },
            "failures": [
                {"index": f.index, "error": f.error, "error_type": f.error_type, "step": f.step}
                for f in self.failures
            ],
            "skip_reasons": dict(self.skip_reasons),
            "usage": _usage_dict(self.usage),
        }


@dataclass(frozen=True, slots=True)
class LabelledItem:
    """What the figures against labels read of one labelled item: kept in
    :attr:`EvalResult.labelled` when the items are not (``run_evals(keep_items=False,
    labels=...)``).

    Attributes:
        index: The item's position in the data.
        id: The item's ``id``, when given.
        output_chars: The length of the agent's text (over every turn of a conversation).
        scores: Each scorer's result, reduced to its status, score, usage and judge model.

    Example:
        >>> item = LabelledItem.of(ItemResult(index=3, output="four"))
        >>> item.index, item.output_chars, item.scores
        (3, 4, {})
    """

    index: int
    id: str | None
    output_chars: int
    scores: dict[str, ScoreResult]

    @property
    def key(self) -> str:
        """What splits the items in halves: the id, else the index."""
        return self.id if self.id is not None else str(self.index)

    @classmethod
    def of(cls, item: ItemResult) -> LabelledItem:
        """The figures' part of ``item``."""
        if item.conversation is not None:
            chars = sum(len(get_assistant_message(run) or "") for run in item.conversation.runs)
        else:
            chars = len(item.output_text)
        scores = {
            sid: ScoreResult(
                run_id=score.run_id,
                scorer_id=sid,
                status=score.status,
                score=score.score,
                usage=score.usage,
                judge_model=score.judge_model,
            )
            for sid, score in item.scores.items()
        }
        return cls(item.index, item.id, chars, scores)


@dataclass(slots=True)
class EvalResult:
    """Everything :func:`~livescore.evals.run_evals` learned.

    Attributes:
        scores: One aggregate per scorer, by scorer id (in the order the scorers were given).
        items: One result per item, in the order of the data; empty when the run kept only
            totals (``run_evals(keep_items=False)``).
        usage: Judge calls and tokens of all scorers together.
        duration_s: Wall time of the whole evaluation, in seconds.
        item_failures: Items that could not be scored at all (the target raised, the item
            was malformed), with their index and error.
        item_count: Items that finished (``len(items)`` when they are kept).
        stopped: Why the run ended before the last item: ``"max_cost"`` (the judge spend
            reached ``max_cost``), ``"estimate_over_max_cost"`` (the estimate from the
            sample was above it, so the rest was not scored), ``"judge_unreachable"``
            (``stop_when_judge_unreachable``); ``None`` when every item was fed.
        stop_reason: ``stopped`` in a sentence (``""`` when it did not stop).
        estimate: With ``max_cost``: the cost estimate from the sample scored first.
        labelled: With ``keep_items=False`` and ``labels``: what the figures against the
            labels read of each labelled item (:meth:`label_quality`,
            :func:`~livescore.evals.fit_calibration`), in data order.

    Example:
        >>> result = EvalResult()
        >>> result.scores, result.items, result.stopped
        ({}, [], None)
    """

    scores: dict[str, ScoreAggregate] = field(default_factory=dict)
    items: list[ItemResult] = field(default_factory=list)
    usage: JudgeUsage = field(default_factory=JudgeUsage)
    duration_s: float = 0.0
    item_failures: list[ItemFailure] = field(default_factory=list)
    item_count: int = 0
    stopped: StopKind | None = None
    stop_reason: str = ""
    estimate: CostEstimate | None = None
    labelled: list[LabelledItem] = field(default_factory=list)

    @classmethod
    def from_items(cls, scorer_ids: Sequence[str], items: Sequence[ItemResult]) -> EvalResult:
        """Aggregate item results: what ``run_evals`` returns, or the part of an interrupted
        evaluation that was collected through ``on_item_complete``
        (:class:`EvalCollector` collects them as they come).

        Example:
            >>> EvalResult.from_items(["short"], []).scores["short"].scored
            0
        """
        collector = EvalCollector(scorer_ids)
        for item in items:
            collector.add(item)
        return collector.result()

    def label_quality(
        self,
        labels: Sequence[int | None],
        *,
        label: str,
        scorers: Mapping[str, bool],
        threshold: float = 0.5,
    ) -> LabelQuality:
        """How well each scorer's score predicts a 0/1 label: the judge-quality rows that
        ``livescore eval`` prints and puts in its report.

        Reads the items, or :attr:`labelled` when the run kept totals only.

        Args:
            labels: Each item's label by item index (``None``: not labelled); a
                :class:`~livescore.evals.Dataset`'s ``labels_for(label)``.
            label: The label's name (1 marks the defect).
            scorers: The scorer ids to measure, each with whether higher is better (then a
                score at or below ``threshold`` predicts the defect).
            threshold: The score that predicts the label.

        Returns:
            One row per scorer measured, then the length-only baseline (what output length
            alone achieves); notes for the scorers that scored no labelled item.

        Example:
            >>> from livescore import create_scorer
            >>> from livescore.evals import run_evals_sync
            >>> long = create_scorer(id="long", description="1 when the answer is long",
            ...     generate_score=lambda ctx: float(len(ctx.output_text) > 3))
            >>> data = [{"input": "q", "output": o} for o in ("ok", "a long one", "fine!")]
            >>> quality = run_evals_sync(data, [long]).label_quality(
            ...     [0, 1, 0], label="rambling", scorers={"long": False})
            >>> [(row.name, row.quality.accuracy) for row in quality.rows]
            [('long', 0.6666666666666666), ('length-only baseline', 0.6666666666666666)]
        """
        from livescore.evals._labels import label_quality

        return label_quality(self, labels, label=label, scorers=scorers, threshold=threshold)

    def compare(
        self,
        baseline: str | Path | Iterable[Mapping[str, Any]],
        *,
        higher_is_better: Mapping[str, bool] | None = None,
        threshold: float = 0.5,
        regression_threshold: float = 0.1,
    ) -> Comparison:
        """This result against an earlier one: per scorer the change with its interval
        and a verdict from a paired test, and the items that regressed (first).

        Items pair by ``id``, else by input. Scores are compared with a paired bootstrap,
        0/1 scores with McNemar's exact test (see ``livescore eval --baseline``).

        Args:
            baseline: A results file (``livescore eval --out``) or its records
                (``[item.to_dict() for item in old.items]`` works too).
            higher_is_better: Each scorer's direction; a prebuilt scorer's id needs none,
                others default to higher is better.
            threshold: The score that splits good from bad (the bad share, the flips).
            regression_threshold: How much worse an item's score must be to be listed.

        Raises:
            BaselineError: A baseline file that cannot be read.

        Example:
            >>> from livescore import create_scorer
            >>> from livescore.evals import run_evals_sync
            >>> short = create_scorer(
            ...     id="short", description="1 when the answer is short",
            ...     generate_score=lambda ctx: float(len(ctx.output_text) < 5),
            ... )
            >>> old = run_evals_sync([{"id": "a", "input": "2+2?", "output": "4"}], [short])
            >>> new = run_evals_sync([{"id": "a", "input": "2+2?", "output": "four!"}], [short])
            >>> comparison = new.compare([item.to_dict() for item in old.items])
            >>> [(c.key, c.baseline_score, c.score) for c in comparison.regressed_items]
            [('id:a', 1.0, 0.0)]
            >>> comparison.scorers["short"].verdict  # one item: not significant
            'no significant change'
        """
        from livescore.evals._compare import compare_results, load_baseline

        records = load_baseline(baseline) if isinstance(baseline, str | Path) else baseline
        return compare_results(
            self,
            records,
            higher_is_better=higher_is_better,
            threshold=threshold,
            regression_threshold=regression_threshold,
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe summary (aggregates, usage, failures; not the items)."""
        return {
            "items": max(self.item_count, len(self.items)),
            "item_failures": [
                {"index": f.index, "error": f.error, "error_type": f.error_type}
                for f in self.item_failures
            ],
            "scores": {sid: agg.to_dict() for sid, agg in self.scores.items()},
            "usage": _usage_dict(self.usage),
            "duration_s": self.duration_s,
        }


class EvalCollector:
    """Builds an :class:`EvalResult` from item results as they finish, in any order.

    What ``run_evals`` uses; useful to keep what an interrupted evaluation scored, fed from
    ``on_item_complete``. With ``keep_items=False`` only running totals are kept (per scorer
    its scores as numbers, label and skip counts, failures, usage; the item count and the
    item failures), so memory does not grow with each item's texts and run. Safe to feed
    from one thread and read from another.

    Args:
        scorer_ids: The scorers to aggregate, in the order the result lists them.
        keep_items: Whether the result keeps every :class:`ItemResult`.
        labels: Without ``keep_items``: the 0/1 labels by item index (``None``: not
            labelled); each labelled item's scores are kept as a :class:`LabelledItem`.

    Example:
        >>> collector = EvalCollector(["kc"], keep_items=False)
        >>> collector.add(ItemResult(index=0, scores={"kc": ScoreResult("r", "kc", score=1.0)}))
        >>> result = collector.result()
        >>> result.item_count, result.items, result.scores["kc"].mean
        (1, [], 1.0)
    """

    def __init__(
        self,
        scorer_ids: Sequence[str],
        *,
        keep_items: bool = True,
        labels: Sequence[int | None] | None = None,
    ) -> None:
        self.keep_items = keep_items
        self.labels = labels
        self._labelled: list[LabelledItem] = []
        self._tallies = {sid: _Tally() for sid in scorer_ids}
        self._items: list[ItemResult] = []
        self._failures: list[ItemFailure] = []
        self._count = 0
        self._lock = threading.Lock()

    @property
    def count(self) -> int:
        """Items added so far."""
        return self._count

    def add(self, item: ItemResult) -> None:
        """Count one finished item (and keep it, with ``keep_items``)."""
        with self._lock:
            self._count += 1
            if self.keep_items:
                self._items.append(item)
            elif self.labels is not None and _labelled(self.labels, item.index):
                self._labelled.append(LabelledItem.of(item))
            for sid, tally in self._tallies.items():
                score = item.scores.get(sid)
                if score is not None:
                    tally.add(item.index, score)
            if item.error is not None:
                self._failures.append(
                    ItemFailure(
                        index=item.index,
                        error=item.error,
                        error_type=item.error_type,
                        step="target",
                    )
                )

    def result(self, duration_s: float = 0.0) -> EvalResult:
        """The result of the items added so far (items and failures in data order)."""
        with self._lock:
            result = EvalResult(
                items=sorted(self._items, key=lambda it: it.index),
                duration_s=duration_s,
                item_failures=sorted(self._failures, key=lambda f: f.index),
                item_count=self._count,
                labelled=sorted(self._labelled, key=lambda it: it.index),
            )
            for sid, tally in self._tallies.items():
                agg = tally.aggregate(sid)
                result.scores[sid] = agg
                result.usage.add(agg.usage)
        return result


def _labelled(labels: Sequence[int | None], index: int) -> bool:
    return index < len(labels) and labels[index] is not None


def labelled_items(result: EvalResult) -> list[LabelledItem]:
    """What the figures against labels read: the items, or ``result.labelled``."""
    if result.items:
        return [LabelledItem.of(item) for item in result.items]
    return result.labelled


class _Tally:
    """One scorer's running totals: what :class:`ScoreAggregate` is computed from."""

    __slots__ = ("failed", "failures", "labels", "scores", "skipped", "skips", "usage")

    def __init__(self) -> None:
        self.scores = array("d")  # 8 bytes a score: the mean, the extremes, the histogram
        self.labels: Counter[str] = Counter()
        # Per skip reason: its count and the first item index it was seen on (so reasons
        # of equal count keep data order whatever order the items finished in).
        self.skips: dict[str, list[int]] = {}
        self.failures: list[ItemFailure] = []
        self.usage = JudgeUsage()
        self.failed = self.skipped = 0

    def add(self, index: int, result: ScoreResult) -> None:
        self.usage.add(result.usage)
        if result.status == "scored" and result.score is not None:
            self.scores.append(result.score)
            if result.label is not None:
                self.labels[result.label] += 1
        elif result.status == "skipped":
            self.skipped += 1
            seen = self.skips.setdefault(result.reason or "not scorable", [0, index])
            seen[0] += 1
            seen[1] = min(seen[1], index)
        else:
            self.failed += 1
            self.failures.append(
                ItemFailure(
                    index=index,
                    error=result.error or "unknown error",
                    error_type=result.error_type,
                    step=result.failed_step,
                )
            )

    def aggregate(self, scorer_id: str) -> ScoreAggregate:
        scores = list(self.scores)
        agg = ScoreAggregate(
            scorer_id=scorer_id,
            failed=self.failed,
            skipped=self.skipped,
            failures=sorted(self.failures, key=lambda f: f.index),
        )
        agg.usage.add(self.usage)
        agg.scored = agg.count = len(scores)
        if scores:
            agg.mean = math.fsum(scores) / len(scores)
            agg.min, agg.max = min(scores), max(scores)
        agg.distribution = ScoreDistribution(
            bins=histogram(scores), labels=dict(sorted(self.labels.items()))
        )
        ordered = sorted(self.skips.items(), key=lambda kv: (-kv[1][0], kv[1][1]))
        agg.skip_reasons = {reason: n for reason, (n, _) in ordered}
        return agg


def histogram(scores: Sequence[float], bins: int = HISTOGRAM_BINS) -> list[HistogramBin]:
    """Count ``scores`` into ``bins`` equal-width bins.

    The range is ``[0, 1]`` when every score lies in it (so runs compare bar for bar), else
    the observed range widened to include 0. No scores gives no bins.

    Example:
        >>> [b.count for b in histogram([0.0, 0.05, 1.0], bins=2)]
        [2, 1]
    """
    if not scores:
        return []
    low = min(0.0, min(scores))
    high = max(1.0, max(scores))
    width = (high - low) / bins
    counts = [0] * bins
    for score in scores:
        # The epsilon keeps 0.3 in the 0.3 bin despite 0.3 / 0.1 == 2.9999999999999996.
        slot = math.floor((score - low) / width + 1e-9) if width > 0 else 0
        counts[min(max(slot, 0), bins - 1)] += 1
    return [
        HistogramBin(
            lower=round(low + i * width, 12), upper=round(low + (i + 1) * width, 12), count=n
        )
        for i, n in enumerate(counts)
    ]


def _turn_record(run: Run) -> dict[str, Any]:
    """A conversation's turn in the dataset form (``Conversation.from_turns`` reads it)."""
    safe = Run(input=run.input, output=run.output).to_dict()
    turn: dict[str, Any] = {"input": safe["input"], "output": safe["output"]}
    calls = []
    for step in run.steps:
        call = step.tool_call
        if call is None:
            continue
        record: dict[str, Any] = {"name": call.name, "args": call.args}
        if call.error is not None:
            record["error"] = call.error
        else:
            record["result"] = call.result
        calls.append(record)
    if calls:
        turn["tool_calls"] = calls
    extra = {k: v for k, v in run.metadata.items() if k not in ("source", "item")}
    if extra:
        turn["metadata"] = Run(metadata=extra).to_dict()["metadata"]
    return turn


def _readable(run: Run | None, value: Any, reader: Callable[[Run], str | None]) -> str:
    try:
        if run is not None:
            return reader(run) or ""
        return message_text(value)
    except TypeError:  # a value no reader understands: show it as it is
        return "" if value is None else str(value)


# The JudgeUsage fields a summary writes, in this order.
_USAGE_FIELDS = ("calls", "input_tokens", "output_tokens", "latency_s", "cached", "shared")


def _usage_dict(usage: JudgeUsage) -> dict[str, Any]:
    return {name: getattr(usage, name) for name in _USAGE_FIELDS}
