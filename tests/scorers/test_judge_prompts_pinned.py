"""What each judge scorer sends its judge, pinned: the system prompt, the prompt and the
answer schema of every request of each scorer's example (``JUDGE_CASES``), in both judge
modes, for its run and for its run with an injection attempt, as a SHA-256 per request.

A scorer rebuilt on other machinery (a :class:`~livescore.scorers.JudgeSpec`) must send the
same requests; a prompt changed on purpose is re-pinned with
``python tests/scorers/test_judge_prompts_pinned.py --write``, and the commit says why.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from _judge_support import Case, judge_cases, score_over_http

PINNED = Path(__file__).with_name("judge_prompts.sha256.json")


def _digest(request: dict[str, Any]) -> str:
    sent = {"messages": request["messages"], "response_format": request.get("response_format")}
    return hashlib.sha256(json.dumps(sent, sort_keys=True).encode("utf-8")).hexdigest()


async def _sent(case: Case, mode: str, which: str) -> list[str]:
    replies = case.step_replies if mode == "three_step" else [case.one_call_reply]
    run = case.run if which == "run" else case.injected_run
    _, requests = await score_over_http(lambda judge: case.build(judge, mode), replies, run)
    return [_digest(request) for request in requests]


SCENARIOS = [
    (name, mode, which)
    for name in sorted(judge_cases())
    for mode in ("three_step", "one_call")
    for which in ("run", "injected")
]


@pytest.mark.parametrize(("name", "mode", "which"), SCENARIOS, ids=["/".join(s) for s in SCENARIOS])
def test_each_judge_scorer_sends_its_pinned_requests(name: str, mode: str, which: str) -> None:
    pinned = json.loads(PINNED.read_text(encoding="utf-8"))
    sent = asyncio.run(_sent(judge_cases()[name], mode, which))
    assert sent == pinned[f"{name}/{mode}/{which}"]


def _write() -> None:
    found = {
        f"{name}/{mode}/{which}": asyncio.run(_sent(judge_cases()[name], mode, which))
        for name, mode, which in SCENARIOS
    }
    PINNED.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    sys.path.insert(0, str(Path(__file__).parent))
    _write()
