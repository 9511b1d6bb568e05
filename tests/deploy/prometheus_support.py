"""Real Prometheus and Alertmanager for the tests: Debian's ``prometheus`` (with ``promtool``)
and ``prometheus-alertmanager`` binaries, started on 127.0.0.1 by the tests themselves, a
webhook receiver for Alertmanager's notifications, and deploy/generate.py loaded as a module.

``make test`` installs the two packages where it can (``make prometheus``); elsewhere the
tests that need them are skipped, saying so.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


def load_generate() -> ModuleType:
    """deploy/generate.py, the rules' and the dashboard's source."""
    spec = importlib.util.spec_from_file_location(
        "livescore_deploy_generate", ROOT / "deploy" / "generate.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def binary(name: str, package: str) -> str:
    """The path of ``name``, or a skip saying which Debian package brings it."""
    path = shutil.which(name)
    if path is None:
        pytest.skip(
            f"{name} is not installed: install Debian's {package} package "
            "(make test does, as root with apt-get: make prometheus)"
        )
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(condition: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.3)


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


class _Process:
    """A server process with its log in a file; stopped at exit."""

    def __init__(self, argv: list[str], log: Path, url: str, ready_path: str) -> None:
        self.url = url
        self.log = log
        with log.open("wb") as out:
            self.process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)

        def ready() -> bool:
            if self.process.poll() is not None:
                raise AssertionError(f"{argv[0]} exited:\n{self.output()}")
            try:
                with urllib.request.urlopen(url + ready_path, timeout=2):
                    return True
            except OSError:
                return False

        wait_for(ready, 60, f"{argv[0]} to be ready (its log: {log})")

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


class Prometheus(_Process):
    """``prometheus`` scraping ``targets`` every second, evaluating ``rule_files`` every
    second, sending alerts to ``alertmanager`` (a URL) when given."""

    def __init__(
        self,
        tmp: Path,
        targets: list[str],
        rule_files: list[Path],
        alertmanager: str | None = None,
    ) -> None:
        port = free_port()
        config: dict[str, Any] = {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": [str(p) for p in rule_files],
            "scrape_configs": [{"job_name": "livescore", "static_configs": [{"targets": targets}]}],
        }
        if alertmanager:
            host = urllib.parse.urlsplit(alertmanager).netloc
            config["alerting"] = {"alertmanagers": [{"static_configs": [{"targets": [host]}]}]}
        path = tmp / "prometheus.yml"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        super().__init__(
            [
                binary("prometheus", "prometheus"),
                f"--config.file={path}",
                f"--storage.tsdb.path={tmp / 'prometheus-data'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            tmp / "prometheus.log",
            f"http://127.0.0.1:{port}",
            "/-/ready",
        )

    def query(self, expr: str) -> list[Any]:
        """The instant vector ``expr`` returns now (an error fails the test)."""
        body = _get(f"{self.url}/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
        assert body["status"] == "success", body
        result: list[Any] = body["data"]["result"]
        return result


class Alertmanager(_Process):
    """``prometheus-alertmanager`` routing every alert to a webhook at once."""

    def __init__(self, tmp: Path, webhook: str) -> None:
        port = free_port()
        config = {
            "route": {
                "receiver": "test",
                "group_by": ["alertname", "livescore_scorer_id"],
                "group_wait": "1s",
                "group_interval": "1s",
                "repeat_interval": "1h",
            },
            "receivers": [{"name": "test", "webhook_configs": [{"url": webhook}]}],
        }
        path = tmp / "alertmanager.yml"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        super().__init__(
            [
                binary("prometheus-alertmanager", "prometheus-alertmanager"),
                f"--config.file={path}",
                f"--storage.path={tmp / 'alertmanager-data'}",
                f"--web.listen-address=127.0.0.1:{port}",
                "--cluster.listen-address=",  # one instance: no gossip port
            ],
            tmp / "alertmanager.log",
            f"http://127.0.0.1:{port}",
            "/-/ready",
        )


class WebhookReceiver:
    """An HTTP server on 127.0.0.1 keeping each notification Alertmanager posts."""

    def __init__(self) -> None:
        self.notifications: list[Any] = []
        received = self.notifications

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                received.append(json.loads(self.rfile.read(length)))
                self.send_response(200)
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/alerts"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
