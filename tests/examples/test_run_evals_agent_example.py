"""examples/run_evals_agent.py: a create_agent agent evaluated with run_evals."""

from __future__ import annotations

from pathlib import Path

import pytest
from _examples_support import load_example

from livescore.testing import OpenAITestServer


@pytest.fixture(autouse=True)
def _no_models(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("LIVESCORE_JUDGE_MODEL", "LIVESCORE_AGENT_MODEL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def _judge(body: dict[str, object]) -> object:
    """Claims are sentences; only the airport claim is unsupported by the tool result."""
    import re

    prompt = str(body["messages"][-1]["content"])  # type: ignore[index]
    if "<claims>" in prompt:
        claims = re.findall(r'<claim index="\d+">(.*?)</claim>', prompt, re.S)
        return {
            "verdicts": [
                {"statement": c, "verdict": "yes" if "airport" in c else "no", "reason": "r"}
                for c in claims
            ]
        }
    if "List the factual claims" in prompt:
        text = re.search(r"<output>\n(.*?)\n</output>", prompt, re.S)
        return {"claims": re.split(r"(?<=\.)\s+", text.group(1) if text else "")}
    return "The score is what it is because the judge says so."


def test_without_a_judge_keyword_coverage_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert load_example("run_evals_agent").main([]) == 0
    out = capsys.readouterr().out
    assert "hallucination is not scored" in out
    assert "The rivers Rhône and Saône run through Lyon." in out
    assert out.count("keyword-coverage:") == 4  # three items and the summary
    assert "keyword-coverage: mean" in out


def test_with_a_judge_the_unsupported_claim_is_found(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    report = tmp_path / "report.html"
    with OpenAITestServer(responder=_judge) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        code = load_example("run_evals_agent").main(
            ["--model", "openai/test-judge", "--report", str(report)]
        )
        # Every claim extraction saw the city's tool result as context in the verdict call.
        verdict_prompts = [
            str(r["messages"][-1]["content"])
            for r in server.requests
            if "<claims>" in str(r["messages"][-1]["content"])
        ]
    out = capsys.readouterr().out

    assert code == 0
    assert len(verdict_prompts) == 3
    assert all('"tool": "city_facts"' in p for p in verdict_prompts)
    lyon = out.split("[lyon]")[1].split("[porto]")[0]
    assert "hallucination: 0.33 (low)" in lyon
    assert out.count("hallucination: 0.00 (none)") == 2
    assert "hallucination: mean 0.11, scored 3, failed 0" in out
    assert "airport" in report.read_text()
