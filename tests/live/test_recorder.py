"""record_run: a hand-written agent's run, recorded in a with block and scored live."""

from __future__ import annotations

import contextlib
import logging
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from livescore import Run, StepContext, create_scorer, get_run_context
from livescore.live import LiveDispatcher, RunRecorder, ScorerConfig, record_run
from livescore.otel import OTelEmitter, attributes

QUESTION = "What is the weather in Paris?"
WEATHER = {"city": "Paris", "temp_c": 21}
ANSWER = "It is 21°C in Paris."


class Telemetry:
    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()])

    def spans(self, prefix: str = "") -> list[ReadableSpan]:
        return [s for s in self.exporter.get_finished_spans() if s.name.startswith(prefix)]


@pytest.fixture
def telemetry() -> Iterator[Telemetry]:
    t = Telemetry()
    yield t
    t.tracer_provider.shutdown()
    t.meter_provider.shutdown()


class Recorded:
    def __init__(self) -> None:
        self.contexts: list[StepContext] = []
        self.lock = threading.Lock()

    def scorer(self, rate: float = 1.0) -> ScorerConfig:
        def generate_score(ctx: StepContext) -> float:
            with self.lock:
                self.contexts.append(ctx)
            return 1.0

        scorer = create_scorer(
            id="recorder",
            description="Keeps what it scores",
            get_context=get_run_context,
            generate_score=generate_score,
        )
        return ScorerConfig(scorer, sampling=rate)

    @property
    def runs(self) -> list[Run]:
        with self.lock:
            return [c.run for c in self.contexts]


@pytest.fixture
def recorded() -> Recorded:
    return Recorded()


@pytest.fixture
def dispatcher(telemetry: Telemetry, recorded: Recorded) -> Iterator[LiveDispatcher]:
    emitter = OTelEmitter(
        tracer_provider=telemetry.tracer_provider, meter_provider=telemetry.meter_provider
    )
    d = LiveDispatcher([recorded.scorer()], emitter=emitter, register_atexit=False)
    yield d
    d.shutdown(timeout=5)


def _parent(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def _span_id(span: ReadableSpan) -> int:
    assert span.context is not None
    return span.context.span_id


def test_records_the_run_and_scores_it_under_its_own_agent_span(
    dispatcher: LiveDispatcher, telemetry: Telemetry, recorded: Recorded
) -> None:
    tracer = telemetry.tracer_provider.get_tracer("app")
    with record_run(
        dispatcher,
        input=QUESTION,
        name="weather-agent",
        metadata={"user": "u-1"},
        tracer_provider=telemetry.tracer_provider,
    ) as run:
        with tracer.start_as_current_span("openai chat"):  # nests under the run's span
            pass
        run.model_turn([{"role": "user", "content": QUESTION}], {"role": "assistant"}, name="m")
        run.tool_call("get_weather", {"city": "Paris"}, WEATHER, call_id="c1")
        run.tool_call("get_forecast", {"city": "Paris"}, error=ValueError("service down"))
        run.retrieval("paris climate", ["Paris has a temperate climate."])
        run.output = ANSWER

    assert dispatcher.flush(timeout=10)
    (agent,) = telemetry.spans("invoke_agent")
    assert agent.name == "invoke_agent weather-agent"
    assert agent.status.status_code != StatusCode.ERROR
    (chat,) = telemetry.spans("openai chat")
    assert _parent(chat) == _span_id(agent)
    tools = telemetry.spans("execute_tool")
    assert [t.name for t in tools] == ["execute_tool get_weather", "execute_tool get_forecast"]
    assert all(_parent(t) == _span_id(agent) for t in tools)
    assert tools[1].status.status_code == StatusCode.ERROR
    (evaluation,) = telemetry.spans("evaluation")
    assert _parent(evaluation) == _span_id(agent)

    (ctx,) = recorded.contexts
    scored = ctx.run
    assert (scored.input, scored.output, scored.name) == (QUESTION, ANSWER, "weather-agent")
    assert scored.run_id == run.run_id
    assert scored.metadata == {"user": "u-1", "integration": "plain"}
    assert [(s.kind, s.name, s.index) for s in scored.steps] == [
        ("model", "m", 0),
        ("tool", "get_weather", 1),
        ("tool", "get_forecast", 2),
        ("retriever", "retriever", 3),
    ]
    weather, forecast = scored.steps[1], scored.steps[2]
    assert weather.tool_call is not None
    assert (weather.tool_call.call_id, weather.tool_call.result) == ("c1", WEATHER)
    assert weather.span_id == format(_span_id(tools[0]), "016x")
    assert forecast.tool_call is not None
    assert forecast.tool_call.error == "ValueError: service down"
    assert ctx.context == [
        '{"tool": "get_weather", "arguments": {"city": "Paris"}, '
        '"result": {"city": "Paris", "temp_c": 21}}',
        "Paris has a temperate climate.",
    ]


def test_a_span_current_at_the_start_represents_the_run(
    dispatcher: LiveDispatcher, telemetry: Telemetry, recorded: Recorded
) -> None:
    tracer = telemetry.tracer_provider.get_tracer("app")
    with (
        tracer.start_as_current_span("POST /ask") as request,
        record_run(dispatcher, input=QUESTION, tracer_provider=telemetry.tracer_provider) as run,
    ):
        run.tool_call("get_weather", {"city": "Paris"}, WEATHER)
        run.output = ANSWER

    assert dispatcher.flush(timeout=10)
    assert telemetry.spans("invoke_agent") == []
    assert telemetry.spans("execute_tool") == []
    (evaluation,) = telemetry.spans("evaluation")
    assert _parent(evaluation) == request.get_span_context().span_id
    (scored,) = recorded.runs
    assert scored.span_id == format(request.get_span_context().span_id, "016x")


def test_a_block_that_raises_is_a_dropped_run_error_and_the_exception_goes_on(
    dispatcher: LiveDispatcher, telemetry: Telemetry, recorded: Recorded
) -> None:
    with (
        pytest.raises(RuntimeError, match="model down"),
        record_run(dispatcher, input=QUESTION, tracer_provider=telemetry.tracer_provider),
    ):
        raise RuntimeError("model down")

    assert dispatcher.flush(timeout=10)
    assert recorded.contexts == []
    stats = dispatcher.stats()
    assert (stats.sampled, stats.dropped_by_reason) == (1, {"run_error": 1})
    (agent,) = telemetry.spans("invoke_agent")
    assert agent.status.status_code == StatusCode.ERROR
    assert (agent.attributes or {})[attributes.ERROR_TYPE] == "run_error"


def test_score_failed_runs_scores_them_with_the_error(
    telemetry: Telemetry, recorded: Recorded
) -> None:
    with LiveDispatcher([recorded.scorer()], register_atexit=False) as dispatcher:
        with (
            pytest.raises(ValueError, match="bad tool"),
            record_run(
                dispatcher,
                input=QUESTION,
                score_failed_runs=True,
                tracer_provider=telemetry.tracer_provider,
            ),
        ):
            raise ValueError("bad tool")
        assert dispatcher.flush(timeout=10)
    (scored,) = recorded.runs
    assert scored.error == "ValueError: bad tool"
    assert scored.output is None


def test_a_run_that_never_set_its_output_is_dropped_with_a_warning(
    dispatcher: LiveDispatcher, telemetry: Telemetry, caplog: pytest.LogCaptureFixture
) -> None:
    with (
        caplog.at_level(logging.WARNING, logger="livescore.live"),
        record_run(dispatcher, input=QUESTION, tracer_provider=telemetry.tracer_provider),
    ):
        pass

    assert dispatcher.flush(timeout=10)
    assert dispatcher.stats().dropped_by_reason == {"no_output": 1}
    assert "ended without an output" in caplog.text


def test_an_unsampled_run_records_nothing_but_keeps_its_span(telemetry: Telemetry) -> None:
    recorded = Recorded()
    with LiveDispatcher([recorded.scorer(rate=0.0)], register_atexit=False) as dispatcher:
        with record_run(
            dispatcher, input=QUESTION, tracer_provider=telemetry.tracer_provider
        ) as run:
            run.tool_call("get_weather", {"city": "Paris"}, WEATHER)
            run.output = ANSWER
        assert dispatcher.flush(timeout=10)
        assert not run.sampled
        assert dispatcher.stats().sampled == 0
    assert len(telemetry.spans("invoke_agent")) == 1
    assert len(telemetry.spans("execute_tool")) == 1
    assert recorded.contexts == []


def test_a_recorder_records_one_run(dispatcher: LiveDispatcher) -> None:
    recorder = record_run(dispatcher, input=QUESTION, emit_run_span="never")
    with recorder as run:
        run.output = ANSWER
    with pytest.raises(RuntimeError, match="one run"), recorder:
        pass
    with pytest.raises(ValueError, match="emit_run_span"):
        record_run(dispatcher, input=QUESTION, emit_run_span="sometimes")  # type: ignore[arg-type]


def test_a_broken_dispatcher_never_breaks_the_agent() -> None:
    class Broken:
        def sample(self, key: str | None, conversation_id: str | None = None) -> Any:
            raise RuntimeError("sampling exploded")

    with record_run(Broken(), input=QUESTION, emit_run_span="never") as run:  # type: ignore[arg-type]
        run.tool_call("get_weather", {"city": "Paris"}, WEATHER)
        run.output = ANSWER
    assert isinstance(run, RunRecorder)
    assert not run.sampled


def test_the_docs_block_runs_as_written() -> None:
    page = Path(__file__).resolve().parents[2] / "docs" / "live" / "plain-python.md"
    match = re.search(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S)
    assert match is not None
    check = (
        "\nstats = dispatcher.stats()\n"
        "assert (stats.sampled, stats.scored) == (1, 1), stats\n"
        "print('scored')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", match.group(1) + check],
        capture_output=True,
        text=True,
        timeout=50,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    # The block flushes before it prints the answer: the score line, printed from the
    # scoring thread, comes first and whole.
    assert done.stdout.splitlines() == [
        "keyword-coverage: score=0.5 label=partial reason=Covered 1 of 2 keywords of the input; "
        "missing: weather.",
        "It is 21°C and sunny in Paris.",
        "scored",
    ]


class _UnprintableError(Exception):
    """An exception whose message cannot be read: its ``__str__`` raises."""

    def __str__(self) -> str:
        raise RuntimeError("no message for you")


def _ending(run: RunRecorder, n: int) -> None:
    """Runs end three ways: answered, raising a plain error, raising an unprintable one."""
    if n % 3 == 1:
        raise ValueError("the model timed out")
    if n % 3 == 2:
        raise _UnprintableError
    run.output = ANSWER


def _recorder(dispatcher: LiveDispatcher, telemetry: Telemetry, n: int) -> RunRecorder:
    return record_run(
        dispatcher,
        input=QUESTION,
        name="weather",
        tracer_provider=telemetry.tracer_provider,
        score_failed_runs=n % 2 == 0,
    )


def _one_run(dispatcher: LiveDispatcher, telemetry: Telemetry, n: int) -> None:
    with (
        contextlib.suppress(ValueError, _UnprintableError),
        _recorder(dispatcher, telemetry, n) as run,
    ):
        run.tool_call("get_weather", {"city": "Paris"}, WEATHER, call_id=f"c{n}")
        _ending(run, n)


async def _one_run_in_a_task(dispatcher: LiveDispatcher, telemetry: Telemetry, n: int) -> None:
    import anyio.lowlevel

    with (
        contextlib.suppress(ValueError, _UnprintableError),
        _recorder(dispatcher, telemetry, n) as run,
    ):
        await anyio.lowlevel.checkpoint()  # the other tasks' blocks interleave with this one
        run.tool_call("get_weather", {"city": "Paris"}, WEATHER, call_id=f"c{n}")
        await anyio.lowlevel.checkpoint()
        _ending(run, n)


def test_every_run_is_counted_and_its_span_ended_whatever_its_exception(
    dispatcher: LiveDispatcher, telemetry: Telemetry
) -> None:
    import anyio

    tasks, threads, per_thread = 300, 8, 50

    async def in_tasks() -> None:
        async with anyio.create_task_group() as tg:
            for n in range(tasks):
                tg.start_soon(_one_run_in_a_task, dispatcher, telemetry, n)

    def in_a_thread(first: int) -> None:
        for n in range(first, first + per_thread):
            _one_run(dispatcher, telemetry, n)

    workers = [
        threading.Thread(target=in_a_thread, args=(tasks + t * per_thread,)) for t in range(threads)
    ]
    for worker in workers:
        worker.start()
    anyio.run(in_tasks)
    for worker in workers:
        worker.join(30)
    total = tasks + threads * per_thread
    assert dispatcher.flush(timeout=30)
    stats = dispatcher.stats()
    # Before: a run whose exception's str() raised was never counted (15 of 700 lost).
    assert stats.sampled == total
    assert stats.sampled == stats.scored + stats.failed + stats.skipped + stats.dropped
    # Every invoke_agent span ended (before: an unprintable exception left it open).
    agent_spans = telemetry.spans("invoke_agent")
    assert len(agent_spans) == total
    unprintable = [s for s in agent_spans if "could not be read" in (s.status.description or "")]
    assert len(unprintable) == len([n for n in range(total) if n % 3 == 2])
    assert all(s.status.status_code == StatusCode.ERROR for s in unprintable)
