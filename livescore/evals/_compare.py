"""An evaluation compared with an earlier one: did this change make the agent worse?

Items are paired by ``id`` (by their input when they have none), and each scorer is compared
on the items both runs scored. Two paired tests, one per kind of score, chosen per scorer:

- **Scores** (anything but 0/1): a *paired bootstrap* of the mean change. The per-item
  differences are resampled with replacement (5,000 times, a fixed seed, so the same two
  files always give the same verdict); the interval is the 2.5th to 97.5th percentile of
  the resampled mean changes, and the change is significant when the interval excludes 0.
- **Labels** (every score 0 or 1, a pass/fail check): *McNemar's exact test* on the items
  whose verdict flipped: under "no change" a flip is as likely to go one way as the other,
  so the count of good→bad flips among all flips is Binomial(flips, ½); the change is
  significant when the two-sided p-value is below 0.05.

Pairing is what makes a small change detectable: a judge's item-to-item spread cancels out,
and only the items whose score moved carry the test.
"""

from __future__ import annotations

import json
import math
import random
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from livescore.evals._result import EvalResult

__all__ = (
    "BaselineError",
    "Comparison",
    "ItemChange",
    "ScorerComparison",
    "compare_results",
    "load_baseline",
    "summary_markdown",
)

CONFIDENCE = 0.95
"""The level of every interval and test (a regression is significant at 5 %)."""

BOOTSTRAP_RESAMPLES = 5000
_SEED = 20240917  # fixed: the same two files always give the same interval

Verdict = Literal["regressed", "improved", "no significant change", "not compared"]


class BaselineError(ValueError):
    """A baseline results file that cannot be read (its path and line say where)."""


@dataclass(frozen=True, slots=True)
class ItemChange:
    """One item whose score moved between the baseline and this run.

    Attributes:
        key: How the item was matched (``"id:q-17"`` or ``"input:…"``).
        index: The item's position in this run's data.
        scorer_id: The scorer.
        baseline_score: Its score in the baseline.
        score: Its score now.
        baseline_reason: The judge's reason in the baseline.
        reason: The judge's reason now.
        regressed: Worse by more than the regression threshold, or its verdict flipped
            from good to bad; else it improved by as much (or flipped back).
    """

    key: str
    index: int
    scorer_id: str
    baseline_score: float
    score: float
    baseline_reason: str | None
    reason: str | None
    regressed: bool

    @property
    def change(self) -> float:
        """``score - baseline_score``."""
        return self.score - self.baseline_score


@dataclass(frozen=True, slots=True)
class ScorerComparison:
    """One scorer, this run against the baseline, on the items both scored.

    Attributes:
        scorer_id: The scorer.
        higher_is_better: The scorer's direction (decides what "worse" means).
        n: Items paired (scored in both runs).
        baseline_mean: The baseline's mean over those items.
        mean: This run's mean over them.
        interval: The ``CONFIDENCE`` interval of ``mean - baseline_mean`` (paired bootstrap).
        baseline_bad: Paired items on the bad side of the threshold in the baseline.
        bad: The same now.
        went_bad: Items good in the baseline and bad now.
        went_good: Items bad in the baseline and good now.
        p_value: McNemar's exact two-sided p-value on those flips.
        bad_interval: The ``CONFIDENCE`` interval of the change in the bad share.
        test: Which test decides the verdict: ``"McNemar"`` for 0/1 scores, else
            ``"paired bootstrap"``.
        verdict: ``"regressed"`` or ``"improved"`` when that test finds the change
            significant, else ``"no significant change"`` (``"not compared"``: no pairs).
    """

    scorer_id: str
    higher_is_better: bool
    n: int
    baseline_mean: float | None
    mean: float | None
    interval: tuple[float, float] | None
    baseline_bad: int
    bad: int
    went_bad: int
    went_good: int
    p_value: float
    bad_interval: tuple[float, float] | None
    test: Literal["paired bootstrap", "McNemar"]
    verdict: Verdict

    @property
    def change(self) -> float | None:
        """``mean - baseline_mean`` (``None`` with no pairs)."""
        if self.mean is None or self.baseline_mean is None:
            return None
        return self.mean - self.baseline_mean

    @property
    def bad_share_change(self) -> float | None:
        """The change in the share of paired items on the bad side."""
        return (self.bad - self.baseline_bad) / self.n if self.n else None


@dataclass(slots=True)
class Comparison:
    """This evaluation against a baseline (see :meth:`EvalResult.compare`).

    Attributes:
        scorers: One comparison per scorer both runs have, by scorer id.
        items: The items whose score moved: regressions first (worst first), then the
            improvements.
        matched: Items found in both runs.
        new: Items of this run the baseline lacks.
        missing: Baseline items this run lacks.
        regression_threshold: How much worse an item must be to count as regressed.
        threshold: The score that splits good from bad (as ``livescore eval --threshold``).
    """

    scorers: dict[str, ScorerComparison] = field(default_factory=dict)
    items: list[ItemChange] = field(default_factory=list)
    matched: int = 0
    new: int = 0
    missing: int = 0
    regression_threshold: float = 0.1
    threshold: float = 0.5

    @property
    def regressed(self) -> list[str]:
        """The scorers whose regression is significant."""
        return [sid for sid, c in self.scorers.items() if c.verdict == "regressed"]

    @property
    def regressed_items(self) -> list[ItemChange]:
        """The items that got worse, worst first."""
        return [item for item in self.items if item.regressed]


def load_baseline(path: str | Path) -> list[dict[str, Any]]:
    """The records of a results file (``livescore eval --out``), one per line.

    Raises:
        BaselineError: The file cannot be read, or a line is not a JSON object with
            ``scores`` (the message names the line).

    Example:
        >>> import tempfile, os
        >>> with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        ...     _ = f.write('{"id": "a", "input": "hi", "scores": {}}\\n')
        >>> [r["id"] for r in load_baseline(f.name)]
        ['a']
        >>> os.unlink(f.name)
    """
    records: list[dict[str, Any]] = []
    try:
        with open(path, encoding="utf-8-sig") as file:
            for number, line in enumerate(file, start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except ValueError as exc:
                    raise BaselineError(f"{path}:{number}: not JSON ({exc})") from None
                if not isinstance(record, dict) or not isinstance(record.get("scores"), dict):
                    raise BaselineError(
                        f"{path}:{number}: not a results record (a JSON object with 'scores', "
                        "as livescore eval --out writes)"
                    )
                records.append(record)
    except OSError as exc:
        raise BaselineError(f"{path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise BaselineError(f"{path}: not UTF-8 text ({exc.reason})") from None
    return records


def compare_results(
    result: EvalResult,
    baseline: Iterable[Mapping[str, Any]],
    *,
    higher_is_better: Mapping[str, bool] | None = None,
    threshold: float = 0.5,
    regression_threshold: float = 0.1,
) -> Comparison:
    """Compare ``result`` with ``baseline`` records; see :meth:`EvalResult.compare`."""
    directions = _directions(result.scores, higher_is_better or {})
    old: dict[str, Mapping[str, Any]] = {}
    for key, record in _keyed((_record_key(r.get("id"), r.get("input")), r) for r in baseline):
        old[key] = record
    now: dict[str, Any] = dict(
        _keyed((_record_key(item.id, item.input), item) for item in result.items)
    )
    comparison = Comparison(
        matched=len(now.keys() & old.keys()),
        new=len(now.keys() - old.keys()),
        missing=len(old.keys() - now.keys()),
        regression_threshold=regression_threshold,
        threshold=threshold,
    )
    regressions: list[ItemChange] = []
    improvements: list[ItemChange] = []
    for sid in result.scores:
        better = directions[sid]
        if not any(sid in (record.get("scores") or {}) for record in old.values()):
            continue  # a scorer the baseline did not run: nothing to compare
        pairs: list[tuple[str, Any, Mapping[str, Any]]] = []
        for key, item in now.items():
            record = old.get(key)
            base = record["scores"].get(sid) if record is not None else None
            score = item.scores.get(sid)
            if not isinstance(base, Mapping) or score is None:
                continue
            if score.status != "scored" or score.score is None:
                continue
            if base.get("status") != "scored" or not isinstance(base.get("score"), int | float):
                continue
            pairs.append((key, item, base))
        comparison.scorers[sid] = _compare_scorer(sid, better, pairs, threshold)
        for key, item, base in pairs:
            before, after = float(base["score"]), float(item.scores[sid].score)
            worse_by = (before - after) if better else (after - before)
            flipped_bad = not _bad(before, better, threshold) and _bad(after, better, threshold)
            flipped_good = _bad(before, better, threshold) and not _bad(after, better, threshold)
            if worse_by > regression_threshold or flipped_bad:
                target, regressed = regressions, True
            elif -worse_by > regression_threshold or flipped_good:
                target, regressed = improvements, False
            else:
                continue
            target.append(
                ItemChange(
                    key=key,
                    index=item.index,
                    scorer_id=sid,
                    baseline_score=before,
                    score=after,
                    baseline_reason=base.get("reason"),
                    reason=item.scores[sid].reason,
                    regressed=regressed,
                )
            )
    regressions.sort(key=lambda c: (-abs(c.change), c.index))
    improvements.sort(key=lambda c: (-abs(c.change), c.index))
    comparison.items = regressions + improvements
    return comparison


def _compare_scorer(
    sid: str,
    better: bool,
    pairs: Sequence[tuple[str, Any, Mapping[str, Any]]],
    threshold: float,
) -> ScorerComparison:
    before = [float(base["score"]) for _, _, base in pairs]
    after = [float(item.scores[sid].score) for _, item, _ in pairs]
    n = len(pairs)
    binary = n > 0 and all(x in (0.0, 1.0) for x in before + after)
    test: Literal["paired bootstrap", "McNemar"] = "McNemar" if binary else "paired bootstrap"
    if n == 0:
        return ScorerComparison(
            sid, better, 0, None, None, None, 0, 0, 0, 0, 1.0, None, test, "not compared"
        )
    bad_before = [_bad(x, better, threshold) for x in before]
    bad_after = [_bad(x, better, threshold) for x in after]
    went_bad = sum(1 for b, a in zip(bad_before, bad_after, strict=True) if a and not b)
    went_good = sum(1 for b, a in zip(bad_before, bad_after, strict=True) if b and not a)
    p_value = mcnemar_exact(went_bad, went_good)
    interval = paired_bootstrap([a - b for a, b in zip(after, before, strict=True)])
    worse = 0
    if test == "McNemar":
        if p_value < 1 - CONFIDENCE and went_bad != went_good:
            worse = 1 if went_bad > went_good else -1
    else:
        low, high = interval
        up, down = low > 0, high < 0
        if up or down:
            # A rise is worse where higher is worse.
            worse = 1 if (up and not better) or (down and better) else -1
    verdict: Verdict = (
        "regressed" if worse > 0 else "improved" if worse < 0 else "no significant change"
    )
    return ScorerComparison(
        scorer_id=sid,
        higher_is_better=better,
        n=n,
        baseline_mean=math.fsum(before) / n,
        mean=math.fsum(after) / n,
        interval=interval,
        baseline_bad=sum(bad_before),
        bad=sum(bad_after),
        went_bad=went_bad,
        went_good=went_good,
        p_value=p_value,
        bad_interval=_paired_share_interval(went_bad, went_good, n),
        test=test,
        verdict=verdict,
    )


def paired_bootstrap(
    differences: Sequence[float], *, resamples: int = BOOTSTRAP_RESAMPLES
) -> tuple[float, float]:
    """The ``CONFIDENCE`` percentile interval of the mean of paired ``differences``.

    Example:
        >>> paired_bootstrap([0.0] * 20)
        (0.0, 0.0)
        >>> low, high = paired_bootstrap([-0.5] * 20 + [0.0] * 5)
        >>> high < 0
        True
    """
    n = len(differences)
    if not n:
        return (0.0, 0.0)
    if all(d == differences[0] for d in differences):
        return (differences[0], differences[0])
    rng = random.Random(_SEED)
    means = sorted(math.fsum(rng.choices(differences, k=n)) / n for _ in range(resamples))
    tail = (1 - CONFIDENCE) / 2
    return (means[int(tail * resamples)], means[min(resamples - 1, int((1 - tail) * resamples))])


def mcnemar_exact(went_bad: int, went_good: int) -> float:
    """McNemar's exact two-sided p-value for the flips one way and the other.

    Example:
        >>> round(mcnemar_exact(6, 0), 4)  # six flips, all one way
        0.0312
        >>> mcnemar_exact(3, 3)
        1.0
    """
    flips = went_bad + went_good
    if not flips:
        return 1.0
    tail = sum(math.comb(flips, k) for k in range(min(went_bad, went_good) + 1))
    return float(min(1.0, 2 * tail / 2**flips))


def _paired_share_interval(went_bad: int, went_good: int, n: int) -> tuple[float, float]:
    """The interval of the change in a paired proportion (the flips' Wald interval)."""
    change = (went_bad - went_good) / n
    variance = max(0.0, (went_bad + went_good) - (went_bad - went_good) ** 2 / n) / n**2
    z = statistics.NormalDist().inv_cdf(1 - (1 - CONFIDENCE) / 2)
    half = z * math.sqrt(variance)
    return (change - half, change + half)


def _bad(score: float, higher_is_better: bool, threshold: float) -> bool:
    # The same rule as livescore eval --threshold on labelled data.
    return score <= threshold if higher_is_better else score >= threshold


def _record_key(item_id: Any, item_input: Any) -> str:
    if item_id is not None and item_id != "":
        return f"id:{item_id}"
    return "input:" + json.dumps(item_input, sort_keys=True, ensure_ascii=False, default=str)


def _keyed(pairs: Iterable[tuple[str, Any]]) -> Iterable[tuple[str, Any]]:
    """A repeated key gets ``#2``, ``#3``… so that repeated inputs pair in order."""
    seen: dict[str, int] = {}
    for key, value in pairs:
        seen[key] = seen.get(key, 0) + 1
        yield (key if seen[key] == 1 else f"{key}#{seen[key]}"), value


def _directions(scorers: Iterable[str], given: Mapping[str, bool]) -> dict[str, bool]:
    """Each scorer's direction: as given, else the catalog's for a prebuilt scorer id, else
    higher is better."""
    from livescore.scorers import scorer_catalog

    catalog = {entry.name: entry.higher_is_better for entry in scorer_catalog()}
    return {sid: given.get(sid, catalog.get(sid, True)) for sid in scorers}


# -- the pull-request summary ------------------------------------------------------------------


def summary_markdown(
    result: EvalResult,
    comparison: Comparison | None = None,
    *,
    notes: Sequence[str] = (),
    max_items: int = 10,
) -> str:
    """A short Markdown summary for a pull request: per scorer, the baseline, now, the
    change with its interval and the verdict; then the regressed items and ``notes``.

    Example:
        >>> from livescore.evals import EvalResult
        >>> print(summary_markdown(EvalResult()).splitlines()[0])
        ### livescore eval
    """
    lines = ["### livescore eval", ""]
    if comparison is None:
        lines += ["| scorer | mean | scored | failed |", "|---|---:|---:|---:|"]
        for sid, agg in result.scores.items():
            lines.append(f"| {_md(sid)} | {_num(agg.mean)} | {agg.scored} | {agg.failed} |")
        lines += [
            "",
            f"{max(result.item_count, len(result.items))} item(s); no baseline to compare with.",
        ]
    else:
        level = f"{CONFIDENCE:.0%}"
        lines += [
            f"| scorer | baseline | now | change ({level} interval) | test | verdict |",
            "|---|---:|---:|---|---|---|",
        ]
        for sid, c in comparison.scorers.items():
            arrow = "↑" if c.higher_is_better else "↓"
            if c.test == "McNemar" and c.n:
                change = (
                    f"{_signed(c.change)} ({c.went_bad} went bad, {c.went_good} went good, "
                    f"p = {c.p_value:.3g})"
                )
            elif c.interval is not None:
                change = (
                    f"{_signed(c.change)} ({_signed(c.interval[0])} to {_signed(c.interval[1])})"
                )
            else:
                change = "–"
            mark = {"regressed": "❌ ", "improved": "✅ "}.get(c.verdict, "")
            lines.append(
                f"| {_md(sid)} ({arrow} better) | {_num(c.baseline_mean)} | {_num(c.mean)} | "
                f"{change} | {c.test} | {mark}{c.verdict} |"
            )
        regressed = comparison.regressed_items
        lines += [
            "",
            f"{comparison.matched} item(s) compared, {comparison.new} new, "
            f"{comparison.missing} missing; {len(regressed)} item score(s) regressed (worse "
            f"by more than {comparison.regression_threshold:g}, or a verdict flipped to bad).",
        ]
        if regressed:
            lines += [
                "",
                "| item | scorer | baseline | now | reason now |",
                "|---|---|---:|---:|---|",
            ]
            for moved in regressed[:max_items]:
                lines.append(
                    f"| {_md(moved.key.split(':', 1)[1][:60])} | {_md(moved.scorer_id)} | "
                    f"{moved.baseline_score:.3f} | {moved.score:.3f} | "
                    f"{_md((moved.reason or '')[:120])} |"
                )
            if len(regressed) > max_items:
                lines.append(f"\n…and {len(regressed) - max_items} more (see the report).")
    for note in notes:
        lines += ["", note]
    return "\n".join(lines) + "\n"


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _signed(value: float | None) -> str:
    return "–" if value is None else f"{value:+.3f}"


def _md(text: str) -> str:
    """Text safe in a Markdown table cell (no pipe, no line break)."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("\r", " ")
