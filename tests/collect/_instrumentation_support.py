"""Shared by the instrumentation tests (a real framework's spans, scored in process and by
``livescore collect``): one scripted weather run whose tool returns a fact with a unique
marker and whose answer uses it and adds one claim nothing backs, the hallucination judge's
script for it, and ``livescore collect`` started with that judge.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from livescore import Run
from livescore.scorers import create_hallucination_scorer, create_keyword_coverage_scorer
from livescore.testing import OpenAITestServer

MARKER = "station LY-7731"  # in the tool's result only: seen by the judge, the tool ran
QUESTION = "What is the weather in Lyon?"
TOOL_RESULT = f"sunny in Lyon, 24 °C ({MARKER})"
SUPPORTED = f"It is sunny and 24 °C in Lyon ({MARKER})."
UNSUPPORTED = "Lyon will host the 2031 Winter Olympics."  # nothing the tool said
ANSWER = f"The weather in Lyon: {SUPPORTED} {UNSUPPORTED}"


def weather(city: str) -> str:
    """The tool's body: the frameworks wrap it their own way."""
    return TOOL_RESULT.replace("Lyon", city)


def hallucination_replies() -> list[Any]:
    """What the judge answers for one three-step hallucination score: two claims, the
    second unsupported (score 0.5), the reason."""
    return [
        {"claims": [SUPPORTED, UNSUPPORTED]},
        {
            "verdicts": [
                {"statement": SUPPORTED, "verdict": "no", "reason": "the tool says so"},
                {"statement": UNSUPPORTED, "verdict": "yes", "reason": "no tool said so"},
            ]
        },
        "The score is 0.50 because the Olympics claim is not in the tool's result.",
    ]


def scorers(judge: OpenAITestServer) -> list[Any]:
    """The hallucination scorer judged by ``judge`` (its context is the run's own: the tool
    results), and keyword coverage of the question (no judge)."""
    return [create_hallucination_scorer(model=judge.judge()), create_keyword_coverage_scorer()]


def judge_requests_text(judge: OpenAITestServer) -> str:
    """Every message the judge was sent, as one text (what the assertions search)."""
    return "\n".join(
        str(message.get("content"))
        for request in judge.requests
        for message in request.get("messages", [])
    )


def assert_judged(judge: OpenAITestServer) -> None:
    """The judge saw the tool's result as context and the whole answer as the output."""
    sent = judge_requests_text(judge)
    assert MARKER in sent, sent[-2000:]  # the tool result reached the judge's context
    assert UNSUPPORTED in sent  # the answer was judged whole, the unsupported claim too
    assert sent.count(TOOL_RESULT) >= 1


def tool_results(run: Run) -> list[tuple[str, Any]]:
    """The run's tool steps as (name, result)."""
    return [(s.tool_call.name, s.tool_call.result) for s in run.steps if s.tool_call is not None]


COLLECT_SCORERS = """
import os
from livescore.judges import OpenAIJudge
from livescore.scorers import create_hallucination_scorer, create_keyword_coverage_scorer

judge = OpenAIJudge(
    "test-model", base_url=os.environ["LIVESCORE_TEST_JUDGE_URL"], api_key="test-key",
    timeout=5.0, backoff_base=0.01, circuit_failures=None,
)
scorers = [create_hallucination_scorer(model=judge), create_keyword_coverage_scorer()]
"""


def start_judged_collect(
    tmp_path: Path, judge: OpenAITestServer, backend_url: str
) -> tuple[subprocess.Popen[str], str]:
    """``livescore collect`` with the hallucination scorer judged by ``judge``, sending its
    score spans to ``backend_url``; returns the process and its base URL (stop it with
    ``_collect_process.stop``)."""
    (tmp_path / "judged_scorers.py").write_text(COLLECT_SCORERS, encoding="utf-8")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "livescore.cli",
            "collect",
            "judged_scorers:scorers",
            "--listen",
            "127.0.0.1:0",
            "--otlp-endpoint",
            backend_url,
            "--quiet-period",
            "0.5",
        ],
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "COLUMNS": "300", "LIVESCORE_TEST_JUDGE_URL": judge.base_url},
    )
    assert process.stderr is not None
    line = process.stderr.readline()
    found = re.search(r"on (http://127\.0\.0\.1:\d+)/v1/traces", line)
    assert found, line + process.stderr.read()
    return process, found.group(1)
