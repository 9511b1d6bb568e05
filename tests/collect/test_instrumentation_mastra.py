"""Mastra (``@mastra/core`` 1, ``@mastra/observability`` with ``@mastra/otel-exporter``)
in Node.js, exported over OTLP/HTTP JSON to ``livescore collect`` and scored there.

The agent (``node_mastra/mastra_agent.mjs``) has one tool, and for its model the AI SDK's
scripted ``MockLanguageModelV3``; its npm packages are installed once into
``.cache/node-mastra`` (skipped, saying why, without node, npm or the registry).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _compat import record_compat
from _instrumentation_support import ANSWER, QUESTION, tool_results, weather
from _node_support import installed_versions, node_package, pinned_versions, scored_by_collect

THREAD = "mastra-thread-1"


@pytest.fixture(scope="module")
def mastra() -> Path:
    return node_package("mastra")


@pytest.mark.timeout(900)  # the first run installs the npm packages
def test_a_mastra_run_is_scored_by_collect_under_its_invoke_agent_span(
    mastra: Path, tmp_path: Path
) -> None:
    assert installed_versions(mastra) == pinned_versions(mastra)
    got = scored_by_collect(mastra, "mastra_agent.mjs", tmp_path, THREAD)
    assert got.answer == ANSWER

    run = got.assembled.run
    assert run.metadata["convention"] == "mastra"
    assert run.metadata["span_name"] == "invoke_agent weather"
    assert run.input == QUESTION  # mastra.agent_run.input (no gen_ai.input.messages)
    assert run.output == ANSWER  # mastra.agent_run.output's "text"
    assert tool_results(run) == [("get_weather", weather("Lyon"))]
    assert run.conversation_id == THREAD  # the memory thread: gen_ai.conversation.id
    assert run.name == "weather"

    hallucination = got.scores["evaluation hallucination"]
    coverage = got.scores["evaluation keyword-coverage"]
    for score in (hallucination, coverage):
        assert score.trace_id == run.trace_id
        assert score.parent_span_id == run.span_id  # the invoke_agent span
    assert hallucination.attributes["gen_ai.evaluation.score.value"] == 0.5
    assert coverage.attributes["gen_ai.evaluation.score.value"] == 1.0

    pins = pinned_versions(mastra)
    record_compat(
        "Mastra (`@mastra/otel-exporter`)",
        f"{pins['@mastra/otel-exporter']} (@mastra/core {pins['@mastra/core']}, "
        f"@mastra/observability {pins['@mastra/observability']})",
        got.assembled,
        "an `Observability` config with an `OtelExporter`; a memory `thread` for the conversation",
    )
