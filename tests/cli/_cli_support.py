"""Shared pieces of the CLI tests: a scripted judge responder and JSON-lines files."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    """One line per row: a dict as JSON, a string as it is (to write broken lines)."""
    path.write_text(
        "\n".join(row if isinstance(row, str) else json.dumps(row) for row in rows) + "\n",
        encoding="utf-8",
    )
    return path


def hallucination_responder(body: dict[str, Any]) -> Any:
    """Answers the hallucination scorer's three prompts like a careful judge would.

    Claims are the output's sentences; a claim is hallucinated when it contains "WRONG" or
    "drone" (the demo's unsupported claim); the reason names the score.
    """
    prompt = str(body["messages"][-1]["content"])
    if "<claims>" in prompt:
        claims = re.findall(r'<claim index="\d+">(.*?)</claim>', prompt, re.S)
        return {"verdicts": _verdicts(claims)}
    if "List the factual claims" in prompt:
        return {"claims": _claims(prompt)}
    if "list its claims, give one verdict per claim" in prompt:  # the one-call mode
        claims = _claims(prompt)
        return {"claims": claims, "verdicts": _verdicts(claims), "reason": "Counted."}
    start = re.search(r'Start with "(The score is [^"]+ because)"', prompt)
    opening = start.group(1) if start else "The score is unknown because"
    return f"{opening} the scripted judge counted the unsupported claims."


def _claims(prompt: str) -> list[str]:
    found = re.search(r"<output>\n(.*?)\n</output>", prompt, re.S)
    text = found.group(1) if found else ""
    return [s for s in re.split(r"(?<=\.)\s+", text) if s.strip()]


def _verdicts(claims: list[str]) -> list[dict[str, str]]:
    verdicts = []
    for claim in claims:
        bad = "WRONG" in claim or "drone" in claim.lower()
        verdicts.append(
            {
                "statement": claim,
                "verdict": "yes" if bad else "no",
                "reason": "the context does not say so" if bad else "the context states it",
            }
        )
    return verdicts
