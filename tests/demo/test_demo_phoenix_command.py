"""``make demo-phoenix`` (``docs/phoenix_demo.py``): a real Phoenix, the demo's scores on it.

The script is run as ``make demo-phoenix`` runs it, with the demo test's scripted judge
standing in for a model: it starts Phoenix from ``.phoenix-venv``, runs the demo into it,
prints where to look and keeps Phoenix up until Ctrl-C. Read back over Phoenix's REST API at
the printed URL, every run carries its scores as annotations; after Ctrl-C, Phoenix is gone.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
from pathlib import Path

import pytest
from _demo_support import demo_judge_responder
from phoenix_server import PhoenixUnavailable, _unshare_prefix, find_phoenix, get_json

from livescore.testing import OpenAITestServer

pytestmark = pytest.mark.phoenix

SCRIPT = Path(__file__).resolve().parents[2] / "docs" / "phoenix_demo.py"


def _phoenix_unavailable() -> str | None:
    if find_phoenix() is None:
        return "Phoenix is not installed: `make phoenix` installs it into .phoenix-venv"
    try:
        _unshare_prefix()
    except PhoenixUnavailable as exc:
        return str(exc)
    return None


def _lines(stream: object, into: queue.Queue[str]) -> None:
    for line in stream:  # type: ignore[attr-defined]
        into.put(line)
    into.put("")  # end of output


def test_demo_phoenix_leaves_the_scores_in_a_running_phoenix_until_ctrl_c() -> None:
    reason = _phoenix_unavailable()
    if reason:
        pytest.skip(reason)
    with OpenAITestServer(responder=demo_judge_responder) as judge:
        env = {**os.environ, "OPENAI_BASE_URL": judge.base_url, "PYTHONUNBUFFERED": "1"}
        with subprocess.Popen(
            [sys.executable, str(SCRIPT), "--model", "openai/test-judge"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            env=env,
        ) as process:
            lines: queue.Queue[str] = queue.Queue()
            threading.Thread(target=_lines, args=(process.stdout, lines), daemon=True).start()
            output: list[str] = []
            try:
                # Phoenix's cold start on a loaded 2-core machine, then the demo.
                deadline = time.monotonic() + 240
                while not any("press Ctrl-C to stop it" in line for line in output):
                    line = lines.get(timeout=max(deadline - time.monotonic(), 0.1))
                    assert line, "".join(output)  # the script ended before Phoenix was ready
                    output.append(line)
                text = "".join(output)
                found = re.search(
                    r"one scored run: (http://127\.0\.0\.1:\d+)/redirects/traces/", text
                )
                assert found, text
                url = found.group(1)
                assert "Phoenix has the demo's 5 runs with 10 scores as annotations" in text

                # The printed URL is a running Phoenix holding every score on its run's span.
                spans = get_json(f"{url}/v1/projects/default/spans?limit=1000")["data"]
                runs = {
                    s["context"]["span_id"]
                    for s in spans
                    if s["name"] == "invoke_agent parcelly-support"
                }
                assert len(runs) == 5
                query = "&".join(f"span_ids={span_id}" for span_id in runs)
                annotations = get_json(
                    f"{url}/v1/projects/default/span_annotations?{query}&limit=100"
                )["data"]
                assert {a["span_id"] for a in annotations} == runs
                assert sorted(a["name"] for a in annotations) == sorted(
                    ["hallucination", "keyword-coverage"] * 5
                )
                flagged = [
                    a
                    for a in annotations
                    if a["name"] == "hallucination" and a["result"]["score"] > 0
                ]
                assert len(flagged) == 1  # the drone claim
                time.sleep(1.0)  # still up a moment later: it waits for Ctrl-C
                assert get_json(f"{url}/v1/projects")["data"]

                process.send_signal(signal.SIGINT)
                # Phoenix gets ten seconds to stop before it is killed; the rest is a loaded
                # 2-core machine's slack.
                assert process.wait(timeout=120) == 0
            finally:
                if process.poll() is None:
                    process.kill()
                    process.wait()
            while (line := lines.get(timeout=10)) != "":
                output.append(line)
    assert "Phoenix stopped." in "".join(output)
    with pytest.raises((urllib.error.URLError, OSError)):
        get_json(f"{url}/v1/projects", timeout=2)
