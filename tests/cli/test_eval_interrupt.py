"""Ctrl-C during ``livescore eval --out --report`` keeps what was scored (a real SIGINT).

Whatever the target is doing when the signal lands (awaiting, blocked in synchronous code in
its worker thread, or blocking the event loop itself), the command stops within a few
seconds with exit code 130, the items already scored in ``--out`` and a partial
``--report``; a second Ctrl-C while it winds down or writes cannot lose them. Each test runs
the command in its own process, as a user does, and waits for the process to say it is
blocked before interrupting it, so the signal never lands before the command is ready.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _cli_support import write_jsonl

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

# The first input waits a little (so the run's duration is known to exceed it), the next two
# are answered at once; "block" signals that it started (every earlier item is then complete
# and written) and blocks until it is interrupted, in one of three ways.
TARGET = """
import time
from pathlib import Path

import anyio

READY = Path(__file__).with_name("blocked")


def _first(question):
    if question == "alpha 0":
        time.sleep(0.3)


async def awaiting(question):
    _first(question)
    if question == "block":
        READY.touch()
        await anyio.sleep(600)
    return question + " answered"


def blocked_in_sync_code(question):
    _first(question)
    if question == "block":
        READY.touch()
        time.sleep(600)
    return question + " answered"


async def blocking_the_loop(question):
    _first(question)
    if question == "block":
        READY.touch()
        time.sleep(600)  # an async target that never yields: the event loop itself is stuck
    return question + " answered"
"""

ROWS = [{"input": f"alpha {i}"} for i in range(3)] + [{"input": "block"}, {"input": "late"}]


def _start(tmp_path: Path, target: str) -> subprocess.Popen[str]:
    (tmp_path / "slow_target.py").write_text(TARGET, encoding="utf-8")
    data = write_jsonl(tmp_path / "inputs.jsonl", ROWS)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LIVESCORE_"))}
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "livescore.cli",
            "eval",
            str(data),
            "--target",
            f"slow_target:{target}",
            "--concurrency",
            "1",
            "--out",
            str(tmp_path / "results.jsonl"),
            "--report",
            str(tmp_path / "report.html"),
            "--quiet",
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _interrupt(
    tmp_path: Path, target: str, *, presses: int = 1, between: float = 0.0
) -> tuple[subprocess.Popen[str], str, str]:
    process = _start(tmp_path, target)
    try:
        # Generous: a loaded 2-core machine can take a while to import and start.
        deadline = time.monotonic() + 50
        while not (tmp_path / "blocked").exists():
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the target never reached the blocking item"
            time.sleep(0.05)
        for press in range(presses):
            if press:
                time.sleep(between)
            process.send_signal(signal.SIGINT)
        # Before: with the target blocked, the process never exited (killed here at 40 s).
        stdout, stderr = process.communicate(timeout=40)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return process, stdout, stderr


def _assert_kept_what_was_scored(
    tmp_path: Path, process: subprocess.Popen[str], stdout: str, stderr: str
) -> None:
    assert process.returncode == 130, stderr
    assert "interrupted: 3 of 5 item(s) were scored" in stderr
    assert "Traceback" not in stderr
    records = [
        json.loads(line)
        for line in (tmp_path / "results.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert sorted(r["output"] for r in records) == [f"alpha {i} answered" for i in range(3)]
    assert all(r["scores"]["keyword-coverage"]["status"] == "scored" for r in records)
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "<title>[partial] livescore eval: inputs.jsonl</title>" in html
    assert "interrupted after 3 of 5 item(s)" in html
    assert html.count('<tr class="item"') == 3
    assert "report: " in stdout
    # The run lasted at least as long as the first item's 0.3 s (before: "in 0.0 s").
    found = re.search(r"3 item\(s\) in ([0-9.]+) s", stdout)
    assert found is not None, stdout
    assert float(found.group(1)) >= 0.3


def test_sigint_keeps_the_items_already_scored(tmp_path: Path) -> None:
    process, stdout, stderr = _interrupt(tmp_path, "awaiting")
    _assert_kept_what_was_scored(tmp_path, process, stdout, stderr)


def test_sigint_stops_a_target_blocked_in_synchronous_code(tmp_path: Path) -> None:
    # Before: the first Ctrl-C did nothing visible and the process waited for the target.
    process, stdout, stderr = _interrupt(tmp_path, "blocked_in_sync_code")
    _assert_kept_what_was_scored(tmp_path, process, stdout, stderr)


def test_sigint_stops_a_target_that_blocks_the_event_loop(tmp_path: Path) -> None:
    process, stdout, stderr = _interrupt(tmp_path, "blocking_the_loop")
    _assert_kept_what_was_scored(tmp_path, process, stdout, stderr)


@pytest.mark.parametrize("between", [0.0, 0.05, 0.3])
def test_a_second_sigint_soon_after_the_first_loses_nothing(tmp_path: Path, between: float) -> None:
    # Before: the second Ctrl-C landed while the outputs were written and lost --report.
    process, stdout, stderr = _interrupt(
        tmp_path, "blocked_in_sync_code", presses=2, between=between
    )
    _assert_kept_what_was_scored(tmp_path, process, stdout, stderr)
