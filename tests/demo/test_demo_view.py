"""The demo's trace view reads as English: one judge call is one call."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from livescore.demo._view import RunView, ScoreView, render_run


def _score(calls: int) -> ScoreView:
    return ScoreView(
        scorer="hallucination",
        status="scored",
        score=0.0,
        label="none",
        explanation="The score is 0 because every claim is supported.",
        error_type=None,
        skip_reason=None,
        judge_calls=calls,
        judge_tokens=120,
        claims_total=1,
        claims_hallucinated=0,
        span_id="00f067aa0ba902b7",
        parent_span_id="00f067aa0ba902b6",
    )


@pytest.mark.parametrize(("calls", "words"), [(1, "1 judge call,"), (3, "3 judge calls,")])
def test_judge_calls_are_counted_in_english(calls: int, words: str) -> None:
    view = RunView(
        name="invoke_agent parcelly-support",
        trace_id="4bf92f3577b34da6a3ce929d0e0e4736",
        span_id="00f067aa0ba902b6",
        scores=[_score(calls)],
    )
    buffer = io.StringIO()
    Console(file=buffer, width=200, no_color=True).print(render_run(1, view, "Q?", "A."))
    text = buffer.getvalue()
    assert words in text  # before: "1 judge calls"
    assert "1 judge calls" not in text
