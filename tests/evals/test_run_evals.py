"""run_evals: targets, failures as values, order under concurrency, aggregates, spans."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from _evals_support import InMemoryTracing, context_echo_scorer, judged_scorer, length_scorer

from livescore import Run, Step, StepContext, ToolCall, create_scorer, extract_tool_results
from livescore.evals import ItemResult, run_evals, run_evals_sync
from livescore.evals._run_evals import get_item_context
from livescore.testing import ScriptedJudge

pytestmark = pytest.mark.anyio


# -- ready outputs --------------------------------------------------------------------------


async def test_ready_outputs_are_scored_in_data_order_with_aggregates() -> None:
    data = [
        {"input": "2+2?", "output": "4"},
        {"input": "Explain", "output": "x" * 40},
        {"input": "Hi", "output": "Hello", "id": "greeting", "ground_truth": "Hello"},
    ]
    result = await run_evals(data, [length_scorer()])

    assert [item.index for item in result.items] == [0, 1, 2]
    assert [item.output for item in result.items] == ["4", "x" * 40, "Hello"]
    assert result.items[2].id == "greeting"
    assert result.items[2].run is not None
    assert result.items[2].run.ground_truth == "Hello"
    agg = result.scores["short"]
    assert agg.mean == pytest.approx(2 / 3)
    assert (agg.count, agg.scored, agg.failed, agg.skipped) == (3, 3, 0, 0)
    assert (agg.min, agg.max) == (0.0, 1.0)
    assert agg.distribution.labels == {"long": 1, "short": 2}
    counts = [b.count for b in agg.distribution.bins]
    assert len(counts) == 10
    assert counts[0] == 1
    assert counts[-1] == 2
    assert sum(counts) == 3
    assert result.item_failures == []


async def test_item_context_reaches_get_item_context() -> None:
    seen: list[list[str] | None] = []
    data = [
        {"input": "q", "output": "a", "context": ["doc one", "doc two"]},
        {"input": "q", "output": "a", "context": "one doc"},
        {"input": "q", "output": "a"},
    ]
    result = await run_evals(data, [context_echo_scorer(seen)])

    assert seen == [["doc one", "doc two"], ["one doc"], []]
    assert result.items[0].run is not None
    assert result.items[0].run.metadata["context"] == ["doc one", "doc two"]
    assert [item.context for item in result.items] == [["doc one", "doc two"], ["one doc"], None]


def test_get_item_context_reads_run_metadata() -> None:
    assert get_item_context(Run(metadata={"context": "a"})) == ["a"]
    assert get_item_context(Run(metadata={"context": ["a", "b"]})) == ["a", "b"]
    assert get_item_context(Run()) is None


async def test_runs_are_accepted_as_items() -> None:
    run = Run(input="q", output="short", metadata={"context": ["c"]})
    result = await run_evals([run], [length_scorer()])
    assert result.scores["short"].mean == 1.0
    assert result.items[0].context == ["c"]


async def test_async_iterable_data() -> None:
    async def items() -> AsyncIterator[dict[str, Any]]:
        for i in range(3):
            yield {"input": f"q{i}", "output": "ok"}

    result = await run_evals(items(), [length_scorer()])
    assert [item.input for item in result.items] == ["q0", "q1", "q2"]


# -- callable targets -----------------------------------------------------------------------


async def test_sync_callable_target() -> None:
    result = await run_evals(
        [{"input": "hi"}, {"input": "a long question indeed"}],
        [length_scorer()],
        target=lambda q: q.upper(),
    )
    assert [item.output for item in result.items] == ["HI", "A LONG QUESTION INDEED"]
    assert result.scores["short"].mean == 0.5


async def test_async_callable_target_and_ready_output_is_ignored() -> None:
    async def answer(question: str) -> str:
        await anyio.lowlevel.checkpoint()
        return f"re: {question}"

    result = await run_evals(
        [{"input": "hi", "output": "ignored"}], [length_scorer()], target=answer
    )
    assert result.items[0].output == "re: hi"


async def test_target_returning_a_run_hands_over_its_steps() -> None:
    seen: list[list[str]] = []

    def tool_context(run: Run, step: Step | None) -> list[str]:
        found = [r.to_context() for r in extract_tool_results(run)]
        seen.append(found)
        return found

    scorer = create_scorer(
        id="evidence",
        description="counts tool results",
        generate_score=lambda ctx: float(len(ctx.context or ())),
        get_context=tool_context,
    )

    def agent(question: str) -> Run:
        call = ToolCall(name="lookup", call_id="c1", args={"q": question}, result="42")
        return Run(output="It is 42.", steps=[Step(kind="tool", tool_call=call)])

    result = await run_evals([{"input": "answer?", "ground_truth": "42"}], [scorer], target=agent)
    run = result.items[0].run
    assert run is not None
    assert (run.input, run.ground_truth) == ("answer?", "42")
    assert seen == [['{"tool": "lookup", "arguments": {"q": "answer?"}, "result": "42"}']]
    assert result.scores["evidence"].mean == 1.0


# -- failures are values ---------------------------------------------------------------------


async def test_failing_target_is_recorded_and_the_rest_is_scored() -> None:
    def flaky(question: str) -> str:
        if question == "boom":
            raise ConnectionError("agent backend down")
        return "ok"

    data = [{"input": "a"}, {"input": "boom"}, {"input": "c"}]
    result = await run_evals(data, [length_scorer()], target=flaky)

    failed = result.items[1]
    assert failed.error == "agent backend down"
    assert failed.error_type == "ConnectionError"
    assert failed.scores == {}
    assert not failed.ok
    assert [f.index for f in result.item_failures] == [1]
    assert result.item_failures[0].step == "target"
    assert result.scores["short"].scored == 2


async def test_failing_scorer_is_recorded_per_item_without_aborting() -> None:
    def picky(ctx: StepContext) -> float:
        if ctx.output_text == "bad":
            raise ValueError("cannot score this one")
        return 1.0

    scorer = create_scorer(id="picky", description="fails on 'bad'", generate_score=picky)
    data = [{"input": "q", "output": "good"}, {"input": "q", "output": "bad"}]
    result = await run_evals(data, [scorer, length_scorer()])

    agg = result.scores["picky"]
    assert (agg.scored, agg.failed, agg.mean) == (1, 1, 1.0)
    assert [(f.index, f.step, f.error_type) for f in agg.failures] == [
        (1, "generate_score", "ValueError")
    ]
    assert "cannot score this one" in agg.failures[0].error
    assert result.items[1].scores["picky"].status == "failed"
    assert result.items[1].scores["short"].status == "scored"  # the other scorer still ran
    assert result.item_failures == []


async def test_skipped_scores_are_counted_with_their_reason() -> None:
    from livescore import NotScorable

    def needs_context(ctx: StepContext) -> float:
        if not ctx.context:
            raise NotScorable("no context")
        return 0.0

    scorer = create_scorer(
        id="grounded",
        description="needs context",
        generate_score=needs_context,
        get_context=get_item_context,
    )
    result = await run_evals(
        [{"input": "q", "output": "a"}, {"input": "q", "output": "a", "context": ["c"]}], [scorer]
    )
    agg = result.scores["grounded"]
    assert (agg.scored, agg.skipped, agg.skip_reasons) == (1, 1, {"no context": 1})


async def test_malformed_items_are_recorded_not_raised() -> None:
    data: list[Any] = [
        {"input": "q", "output": "fine"},
        {"output": "no input"},
        {"input": "no output and no target"},
        "not a mapping",
        {"input": "q", "output": "x", "context": [1, 2]},
    ]
    result = await run_evals(data, [length_scorer()])

    errors = [item.error for item in result.items]
    assert errors[0] is None
    assert errors[1] == "the item has no 'input'"
    assert "no 'output'" in (errors[2] or "")
    assert "must be a mapping" in (errors[3] or "")
    assert "'context' must be a string or a list of strings" in (errors[4] or "")
    assert {item.error_type for item in result.items[1:]} == {"invalid_item"}
    assert len(result.item_failures) == 4
    assert result.scores["short"].scored == 1


async def test_unknown_keys_are_kept_as_metadata_with_one_warning_naming_them() -> None:
    # The same rule as `livescore eval`: raw data/hallucination lines (question, hallucinated)
    # are scored, not failed; one warning names every unknown key.
    data = [
        {"input": "q", "output": "a", "hallucinated": 1, "dataset": "halueval"},
        {"input": "q", "output": "b", "hallucinated": 0, "metadata": {"dataset": "mine"}},
        {"input": "q", "output": "c"},
    ]
    with pytest.warns(UserWarning, match="unknown item key") as caught:
        result = await run_evals(data, [length_scorer()])

    assert len(caught) == 1
    message = str(caught[0].message)
    assert "'hallucinated' (2 item(s))" in message
    assert "'dataset' (1 item(s))" in message
    assert result.item_failures == []
    assert result.scores["short"].scored == 3
    assert result.items[0].metadata == {"hallucinated": 1, "dataset": "halueval"}
    assert result.items[1].metadata == {"hallucinated": 0, "dataset": "mine"}  # its own wins


async def test_known_keys_only_raise_no_warning() -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = await run_evals([{"input": "q", "output": "a", "id": "x"}], [length_scorer()])
    assert result.items[0].metadata == {}


async def test_on_item_complete_sync_async_and_raising() -> None:
    seen: list[int] = []

    async def record(item: ItemResult) -> None:
        seen.append(item.index)

    result = await run_evals(
        [{"input": "q", "output": "a"}] * 3, [length_scorer()], on_item_complete=record
    )
    assert sorted(seen) == [0, 1, 2]
    assert all(item.callback_error is None for item in result.items)

    def broken(item: ItemResult) -> None:
        if item.index == 1:
            raise RuntimeError("progress bar crashed")

    result = await run_evals(
        [{"input": "q", "output": "a"}] * 3, [length_scorer()], on_item_complete=broken
    )
    assert [item.callback_error for item in result.items] == [
        None,
        "RuntimeError: progress bar crashed",
        None,
    ]
    assert result.scores["short"].scored == 3


# -- concurrency -------------------------------------------------------------------------


async def test_concurrency_overlaps_items_and_keeps_data_order() -> None:
    in_flight = 0
    peak = 0
    finished: list[int] = []

    async def slow_first(question: str) -> str:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        index = int(question)
        # Earlier items wait longer, so they finish last.
        await anyio.sleep(0.01 * (8 - index))
        in_flight -= 1
        finished.append(index)
        return f"answer {index}"

    data = [{"input": str(i)} for i in range(8)]
    result = await run_evals(data, [length_scorer()], target=slow_first, concurrency=3)

    assert peak == 3
    assert finished != sorted(finished)  # they did complete out of order…
    assert [item.output for item in result.items] == [f"answer {i}" for i in range(8)]  # …in order


async def test_concurrency_one_runs_items_one_at_a_time() -> None:
    in_flight = 0
    peak = 0

    async def target(question: str) -> str:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await anyio.sleep(0.001)
        in_flight -= 1
        return question

    await run_evals([{"input": str(i)} for i in range(4)], [length_scorer()], target=target)
    assert peak == 1


# -- judge usage -------------------------------------------------------------------------------


async def test_judge_usage_is_totalled() -> None:
    judge = ScriptedJudge([{"score": 0.2}, {"score": 0.8}], tokens_per_call=10)
    scorer = judged_scorer(judge)
    result = await run_evals([{"input": "q", "output": "a"}] * 2, [scorer])

    assert result.scores["judged"].mean == pytest.approx(0.5)
    assert result.usage.calls == 2
    assert result.usage.input_tokens == 20
    assert result.scores["judged"].usage.calls == 2


# -- tracing -------------------------------------------------------------------------------


async def test_each_score_is_an_event_parented_to_its_items_span() -> None:
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import (
        InMemoryLogRecordExporter,
        SimpleLogRecordProcessor,
    )

    tracing = InMemoryTracing.create()
    logs = InMemoryLogRecordExporter()
    logger_provider = LoggerProvider()
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    data = [{"input": "q", "output": "a"}, {"input": "q", "output": "b" * 30}]
    await run_evals(
        data, [length_scorer()], tracer_provider=tracing.provider, logger_provider=logger_provider
    )
    items = {s.context.span_id: s for s in tracing.spans() if s.name == "eval_item" and s.context}
    records = [r.log_record for r in logs.get_finished_logs()]
    assert len(records) == 2
    for record in records:
        assert record.event_name == "gen_ai.evaluation.result"
        assert record.span_id in items  # the item's span, not an evaluation span
        assert record.trace_id == items[record.span_id].context.trace_id  # type: ignore[union-attr]
        assert record.attributes["livescore.source"] == "eval"
    labels = sorted(r.attributes["gen_ai.evaluation.score.label"] for r in records)
    assert labels == ["long", "short"]

    logs.clear()
    await run_evals(
        data,
        [length_scorer()],
        tracer_provider=tracing.provider,
        logger_provider=logger_provider,
        emit="spans",
    )
    assert logs.get_finished_logs() == ()
    logger_provider.shutdown()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"emitter": "given", "emit": "events"}, "configure the emitter you pass"),
        ({"emitter": "given", "logger_provider": object()}, "configure the emitter you pass"),
        ({"broker": "redis://127.0.0.1:1/0", "emit": "events"}, "emitted on the workers"),
    ],
)
async def test_emit_options_that_cannot_apply_are_refused(
    kwargs: dict[str, Any], message: str
) -> None:
    from livescore.otel import OTelEmitter

    if kwargs.get("emitter") == "given":
        kwargs["emitter"] = OTelEmitter()
    with pytest.raises(ValueError, match=message):
        await run_evals([{"input": "q", "output": "a"}], [length_scorer()], **kwargs)


async def test_ready_outputs_become_eval_item_spans_with_evaluation_children() -> None:
    tracing = InMemoryTracing.create()
    data = [{"input": "q", "output": "a", "id": "item-a"}, {"input": "q", "output": "b"}]
    result = await run_evals(data, [length_scorer()], tracer_provider=tracing.provider)

    items = [s for s in tracing.spans() if s.name == "eval_item"]
    evaluations = tracing.spans("evaluation")
    assert len(items) == 2
    assert len(evaluations) == 2
    by_id = {s.context.span_id: s for s in items if s.context}
    for span in evaluations:
        attrs = span.attributes or {}
        assert span.parent is not None
        parent = by_id[span.parent.span_id]
        assert parent.context is not None
        assert span.context is not None
        assert span.context.trace_id == parent.context.trace_id
        assert attrs["livescore.source"] == "eval"
        assert attrs["gen_ai.evaluation.name"] == "short"
        assert attrs["gen_ai.evaluation.score.value"] == 1.0
    first = items[0].attributes or {}
    assert first["livescore.eval.item.index"] in (0, 1)
    ids = {(s.attributes or {}).get("livescore.eval.item.id") for s in items}
    assert ids == {"item-a", None}
    run = result.items[0].run
    assert run is not None
    assert run.trace_id is not None
    assert run.span_id is not None


async def test_callable_target_gets_an_invoke_agent_span_and_errors_mark_it() -> None:
    tracing = InMemoryTracing.create()

    def support_bot(question: str) -> str:
        if question == "boom":
            raise RuntimeError("no answer")
        return "fine"

    await run_evals(
        [{"input": "hi"}, {"input": "boom"}],
        [length_scorer()],
        target=support_bot,
        tracer_provider=tracing.provider,
    )
    agents = tracing.spans("invoke_agent")
    assert sorted(s.name for s in agents) == ["invoke_agent support_bot"] * 2
    failed = [s for s in agents if (s.attributes or {}).get("error.type") == "RuntimeError"]
    assert len(failed) == 1
    assert len(tracing.spans("evaluation")) == 1  # the failed item has nothing to score


def test_without_an_sdk_nothing_is_traced_and_runs_have_no_trace_ids() -> None:
    result = run_evals_sync([{"input": "q", "output": "a"}], [length_scorer()])
    run = result.items[0].run
    assert run is not None
    assert run.trace_id is None


# -- LangChain agent targets ------------------------------------------------------------------


def _weather_agent() -> Any:
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool

    from livescore_langchain.testing import ScriptedChatModel

    @tool
    def get_weather(city: str) -> dict[str, Any]:
        """Current weather for a city."""
        return {"city": city, "temp_c": 21, "sky": "sunny"}

    def call(city: str, call_id: str) -> AIMessage:
        return AIMessage(
            content="", tool_calls=[{"name": "get_weather", "args": {"city": city}, "id": call_id}]
        )

    model = ScriptedChatModel(
        responses=[
            call("Paris", "c1"),
            "It is 21°C and sunny in Paris.",
            call("Rome", "c2"),
            "It is 21°C and sunny in Rome.",
        ]
    )
    return create_agent(model, tools=[get_weather], name="weather-agent")


async def test_langchain_agent_target_tool_results_reach_get_context() -> None:
    tracing = InMemoryTracing.create()
    seen: list[list[str]] = []

    def tool_context(run: Run, step: Step | None) -> list[str]:
        found = [r.to_context() for r in extract_tool_results(run)]
        seen.append(found)
        return found

    grounded = create_scorer(
        id="evidence",
        description="how many tool results back the answer",
        generate_score=lambda ctx: float(len(ctx.context or ())),
        get_context=tool_context,
    )
    result = await run_evals(
        [
            {"input": "What is the weather in Paris?"},
            {"input": {"messages": [{"role": "user", "content": "And in Rome?"}]}},
        ],
        [grounded, length_scorer()],
        target=_weather_agent(),
        tracer_provider=tracing.provider,
    )

    assert result.item_failures == []
    assert len(seen) == 2
    # The tool's dict arrives as the ToolMessage's JSON text, as in live scoring.
    assert '"get_weather"' in seen[0][0]
    assert "Paris" in seen[0][0]
    assert "Rome" in seen[1][0]
    assert [item.output_text for item in result.items] == [
        "It is 21°C and sunny in Paris.",
        "It is 21°C and sunny in Rome.",
    ]
    assert result.items[0].input_text == "What is the weather in Paris?"
    run = result.items[0].run
    assert run is not None
    assert [s.tool_call.name for s in run.steps if s.tool_call] == ["get_weather"]
    assert result.scores["evidence"].mean == 1.0

    agents = tracing.spans("invoke_agent")
    assert len(agents) == 2
    agent_ids = {s.context.span_id for s in agents if s.context}
    evaluations = tracing.spans("evaluation")
    assert len(evaluations) == 4
    assert all(s.parent is not None and s.parent.span_id in agent_ids for s in evaluations)


async def test_get_run_context_is_the_agents_tool_results_or_the_items_context() -> None:
    # The documented default context of run_evals: no hand-written tool_results function.
    from livescore import get_run_context

    seen: list[list[str]] = []

    def record(ctx: StepContext) -> float:
        seen.append(list(ctx.context or ()))
        return 1.0

    scorer = create_scorer(
        id="ctx",
        description="records its context",
        generate_score=record,
        get_context=get_run_context,
    )
    await run_evals(
        [
            {"input": "What is the weather in Paris?"},
            {"input": "And in Rome?", "context": "Rome: 30°C, given by the dataset."},
        ],
        [scorer],
        target=_weather_agent(),
    )
    assert len(seen) == 2
    # The agent's own tool call, with its arguments and result.
    [paris] = seen[0]
    assert '"get_weather"' in paris
    assert "Paris" in paris
    assert seen[1] == ["Rome: 30°C, given by the dataset."]  # an item's context wins


async def test_a_framework_target_without_its_adapter_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from livescore.evals import _targets

    # No adapter registered (as when livescore-langchain is not installed).
    monkeypatch.setattr(_targets, "_discovered", [])
    agent = _weather_agent()
    with pytest.raises(
        TypeError, match=r'pip install -e "\.\[langchain\]" -e integrations/langchain'
    ):
        await run_evals([{"input": "q"}], [length_scorer()], target=agent)


def test_the_langchain_adapter_is_found_through_its_entry_point() -> None:
    from importlib.metadata import entry_points

    from livescore.evals import resolve_target
    from livescore.evals._targets import TARGETS_GROUP

    names = {ep.name for ep in entry_points(group=TARGETS_GROUP)}
    assert "langchain" in names
    target = resolve_target(_weather_agent())
    assert type(target).__module__ == "livescore_langchain._eval_target"
    assert target.name == "weather-agent"


async def test_scorer_failures_come_from_scorer_score_with_the_failed_step() -> None:
    # run_evals has no failure conversion of its own: an unreadable run fails in step
    # "input", exactly as Scorer.score (and live scoring) reports it.
    def explode(run: Run, step: Step | None) -> list[str]:
        raise RuntimeError("context store is down")

    scorer = create_scorer(
        id="ctx",
        description="needs context",
        generate_score=lambda ctx: 1.0,
        get_context=explode,
    )
    result = await run_evals([{"input": "q", "output": "a"}], [scorer])
    score = result.items[0].scores["ctx"]
    assert (score.status, score.failed_step, score.error_type) == (
        "failed",
        "get_context",
        "RuntimeError",
    )
    assert result.scores["ctx"].failures[0].step == "get_context"


async def test_an_emitter_receives_every_score() -> None:
    from livescore import ScoreResult

    class RecordingEmitter:
        """A test double for livescore.otel.Emitter that keeps what it is given."""

        def __init__(self) -> None:
            self.emitted: list[tuple[str, str, str]] = []
            self.sampled: list[str] = []

        def emit(self, run: Run, result: ScoreResult, **kwargs: Any) -> None:
            self.emitted.append((result.scorer_id, result.status, kwargs["source"]))

        def record_sampled(self, scorer_id: str, count: int = 1) -> None:
            self.sampled.append(scorer_id)

        def record_dropped(self, scorer_id: str, reason: str, count: int = 1) -> None:
            raise AssertionError("run_evals drops nothing")

    emitter = RecordingEmitter()
    await run_evals(
        [{"input": "q", "output": "a"}, {"input": "q", "output": "b"}],
        [length_scorer()],
        emitter=emitter,
    )
    assert emitter.emitted == [("short", "scored", "eval")] * 2
    assert emitter.sampled == ["short", "short"]
    with pytest.raises(ValueError, match="configure the emitter you pass"):
        await run_evals([], [length_scorer()], emitter=emitter, capture_content="none")


# -- argument errors ------------------------------------------------------------------------


async def test_bad_arguments_raise_clear_errors() -> None:
    with pytest.raises(ValueError, match="at least one scorer"):
        await run_evals([], [])
    with pytest.raises(ValueError, match="share the id 'short'"):
        await run_evals([], [length_scorer(), length_scorer()])
    with pytest.raises(ValueError, match="concurrency must be a positive integer"):
        await run_evals([], [length_scorer()], concurrency=0)
    with pytest.raises(TypeError, match="not a single mapping"):
        await run_evals({"input": "q", "output": "a"}, [length_scorer()])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="target must be a callable"):
        await run_evals([], [length_scorer()], target=42)
    with pytest.raises(TypeError, match="Scorer objects"):
        await run_evals([], ["short"])  # type: ignore[list-item]


async def test_sync_twin_refuses_to_run_inside_an_event_loop() -> None:
    with pytest.raises(RuntimeError, match="await run_evals"):
        run_evals_sync([{"input": "q", "output": "a"}], [length_scorer()])


def test_sync_twin_returns_the_same_result() -> None:
    result = run_evals_sync([{"input": "q", "output": "a"}], [length_scorer()], concurrency=2)
    assert result.scores["short"].mean == 1.0
    assert result.duration_s >= 0.0
    assert result.to_dict()["scores"]["short"]["scored"] == 1
