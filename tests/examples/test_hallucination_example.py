"""examples/hallucination_static_context.py, run against OpenAITestServer with scripted replies."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from _examples_support import load_example

from livescore.testing import OpenAITestServer, ReplyLike

CLAIMS = [
    "Steve Jobs introduced the first iPhone at Macworld.",
    "The first iPhone was introduced on January 9, 2007.",
    "The first iPhone went on sale in June 2008.",
    "The first iPhone sold one million units in its first weekend.",
]
VERDICTS = [
    {"statement": CLAIMS[0], "verdict": "no", "reason": "The context says so."},
    {"statement": CLAIMS[1], "verdict": "no", "reason": "Same date in the context."},
    {"statement": CLAIMS[2], "verdict": "yes", "reason": "The context says June 29, 2007."},
    {"statement": CLAIMS[3], "verdict": "yes", "reason": "Sales are not in the context."},
]
REASON = "The score is 0.5 because the release date is wrong and the sales figure is unsupported."


@pytest.fixture
def judge_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAITestServer]:
    server = OpenAITestServer().start()
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("LIVESCORE_JUDGE_MODEL", "test-model")
    yield server
    server.close()


def test_example_three_steps(
    judge_env: OpenAITestServer, capsys: pytest.CaptureFixture[str]
) -> None:
    replies: list[ReplyLike] = [{"claims": CLAIMS}, {"verdicts": VERDICTS}, REASON]
    judge_env.enqueue(*replies)

    code = load_example("hallucination_static_context").main([])

    out = capsys.readouterr().out
    assert code == 0
    assert "score:  0.5 (mixed)" in out
    assert f"[HALLUCINATED] {CLAIMS[2]}" in out
    assert f"[supported] {CLAIMS[0]}" in out
    assert f"reason: {REASON}" in out
    assert "judge:  3 call(s)" in out
    assert len(judge_env.requests) == 3
    assert judge_env.requests[0]["model"] == "test-model"
    assert "June 29, 2007" in judge_env.requests[1]["messages"][1]["content"]


def test_example_one_call(judge_env: OpenAITestServer, capsys: pytest.CaptureFixture[str]) -> None:
    judge_env.enqueue({"claims": CLAIMS, "verdicts": VERDICTS, "reason": "Two claims are off."})

    code = load_example("hallucination_static_context").main(
        ["--judge-mode", "one_call", "--model", "openai/other-model"]
    )

    out = capsys.readouterr().out
    assert code == 0
    assert "score:  0.5 (mixed)" in out
    assert "judge:  1 call(s)" in out
    assert judge_env.requests[0]["model"] == "other-model"


def test_example_without_a_model_says_how_to_give_one(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("LIVESCORE_JUDGE_MODEL", raising=False)

    with pytest.raises(SystemExit) as exit_info:
        load_example("hallucination_static_context").main([])

    assert exit_info.value.code == 2
    assert "LIVESCORE_JUDGE_MODEL" in capsys.readouterr().err


def test_example_reports_a_failing_judge(
    judge_env: OpenAITestServer, capsys: pytest.CaptureFixture[str]
) -> None:
    judge_env.enqueue({"claims": CLAIMS}, "not json", "still not json")

    code = load_example("hallucination_static_context").main([])

    assert code == 1
    assert "scoring failed in step 'analyze' (invalid_response)" in capsys.readouterr().err
