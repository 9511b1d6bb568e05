"""The Agents SDK code blocks of the docs and of the integration's README run as written,
against a local model and judge.

Each block runs in its own Python process (the SDK keeps global state: processors, a shared
HTTP client) with ``OPENAI_BASE_URL`` pointing at an OpenAITestServer that plays both the
agent's model (Responses API, the SDK's default) and the hallucination judge (chat
completions). Nothing leaves the machine: the SDK's own exporter (``add_trace_processor``
keeps it) meets a closed local port as its proxy, while loopback is reached directly.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from livescore.testing import OpenAITestServer, Reply

ROOT = Path(__file__).resolve().parents[3]
ANSWER = "It is 21°C and sunny in Paris."


def python_block(path: Path, marker: str) -> str:
    """The first ```python block after ``marker`` in ``path``."""
    text = path.read_text(encoding="utf-8")
    start = text.index(marker)
    match = re.search(r"```python\n(.*?)```", text[start:], re.S)
    assert match is not None, f"no python block after {marker!r} in {path.name}"
    return match.group(1)


def model_and_judge(body: dict[str, Any]) -> Any:
    if "input" in body:  # the agent, on the Responses API
        items = body["input"] if isinstance(body["input"], list) else []
        if not any(i.get("type") == "function_call_output" for i in items):
            return Reply.tool_calls(("get_weather", {"city": "Paris"}), ids=["call_readme"])
        return Reply.text(ANSWER)
    prompt = str(body["messages"][-1]["content"])  # the judge, on chat completions
    if "<claims>" in prompt:
        claims = re.findall(r'<claim index="\d+">(.*?)</claim>', prompt, re.S)
        return {"verdicts": [{"statement": c, "verdict": "no", "reason": "r"} for c in claims]}
    if "List the factual claims" in prompt:
        return {"claims": [ANSWER]}
    return "The score is 0 because the claim is supported."


def run(code: str, server: OpenAITestServer) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_API_KEY": "test-key",
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
        "NO_PROXY": "127.0.0.1,localhost",
    }
    return subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=50,
        check=False,
    )


STATS = (
    "\nimport json as _json\n_s = processor.stats()\n"
    "print('STATS', _json.dumps({k: getattr(_s, k) for k in "
    "('sampled', 'scored', 'failed', 'skipped', 'dropped')}))\n"
)


def _stats(stdout: str) -> dict[str, int]:
    line = next(line for line in stdout.splitlines() if line.startswith("STATS "))
    return dict(json.loads(line.removeprefix("STATS ")))


def test_the_live_scoring_block_runs_as_written() -> None:
    block = python_block(ROOT / "docs/live/openai-agents.md", "# OpenAI Agents SDK")
    with OpenAITestServer(responder=model_and_judge) as server:
        done = run(block + STATS, server)
        agent_calls = [r for r in server.requests if "input" in r]
    assert done.returncode == 0, done.stderr
    assert ANSWER in done.stdout
    assert len(agent_calls) == 2  # a tool call, then the answer
    stats = _stats(done.stdout)
    assert stats["sampled"] >= 1  # keyword coverage; hallucination on 10 % of runs
    assert stats["scored"] == stats["sampled"]


def test_the_integration_readme_block_runs_as_written() -> None:
    block = python_block(ROOT / "integrations/openai-agents/README.md", "## Attach it")
    with OpenAITestServer(responder=model_and_judge) as server:
        done = run(block + STATS, server)
    assert done.returncode == 0, done.stderr
    assert ANSWER in done.stdout
    stats = _stats(done.stdout)
    assert stats["sampled"] >= 1
    assert stats["scored"] == stats["sampled"]


def test_the_offline_testing_block_runs_as_written() -> None:
    block = python_block(ROOT / "docs/testing.md", "An Agents SDK agent, scripted and scored live")
    with OpenAITestServer() as unused:  # the block starts its own server
        done = run(block, unused)
    assert done.returncode == 0, done.stderr
