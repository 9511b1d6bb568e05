"""``livescore collect`` as a real process: its scorers module, start (on a free port) and
SIGTERM."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

SCORERS = '''
import time
from livescore import create_scorer, get_run_context

def grounded(ctx):
    """1 when the run's context (its tool results) backs the answer's word 'sunny'."""
    time.sleep(SLEEP)
    return float(any("sunny" in c for c in get_run_context(ctx.run)))

scorers = [
    create_scorer(id="grounded", description="the tool result backs it", generate_score=grounded)
]
'''


def start_collect(
    tmp_path: Path,
    *args: str,
    sleep: float = 0.0,
    env: dict[str, str] | None = None,
    stdout: Path | None = None,
    scorers: str = SCORERS,
) -> tuple[subprocess.Popen[str], str]:
    """Start ``livescore collect`` with ``scorers`` (the source of its ``collect_scorers``
    module; :data:`SCORERS` by default) and its stdout into ``stdout`` when given; returns
    the process and its URL."""
    (tmp_path / "collect_scorers.py").write_text(
        scorers.replace("SLEEP", str(sleep)), encoding="utf-8"
    )
    out = stdout.open("w", encoding="utf-8") if stdout is not None else subprocess.DEVNULL
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "livescore.cli",
            "collect",
            "collect_scorers:scorers",
            "--listen",
            "127.0.0.1:0",
            *args,
        ],
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        stdout=out,
        text=True,
        env={**os.environ, "COLUMNS": "300", **(env or {})},
    )
    if stdout is not None:
        out.close()  # the child holds its own descriptor
    assert process.stderr is not None
    line = process.stderr.readline()
    found = re.search(r"on (http://127\.0\.0\.1:\d+)/v1/traces", line)
    assert found, line + process.stderr.read()
    return process, found.group(1)


def stop(process: subprocess.Popen[str]) -> tuple[int, str]:
    process.send_signal(signal.SIGTERM)
    try:
        _, err = process.communicate(timeout=40)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    return process.returncode, err
