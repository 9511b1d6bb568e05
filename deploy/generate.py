"""Write livescore's Prometheus alert rules and Grafana dashboard from one description.

    python deploy/generate.py          # rewrite deploy/prometheus/livescore-rules.yml and
                                       # deploy/grafana/livescore-dashboard.json
    python deploy/generate.py --check  # exit 1 when either file differs from this script

The rules and the dashboard are generated, not hand-written, so that the statistics are
written once (:func:`wilson_bounds` is the same formula as the PromQL the rules carry; the
benchmark bench/alerts.py and the rule tests use it), the scorers where a high score is bad
come from livescore's scorer catalog, and a test (tests/deploy/) proves the committed files
are what this script writes. The metric names are the ones OpenTelemetry's Prometheus
exporter gives livescore's metrics (docs/alerts.md has the table).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RULES_FILE = HERE / "prometheus" / "livescore-rules.yml"
DASHBOARD_FILE = HERE / "grafana" / "livescore-dashboard.json"

SCORER = "livescore_scorer_id"
BAD_AT = "0.5"
"""The score-histogram bucket bound that splits bad from good: a score at or below it is bad
where higher is better, a score above it is bad where lower is better (a bound of the
``livescore.score`` histogram's buckets, so the split is exact)."""
MIN_SCORES = 10
"""A window with fewer scores never alerts, whatever its share."""
JUDGE_BUDGET_USD_PER_DAY = 20.0
"""The judge budget the spend rule compares against: edit ``livescore:judge_budget_usd:per_day``
in the rules file (or this constant and regenerate) to your ``--judge-budget``."""


@dataclass(frozen=True)
class Window:
    """One bad-share alert: the share over ``length`` against the ``baseline`` before it."""

    alert: str
    length: str  # a PromQL duration
    hours: float
    baseline: str
    baseline_hours: float
    z: float  # the Wilson intervals' z; both intervals must not overlap
    hold: str  # the alert's "for"
    severity: str


FAST = Window("LivescoreBadShareRising", "1h", 1, "7d", 168, 4.5, "5m", "page")
SLOW = Window("LivescoreBadShareRisingSlow", "1d", 24, "7d", 168, 4.5, "30m", "ticket")
WINDOWS = (FAST, SLOW)


def wilson_bounds(bad: float, n: float, z: float) -> tuple[float, float]:
    """The Wilson score interval of the share ``bad / n`` (what the rules compute in PromQL).

    Example:
        >>> [round(b, 3) for b in wilson_bounds(4, 40, 1.96)]
        [0.04, 0.231]
    """
    if n <= 0:
        return (math.nan, math.nan)
    p = bad / n
    z2 = z * z
    centre = p + z2 / (2 * n)
    half = z * math.sqrt(max(p * (1 - p) / n + z2 / (4 * n * n), 0.0))
    return ((centre - half) / (1 + z2 / n), (centre + half) / (1 + z2 / n))


def window_fires(bad: float, n: float, bad0: float, n0: float, window: Window) -> bool:
    """Whether a window of ``n`` scores (``bad`` of them bad) alerts against a baseline of
    ``n0`` (``bad0``): enough scores, and the two Wilson intervals apart."""
    if n < MIN_SCORES or n0 <= 0:
        return False
    return wilson_bounds(bad, n, window.z)[0] > wilson_bounds(bad0, n0, window.z)[1]


def lower_is_better_scorers() -> list[str]:
    """The catalog's scorers where a high score is the defect (hallucination, toxicity...)."""
    sys.path.insert(0, str(HERE.parent))
    from livescore._catalog import scorer_catalog

    return sorted(e.name for e in scorer_catalog() if not e.higher_is_better)


# -- the rules ------------------------------------------------------------------------------


def _bad(window: str, offset: str, lower_better: str) -> str:
    """Bad scores per scorer over ``window``: at or below BAD_AT, or above it for the
    scorers where lower is better."""
    off = f" offset {offset}" if offset else ""
    low = f'{SCORER}!~"{lower_better}"'
    high = f'{SCORER}=~"{lower_better}"'
    return (
        f'sum by ({SCORER}) (increase(livescore_score_bucket{{le="{BAD_AT}",{low}}}'
        f"[{window}]{off}))\nor\n"
        f"(sum by ({SCORER}) (increase(livescore_score_count{{{high}}}[{window}]{off}))\n"
        f' - sum by ({SCORER}) (increase(livescore_score_bucket{{le="{BAD_AT}",{high}}}'
        f"[{window}]{off})))"
    )


def _wilson(share: str, n: str, z: float, sign: str) -> str:
    z2 = round(z * z, 6)
    return (
        f"({share} + {z2} / (2 * {n})\n"
        f" {sign} {z} * sqrt({share} * (1 - {share}) / {n} + {z2} / (4 * {n} ^ 2)))\n"
        f"/ (1 + {z2} / {n})"
    )


def _share_rules(suffix: str, window: str, offset: str, z: float, lower: str) -> list[Any]:
    n, bad, share = (
        f"livescore:scores:increase{suffix}",
        f"livescore:scores_bad:increase{suffix}",
        f"livescore:bad_share:{suffix}",
    )
    off = f" offset {offset}" if offset else ""
    return [
        {
            "record": n,
            "expr": f"sum by ({SCORER}) (increase(livescore_score_count[{window}]{off}))",
        },
        {"record": bad, "expr": _bad(window, offset, lower)},
        {"record": share, "expr": f"{bad} / {n}"},
        {"record": f"livescore:bad_share_lower:{suffix}", "expr": _wilson(share, n, z, "-")},
        {"record": f"livescore:bad_share_upper:{suffix}", "expr": _wilson(share, n, z, "+")},
    ]


def _annotations(summary: str, description: str) -> dict[str, str]:
    return {"summary": summary, "description": description}


def rules(lower_better: list[str] | None = None, windows: tuple[Window, ...] = WINDOWS) -> Any:
    """The rule groups, as the YAML file holds them (``windows`` shortened by the
    end-to-end test, so an alert fires in seconds)."""
    lower = "|".join(lower_better if lower_better is not None else lower_is_better_scorers())
    records: list[Any] = []
    alerts: list[Any] = []
    for w in windows:
        base = f"{w.baseline}_before{w.length}"
        records += _share_rules(w.length, w.length, "", w.z, lower)
        records += _share_rules(base, w.baseline, w.length, w.z, lower)
        alerts.append(
            {
                "alert": w.alert,
                "expr": (
                    f"livescore:bad_share_lower:{w.length} > livescore:bad_share_upper:{base}\n"
                    f"and livescore:scores:increase{w.length} >= {MIN_SCORES}"
                ),
                "for": w.hold,
                "labels": {"severity": w.severity, "window": w.length},
                "annotations": _annotations(
                    f"Bad scores of {{{{ $labels.{SCORER} }}}} rose over the last {w.length}",
                    f"The share of bad scores of {{{{ $labels.{SCORER} }}}} over the last "
                    f"{w.length} is above what the {w.baseline} before it allows for that many "
                    f"scores (Wilson intervals at z={w.z:g} apart, at least {MIN_SCORES} scores).",
                ),
            }
        )
    outcome = 'livescore_runs_total{livescore_status=~"scored|failed"}'
    failed = 'livescore_runs_total{livescore_status="failed"}'
    records += [
        {
            "record": "livescore:judge_budget_usd:per_day",
            "expr": f"vector({JUDGE_BUDGET_USD_PER_DAY:g})",
        }
    ]
    alerts += [
        {
            "alert": "LivescoreScoringFailures",
            "expr": (
                f"sum by ({SCORER}, error_type) (increase({failed}[15m]))\n"
                f"/ on ({SCORER}) group_left sum by ({SCORER}) (increase({outcome}[15m]))\n"
                f"> 0.1\nand sum by ({SCORER}, error_type) (increase({failed}[15m])) >= 5"
            ),
            "for": "5m",
            "labels": {"severity": "page"},
            "annotations": _annotations(
                "Scores of {{ $labels.livescore_scorer_id }} fail: {{ $labels.error_type }}",
                "More than 10 % of the scores of {{ $labels.livescore_scorer_id }} failed with "
                "{{ $labels.error_type }} over 15 minutes (at least 5 failures).",
            ),
        },
        {
            "alert": "LivescoreRunsDropped",
            "expr": (
                f"sum by ({SCORER}, livescore_reason) (increase(livescore_runs_total"
                f'{{livescore_status="dropped"}}[15m])) >= 10'
            ),
            "for": "0m",
            "labels": {"severity": "ticket"},
            "annotations": _annotations(
                "Runs of {{ $labels.livescore_scorer_id }} dropped: {{ $labels.livescore_reason }}",
                "At least 10 sampled runs were dropped unscored in 15 minutes "
                "({{ $labels.livescore_reason }}).",
            ),
        },
        {
            "alert": "LivescoreJudgeBudgetExhausted",
            "expr": (
                f"sum by ({SCORER}) (increase(livescore_runs_total{{livescore_status="
                f'"skipped",livescore_reason="budget_exhausted"}}[15m])) > 0'
            ),
            "for": "0m",
            "labels": {"severity": "ticket"},
            "annotations": _annotations(
                "The judge budget is spent: {{ $labels.livescore_scorer_id }} is not scoring",
                "Sampled runs are skipped as budget_exhausted until the budget's period ends.",
            ),
        },
        {
            "alert": "LivescoreJudgeSlow",
            "expr": (
                f"histogram_quantile(0.95, sum by ({SCORER}, le) "
                f"(rate(livescore_judge_latency_seconds_bucket[15m]))) > 30\n"
                f"and sum by ({SCORER}) (increase(livescore_judge_latency_seconds_count[15m]))"
                f" >= {MIN_SCORES}"
            ),
            "for": "10m",
            "labels": {"severity": "ticket"},
            "annotations": _annotations(
                "The judge of {{ $labels.livescore_scorer_id }} is slow",
                "95 % of its scores waited up to 30 s or more on the judge over 15 minutes.",
            ),
        },
        {
            "alert": "LivescoreJudgeSpendBurn",
            "expr": (
                "sum(increase(livescore_judge_cost_USD_total[1h])) * 24\n"
                "> 2 * livescore:judge_budget_usd:per_day\n"
                "and sum(increase(livescore_judge_cost_USD_total[6h])) * 4\n"
                "> livescore:judge_budget_usd:per_day"
            ),
            "for": "5m",
            "labels": {"severity": "ticket"},
            "annotations": _annotations(
                "Judge spend burns faster than the budget",
                "The last hour spent at twice the daily budget's pace, and the last 6 hours "
                "above it: the budget will run out before the day ends.",
            ),
        },
    ]
    return {
        "groups": [
            {"name": "livescore-records", "rules": records},
            {"name": "livescore-alerts", "rules": alerts},
        ]
    }


def rules_yaml(lower_better: list[str] | None = None, windows: tuple[Window, ...] = WINDOWS) -> str:
    """The rules file's text."""
    import yaml

    header = (
        "# livescore's alert rules for Prometheus (docs: Alerts and dashboards).\n"
        "# Generated by deploy/generate.py: edit that script, or at least\n"
        "# livescore:judge_budget_usd:per_day below (your --judge-budget per day).\n"
    )

    class Dumper(yaml.SafeDumper):
        pass

    def text(dumper: yaml.SafeDumper, value: str) -> Any:
        # Multi-line expressions as literal blocks: the file stays readable.
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    Dumper.add_representer(str, text)
    body = yaml.dump(rules(lower_better, windows), Dumper=Dumper, sort_keys=False, width=200)
    return header + body


# -- the dashboard --------------------------------------------------------------------------

SCORER_VAR = f'{SCORER}=~"$scorer"'


def panels() -> list[tuple[str, str, list[tuple[str, str]]]]:
    """Each panel: title, unit, and its (PromQL, legend) targets."""
    by = f"sum by ({SCORER})"
    return [
        (
            "Score distribution (share of scores at or below each bound, 1h)",
            "percentunit",
            [
                (
                    f"sum by ({SCORER}, le) (increase(livescore_score_bucket{{{SCORER_VAR}}}[1h]))"
                    f"\n/ on ({SCORER}) group_left {by} "
                    f"(increase(livescore_score_count{{{SCORER_VAR}}}[1h]))",
                    "{{livescore_scorer_id}} ≤ {{le}}",
                )
            ],
        ),
        (
            "Bad share per scorer (1h) with its Wilson band, and the 7d baseline",
            "percentunit",
            [
                (f"livescore:bad_share:1h{{{SCORER_VAR}}}", "{{livescore_scorer_id}}"),
                (f"livescore:bad_share_lower:1h{{{SCORER_VAR}}}", "{{livescore_scorer_id}} low"),
                (f"livescore:bad_share_upper:1h{{{SCORER_VAR}}}", "{{livescore_scorer_id}} high"),
                (
                    f"livescore:bad_share:7d_before1h{{{SCORER_VAR}}}",
                    "{{livescore_scorer_id}} baseline",
                ),
            ],
        ),
        (
            "Runs by outcome (sampled, scored, failed, skipped, dropped) per minute",
            "short",
            [
                (
                    f"sum by ({SCORER}, livescore_status) "
                    f"(rate(livescore_runs_total{{{SCORER_VAR}}}[5m])) * 60",
                    "{{livescore_scorer_id}} {{livescore_status}}",
                )
            ],
        ),
        (
            "Failures and drops by reason per minute",
            "short",
            [
                (
                    f"sum by ({SCORER}, livescore_status, error_type, livescore_reason) "
                    f"(rate(livescore_runs_total{{{SCORER_VAR},"
                    f'livescore_status=~"failed|skipped|dropped"}}[5m])) * 60',
                    "{{livescore_scorer_id}} {{livescore_status}} {{error_type}}"
                    "{{livescore_reason}}",
                )
            ],
        ),
        (
            "Judge latency (p50, p95)",
            "s",
            [
                (
                    f"histogram_quantile({q}, sum by ({SCORER}, le) "
                    f"(rate(livescore_judge_latency_seconds_bucket{{{SCORER_VAR}}}[5m])))",
                    f"{{{{livescore_scorer_id}}}} p{int(q * 100)}",
                )
                for q in (0.5, 0.95)
            ],
        ),
        (
            "Judge tokens per minute",
            "short",
            [
                (
                    f"sum by ({SCORER}, gen_ai_token_type) "
                    f"(rate(livescore_judge_tokens_total{{{SCORER_VAR}}}[5m])) * 60",
                    "{{livescore_scorer_id}} {{gen_ai_token_type}}",
                )
            ],
        ),
        (
            "Judge spend per day at the last hour's pace, against the budget",
            "currencyUSD",
            [
                ("sum(increase(livescore_judge_cost_USD_total[1h])) * 24", "spend per day"),
                ("livescore:judge_budget_usd:per_day", "budget per day"),
            ],
        ),
    ]


def dashboard() -> Any:
    """The Grafana dashboard (a JSON model for Dashboards → Import)."""
    out = []
    for i, (title, unit, targets) in enumerate(panels()):
        out.append(
            {
                "id": i + 1,
                "type": "timeseries",
                "title": title,
                "datasource": {"type": "prometheus", "uid": "${datasource}"},
                "gridPos": {"h": 8, "w": 12, "x": 12 * (i % 2), "y": 8 * (i // 2)},
                "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
                "targets": [
                    {"refId": chr(ord("A") + j), "expr": expr, "legendFormat": legend}
                    for j, (expr, legend) in enumerate(targets)
                ],
            }
        )
    return {
        "title": "livescore",
        "uid": "livescore",
        "tags": ["livescore"],
        "timezone": "browser",
        "schemaVersion": 39,
        "time": {"from": "now-24h", "to": "now"},
        "refresh": "1m",
        "templating": {
            "list": [
                {"name": "datasource", "type": "datasource", "query": "prometheus"},
                {
                    "name": "scorer",
                    "type": "query",
                    "datasource": {"type": "prometheus", "uid": "${datasource}"},
                    "query": f"label_values(livescore_runs_total, {SCORER})",
                    "includeAll": True,
                    "multi": True,
                    "allValue": ".*",
                    "current": {"text": "All", "value": "$__all"},
                },
            ]
        },
        "panels": out,
    }


def dashboard_json() -> str:
    """The dashboard file's text."""
    return json.dumps(dashboard(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a file is stale")
    args = parser.parse_args(argv)
    stale = []
    for path, text in ((RULES_FILE, rules_yaml()), (DASHBOARD_FILE, dashboard_json())):
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(path)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(HERE.parent)}")
    for path in stale:
        print(f"{path.relative_to(HERE.parent)} is stale: run python deploy/generate.py")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
