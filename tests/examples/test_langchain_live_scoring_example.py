"""examples/langchain_live_scoring.py: live scoring of a create_agent agent, exported."""

from __future__ import annotations

import re
from typing import Any

import pytest
from _examples_support import load_example
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from otlp_receiver import OTLPTestReceiver

from livescore.testing import OpenAITestServer


@pytest.fixture(autouse=True)
def _no_models(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "LIVESCORE_JUDGE_MODEL",
        "LIVESCORE_AGENT_MODEL",
        "OPENAI_BASE_URL",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
    ):
        monkeypatch.delenv(name, raising=False)


def judge_double(body: dict[str, Any]) -> Any:
    """Claims are sentences; only the Saturday claim lacks a tool result behind it."""
    prompt = str(body["messages"][-1]["content"])
    if "<claims>" in prompt:
        claims = re.findall(r'<claim index="\d+">(.*?)</claim>', prompt, re.S)
        return {
            "verdicts": [
                {"statement": c, "verdict": "yes" if "Saturday" in c else "no", "reason": "r"}
                for c in claims
            ]
        }
    if "List the factual claims" in prompt:
        text = re.search(r"<output>\n(.*?)\n</output>", prompt, re.S)
        return {"claims": [s for s in re.split(r"(?<=\.)\s+", text.group(1) if text else "") if s]}
    return "The score is as it is because of the Saturday claim."


def test_scores_are_children_of_the_agent_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    exporter = InMemorySpanExporter()
    with OpenAITestServer(responder=judge_double) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        code = load_example("langchain_live_scoring").main(
            ["--model", "openai/test-judge"], exporter=exporter
        )
    spans = exporter.get_finished_spans()
    runs = {s.context.span_id: s for s in spans if s.name == "invoke_agent town-guide"}
    evaluations = [s for s in spans if s.name.startswith("evaluation ")]

    assert code == 0
    assert len(runs) == 3
    assert len(evaluations) == 6  # two scorers, three runs
    for span in evaluations:
        assert span.parent is not None
        assert span.parent.span_id in runs
        assert span.attributes is not None
        assert span.attributes["gen_ai.operation.name"] == "evaluation"
    values = sorted(
        span.attributes["gen_ai.evaluation.score.value"]  # type: ignore[index]
        for span in evaluations
        if span.attributes and span.attributes["gen_ai.evaluation.name"] == "hallucination"
    )
    assert values == [0.0, 0.0, 0.5]  # the library answer: one of two claims unsupported
    tool_spans = [s for s in spans if s.name.startswith("execute_tool ")]
    assert len(tool_spans) == 3


def test_exports_over_otlp_when_the_endpoint_is_set(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with OTLPTestReceiver() as receiver:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
        assert load_example("langchain_live_scoring").main([]) == 0
    names = [s.name for s in receiver.spans]
    assert names.count("invoke_agent town-guide") == 3
    assert names.count("evaluation keyword-coverage") == 3
    err = capsys.readouterr().err
    assert "only keyword coverage is scored" in err
    assert '"sampled": 3, "scored": 3' in err


@pytest.mark.parametrize("rate", ["2", "-0.5", "half"])
def test_a_rate_outside_0_to_1_is_a_usage_error(
    rate: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: a ValueError traceback from ScorerConfig.
    with pytest.raises(SystemExit) as exit_info:
        load_example("langchain_live_scoring").main(["--rate", rate])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "argument --rate" in err
    assert "Traceback" not in err
