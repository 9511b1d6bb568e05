"""Judge cost on the command line: prices, ``eval --estimate`` / ``--max-cost`` (a sample
scored first, then a budget for the whole run: docs/judge-cost.md), and the worker's
``--judge-budget``."""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from livescore.cli._common import UsageError, positive_float, positive_int

if TYPE_CHECKING:
    from livescore.evals import CostEstimate, EvalResult
    from livescore.judges import Judge, JudgeBudget

__all__ = (
    "DEFAULT_ESTIMATE_ITEMS",
    "CostPlan",
    "add_eval_cost_arguments",
    "add_judge_budget_arguments",
    "apply_judge_prices",
    "attach_budget",
    "judge_budget_from_args",
    "parse_budget",
)

DEFAULT_ESTIMATE_ITEMS = 20
"""Items ``--estimate`` and ``--max-cost`` score before extrapolating (run_evals' own)."""

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

            # One total for the sample and the rest (run_evals' max_cost): the run never
            # spends more than USD by more than one score (see JudgeBudget).
            self.budget = JudgeBudget(self.max_cost, per=None, name="max-cost")
            if self.judges and not self.estimate_only:
                attach_budget(self.judges, self.budget, "--max-cost")

    @property
    def wanted(self) -> bool:
        """Whether a sample is scored first."""
        return self.estimate_only or self.max_cost is not None

    def refuses(self, estimate: CostEstimate) -> str | None:
        """Why the run must not start (the estimate is above ``--max-cost``), if it must not."""
        from livescore._usage import format_usd

        if not estimate.above(self.max_cost):
            return None
        return (
            f"refusing to start: the estimated judge cost {format_usd(estimate.cost)} is above "
            f"--max-cost {format_usd(self.max_cost)}"
        )

    def stop_reason(self, result: EvalResult, total: int) -> str:
        """The partial mark of a run that ``--max-cost`` stopped ("" when it did not stop)."""
        from livescore._usage import format_usd

        if result.stopped != "max_cost":
            return ""
        return (
            f"the judge spend reached --max-cost {format_usd(self.max_cost)} after "
            f"{result.item_count} of {total} item(s)"
        )
