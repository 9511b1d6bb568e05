"""Judge cost of an evaluation: an estimate from a sample, and a cap on the spend.

``run_evals(..., max_cost=USD)`` first scores an evenly spread sample of the data (every
k-th item, so data sorted by length or topic is sampled across its whole range) and
extrapolates the judge cost of the whole run (:class:`CostEstimate`). When the estimate is
above ``max_cost`` the run does not go on; otherwise it scores the rest (the sample's scores
are kept, not paid twice) under a :class:`~livescore.judges.JudgeBudget` of ``max_cost``
dollars in all, and stops feeding items, keeping what it scored, once that budget cannot pay
the next score. :func:`estimate_cost` scores the sample alone.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from livescore import _attributes as A
from livescore.judges import JudgeBudget, budget_of

if TYPE_CHECKING:
    from livescore.evals._result import ItemResult
    from livescore.judges import Judge

__all__ = ("DEFAULT_ESTIMATE_ITEMS", "CostEstimate", "cost_cap", "sample_indices")

DEFAULT_ESTIMATE_ITEMS = 20
"""Items an estimate scores before extrapolating."""


def sample_indices(total: int, count: int) -> list[int]:
    """``count`` item indices spread evenly over ``total`` (all of them when fewer).

    Example:
        >>> sample_indices(10, 4), sample_indices(3, 5)
        ([0, 2, 5, 7], [0, 1, 2])
    """
    if count >= total:
        return list(range(total))
    return [math.floor(i * total / count) for i in range(count)]


@dataclass(frozen=True, slots=True)
class CostEstimate:
    """What a scored sample says about the whole run.

    Attributes:
        sample: Items the estimate rests on.
        total: Items in the data.
        cost: The whole run's judge cost in USD (``None``: a judge has no price).
        cost_low: The low end of the 95 % range of ``cost`` (from the sample's spread).
        cost_high: The high end.
        cost_per_item: Mean judge cost per item.
        tokens_per_item: Mean judge tokens per item.
        calls_per_item: Mean judge calls per item.
        seconds: The whole run's expected wall time at ``concurrency``.
        concurrency: Items in flight at once.
        unpriced: Judge models with no known price.

    Example:
        >>> from livescore.evals import ItemResult
        >>> CostEstimate.of([ItemResult(index=0)], total=10, concurrency=2).calls_per_item
        0.0
    """

    sample: int
    total: int
    cost: float | None
    cost_low: float | None
    cost_high: float | None
    cost_per_item: float | None
    tokens_per_item: float
    calls_per_item: float
    seconds: float
    concurrency: int
    unpriced: tuple[str, ...] = ()

    @classmethod
    def of(cls, items: Sequence[ItemResult], *, total: int, concurrency: int) -> CostEstimate:
        """Extrapolate from the scored sample ``items`` to ``total`` items.

        An item a cost cap cut short (a score skipped as ``budget_exhausted``) cost less
        than scoring it does: it is left out, or the estimate would count what the cap
        skipped as free. The estimate is of the run without the cap.
        """
        paid = [
            item
            for item in items
            if not any(
                score.attributes.get(A.LIVESCORE_JUDGE_BUDGET_EXHAUSTED) is True
                for score in item.scores.values()
            )
        ]
        items = paid or items
        n = max(len(items), 1)
        costs: list[float] = []
        unpriced: set[str] = set()
        tokens = calls = 0
        latencies = []
        for item in items:
            cost = 0.0
            for score in item.scores.values():
                tokens += score.usage.total_tokens
                calls += score.usage.calls
                if score.usage.cost_usd is not None:
                    cost += score.usage.cost_usd
                elif score.usage.calls and score.judge_model:
                    unpriced.add(score.judge_model)
            costs.append(cost)
            durations = [s.duration_s for s in item.scores.values()]
            latencies.append(item.duration_s + max(durations, default=0.0))
        priced = not unpriced and bool(costs)
        mean = statistics.fmean(costs) if costs else 0.0
        spread = (
            1.96 * statistics.stdev(costs) / math.sqrt(len(costs)) * total
            if len(costs) > 1
            else 0.0
        )
        # `concurrency` items are in flight at once, each for about an item's latency (its
        # waits for the judge's own limit included): the mean of the items after the
        # first round, which also opens the connections and finds the structured-output
        # form (of all of them, in a sample of one round).
        later = latencies[concurrency:] or latencies
        seconds = statistics.fmean(later) * total / concurrency if later else 0.0
        return cls(
            sample=len(items),
            total=total,
            cost=mean * total if priced else None,
            cost_low=max(mean * total - spread, 0.0) if priced else None,
            cost_high=mean * total + spread if priced else None,
            cost_per_item=mean if priced else None,
            tokens_per_item=tokens / n,
            calls_per_item=calls / n,
            seconds=seconds,
            concurrency=concurrency,
            unpriced=tuple(sorted(unpriced)),
        )

    def above(self, max_cost: float | None) -> bool:
        """Whether the estimated cost is known and above ``max_cost`` (a run should not
        start).

        Example:
            >>> CostEstimate(1, 1, 2.0, 2.0, 2.0, 2.0, 0, 0, 0, 1).above(1.5)
            True
        """
        return max_cost is not None and self.cost is not None and self.cost > max_cost


def cost_cap(max_cost: float | JudgeBudget, judges: Iterable[Judge | None]) -> JudgeBudget:
    """The budget of ``run_evals(max_cost=...)``, given to every judge that has none.

    A number becomes a :class:`~livescore.judges.JudgeBudget` of that many US dollars in all
    (no period); a budget is used as it is. A judge configured with a budget of its own
    keeps it.

    Raises:
        ValueError: A judge without a known price (``JudgeConfigError``), or an amount that
            is not a positive number.
        TypeError: A judge that cannot carry a budget.

    Example:
        >>> cost_cap(0.5, []).usd
        0.5
    """
    if isinstance(max_cost, JudgeBudget):
        budget = max_cost
    else:
        if isinstance(max_cost, bool) or not isinstance(max_cost, int | float):
            raise ValueError(f"max_cost must be a number of US dollars, not {max_cost!r}")
        # One total for the sample and the rest: the run never spends more than max_cost
        # by more than one score (see JudgeBudget).
        budget = JudgeBudget(max_cost, per=None, name="max-cost")
    for judge in {id(j): j for j in judges if j is not None}.values():
        if budget_of(judge) is None:  # a judge with a budget of its own keeps it
            try:
                judge.budget = budget  # type: ignore[attr-defined]
            except AttributeError:
                raise TypeError(
                    f"judge {judge.model_name!r} ({type(judge).__name__}) cannot carry a "
                    "budget (give it a settable `budget` attribute)"
                ) from None
    return budget


def spent(budget: JudgeBudget | None) -> bool:
    """Whether ``budget`` can no longer pay a score (feed no more items)."""
    return budget is not None and budget.stats.exhausted > 0
