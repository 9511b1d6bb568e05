"""``make demo-phoenix``: the demo scored into a real Arize Phoenix, left running to look at.

It starts Phoenix from ``.phoenix-venv`` (``make phoenix`` installs it there, out of the
project's environment) on 127.0.0.1, port 6006 when free, else a free one. Phoenix runs in a
network namespace of its own, as in the tests (its gRPC receiver binds every interface, with no
setting to change that; see ``tests/phoenix_server.py``), with a fresh database in a temporary
folder. It then runs ``livescore demo --phoenix URL`` into it with the arguments given (for
example ``--local-judge``, or ``--model openai/gpt-4o-mini`` with ``OPENAI_API_KEY`` set),
prints where the scores show as annotations on each run, and keeps Phoenix running until
Ctrl-C, then stops it (its database goes with it).

Usage: python docs/phoenix_demo.py [LIVESCORE DEMO OPTIONS...]
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
import urllib.error
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests")]

from phoenix_server import PhoenixServer, PhoenixUnavailable, get_json  # noqa: E402

PREFERRED_PORT = 6006  # Phoenix's own default: the URL a Phoenix user expects
RUN_SPAN = "invoke_agent parcelly-support"


def _free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _scored_runs(url: str, timeout: float = 30.0) -> tuple[list[dict[str, Any]], int]:
    """The demo's run spans and the annotations on them, once Phoenix has stored them (it
    inserts spans asynchronously)."""
    deadline = time.monotonic() + timeout
    while True:
        spans = get_json(f"{url}/v1/projects/default/spans?limit=1000")["data"]
        runs = [s for s in spans if s["name"] == RUN_SPAN]
        annotations: list[Any] = []
        if runs:
            query = "&".join(f"span_ids={s['context']['span_id']}" for s in runs)
            annotations = get_json(
                f"{url}/v1/projects/default/span_annotations?{query}&limit=1000"
            )["data"]
        if (runs and len({a["span_id"] for a in annotations}) == len(runs)) or (
            time.monotonic() > deadline
        ):
            return runs, len(annotations)
        time.sleep(0.25)


def main(demo_args: list[str]) -> int:
    # Ctrl-C ends the look even when this was started with SIGINT ignored (a background
    # job, nohup, some CI runners): Python installs no KeyboardInterrupt handler then.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        phoenix = PhoenixServer(port=PREFERRED_PORT if _free(PREFERRED_PORT) else 0)
    except PhoenixUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print("Starting Arize Phoenix (a minute on a busy machine)…", flush=True)
    try:
        phoenix.start()
    except PhoenixUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    looking = False  # Ctrl-C while the demo runs interrupts it; after, it ends the look
    try:
        print(f"Phoenix is up at {phoenix.url}; running the demo into it.", flush=True)
        command = [sys.executable, "-m", "livescore", "demo", "--phoenix", phoenix.url]
        code = subprocess.run([*command, *demo_args], check=False).returncode
        if code != 0:
            print(f"The demo exited with code {code}; stopping Phoenix.", flush=True)
            return code
        runs, annotated = _scored_runs(phoenix.url)
        if not runs:
            print("No run reached Phoenix; stopping it.", flush=True)
            return 1
        newest = max(runs, key=lambda s: s["start_time"])
        print(
            f"\nPhoenix has the demo's {len(runs)} runs with {annotated} scores as annotations "
            "on them (the badges on each run's span):\n"
            f"  the runs:     {phoenix.url}/projects (project 'default')\n"
            f"  one scored run: {phoenix.url}/redirects/traces/{newest['context']['trace_id']}\n"
            "Phoenix keeps running so you can look: press Ctrl-C to stop it.",
            flush=True,
        )
        looking = True
        while phoenix.running:  # until Ctrl-C, or Phoenix ends on its own
            time.sleep(1.0)
        print(f"error: Phoenix exited:\n{phoenix.log_tail(2000)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print()
        if not looking:
            return 130
    except (urllib.error.URLError, OSError, ValueError) as exc:
        print(
            f"error: Phoenix stopped answering ({exc}):\n{phoenix.log_tail(2000)}", file=sys.stderr
        )
        return 1
    finally:
        print("Stopping Phoenix…", flush=True)
        phoenix.stop()
        print("Phoenix stopped.", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
