"""deploy/prometheus/livescore-rules.yml under ``promtool check rules`` and ``promtool test
rules``: noisy series (Poisson arrivals, binomial bad scores, a fixed seed) that show the
bad-share alerts tell a rise from sampling noise, and simple series for the other alerts.

Series are 5-minute samples of the counters OpenTelemetry's Prometheus exporter writes
(``livescore_score_count``, ``livescore_score_bucket{le="0.5"}``...), one scorer ``faith``
(higher is better: a score at or below 0.5 is bad).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from prometheus_support import binary, load_generate

gen = load_generate()
RULES = gen.RULES_FILE
STEP_H = 1 / 12  # 5 minutes
HOUR = 12  # steps
WEEK = 7 * 24 * HOUR
SCORER = "faith"


def test_the_committed_files_are_what_the_generator_writes() -> None:
    assert gen.main(["--check"]) == 0, "run: python deploy/generate.py"


def test_promtool_accepts_the_rules() -> None:
    out = subprocess.run(
        [binary("promtool", "prometheus"), "check", "rules", str(RULES)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def _cumulative(values: np.ndarray) -> str:
    return " ".join(f"{v:g}" for v in np.concatenate([[0], np.cumsum(values)]))


def _score_series(n: np.ndarray, bad: np.ndarray) -> list[dict[str, str]]:
    scorer = f'livescore_scorer_id="{SCORER}"'
    return [
        {"series": f"livescore_score_count{{{scorer}}}", "values": _cumulative(n)},
        {"series": f'livescore_score_bucket{{le="0.5",{scorer}}}', "values": _cumulative(bad)},
    ]


def _noisy(
    per_hour: float, shares: list[tuple[int, float]], seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """5-minute counts: ``shares`` is (steps, bad share) segments."""
    rng = np.random.default_rng(seed)
    steps = sum(s for s, _ in shares)
    n = rng.poisson(per_hour * STEP_H, size=steps)
    p = np.concatenate([np.full(s, share) for s, share in shares])
    return n, rng.binomial(n, p)


def _alert(rule: str, **labels: str) -> dict[str, Any]:
    """What promtool expects of a firing ``rule``: its labels and rendered annotations."""
    spec = next(r for g in gen.rules()["groups"] for r in g["rules"] if r.get("alert") == rule)
    all_labels = {**labels, **spec.get("labels", {})}

    def render(text: str) -> str:
        return re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: all_labels.get(m[1], ""), text)

    return {
        "exp_labels": all_labels,
        "exp_annotations": {k: render(v) for k, v in spec["annotations"].items()},
    }


def _promtool_test(tmp_path: Path, series: list[Any], alerts: list[Any], exprs: Any = ()) -> None:
    test: dict[str, Any] = {"interval": "5m", "input_series": series, "alert_rule_test": alerts}
    if exprs:
        test["promql_expr_test"] = list(exprs)
    spec = {"rule_files": [str(RULES)], "evaluation_interval": "5m", "tests": [test]}
    path = tmp_path / "test.yml"
    path.write_text(yaml.safe_dump(spec, width=1 << 20), encoding="utf-8")
    out = subprocess.run(
        [binary("promtool", "prometheus"), "test", "rules", str(path)],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert out.returncode == 0, (out.stdout + out.stderr)[-6000:]


def _hours(first: float, last: float, step: float = 1.0) -> list[str]:
    return [f"{int(h * 60)}m" for h in np.arange(first, last + 1e-9, step)]


def _none(rule: str, times: list[str]) -> list[Any]:
    return [{"eval_time": t, "alertname": rule, "exp_alerts": []} for t in times]


FAST, SLOW = gen.FAST.alert, gen.SLOW.alert


@pytest.mark.timeout(300)
def test_a_steady_ten_percent_at_40_scores_an_hour_never_fires_over_a_week(
    tmp_path: Path,
) -> None:
    # A week to fill the baseline, then a week checked hour by hour: 40 scores an hour
    # (5 % of 800 runs), 10 % bad, with the noise of both.
    n, bad = _noisy(40, [(2 * WEEK, 0.10)], seed=1)
    shares = bad.reshape(-1, HOUR).sum(1) / np.maximum(n.reshape(-1, HOUR).sum(1), 1)
    assert shares.max() >= 0.2
    assert shares.min() == 0.0
    week2 = _hours(24 * 7 + 1, 24 * 14)
    _promtool_test(tmp_path, _score_series(n, bad), _none(FAST, week2) + _none(SLOW, week2))


@pytest.mark.timeout(300)
def test_a_rise_from_10_to_25_percent_at_40_scores_an_hour_fires_within_a_day(
    tmp_path: Path,
) -> None:
    n, bad = _noisy(40, [(WEEK + 2 * HOUR, 0.10), (24 * HOUR, 0.25)], seed=2)
    change_h = 24 * 7 + 2
    alerts = [
        *_none(SLOW, _hours(change_h - 1, change_h)),
        {
            "eval_time": f"{(change_h + 24) * 60}m",
            "alertname": SLOW,
            "exp_alerts": [_alert(SLOW, livescore_scorer_id=SCORER)],
        },
    ]
    _promtool_test(tmp_path, _score_series(n, bad), alerts)


@pytest.mark.timeout(300)
def test_the_same_rise_at_every_score_of_800_runs_fires_within_an_hour(tmp_path: Path) -> None:
    n, bad = _noisy(800, [(WEEK + 2 * HOUR, 0.10), (HOUR, 0.25)], seed=3)
    change_h = 24 * 7 + 2
    alerts = [
        *_none(FAST, [f"{change_h * 60}m"]),
        {
            "eval_time": f"{(change_h + 1) * 60}m",
            "alertname": FAST,
            "exp_alerts": [_alert(FAST, livescore_scorer_id=SCORER)],
        },
    ]
    _promtool_test(tmp_path, _score_series(n, bad), alerts)


@pytest.mark.timeout(300)
def test_the_same_rise_with_too_few_scores_does_not_fire(tmp_path: Path) -> None:
    # 4 scores an hour (0.5 % of 800 runs): a day at 25 % is not enough to tell.
    n, bad = _noisy(4, [(WEEK + 2 * HOUR, 0.10), (24 * HOUR, 0.25)], seed=4)
    day = _hours(24 * 7 + 3, 24 * 8 + 2)
    _promtool_test(tmp_path, _score_series(n, bad), _none(FAST, day) + _none(SLOW, day))


@pytest.mark.timeout(300)
def test_the_promql_wilson_bounds_are_the_generators(tmp_path: Path) -> None:
    # Exact counts (48 scores an hour, 0.4 bad per 5 minutes, then 1.5): the recorded
    # shares and bounds are deploy/generate.py's wilson_bounds, which the benchmark uses.
    steps_old, steps_new = WEEK + 4 * HOUR, HOUR
    n = np.full(steps_old + steps_new, 4.0)
    bad = np.concatenate([np.full(steps_old, 0.4), np.full(steps_new, 1.5)])
    eval_h = (steps_old + steps_new) / HOUR
    window = gen.wilson_bounds(18.0, 48.0, gen.FAST.z)
    baseline = gen.wilson_bounds(0.4 * 12 * 168, 48.0 * 168, gen.FAST.z)
    exprs = []
    for record, value in (
        ("livescore:bad_share_lower:1h", window[0]),
        ("livescore:bad_share_upper:1h", window[1]),
        ("livescore:bad_share_upper:7d_before1h", baseline[1]),
    ):
        exprs.append(
            {
                "expr": f"abs({record} - {value!r}) < bool 1e-9",
                "eval_time": f"{int(eval_h * 60)}m",
                "exp_samples": [{"labels": f'{{livescore_scorer_id="{SCORER}"}}', "value": 1}],
            }
        )
    # 18 of 48 against 10 %: far apart, so the hour's alert is pending (its "for" not yet
    # held: the window turned bad only at this evaluation).
    assert gen.window_fires(18.0, 48.0, 0.4 * 12 * 168, 48.0 * 168, gen.FAST)
    _promtool_test(tmp_path, _score_series(n, bad), [], exprs)


def _runs(labels: str, values: str) -> dict[str, str]:
    return {"series": f"livescore_runs_total{{{labels}}}", "values": values}


def test_a_burst_of_judge_failures_fires(tmp_path: Path) -> None:
    scorer = f'livescore_scorer_id="{SCORER}"'
    series = [
        _runs(f'{scorer},livescore_status="scored"', "0+10x24"),
        # Quiet for an hour, then 6 timeouts every 5 minutes.
        _runs(f'{scorer},livescore_status="failed",error_type="timeout"', "0x12 0+6x12"),
    ]
    alert = "LivescoreScoringFailures"
    alerts = [
        *_none(alert, ["60m"]),
        {
            "eval_time": "90m",
            "alertname": alert,
            "exp_alerts": [_alert(alert, livescore_scorer_id=SCORER, error_type="timeout")],
        },
    ]
    _promtool_test(tmp_path, series, alerts)


def test_a_few_failures_among_many_scores_do_not_fire(tmp_path: Path) -> None:
    scorer = f'livescore_scorer_id="{SCORER}"'
    series = [
        _runs(f'{scorer},livescore_status="scored"', "0+100x24"),
        _runs(f'{scorer},livescore_status="failed",error_type="timeout"', "0+1x24"),
    ]
    _promtool_test(tmp_path, series, _none("LivescoreScoringFailures", _hours(0.5, 2, 0.25)))


def test_drops_and_a_spent_budget_fire_with_their_reason(tmp_path: Path) -> None:
    scorer = f'livescore_scorer_id="{SCORER}"'
    series = [
        _runs(f'{scorer},livescore_status="dropped",livescore_reason="queue_full"', "0x6 0+5x6"),
        _runs(
            f'{scorer},livescore_status="skipped",livescore_reason="budget_exhausted"',
            "0x6 0+1x6",
        ),
    ]
    dropped, spent = "LivescoreRunsDropped", "LivescoreJudgeBudgetExhausted"
    alerts = [
        *_none(dropped, ["30m"]),
        *_none(spent, ["30m"]),
        {
            "eval_time": "45m",
            "alertname": dropped,
            "exp_alerts": [
                _alert(dropped, livescore_scorer_id=SCORER, livescore_reason="queue_full")
            ],
        },
        {
            "eval_time": "45m",
            "alertname": spent,
            "exp_alerts": [_alert(spent, livescore_scorer_id=SCORER)],
        },
    ]
    _promtool_test(tmp_path, series, alerts)


def test_a_slow_judge_fires(tmp_path: Path) -> None:
    base = f'livescore_judge_latency_seconds_bucket{{livescore_scorer_id="{SCORER}",le='
    # 10 scores every 5 minutes: 1 s each for the first hour, then 60 s each.
    series = [
        {"series": f'{base}"1.0"}}', "values": "0+10x12 120x12"},
        {"series": f'{base}"30.0"}}', "values": "0+10x12 120x12"},
        {"series": f'{base}"60.0"}}', "values": "0+10x24"},
        {"series": f'{base}"+Inf"}}', "values": "0+10x24"},
        {
            "series": f'livescore_judge_latency_seconds_count{{livescore_scorer_id="{SCORER}"}}',
            "values": "0+10x24",
        },
    ]
    alert = "LivescoreJudgeSlow"
    alerts = [
        *_none(alert, ["60m"]),
        {
            "eval_time": "120m",
            "alertname": alert,
            "exp_alerts": [_alert(alert, livescore_scorer_id=SCORER)],
        },
    ]
    _promtool_test(tmp_path, series, alerts)


def test_spend_burning_faster_than_the_budget_fires(tmp_path: Path) -> None:
    budget = gen.JUDGE_BUDGET_USD_PER_DAY
    per_step_on_budget = budget / 24 / 12
    # 6 hours at the budget's pace, then 3 times that.
    values = f"0+{per_step_on_budget!r}x72 {budget / 4!r}+{3 * per_step_on_budget!r}x36"
    series = [
        {
            "series": f'livescore_judge_cost_USD_total{{livescore_scorer_id="{SCORER}"}}',
            "values": values,
        }
    ]
    alert = "LivescoreJudgeSpendBurn"
    alerts = [
        *_none(alert, ["6h"]),
        {"eval_time": "9h", "alertname": alert, "exp_alerts": [_alert(alert)]},
    ]
    _promtool_test(tmp_path, series, alerts)
