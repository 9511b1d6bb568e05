"""The Vercel AI SDK (``ai`` 6, its own ``experimental_telemetry``) in Node.js, exported
over OTLP/HTTP JSON to ``livescore collect`` and scored there.

The agent (``node_ai_sdk/ai_sdk_agent.mjs``) is ``generateText`` with one tool and the
SDK's scripted ``MockLanguageModelV3``; its npm packages are installed once into
``.cache/node-ai-sdk`` (skipped, saying why, without node, npm or the registry).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _compat import record_compat
from _instrumentation_support import ANSWER, QUESTION, tool_results, weather
from _node_support import installed_versions, node_package, pinned_versions, scored_by_collect

CONVERSATION = "ai-sdk-conversation-1"


@pytest.fixture(scope="module")
def ai_sdk() -> Path:
    return node_package("ai_sdk")


@pytest.mark.timeout(900)  # the first run installs the npm packages
def test_an_ai_sdk_run_is_scored_by_collect_under_its_generate_text_span(
    ai_sdk: Path, tmp_path: Path
) -> None:
    assert installed_versions(ai_sdk) == pinned_versions(ai_sdk)
    got = scored_by_collect(ai_sdk, "ai_sdk_agent.mjs", tmp_path, CONVERSATION)
    assert got.answer == ANSWER

    run = got.assembled.run
    assert run.metadata["convention"] == "vercel_ai"
    assert run.metadata["span_name"] == "ai.generateText"  # the outer call is the run
    assert run.input == QUESTION  # ai.prompt's "prompt", not the system prompt beside it
    assert run.output == ANSWER
    assert tool_results(run) == [("get_weather", weather("Lyon"))]
    assert run.conversation_id == CONVERSATION  # ai.telemetry.metadata.sessionId
    assert run.name == "weather-agent"  # ai.telemetry.functionId
    models = [s for s in run.steps if s.kind == "model"]
    assert [s.name for s in models] == ["scripted", "scripted"]
    assert [c.name for c in models[0].tool_calls_requested] == ["get_weather"]
    assert models[1].output == ANSWER

    hallucination = got.scores["evaluation hallucination"]
    coverage = got.scores["evaluation keyword-coverage"]
    for score in (hallucination, coverage):
        assert score.trace_id == run.trace_id
        assert score.parent_span_id == run.span_id  # the ai.generateText span
    assert hallucination.attributes["gen_ai.evaluation.score.value"] == 0.5
    assert coverage.attributes["gen_ai.evaluation.score.value"] == 1.0

    pins = pinned_versions(ai_sdk)
    record_compat(
        "Vercel AI SDK (`ai`, experimental_telemetry)",
        pins["ai"],
        got.assembled,
        "`experimental_telemetry: { isEnabled: true }` on each call",
    )
