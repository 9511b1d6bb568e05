"""A Node.js agent, traced with the OpenTelemetry JS SDK, exporting to ``livescore collect``
over OTLP/HTTP in both encodings (the JS exporters' JSON and protobuf); its scores reach an
OTLP backend as children of the Node.js run's span, and ``--console`` prints each one with
the run it scored.

The npm packages are installed once into ``.cache/node-agent`` (git-ignored) from the npm
registry; the test is skipped, saying why, where node or npm is missing or the install
fails.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from _collect_process import start_collect, stop
from otlp_receiver import OTLPTestReceiver

SOURCE = Path(__file__).resolve().parent / "node_agent"
CACHE = Path(__file__).resolve().parents[2] / ".cache" / "node-agent"


@pytest.fixture(scope="module")
def node_agent() -> Path:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are not installed: the Node.js agent cannot run")
    CACHE.mkdir(parents=True, exist_ok=True)
    package = (SOURCE / "package.json").read_text(encoding="utf-8")
    stamp = CACHE / ".installed-package.json"
    if not stamp.exists() or stamp.read_text(encoding="utf-8") != package:
        (CACHE / "package.json").write_text(package, encoding="utf-8")
        done = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=CACHE,
            capture_output=True,
            text=True,
            timeout=240,
        )
        if done.returncode != 0:
            pytest.skip(
                f"npm install of the OpenTelemetry JS SDK failed: {done.stderr.strip()[-300:]}"
            )
        stamp.write_text(package, encoding="utf-8")
    shutil.copy(SOURCE / "agent.mjs", CACHE / "agent.mjs")
    return CACHE


@pytest.mark.timeout(300)
@pytest.mark.parametrize("encoding", ["json", "protobuf"])
def test_a_node_agent_run_is_scored_under_its_span(
    node_agent: Path, tmp_path: Path, encoding: str
) -> None:
    printed = tmp_path / "stdout.txt"
    with OTLPTestReceiver() as backend:
        process, url = start_collect(
            tmp_path,
            "--otlp-endpoint",
            backend.url,
            "--quiet-period",
            "0.3",
            "--console",
            stdout=printed,
        )
        try:
            ran = subprocess.run(
                ["node", "agent.mjs", url + "/v1/traces", encoding, "What is the weather in Lyon?"],
                cwd=node_agent,
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert ran.returncode == 0, ran.stderr
            trace_id, span_id = ran.stdout.split()
        finally:
            code, err = stop(process)
        assert code == 0, err
        assert "runs 1: submitted 1" in err
        [score] = [s for s in backend.spans if s.name == "evaluation grounded"]
    assert score.trace_id == trace_id
    assert score.parent_span_id == span_id  # the Node.js agent's invoke_agent span
    assert score.attributes["gen_ai.evaluation.score.value"] == 1.0  # its tool result grounded it
    # --console: the Node.js run, as collect read it, with its score.
    shown = printed.read_text(encoding="utf-8")
    assert f"trace {trace_id[:16]}…" in shown
    assert "question  What is the weather in Lyon?" in shown
    assert "evaluation grounded  score 1.00" in shown
