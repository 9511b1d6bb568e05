"""The processor's scores as gen_ai.evaluation.result events, with the answering response's
id (Responses API) as ``gen_ai.response.id``."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import anyio
import pytest
from _sdk_support import (
    QUESTION,
    ModelApi,
    Recorded,
    ScriptedModels,
    hex_span_id,
    hex_trace_id,
    recording_scorer,
    run_agent,
    spans_named,
    weather_agent,
    weather_turns,
)
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from livescore.testing import OpenAITestServer
from livescore_openai_agents import LiveScoringProcessor

pytestmark = pytest.mark.anyio


@pytest.fixture
def logs() -> Iterator[tuple[LoggerProvider, InMemoryLogRecordExporter]]:
    exporter = InMemoryLogRecordExporter()
    provider = LoggerProvider()
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


@pytest.mark.parametrize("api", ["chat_completions", "responses"])
async def test_a_score_is_an_event_on_the_agent_span_naming_the_answering_response(
    make_processor: Callable[..., LiveScoringProcessor],
    model_server: OpenAITestServer,
    models: ScriptedModels,
    exporter: InMemorySpanExporter,
    logs: tuple[LoggerProvider, InMemoryLogRecordExporter],
    api: ModelApi,
) -> None:
    provider, log_exporter = logs
    recorded = Recorded()
    processor = make_processor([recording_scorer(recorded)], logger_provider=provider)
    model_server.enqueue(*weather_turns())

    await run_agent(weather_agent(models, api), QUESTION, "run", models)
    assert await anyio.to_thread.run_sync(processor.flush, 10)

    (ctx,) = recorded.contexts
    (agent,) = spans_named(exporter.get_finished_spans(), "invoke_agent")
    (record,) = [r.log_record for r in log_exporter.get_finished_logs()]
    assert record.event_name == "gen_ai.evaluation.result"
    assert format(record.trace_id, "032x") == hex_trace_id(agent)
    assert format(record.span_id, "016x") == hex_span_id(agent)
    if api == "responses":
        # The id of the response that gave the answer (the Responses API names each one).
        assert ctx.run.response_id is not None
        assert ctx.run.response_id.startswith("resp_")
        assert record.attributes["gen_ai.response.id"] == ctx.run.response_id
    else:  # Chat Completions generation spans carry no response id
        assert ctx.run.response_id is None
        assert "gen_ai.response.id" not in record.attributes
