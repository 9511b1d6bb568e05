"""Node.js agents for the instrumentation tests: one npm package folder per framework
(``tests/collect/node_<name>/``: its ``package.json`` with exact pins, its ``*.mjs``
agent), installed once into ``.cache/node-<name>`` (git-ignored) and reinstalled when its
``package.json`` changes. A test that needs one is skipped, saying why, where node or npm
is missing or the install fails (no registry, say).
"""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from _collect_process import stop
from _instrumentation_support import (
    ANSWER,
    QUESTION,
    assert_judged,
    hallucination_replies,
    start_judged_collect,
    weather,
)
from otlp_receiver import OTLPTestReceiver, ReceivedSpan

from livescore.testing import OpenAITestServer
from livescore.traces import AssembledRun, assemble_runs, decode_otlp_json

HERE = Path(__file__).resolve().parent
CACHE = HERE.parents[1] / ".cache"


def node_package(name: str) -> Path:
    """The installed package folder of ``tests/collect/node_<name>`` (its agents copied in)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are not installed: the Node.js agent cannot run")
    source = HERE / f"node_{name}"
    target = CACHE / f"node-{name.replace('_', '-')}"
    target.mkdir(parents=True, exist_ok=True)
    package = (source / "package.json").read_text(encoding="utf-8")
    stamp = target / ".installed-package.json"
    with (target / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one install at a time (tests in parallel)
        if not stamp.exists() or stamp.read_text(encoding="utf-8") != package:
            stamp.unlink(missing_ok=True)
            (target / "package.json").write_text(package, encoding="utf-8")
            try:
                done = subprocess.run(
                    [npm, "install", "--no-audit", "--no-fund", "--loglevel=error"],
                    cwd=target,
                    capture_output=True,
                    text=True,
                    timeout=600,
                )
            except subprocess.TimeoutExpired:
                pytest.skip(f"npm install of {source.name}/package.json took over 10 minutes")
            if done.returncode != 0:
                pytest.skip(
                    f"npm install of {source.name}/package.json failed: "
                    f"{done.stderr.strip()[-300:]}"
                )
            stamp.write_text(package, encoding="utf-8")
    for script in source.glob("*.mjs"):
        shutil.copy(script, target / script.name)
    return target


def installed_versions(folder: Path) -> dict[str, str]:
    """``{package: version}`` of the package folder's direct dependencies as installed."""
    wanted = json.loads((folder / "package.json").read_text(encoding="utf-8"))["dependencies"]
    found: dict[str, str] = {}
    for name in wanted:
        manifest = folder / "node_modules" / name / "package.json"
        found[name] = json.loads(manifest.read_text(encoding="utf-8"))["version"]
    return found


def pinned_versions(folder: Path) -> dict[str, str]:
    """``{package: version}`` as ``package.json`` pins them."""
    manifest: dict[str, Any] = json.loads((folder / "package.json").read_text(encoding="utf-8"))
    return dict(manifest["dependencies"])


def run_agent(folder: Path, script: str, config: dict[str, Any]) -> dict[str, Any]:
    """Run ``node script CONFIG_JSON`` in ``folder``; its last line of output, as JSON."""
    done = subprocess.run(
        ["node", script, json.dumps(config)],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@dataclass
class NodeRun:
    """What one Node.js agent run gave: its answer, the run livescore assembles from the
    spans it exported, and the score spans ``livescore collect`` sent to the backend."""

    answer: str
    assembled: AssembledRun
    scores: dict[str, ReceivedSpan]
    collect_log: str


def scored_by_collect(folder: Path, script: str, tmp_path: Path, conversation: str) -> NodeRun:
    """Run a Node.js agent against ``livescore collect`` (hallucination judged by a test
    server, keyword coverage), and check that the judge saw the tool's result and the whole
    answer. The agent also writes its spans as OTLP JSON to a file: the run is assembled
    from them here too (what the compatibility table records)."""
    spans_file = tmp_path / "spans.jsonl"
    with (
        OpenAITestServer(hallucination_replies()) as judge,
        OTLPTestReceiver() as backend,
    ):
        collect, url = start_judged_collect(tmp_path, judge, backend.url)
        try:
            result = run_agent(
                folder,
                script,
                {
                    "endpoint": url + "/v1/traces",
                    "spansFile": str(spans_file),
                    "question": QUESTION,
                    "toolResult": weather("Lyon"),
                    "answer": ANSWER,
                    "conversation": conversation,
                },
            )
        finally:
            code, err = stop(collect)
        assert code == 0, err
        assert "runs 1: submitted 1" in err, err
        assert_judged(judge)
        scores = {s.name: s for s in backend.spans}
    lines = spans_file.read_text(encoding="utf-8").splitlines()
    spans = [span for line in lines if line.strip() for span in decode_otlp_json(line).spans]
    [assembled] = assemble_runs(spans)
    return NodeRun(result["text"], assembled, scores, err)
