"""Ctrl-C during ``livescore eval --out --report`` keeps what was scored (a real SIGINT)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _cli_support import write_jsonl

# The target answers the first three inputs at once; the fourth signals that it started
# (every earlier item is then complete and written) and waits until it is interrupted.
TARGET = """
import anyio
from pathlib import Path

READY = Path(__file__).with_name("blocked")

async def answer(question):
    if question == "block":
        READY.touch()
        await anyio.sleep(120)
    return question + " answered"
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigint_keeps_the_items_already_scored(tmp_path: Path) -> None:
    (tmp_path / "slow_target.py").write_text(TARGET, encoding="utf-8")
    rows = [{"input": f"alpha {i}"} for i in range(3)] + [{"input": "block"}, {"input": "late"}]
    data = write_jsonl(tmp_path / "inputs.jsonl", rows)
    out_path, report_path = tmp_path / "results.jsonl", tmp_path / "report.html"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LIVESCORE_"))}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "livescore.cli",
            "eval",
            str(data),
            "--target",
            "slow_target:answer",
            "--concurrency",
            "1",
            "--out",
            str(out_path),
            "--report",
            str(report_path),
            "--quiet",
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 40
        while not (tmp_path / "blocked").exists():
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the target never reached the blocking item"
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=40)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()

    assert process.returncode == 130, stderr
    assert "interrupted: 3 of 5 item(s) were scored" in stderr
    records = [json.loads(line) for line in out_path.read_text(encoding="utf-8").splitlines()]
    assert [r["output"] for r in records] == [f"alpha {i} answered" for i in range(3)]
    assert all(r["scores"]["keyword-coverage"]["status"] == "scored" for r in records)
    html = report_path.read_text(encoding="utf-8")
    assert "<title>[partial] livescore eval: inputs.jsonl</title>" in html
    assert "interrupted after 3 of 5 item(s)" in html
    assert html.count('<tr class="item"') == 3
    assert "report: " in stdout
