"""examples/ci: the GitHub Actions workflow passes actionlint, and its livescore commands,
run as the workflow runs them (bash, in a checkout), gate a pull request against the test
server: main's run becomes the baseline, an unchanged judge passes, a regressed one fails."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from livescore.testing import OpenAITestServer

WORKFLOW = Path(__file__).parents[2] / "examples" / "ci" / "livescore-eval.yml"
BIN = Path(sys.executable).parent


def _actionlint() -> str:
    found = shutil.which("actionlint", path=str(BIN)) or shutil.which("actionlint")
    if found is None:
        pytest.skip("actionlint is not installed (make actionlint installs it)")
    return found


def test_the_workflow_passes_actionlint() -> None:
    done = subprocess.run(
        [_actionlint(), "-no-color", str(WORKFLOW)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_catches_a_broken_workflow(tmp_path: Path) -> None:
    # The check can fail: an undefined context in an expression is an error.
    broken = tmp_path / "broken.yml"
    broken.write_text(WORKFLOW.read_text().replace("github.event_name", "github.no_such_field"))
    done = subprocess.run(
        [_actionlint(), "-no-color", str(broken)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1
    assert "no_such_field" in done.stdout


def _steps() -> dict[str, dict[str, Any]]:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    return {step.get("name", ""): step for step in workflow["jobs"]["eval"]["steps"]}


def _judge(bad: set[int]) -> Any:
    """A scripted judge: a claim about a door in ``bad`` is unsupported."""

    def respond(body: dict[str, Any]) -> Any:
        prompt = str(body["messages"][-1]["content"])
        if "<claims>" in prompt:
            claims = re.findall(r'<claim index="\d+">(.*?)</claim>', prompt, re.S)
            return {
                "verdicts": [
                    {
                        "statement": c,
                        "verdict": "yes" if int(re.findall(r"\d+", c)[0]) in bad else "no",
                        "reason": "checked",
                    }
                    for c in claims
                ]
            }
        if "List the factual claims" in prompt:
            found = re.search(r"<output>\n(.*?)\n</output>", prompt, re.S)
            return {"claims": [found.group(1)] if found else []}
        start = re.search(r'Start with "(The score is [^"]+ because)"', prompt)
        return f"{start.group(1) if start else 'The score is unknown because'} it checked."

    return respond


def _run_step(step: dict[str, Any], checkout: Path, env: dict[str, str]) -> int:
    return subprocess.run(
        ["bash", "-e", "-c", step["run"]], cwd=checkout, env=env, timeout=600
    ).returncode


def test_the_workflow_commands_gate_a_pull_request(tmp_path: Path) -> None:
    steps = _steps()
    first = steps["Evaluate (no baseline yet)"]
    against = steps["Evaluate against the baseline"]
    summary_step = steps["Job summary"]
    keep = steps["Prepare the baseline"]
    for step in (first, against):
        assert step["run"].startswith("livescore eval ")
    checkout = tmp_path / "repo"
    (checkout / "evals").mkdir(parents=True)
    (checkout / "evals" / "dataset.jsonl").write_text(
        "".join(
            f'{{"id": "q{i}", "input": "Which door?", "context": "Doors 0-99.", '
            f'"output": "Door {i} is open."}}\n'
            for i in range(30)
        )
    )
    step_summary = tmp_path / "step-summary.md"
    with OpenAITestServer(responder=_judge(set())) as server:
        env = {
            **os.environ,
            "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "LIVESCORE_JUDGE_MODEL": "test-judge",
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "test-key",
            "LIVESCORE_CACHE": str(tmp_path / "cache"),
            "GITHUB_STEP_SUMMARY": str(step_summary),
            "COLUMNS": "200",
        }
        # main: no baseline yet; its results become the baseline.
        assert _run_step(first, checkout, env) == 0
        assert _run_step(keep, checkout, env) == 0
        assert (checkout / "baseline" / "results.jsonl").exists()
        calls = len(server.requests)
        # A pull request that changes nothing: every answer comes from the cache; it passes.
        assert _run_step(against, checkout, env) == 0
        assert len(server.requests) == calls
        assert _run_step(summary_step, checkout, env) == 0
        assert "| no significant change |" in step_summary.read_text()
        # A pull request after which the judge finds 10 of 30 answers unsupported.
        server.responder = _judge(set(range(10)))
        env["LIVESCORE_CACHE"] = str(tmp_path / "cache-2")  # new answers, not cached ones
        assert _run_step(against, checkout, env) == 1
        assert _run_step(summary_step, checkout, env) == 0
    text = step_summary.read_text()
    assert "❌ regressed" in text
    assert "10 item score(s) regressed" in text
    assert (checkout / "report.html").exists()
