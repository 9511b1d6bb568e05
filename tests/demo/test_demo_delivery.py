"""What the demo says and returns when its output does not arrive, or nothing ran: a dead
span endpoint, an agent failing every question, a misspelt runtime."""

from __future__ import annotations

import pytest
from _demo_support import recording_console, run_demo_cli

from livescore.testing import OpenAITestServer, Reply

QUESTION = "Which countries does Parcelly deliver to?"


def test_a_dead_span_endpoint_is_one_line_and_exit_1(
    refused_url: str, capfd: pytest.CaptureFixture[str]
) -> None:
    console, buffer = recording_console()
    code = run_demo_cli(["--question", QUESTION, "--otlp-endpoint", refused_url], console)
    out = buffer.getvalue()
    stderr = capfd.readouterr().err
    # Before: exit 0, "Spans were also sent to …", and the exporter's raw retry lines.
    assert code == 1, out
    assert "Spans were also sent" not in out
    lines = [line for line in out.splitlines() if "not delivered" in line]
    assert len(lines) == 2
    assert f"span(s) not delivered to {refused_url}/v1/traces (connection refused)" in lines[0]
    assert f"event(s) not delivered to {refused_url}/v1/logs (connection refused)" in lines[1]
    assert "Transient error" not in stderr + out


def test_an_agent_failing_every_question_exits_1(monkeypatch: pytest.MonkeyPatch) -> None:
    with OpenAITestServer(responder=lambda body: Reply.error(401, "invalid api key")) as model:
        monkeypatch.setenv("OPENAI_BASE_URL", model.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        console, buffer = recording_console()
        code = run_demo_cli(["--agent-model", "openai/agent", "--question", QUESTION], console)
    out = buffer.getvalue()
    # Before: exit 0 with nothing answered and nothing scored.
    assert code == 1, out
    assert "the agent failed" in out
    assert "The agent failed on every question (1)" in out


def test_a_misspelt_runtime_is_named_before_anything_else_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.util

    import livescore.demo._demo as demo

    real = importlib.util.find_spec

    def without_the_sdk(name: str, *args: object) -> object:
        return None if name.startswith("opentelemetry.sdk") else real(name, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(demo.importlib.util, "find_spec", without_the_sdk)
    console, buffer = recording_console()
    assert run_demo_cli(["--runtime", "bogus"], console) == 2
    out = buffer.getvalue()
    # Before: "the demo exports spans with the OpenTelemetry SDK: pip install …[sdk]".
    assert "bogus" in out
    assert "[sdk]" not in out
