"""Judge cost on the command line: prices, ``eval --estimate`` / ``--max-cost``, and the
worker's ``--judge-budget``.

``livescore eval --estimate`` scores an evenly spread sample of the dataset (every k-th
item, so a dataset sorted by length or topic is sampled across its whole range), then
extrapolates the judge cost and the time of the whole run at the given concurrency, and
stops. ``--max-cost USD`` does the same first and refuses to start when the estimate is
above it; otherwise the run goes on (the sample's scores are kept, not paid twice) under a
:class:`~livescore.judges.JudgeBudget` of that many dollars in all, and stops, keeping what
it scored and marking the outputs partial, once that budget cannot pay the next score.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from livescore.cli._common import UsageError, positive_float, positive_int

if TYPE_CHECKING:
    from livescore.evals import ItemResult
    from livescore.judges import Judge, JudgeBudget

__all__ = (
    "DEFAULT_ESTIMATE_ITEMS",
    "CostPlan",
    "Estimate",
    "add_eval_cost_arguments",
    "add_judge_budget_arguments",
    "apply_judge_prices",
    "attach_budget",
    "judge_budget_from_args",
    "parse_budget",
    "sample_indices",
)

DEFAULT_ESTIMATE_ITEMS = 20
"""Items ``--estimate`` and ``--max-cost`` score before extrapolating."""

_PERIODS = ("day", "hour", "minute", "total")


def _prices_argument(parser: Any) -> None:
    parser.add_argument(
        "--judge-prices",
        metavar="FILE|JSON",
        help="the judge models' prices: a JSON file (or the JSON itself) of "
        '{"model": [usd_per_million_input_tokens, usd_per_million_output_tokens'
        "(, usd_per_million_cached_input_tokens)]}; same as $LIVESCORE_JUDGE_PRICES "
        "(default: OpenAI's list prices for its well-known models)",
    )


def add_eval_cost_arguments(parser: Any) -> None:
    """Add ``--judge-prices``, ``--estimate``, ``--estimate-items`` and ``--max-cost``."""
    _prices_argument(parser)
    parser.add_argument(
        "--estimate",
        action="store_true",
        help="score a sample (--estimate-items), print the judge cost and the time the "
        "whole dataset would take at --concurrency, and stop",
    )
    parser.add_argument(
        "--estimate-items",
        type=positive_int,
        default=DEFAULT_ESTIMATE_ITEMS,
        metavar="N",
        help=f"items the estimate scores, spread over the dataset (default: "
        f"{DEFAULT_ESTIMATE_ITEMS})",
    )
    parser.add_argument(
        "--max-cost",
        type=positive_float,
        metavar="USD",
        help="estimate first and refuse to start when the estimate is above USD; else run, "
        "and stop (keeping what was scored, marked partial) when the judge spend reaches it",
    )


def add_judge_budget_arguments(parser: Any) -> None:
    """Add the worker's ``--judge-budget``, ``--judge-token-budget`` and ``--judge-prices``."""
    parser.add_argument(
        "--judge-budget",
        metavar="USD[/PER]",
        help="judge spend shared by every worker, in US dollars per day (or /hour, /minute, "
        "/total): a score it cannot pay is skipped (budget_exhausted)",
    )
    parser.add_argument(
        "--judge-token-budget",
        metavar="N[/PER]",
        help="judge tokens (input + output) shared by every worker, per day (or /hour, "
        "/minute, /total)",
    )
    _prices_argument(parser)


def parse_budget(text: str, option: str, *, whole: bool = False) -> tuple[float, str | None]:
    """``"20/day"`` → ``(20.0, "day")``; ``"20"`` is per day; ``"/total"`` never resets.

    Example:
        >>> parse_budget("2.5/hour", "--judge-budget"), parse_budget("9", "--x")
        ((2.5, 'hour'), (9.0, 'day'))
    """
    amount_text, _, per = text.strip().partition("/")
    per = per.strip().lower() or "day"
    if per not in _PERIODS:
        raise UsageError(f"{option} {text!r}: the period is one of {', '.join(_PERIODS)}")
    try:
        amount = float(amount_text.strip().lstrip("$"))
    except ValueError:
        raise UsageError(f"{option} {text!r}: expected a number, then /day, /hour…") from None
    if not (math.isfinite(amount) and amount > 0) or (whole and amount != int(amount)):
        kind = "a whole number of tokens" if whole else "a positive amount"
        raise UsageError(f"{option} {text!r}: expected {kind}")
    return amount, None if per == "total" else per


def apply_judge_prices(value: str | None) -> None:
    """``--judge-prices``: checked now, then read by every judge built from here on."""
    if not value:
        return
    from livescore.judges import PRICES_ENV, JudgeConfigError, load_prices

    try:
        load_prices(value)
    except JudgeConfigError as exc:
        raise UsageError(f"--judge-prices: {exc}") from None
    os.environ[PRICES_ENV] = value


def judge_budget_from_args(args: argparse.Namespace, broker: str) -> JudgeBudget | None:
    """The fleet-wide budget ``--judge-budget`` / ``--judge-token-budget`` ask for."""
    if not args.judge_budget and not args.judge_token_budget:
        return None
    from livescore.fleet import RedisBudgetLedger
    from livescore.judges import JudgeBudget, JudgeConfigError

    usd = per = None
    tokens: int | None = None
    if args.judge_budget:
        usd, per = parse_budget(args.judge_budget, "--judge-budget")
    if args.judge_token_budget:
        amount, token_per = parse_budget(
            args.judge_token_budget, "--judge-token-budget", whole=True
        )
        if args.judge_budget and token_per != per:
            raise UsageError("--judge-budget and --judge-token-budget need the same period")
        tokens, per = int(amount), token_per
    try:
        return JudgeBudget(
            usd,
            tokens=tokens,
            per=per,  # type: ignore[arg-type]
            ledger=RedisBudgetLedger(broker, name="judge"),
        )
    except JudgeConfigError as exc:
        raise UsageError(str(exc)) from None


def attach_budget(judges: Iterable[Judge | None], budget: JudgeBudget, option: str) -> int:
    """Give ``budget`` to every judge that has none; how many judges spend from it.

    Raises:
        UsageError: A judge cannot carry a budget, or a USD budget cannot price it.
    """
    from livescore.judges import JudgeConfigError, budget_of

    seen: set[int] = set()
    for judge in judges:
        if judge is None or id(judge) in seen:
            continue
        seen.add(id(judge))
        if budget_of(judge) is not None:
            continue  # a judge configured with a budget of its own keeps it
        try:
            judge.budget = budget  # type: ignore[attr-defined]
        except JudgeConfigError as exc:
            if getattr(judge, "price", None) is None and budget.usd is not None:
                # Said in flags: the library's message names its arguments (prices=...).
                raise UsageError(
                    f"{option}: judge model {judge.model_name!r} has no known price, so the "
                    "dollars it spends cannot be counted: give it with --judge-prices "
                    f"'{{\"{judge.model_name}\": [INPUT, OUTPUT]}}' (USD per million tokens) or "
                    "$LIVESCORE_JUDGE_PRICES"
                ) from None
            raise UsageError(f"{option}: {exc}") from None
        except AttributeError:
            raise UsageError(
                f"{option}: judge {judge.model_name!r} ({type(judge).__name__}) cannot carry a "
                "budget (give it a settable `budget` attribute)"
            ) from None
    return len(seen)


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
class Estimate:
    """What a sample says about the whole run.

    Attributes:
        sample: Items scored.
        total: Items in the dataset.
        cost: The whole run's judge cost in USD (``None``: the judge has no price).
        cost_low: The low end of the 95 % range of ``cost`` (from the sample's spread).
        cost_high: The high end.
        cost_per_item: Mean judge cost per item.
        tokens_per_item: Mean judge tokens per item.
        calls_per_item: Mean judge calls per item.
        seconds: The whole run's expected wall time at ``concurrency``.
        concurrency: Items in flight at once.
        unpriced: Judge models with no known price.
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
    def of(
        cls,
        items: Sequence[ItemResult],
        *,
        total: int,
        concurrency: int,
    ) -> Estimate:
        """Extrapolate from the scored sample ``items``.

        An item that ``--max-cost`` cut short (a score skipped as ``budget_exhausted``) cost
        less than scoring it does: it is left out, or the estimate would count what the cap
        skipped as free. The estimate is of the run without the cap."""
        from livescore import _attributes as A

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

    def lines(self) -> list[str]:
        """The estimate, as the command prints it."""
        from livescore._usage import format_usd

        head = f"estimate from {self.sample} of {self.total} item(s):"
        if self.cost is not None:
            cost = (
                f"judge cost {format_usd(self.cost)} for all {self.total} (95 % range "
                f"{format_usd(self.cost_low)} to {format_usd(self.cost_high)}), "
                f"{format_usd(self.cost_per_item)} per item"
            )
        else:
            cost = (
                f"judge cost unknown: no price for {', '.join(self.unpriced)} "
                "(--judge-prices or $LIVESCORE_JUDGE_PRICES)"
            )
        return [
            f"{head} {cost}",
            f"  judge calls {self.calls_per_item:.2f} and tokens {self.tokens_per_item:,.0f} "
            f"per item; about {_duration(self.seconds)} for the whole dataset at "
            f"--concurrency {self.concurrency}",
        ]


def _duration(seconds: float) -> str:
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class CostPlan:
    """What ``--estimate`` / ``--max-cost`` ask of one ``livescore eval`` run."""

    def __init__(self, args: argparse.Namespace, judges: Sequence[Judge]) -> None:
        self.estimate_only: bool = bool(args.estimate)
        self.max_cost: float | None = args.max_cost
        self.items: int = args.estimate_items
        self.judges = list({id(j): j for j in judges}.values())
        self.budget: JudgeBudget | None = None
        if not self.wanted:
            return
        if self.estimate_only and (args.out or args.report):
            raise UsageError(
                "--estimate scores a sample and stops: --out and --report do not apply"
            )
        if self.max_cost is not None:
            if getattr(args, "broker", None):
                raise UsageError(
                    "--max-cost: with --broker the workers' judges spend; give them a budget "
                    "(livescore worker --judge-budget USD/PER)"
                )
            from livescore.judges import JudgeBudget

            # One total for the sample and the rest: the run never spends more than USD by
            # more than one score (see JudgeBudget).
            self.budget = JudgeBudget(self.max_cost, per=None, name="max-cost")
            if self.judges and not self.estimate_only:
                attach_budget(self.judges, self.budget, "--max-cost")

    @property
    def wanted(self) -> bool:
        """Whether a sample is scored first."""
        return self.estimate_only or self.max_cost is not None

    def refuses(self, estimate: Estimate) -> str | None:
        """Why the run must not start (the estimate is above ``--max-cost``), if it must not."""
        from livescore._usage import format_usd

        if self.max_cost is None or estimate.cost is None or estimate.cost <= self.max_cost:
            return None
        return (
            f"refusing to start: the estimated judge cost {format_usd(estimate.cost)} is above "
            f"--max-cost {format_usd(self.max_cost)}"
        )

    def spent(self) -> bool:
        """Whether the budget of ``--max-cost`` can no longer pay a score (stop feeding)."""
        return self.budget is not None and self.budget.stats.exhausted > 0

    def stop_reason(self, scored: int, total: int) -> str:
        """The partial mark of a run that ``--max-cost`` stopped ("" when it did not stop)."""
        from livescore._usage import format_usd

        if not self.spent() or scored >= total:
            return ""
        return (
            f"the judge spend reached --max-cost {format_usd(self.max_cost)} after "
            f"{scored} of {total} item(s)"
        )
