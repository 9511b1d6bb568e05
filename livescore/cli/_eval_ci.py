"""``livescore eval`` in CI: ``--baseline`` comparison, ``--fail-on-regression``,
``--summary-md`` and the judge response cache (``--no-cache``, ``--cache-dir``)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from livescore.cli._common import UsageError, finite_float

if TYPE_CHECKING:
    from rich.console import Console

    from livescore.evals import Comparison, EvalResult
    from livescore.judges import ResponseCache

__all__ = ("EvalCi", "add_ci_arguments")

DEFAULT_REGRESSION_THRESHOLD = 0.1
_ITEMS_SHOWN = 10


def add_ci_arguments(checks: Any, parser: Any) -> None:
    """Add ``--fail-on-regression`` to ``checks`` and the baseline and cache groups to
    ``parser``."""
    checks.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="with --baseline: fail when a scorer is significantly worse than in the "
        "baseline (at 5 %%: a paired bootstrap of the mean, McNemar's exact test for 0/1 "
        "scores); a change the test cannot tell from chance passes",
    )
    baseline = parser.add_argument_group("comparison with an earlier run (CI)")
    baseline.add_argument(
        "--baseline",
        metavar="PREVIOUS.jsonl",
        help="an earlier run's --out file: items are paired by id (else by input) and each "
        "scorer's change is shown with its 95 %% interval and a verdict; the items that got "
        "worse are listed first with both reasons; new and missing items are counted",
    )
    baseline.add_argument(
        "--regression-threshold",
        type=finite_float,
        default=DEFAULT_REGRESSION_THRESHOLD,
        metavar="DELTA",
        help="an item regressed when its score is worse by more than DELTA, or its verdict "
        f"flipped to bad at --threshold (default: {DEFAULT_REGRESSION_THRESHOLD:g})",
    )
    baseline.add_argument(
        "--summary-md",
        metavar="FILE",
        help="write a short Markdown summary (per scorer: baseline, now, change with its "
        "interval, verdict) for a pull request comment or $GITHUB_STEP_SUMMARY",
    )
    cache = parser.add_argument_group("judge response cache")
    cache.add_argument(
        "--no-cache",
        action="store_true",
        help="ask the judge every time (by default an identical judge request is answered "
        "from the cache, with no call and no cost)",
    )
    cache.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="where the cache lives (default: $LIVESCORE_CACHE, else ~/.cache/livescore); "
        "several processes may share it",
    )


@dataclass(slots=True)
class EvalCi:
    """What the CI options asked for, checked before scoring, applied after it."""

    baseline_path: Path | None = None
    baseline: list[dict[str, Any]] = field(default_factory=list)
    summary_path: Path | None = None
    regression_threshold: float = DEFAULT_REGRESSION_THRESHOLD
    fail_on_regression: bool = False
    cache: ResponseCache | None = None
    judges: list[Any] = field(default_factory=list)
    comparison: Comparison | None = None

    @classmethod
    def from_args(
        cls,
        args: argparse.Namespace,
        judges: Sequence[Any],
        outputs: Sequence[tuple[str, Path | None]],
        inputs: Sequence[tuple[str, Path]],
    ) -> EvalCi:
        """Read and check the options (the baseline is read now: a bad one costs nothing).

        Raises:
            UsageError: A bad option, an unreadable baseline, a summary path that cannot
                be written or that names another file of the command.
        """
        from livescore.cli._eval_options import check_output, same_file
        from livescore.evals import BaselineError, load_baseline

        ci = cls(
            regression_threshold=args.regression_threshold,
            fail_on_regression=args.fail_on_regression,
        )
        if args.regression_threshold < 0:
            raise UsageError(
                f"--regression-threshold {args.regression_threshold:g}: give 0 or more"
            )
        if args.fail_on_regression and not args.baseline:
            raise UsageError("--fail-on-regression compares with a --baseline: give one")
        if args.baseline:
            ci.baseline_path = Path(args.baseline)
            try:
                ci.baseline = load_baseline(ci.baseline_path)
            except BaselineError as exc:
                raise UsageError(f"--baseline {exc}") from None
        if args.summary_md:
            path = ci.summary_path = Path(args.summary_md)
            check_output("--summary-md", path)
            named = [(option, p) for option, p in outputs if p is not None]
            named += list(inputs)
            if ci.baseline_path is not None:
                named.append(("the baseline", ci.baseline_path))
            for what, other in named:
                if same_file(path, other):
                    raise UsageError(f"--summary-md {path} is also {what}: give it its own file")
        if not args.no_cache and not getattr(args, "broker", None):
            from livescore.judges import OpenAIJudge, ResponseCache

            local = [j for j in judges if isinstance(j, OpenAIJudge) and j.response_cache is None]
            if local:
                ci.cache = ResponseCache(args.cache_dir)
                for judge in local:
                    judge.response_cache = ci.cache
                ci.judges = local
        elif args.cache_dir and args.no_cache:
            raise UsageError("--cache-dir names the cache that --no-cache turns off: give one")
        return ci

    def compare(
        self, result: EvalResult, directions: dict[str, bool], threshold: float
    ) -> Comparison | None:
        """Compare ``result`` with the baseline (when one was given)."""
        if self.baseline_path is None:
            return None
        self.comparison = result.compare(
            self.baseline,
            higher_is_better=directions,
            threshold=threshold,
            regression_threshold=self.regression_threshold,
        )
        return self.comparison

    def cache_note(self) -> str:
        """``"judge cache …: 12 of 12 requests answered from it (100 %), 4,300 tokens and
        $0.0123 saved"``; empty when the cache is off or was not asked."""
        cache = self.cache
        if cache is None:
            return ""
        stats = cache.stats
        lookups = stats.hits + stats.misses
        if not lookups:
            return ""
        from livescore._usage import JudgeUsage, format_usd
        from livescore.judges import price_of

        saved = stats.saved_input_tokens + stats.saved_output_tokens
        note = (
            f"judge cache ({cache.directory}): {stats.hits} of {lookups} request(s) answered "
            f"from it ({stats.hits / lookups:.0%}), {saved:,} tokens"
        )
        prices = [price_of(judge) for judge in self.judges]
        price = prices[0] if all(p == prices[0] for p in prices) else None
        if price is not None:
            dollars = price.cost(
                JudgeUsage(
                    input_tokens=stats.saved_input_tokens,
                    output_tokens=stats.saved_output_tokens,
                    cached_input_tokens=stats.saved_cached_input_tokens,
                )
            )
            note += f" and {format_usd(dollars)}"
        note += " saved"
        if cache.problem is not None:
            note += f"; the cache could not be used ({cache.problem}): the judge was asked"
        elif stats.errors:
            note += f"; {stats.errors} cache error(s), each one a judge call instead"
        return note

    def report_options(self) -> dict[str, Any]:
        """The report's extra sections: the comparison and the cache note."""
        return {"comparison": self.comparison, "cache_note": self.cache_note()}

    def finish(self, out: Console, err: Console, result: EvalResult) -> bool:
        """Print the comparison and the cache note; write ``--summary-md``. Returns
        whether the summary (if asked for) was written."""
        from rich.markup import escape

        if self.comparison is not None:
            _print_comparison(out, self.comparison)
        note = self.cache_note()
        if note:
            out.print(escape(note))
        if self.summary_path is None:
            return True
        from livescore._files import write_text_atomically
        from livescore.evals import summary_markdown

        text = summary_markdown(result, self.comparison, notes=[note] if note else [])
        try:
            write_text_atomically(self.summary_path, text)
        except OSError as exc:
            err.print(
                f"[red]error:[/red] --summary-md {escape(str(self.summary_path))}: "
                f"{escape(exc.strerror or str(exc))}"
            )
            return False
        out.print(f"summary: {escape(str(self.summary_path))}")
        return True

    def failures(self) -> list[str]:
        """``--fail-on-regression``: one line per scorer that significantly regressed."""
        if not self.fail_on_regression or self.comparison is None:
            return []
        lines = []
        for sid in self.comparison.regressed:
            c = self.comparison.scorers[sid]
            lines.append(f"--fail-on-regression: {sid} is significantly worse ({_change(c)})")
        return lines


def _change(c: Any) -> str:
    if c.test == "McNemar":
        return (
            f"{c.baseline_bad} → {c.bad} of {c.n} bad: {c.went_bad} went bad, {c.went_good} "
            f"went good, McNemar p = {c.p_value:.3g}"
        )
    low, high = c.interval
    return (
        f"mean {c.baseline_mean:.3f} → {c.mean:.3f}, {c.change:+.3f} "
        f"(95 % interval {low:+.3f} to {high:+.3f}, paired bootstrap)"
    )


def _print_comparison(out: Console, comparison: Comparison) -> None:
    from rich.markup import escape
    from rich.table import Table

    regressed = comparison.regressed_items
    if regressed:
        out.print(
            f"[red]{len(regressed)} item score(s) regressed[/red] against the baseline "
            f"(worst first; worse by more than {comparison.regression_threshold:g}, or a "
            "verdict flipped to bad):"
        )
        for moved in regressed[:_ITEMS_SHOWN]:
            out.print(
                f"  {escape(moved.key.split(':', 1)[1][:60])} · {escape(moved.scorer_id)} "
                f"{moved.baseline_score:.3f} → {moved.score:.3f}"
            )
            out.print(f"    before: {escape((moved.baseline_reason or '–')[:200])}")
            out.print(f"    now:    {escape((moved.reason or '–')[:200])}")
        if len(regressed) > _ITEMS_SHOWN:
            out.print(f"  …and {len(regressed) - _ITEMS_SHOWN} more (--report lists them all)")
    table = Table(title="Against the baseline (95 % intervals)", title_justify="left")
    for name in ("scorer", "n", "baseline", "now", "change", "test", "verdict"):
        table.add_column(name, justify="right" if name in ("n", "baseline", "now") else "left")
    for sid, c in comparison.scorers.items():
        colour = {"regressed": "red", "improved": "green"}.get(c.verdict)
        verdict = f"[{colour}]{c.verdict}[/{colour}]" if colour else c.verdict
        table.add_row(
            sid,
            str(c.n),
            "–" if c.baseline_mean is None else f"{c.baseline_mean:.3f}",
            "–" if c.mean is None else f"{c.mean:.3f}",
            _change(c) if c.n else "–",
            c.test,
            verdict,
        )
    out.print(table)
    out.print(
        f"{comparison.matched} item(s) compared with the baseline, {comparison.new} new, "
        f"{comparison.missing} missing"
    )
