"""The alerts end to end, with the real tools: a real Prometheus scrapes a real ``livescore
worker --metrics-port`` on 127.0.0.1 and evaluates deploy/prometheus/livescore-rules.yml
plus the bad-share rule with its windows shortened (15 s against the minute before, from the
same generator); a real Alertmanager routes to a webhook receiver in the test. The judge
turns worse mid-run; the webhook receives the alert naming the scorer. Then every query of
the Grafana dashboard (deploy/grafana/livescore-dashboard.json) runs against that
Prometheus and must return data (a week of history is backfilled with ``promtool tsdb
create-blocks-from openmetrics`` for the baseline panel)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from fleet_support import Fleet, publish_jobs

from livescore.testing import OpenAITestServer, Reply

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "deploy"))
from prometheus_support import (
    Alertmanager,
    Prometheus,
    WebhookReceiver,
    binary,
    free_port,
    load_generate,
    wait_for,
)

pytestmark = pytest.mark.slow

gen = load_generate()
PRICE = {"test-model": [1.0, 2.0]}  # USD per million input / output tokens
SHORT = gen.Window("LivescoreBadShareRising", "15s", 15 / 3600, "1m", 1 / 60, 4.5, "1s", "page")


class _Judge:
    """Answers "yes" (a good score) until :attr:`worse`; then "no", and every fourth
    request fails with a 500 (a failed score, since the worker's judge does not retry)."""

    def __init__(self) -> None:
        self.worse = False
        self.requests = 0
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Any:
        with self._lock:
            self.requests += 1
            n = self.requests
        if not self.worse:
            return Reply.text("yes", usage=(800, 10))
        if n % 4 == 0:
            return Reply.server_error()
        return Reply.text("no", usage=(800, 10))


def _short_rules(path: Path) -> None:
    groups = gen.rules(windows=(SHORT,))["groups"]
    keep = [
        r
        for g in groups
        for r in g["rules"]
        if r.get("alert") == SHORT.alert or "15s" in r.get("record", "")
    ]
    spec = {"groups": [{"name": "livescore-e2e", "rules": keep}]}
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")


def _backfill(data: Path, scorer: str) -> None:
    """A week and a day of history (10 % bad), ending half an hour ago."""
    now = int(time.time())
    lines = ["# TYPE livescore_score histogram"]
    labels = f'job="history",livescore_scorer_id="{scorer}"'
    for i, t in enumerate(range(now - 8 * 86400, now - 1800, 300)):
        lines.append(f'livescore_score_bucket{{{labels},le="0.5"}} {i * 0.4:g} {t}')
        lines.append(f'livescore_score_bucket{{{labels},le="+Inf"}} {i * 4} {t}')
        lines.append(f"livescore_score_count{{{labels}}} {i * 4} {t}")
    lines.append("# EOF")
    source = data.parent / "history.om"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = subprocess.run(
        [
            binary("promtool", "prometheus"),
            "tsdb",
            "create-blocks-from",
            "openmetrics",
            "--max-block-duration=24h",
            str(source),
            str(data),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def _publisher(fleet: Fleet, stop: threading.Event) -> threading.Thread:
    """Publishes a job for ``priced`` about every 0.25 s until ``stop``."""

    def run() -> None:
        i = 0
        while not stop.wait(0.25):
            publish_jobs(fleet.url, [i], "priced", lambda i: f"answer number {i}")
            i += 1

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def _firing(webhook: WebhookReceiver, alertname: str) -> list[Any]:
    return [
        alert
        for note in list(webhook.notifications)
        for alert in note["alerts"]
        if alert["status"] == "firing" and alert["labels"]["alertname"] == alertname
    ]


@pytest.mark.timeout(600)
def test_a_judge_turned_worse_pages_through_prometheus_and_alertmanager(
    fleet: Fleet, tmp_path: Path
) -> None:
    for name, package in (
        ("promtool", "prometheus"),
        ("prometheus", "prometheus"),
        ("prometheus-alertmanager", "prometheus-alertmanager"),
    ):
        binary(name, package)
    judge = _Judge()
    stop = threading.Event()
    started: list[Any] = []
    with OpenAITestServer(responder=judge) as server:
        fleet.env["FLEET_TEST_JUDGE_URL"] = server.base_url
        fleet.env["FLEET_TEST_JUDGE_RETRIES"] = "0"
        port = free_port()
        worker = fleet.start_worker(
            "--metrics-port", f"127.0.0.1:{port}", "--judge-prices", json.dumps(PRICE)
        )
        assert f"metrics at http://127.0.0.1:{port}/metrics" in worker.output()
        _backfill(tmp_path / "prometheus-data", "priced")
        short_rules = tmp_path / "short-rules.yml"
        _short_rules(short_rules)
        webhook = WebhookReceiver()
        try:
            alertmanager = Alertmanager(tmp_path, webhook.url)
            started.append(alertmanager)
            prometheus = Prometheus(
                tmp_path, [f"127.0.0.1:{port}"], [gen.RULES_FILE, short_rules], alertmanager.url
            )
            started.append(prometheus)
            publisher = _publisher(fleet, stop)
            # A good judge for long enough to fill the minute of baseline: no alert.
            wait_for(
                lambda: prometheus.query("livescore:scores:increase1m_before15s > 150"),
                240,
                "a minute of good scores in Prometheus",
            )
            time.sleep(3)  # an alert would have reached the webhook by now
            assert webhook.notifications == []
            judge.worse = True
            alerts = wait_for(
                lambda: _firing(webhook, SHORT.alert),
                180,
                "the bad-share alert at the webhook",
            )
            stop.set()
            publisher.join(10)
            alert = alerts[0]
            assert alert["labels"]["livescore_scorer_id"] == "priced"
            assert alert["labels"]["severity"] == "page"
            assert alert["labels"]["window"] == "15s"
            assert alert["annotations"]["summary"] == (
                "Bad scores of priced rose over the last 15s"
            )
            # Every dashboard query returns data (the scorer variable at "All").
            empty = []
            for panel in gen.dashboard()["panels"]:
                for target in panel["targets"]:
                    expr = target["expr"].replace("$scorer", ".*")
                    if not prometheus.query(expr):
                        empty.append(f"{panel['title']}: {expr}")
            assert empty == [], "dashboard queries without data:\n" + "\n".join(empty)
        finally:
            stop.set()
            for process in reversed(started):
                process.stop()
            webhook.close()
