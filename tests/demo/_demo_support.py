"""Test double for the demo: a scripted judge that finds the drone claim."""

from __future__ import annotations

import re
from typing import Any


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
