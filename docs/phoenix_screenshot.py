"""Make docs/phoenix-annotations.png: a run scored live, as Arize Phoenix shows it.

``make screenshot`` runs this: it starts a real Phoenix (``.phoenix-venv``, in a network
namespace of its own; see ``tests/phoenix_server.py``), runs ``livescore demo --phoenix URL``
with the demo test's scripted judge standing in for a model (it flags the one unsupported
claim), and renders the trace page of the flagged run in headless Chromium. The badges on the
run's span ("hallucination μ 0.33", "keyword-coverage μ 0.66") are the span annotations
that ``livescore.sinks.PhoenixSink`` wrote.

Usage: python docs/phoenix_screenshot.py [OUTPUT.png]
"""

from __future__ import annotations

import io
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "demo")]

from _demo_support import demo_judge_responder, run_demo_cli  # noqa: E402
from phoenix_server import get_json, render_page, running_phoenix  # noqa: E402
from rich.console import Console  # noqa: E402

from livescore.testing import OpenAITestServer  # noqa: E402


def main(output: Path) -> int:
    for name in ("LIVESCORE_JUDGE_MODEL", "LIVESCORE_AGENT_MODEL", "OPENAI_API_KEY"):
        os.environ.pop(name, None)
    with running_phoenix() as phoenix:
        console = Console(file=io.StringIO(), width=200)
        with OpenAITestServer(responder=demo_judge_responder) as judge:
            os.environ["OPENAI_BASE_URL"] = judge.base_url
            code = run_demo_cli(["--model", "openai/test-judge", "--phoenix", phoenix], console)
        if code != 0:
            print(console.file.getvalue(), file=sys.stderr)  # type: ignore[attr-defined]
            return code
        deadline = time.monotonic() + 30
        flagged = []
        while not flagged and time.monotonic() < deadline:
            spans = get_json(f"{phoenix}/v1/projects/default/spans?limit=1000")["data"]
            flagged = [
                s
                for s in spans
                if s["name"] == "evaluation hallucination"
                and s["attributes"]["gen_ai.evaluation.score.value"] > 0
            ]
            time.sleep(0.25)
        if not flagged:
            print("no flagged run reached Phoenix", file=sys.stderr)
            return 1
        trace_id = flagged[-1]["context"]["trace_id"]
        with tempfile.TemporaryDirectory() as profile:
            render_page(
                f"{phoenix}/redirects/traces/{trace_id}",
                profile=Path(profile),
                screenshot=output.resolve(),
            )
    print(f"wrote {output}")
    return 0


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "phoenix-annotations.png"
    sys.exit(main(target))
