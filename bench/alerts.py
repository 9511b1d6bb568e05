"""Benchmark: what the bad-share alerts detect, and how often they cry wolf.

One scorer, its agent serving 800 runs an hour, sampled at 1 %, 5 % and 100 % (8, 40 and
800 scores an hour, Poisson arrivals), a steady bad share of 10 %. The rules of
deploy/prometheus/livescore-rules.yml (deploy/generate.py's :func:`window_fires`: the same
Wilson bounds, windows, minimum count and ``for``) are evaluated every 5 minutes over sliding
windows of 5-minute counts, as Prometheus evaluates them over its samples:

- **false alarms**: a steady stream for a simulated month (after a week that fills the
  baseline), repeated; each time an alert starts firing counts once;
- **smallest rise detected**: the bad share jumps from 10 % to p; the smallest p (in steps
  of one point) that fires within an hour (the 1h rule) and within a day (either rule) in
  at least 90 % of trials.

Figures only: nothing here is timed. ``python bench/alerts.py [--quick] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
from _common import Results, console, print_machine, table

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "deploy"))
from generate import MIN_SCORES, WINDOWS, Window

STEP_MIN = 5
STEPS_PER_HOUR = 60 // STEP_MIN
RUNS_PER_HOUR = 800
RATES = (0.01, 0.05, 1.0)
BASE = 0.10
DETECT = 0.9


def _wilson(bad: np.ndarray, n: np.ndarray, z: float, sign: float) -> np.ndarray:
    # The same formula as generate.wilson_bounds, over arrays (NaN where n is 0).
    with np.errstate(divide="ignore", invalid="ignore"):
        p = bad / n
        z2 = z * z
        half = z * np.sqrt(np.maximum(p * (1 - p) / n + z2 / (4 * n * n), 0.0))
        return (p + z2 / (2 * n) + sign * half) / (1 + z2 / n)


def _window_sum(c: np.ndarray, steps: int, offset: int) -> np.ndarray:
    """Sums over ``steps`` 5-minute buckets ending ``offset`` buckets before each step
    (``c``: cumulative sums with a leading zero, trials in rows)."""
    end = np.arange(c.shape[1] - 1) + 1 - offset
    start = end - steps
    valid = start >= 0
    out = np.full((c.shape[0], end.size), np.nan)
    out[:, valid] = c[:, end[valid]] - c[:, start[valid]]
    return out


def _firing(n: np.ndarray, bad: np.ndarray, w: Window) -> np.ndarray:
    """Whether ``w``'s alert fires at each step (its ``for`` held)."""
    cn = np.concatenate([np.zeros((n.shape[0], 1)), np.cumsum(n, axis=1)], axis=1)
    cb = np.concatenate([np.zeros((n.shape[0], 1)), np.cumsum(bad, axis=1)], axis=1)
    length = int(w.hours * STEPS_PER_HOUR)
    baseline = int(w.baseline_hours * STEPS_PER_HOUR)
    wn, wb = _window_sum(cn, length, 0), _window_sum(cb, length, 0)
    bn, bb = _window_sum(cn, baseline, length), _window_sum(cb, baseline, length)
    with np.errstate(invalid="ignore"):
        cond = (_wilson(wb, wn, w.z, -1) > _wilson(bb, bn, w.z, +1)) & (wn >= MIN_SCORES)
    hold = int(_duration_min(w.hold) // STEP_MIN) + 1
    # True for `hold` consecutive evaluations: the pending alert fires on the last.
    run = np.zeros_like(cond, dtype=np.int32)
    for i in range(cond.shape[1]):
        prev = run[:, i - 1] if i else 0
        run[:, i] = np.where(cond[:, i], prev + 1, 0)
    result: np.ndarray = run >= hold
    return result


def _duration_min(text: str) -> float:
    units = {"m": 1, "h": 60, "d": 1440}
    return float(text[:-1]) * units[text[-1]]


def _stream(
    rng: np.random.Generator, trials: int, steps: int, rate: float, shares: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Scores and bad scores per 5-minute bucket (``shares``: the bad share per step)."""
    n = rng.poisson(RUNS_PER_HOUR * rate / STEPS_PER_HOUR, size=(trials, steps))
    bad = rng.binomial(n, np.broadcast_to(shares, (trials, steps)))
    return n.astype(float), bad.astype(float)


def false_alarms(rng: np.random.Generator, rate: float, months: int) -> dict[str, float]:
    """Alerts started per simulated 30-day month of a steady 10 % bad share."""
    warm = 7 * 24 * STEPS_PER_HOUR
    month = 30 * 24 * STEPS_PER_HOUR
    steps = warm + month
    n, bad = _stream(rng, months, steps, rate, np.full(steps, BASE))
    out: dict[str, float] = {}
    for w in WINDOWS:
        firing = _firing(n, bad, w)[:, warm:]
        starts = firing[:, 1:] & ~firing[:, :-1]
        out[w.alert] = float(starts.sum() + firing[:, 0].sum()) / months
    return out


def smallest_rise(rng: np.random.Generator, rate: float, hours: float, trials: int) -> float | None:
    """The smallest bad share (from 10 %) detected within ``hours`` in 90 % of trials."""
    warm = 7 * 24 * STEPS_PER_HOUR + STEPS_PER_HOUR  # the baseline full before the change
    after = int(hours * STEPS_PER_HOUR)
    windows = [w for w in WINDOWS if w.hours <= hours]
    for point in range(11, 101):
        p = point / 100
        shares = np.concatenate([np.full(warm, BASE), np.full(after, p)])
        n, bad = _stream(rng, trials, warm + after, rate, shares)
        fired = np.zeros(trials, dtype=bool)
        for w in windows:
            fired |= _firing(n, bad, w)[:, warm:].any(axis=1)
        # Fired before the change: a false alarm, not a detection.
        if fired.mean() >= DETECT:
            return p
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer trials")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    record = Results("alerts", quick=args.quick)
    print_machine("Bad-share alerts: detection and false alarms")
    rng = np.random.default_rng(20261206)
    months = 4 if args.quick else 40
    trials = 40 if args.quick else 200
    rows: list[Any] = []
    for rate in RATES:
        alarms = false_alarms(rng, rate, months)
        hour = smallest_rise(rng, rate, 1, trials)
        day = smallest_rise(rng, rate, 24, trials)
        rows.append(
            {
                "sample_rate": rate,
                "scores_per_hour": RUNS_PER_HOUR * rate,
                "smallest_share_detected_1h": hour,
                "smallest_share_detected_1d": day,
                "false_alarms_per_month": alarms,
            }
        )
    table(
        f"Bad share {BASE:.0%} steady; {RUNS_PER_HOUR} runs/h; detection in ≥ {DETECT:.0%} "
        f"of {trials} trials; false alarms over {months} simulated months",
        ["sampling", "scores/h", "detected in 1 h", "detected in 1 day", "false alarms/month"],
        [
            [
                f"{r['sample_rate']:.0%}",
                f"{r['scores_per_hour']:g}",
                _share(r["smallest_share_detected_1h"]),
                _share(r["smallest_share_detected_1d"]),
                f"{sum(r['false_alarms_per_month'].values()):.3f}",
            ]
            for r in rows
        ],
    )
    record.extra["settings"] = {
        "runs_per_hour": RUNS_PER_HOUR,
        "base_share": BASE,
        "detection_probability": DETECT,
        "trials": trials,
        "months": months,
        "step_minutes": STEP_MIN,
        "windows": [
            {"alert": w.alert, "length": w.length, "baseline": w.baseline, "z": w.z}
            for w in WINDOWS
        ],
        "min_scores": MIN_SCORES,
    }
    record.write(rows, json_path=args.json)
    console.print("done")


def _share(p: float | None) -> str:
    return "not within 100 %" if p is None or math.isnan(p) else f"10 % → {p:.0%}"


if __name__ == "__main__":
    main()
