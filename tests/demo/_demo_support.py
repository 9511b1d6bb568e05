"""Demo test support: a scripted judge double that finds the drone claim, a console to read."""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from typing import Any

from rich.console import Console


def demo_judge_responder(body: dict[str, Any]) -> Any:
    """Answers the hallucination scorer's prompts: the drone claim is the unsupported one."""
    prompt = str(body["messages"][-1]["content"])
    if "<claims>" in prompt:
        claims = re.findall(r'<claim index="\d+">(.*?)</claim>', prompt, re.S)
        return {
            "verdicts": [
                {
                    "statement": claim,
                    "verdict": "yes" if "drone" in claim.lower() else "no",
                    "reason": "no document mentions drones"
                    if "drone" in claim.lower()
                    else "the tool result states it",
                }
                for claim in claims
            ]
        }
    if "List the factual claims" in prompt:
        found = re.search(r"<output>\n(.*?)\n</output>", prompt, re.S)
        text = found.group(1) if found else ""
        return {"claims": [s for s in re.split(r"(?<=\.)\s+", text) if s.strip()]}
    start = re.search(r'Start with "(The score is [^"]+ because)"', prompt)
    opening = start.group(1) if start else "The score is unknown because"
    if 'hallucinated="yes"' in prompt:
        return f"{opening} the drone delivery claim is not in any tool result."
    return f"{opening} every claim is backed by the tool results."


def run_demo_cli(
    argv: list[str],
    console: Any,
    span_exporters: Sequence[Any] = (),
    local_judge_server: Any = None,
) -> int:
    """``livescore demo ARGV`` in process, printing to ``console``."""
    from livescore.cli._demo import run_demo_command
    from livescore.cli._main import build_parser

    args = build_parser().parse_args(["demo", *argv])
    try:
        return run_demo_command(
            args,
            console=console,
            span_exporters=span_exporters,
            local_judge_server=local_judge_server,
        )
    except Exception as exc:  # what main() turns into exit 2 (UsageError)
        from livescore.cli._common import UsageError

        if isinstance(exc, UsageError):
            console.print(f"error: {exc}")
            return 2
        raise


def recording_console() -> tuple[Console, io.StringIO]:
    """A wide, colourless console and the buffer it writes to."""
    buffer = io.StringIO()
    return Console(file=buffer, width=220, no_color=True, highlight=False), buffer
