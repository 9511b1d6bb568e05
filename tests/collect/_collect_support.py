"""Shared by the span processor and receiver tests: a judged scorer whose judge sees the
run's context, and readers for the spans an in-memory exporter caught."""

from __future__ import annotations

from typing import Any

from opentelemetry.sdk.trace import ReadableSpan

from livescore.scorers import create_faithfulness_scorer
from livescore.testing import OpenAITestServer

CLAIM = "It is sunny in Lyon."


def faithfulness_replies(claim: str = CLAIM) -> list[Any]:
    """What the judge answers for one faithfulness score: claims, verdicts, the reason."""
    return [
        {"claims": [claim]},
        {"verdicts": [{"statement": claim, "verdict": "yes", "reason": "the tool says so"}]},
        "The score is 1 because the weather tool reports sun in Lyon.",
    ]


def faithfulness(server: OpenAITestServer) -> Any:
    """The faithfulness scorer, judged by ``server``; its context is the run's own."""
    return create_faithfulness_scorer(model=server.judge())


def eval_spans(spans: list[ReadableSpan]) -> list[ReadableSpan]:
    return [s for s in spans if (s.attributes or {}).get("gen_ai.operation.name") == "evaluation"]


def judge_saw(server: OpenAITestServer, text: str) -> bool:
    """Whether some judge request carried ``text`` (the run's context reached the judge)."""
    return any(
        text in str(message.get("content"))
        for request in server.requests
        for message in request.get("messages", [])
    )
