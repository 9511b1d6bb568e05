"""examples/keyword_coverage.py: the built-in agent, and a model on OpenAITestServer."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from _examples_support import example_path, load_example

from livescore.testing import OpenAITestServer, Reply

EXAMPLE = example_path("keyword_coverage")


def test_runs_as_a_script_with_the_built_in_agent() -> None:
    env = {k: v for k, v in os.environ.items() if k != "LIVESCORE_AGENT_MODEL"}
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)],
        capture_output=True,
        text=True,
        timeout=50,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "score:  1.00 (complete)\n    reason: Covered all 4 keywords of the input." in out
    assert (
        "score:  0.60 (partial)\n"
        "    reason: Covered 3 of 5 keywords of the input; missing: offers, type inference."
    ) in out
    assert (
        "score:  0.57 (partial)\n"
        "    reason: Covered 4 of 7 keywords of the input; missing: feature engineering, "
        "hyperparameter tuning, require."
    ) in out
    # (1 + 3/5 + 4/7) / 3 = 0.7238…
    assert out.rstrip().endswith("mean keyword coverage: 0.72 over 3 answers")


def test_answers_from_a_model_on_an_openai_compatible_server(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    module = load_example("keyword_coverage")
    answers = [
        "React and Vue are the JavaScript frameworks most teams pick.",
        "TypeScript offers interfaces and generics; type inference fills in the rest.",
        "Machine learning models need clean data.",
    ]
    with OpenAITestServer([Reply.text(a) for a in answers]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        code = module.main(["--agent-model", "openai/test-model"])
        requests = list(server.requests)

    out = capsys.readouterr().out
    assert code == 0
    assert [r["model"] for r in requests] == ["test-model"] * 3
    assert [r["messages"][-1] for r in requests] == [
        {"role": "user", "content": item["input"]} for item in module.DATA
    ]
    assert f"answer: {answers[0]}" in out
    assert "score:  1.00 (complete)" in out
    assert "score:  1.00 (complete)\n    reason: Covered all 5 keywords" in out
    # Only "machine learning", "models" and "data" of seven keywords.
    assert "score:  0.43 (partial)" in out
    assert "mean keyword coverage: 0.81 over 3 answers" in out


def test_agent_failure_is_reported(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    module = load_example("keyword_coverage")
    with OpenAITestServer([Reply.error(400, "bad request (scripted)")] * 3) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        code = module.main(["--agent-model", "test-model"])

    out = capsys.readouterr().out
    assert code == 1
    assert out.count("agent failed:") == 3
    assert "no scores" in out
