"""Opt-in: the demo's spans in a real Arize Phoenix, read back over its REST API.

Phoenix is about 850 MB and starts in 8–13 s, so this runs only with ``LIVESCORE_PHOENIX=1``
and a ``phoenix`` command (``pip install arize-phoenix``; ``PHOENIX_BIN`` may point at one in
another virtual environment).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _demo_support import demo_judge_responder, run_demo_cli
from rich.console import Console

from livescore.testing import OpenAITestServer

pytestmark = [
    pytest.mark.phoenix,
    pytest.mark.skipif(
        os.environ.get("LIVESCORE_PHOENIX") != "1",
        reason="opt-in: set LIVESCORE_PHOENIX=1 with arize-phoenix installed",
    ),
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as reply:
        return json.loads(reply.read() or b"null")


@pytest.fixture
def phoenix(tmp_path: Path) -> Iterator[str]:
    command = os.environ.get("PHOENIX_BIN") or shutil.which("phoenix")
    if command is None:
        pytest.skip("no phoenix command: pip install arize-phoenix (or set PHOENIX_BIN)")
    port = _free_port()
    env = {
        **os.environ,
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(_free_port()),
        "PHOENIX_WORKING_DIR": str(tmp_path),
    }
    log = (tmp_path / "phoenix.log").open("wb")
    process = subprocess.Popen(
        [command, "serve"], env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                _get(f"{url}/v1/projects")
                break
            except (urllib.error.URLError, OSError, ValueError):
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"Phoenix did not start: {(tmp_path / 'phoenix.log').read_text()}")
                time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def test_evaluation_spans_nest_under_the_run_in_phoenix(
    phoenix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("LIVESCORE_JUDGE_MODEL", "LIVESCORE_AGENT_MODEL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    buffer = io.StringIO()
    with OpenAITestServer(responder=demo_judge_responder) as judge:
        monkeypatch.setenv("OPENAI_BASE_URL", judge.base_url)
        code = run_demo_cli(
            [
                "--model",
                "openai/test-judge",
                "--otlp-endpoint",
                phoenix,
                "--question",
                "Which countries does Parcelly deliver to?",
            ],
            Console(file=buffer, width=200, no_color=True),
        )
    assert code == 0, buffer.getvalue()

    spans: list[dict[str, Any]] = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        spans = _get(f"{phoenix}/v1/projects/default/spans?limit=100")["data"]
        if sum(s["name"].startswith("evaluation ") for s in spans) >= 2:
            break
        time.sleep(0.5)
    by_name = {s["name"]: s for s in spans}
    run = by_name["invoke_agent parcelly-support"]
    hallucination = by_name["evaluation hallucination"]
    keyword = by_name["evaluation keyword-coverage"]
    for evaluation in (hallucination, keyword):
        assert evaluation["parent_id"] == run["context"]["span_id"]
        assert evaluation["context"]["trace_id"] == run["context"]["trace_id"]
    attributes = hallucination["attributes"]
    assert attributes["gen_ai.operation.name"] == "evaluation"
    assert attributes["gen_ai.evaluation.name"] == "hallucination"
    assert attributes["gen_ai.evaluation.score.value"] == pytest.approx(0.33)
    assert attributes["gen_ai.evaluation.score.label"] == "low"
    assert attributes["evaluations.0.evaluation.score"] == pytest.approx(0.33)
    assert hallucination["span_kind"] == "EVALUATOR"  # Phoenix reads openinference.span.kind
    assert [e["name"] for e in hallucination["events"]] == ["gen_ai.evaluation.result"]
