"""LiveScoringHandler on real create_agent agents: what it records and hands to the scorers."""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from _lc_support import (
    ANSWER,
    QUESTION,
    WEATHER,
    Recorded,
    SpySink,
    broken_forecast,
    flaky_forecast,
    get_weather,
    recording_scorer,
    tool_contexts,
    weather_agent,
    weather_call,
)
from langchain.agents import create_agent
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableConfig, RunnableLambda

from livescore import create_scorer, extract_tool_results
from livescore.live import LiveDispatcher, ScorerConfig
from livescore.runs import get_user_message
from livescore_langchain import LiveScoringHandler, step_run
from livescore_langchain.testing import ScriptedChatModel

MakeHandler = Callable[..., LiveScoringHandler]


def _texts(messages: list[Any]) -> list[tuple[str, Any, Any]]:
    return [
        (m.type, m.content, [c["args"] for c in getattr(m, "tool_calls", [])]) for m in messages
    ]


def test_run_holds_input_output_steps_and_tool_results(make_handler: MakeHandler) -> None:
    recorded = Recorded()
    handler = make_handler([recording_scorer(recorded)], name="weather-agent")

    result = weather_agent().invoke(QUESTION, config={"callbacks": [handler]})

    assert handler.flush(timeout=10)
    assert result["messages"][-1].content == ANSWER
    (ctx,) = recorded.contexts
    run = ctx.run
    assert run.name == "weather-agent"
    assert get_user_message(run) == "What is the weather in Paris?"
    assert ctx.input_text == "What is the weather in Paris?"
    assert ctx.output_text == ANSWER
    assert [m.content for m in run.output] == [m.content for m in result["messages"]]
    assert [(s.kind, s.name, s.index) for s in run.steps] == [
        ("model", "scripted-chat-model", 0),
        ("tool", "get_weather", 1),
        ("model", "scripted-chat-model", 2),
    ]
    first, tool_step, final = run.steps
    assert [c.name for c in first.tool_calls_requested] == ["get_weather"]
    assert first.tool_calls_requested[0].args == {"city": "Paris"}
    assert tool_step.tool_call is not None
    assert tool_step.tool_call.call_id == "call_1"
    assert tool_step.tool_call.args == {"city": "Paris"}
    # The result is the text the model saw: dict results arrive as JSON text.
    assert json.loads(tool_step.tool_call.result) == WEATHER
    assert final.output.content == ANSWER
    assert ctx.step is final
    (evidence,) = extract_tool_results(run)
    assert evidence.tool_name == "get_weather"
    assert ctx.context == [evidence.to_context()]
    assert run.error is None
    assert run.metadata["integration"] == "langchain"
    assert handler.open_runs == 0
    assert handler.callback_errors == 0


def test_agent_result_is_identical_with_and_without_the_handler(
    make_handler: MakeHandler,
) -> None:
    handler = make_handler([recording_scorer(Recorded())])

    plain = weather_agent().invoke(QUESTION)
    scored = weather_agent().invoke(QUESTION, config={"callbacks": [handler]})

    assert _texts(scored["messages"]) == _texts(plain["messages"])
    assert handler.flush(timeout=10)


def test_metadata_and_tags_of_the_root_are_recorded() -> None:
    sink = SpySink()
    handler = LiveScoringHandler(dispatcher=sink, emit_run_spans="never")

    weather_agent().invoke(
        QUESTION,
        config={"callbacks": [handler], "metadata": {"user_id": "u-7"}, "tags": ["beta"]},
    )

    (run,) = sink.runs
    assert run.metadata["user_id"] == "u-7"
    assert run.metadata["tags"] == ["beta"]


def test_agent_inside_another_runnable_is_one_root_run() -> None:
    sink = SpySink()
    handler = LiveScoringHandler(dispatcher=sink, emit_run_spans="never")
    agent = weather_agent()

    def ask(question: str, config: RunnableConfig) -> str:
        state = agent.invoke({"messages": [("user", question)]}, config=config)
        return str(state["messages"][-1].content)

    answer = RunnableLambda(ask).invoke("Weather in Paris?", config={"callbacks": [handler]})

    assert answer == ANSWER
    (run,) = sink.runs
    assert run.input == "Weather in Paris?"
    assert run.output == ANSWER
    assert [s.kind for s in run.steps] == ["model", "tool", "model"]
    assert len(sink.keys) == 1


def test_tuple_messages_in_the_input_become_messages() -> None:
    sink = SpySink()
    handler = LiveScoringHandler(dispatcher=sink, emit_run_spans="never")

    weather_agent().invoke({"messages": [("user", "Weather?")]}, config={"callbacks": [handler]})

    (run,) = sink.runs
    assert isinstance(run.input[0], HumanMessage)
    assert get_user_message(run) == "Weather?"


def test_sampling_rate_zero_records_nothing_and_scores_nothing(
    make_handler: MakeHandler,
) -> None:
    recorded = Recorded()
    handler = make_handler([ScorerConfig(recording_scorer(recorded), sampling=0.0)])

    result = weather_agent().invoke(QUESTION, config={"callbacks": [handler]})

    assert handler.flush(timeout=10)
    assert result["messages"][-1].content == ANSWER
    assert recorded.contexts == []
    stats = handler.stats()
    assert (stats.sampled, stats.scored, stats.dropped) == (0, 0, 0)
    assert handler.open_runs == 0


def test_an_unsampled_run_is_not_recorded_but_is_cleaned_up() -> None:
    sink = SpySink(sampled=False)
    handler = LiveScoringHandler(dispatcher=sink, emit_run_spans="never")

    weather_agent().invoke(QUESTION, config={"callbacks": [handler]})

    assert len(sink.keys) == 1
    assert sink.submitted == []
    assert sink.dropped == []
    assert handler.open_runs == 0
    assert handler._root_of == {}  # no child -> root entries left behind


def test_sampling_is_decided_from_the_run_id_without_any_span() -> None:
    sink = SpySink()
    handler = LiveScoringHandler(dispatcher=sink, emit_run_spans="never")
    run_id = uuid.uuid4()

    weather_agent().invoke(QUESTION, config={"callbacks": [handler], "run_id": run_id})

    assert sink.keys == [str(run_id)]
    (run,) = sink.runs
    assert run.run_id == str(run_id)
    assert run.trace_id is None


def test_sampling_rates_pick_the_same_runs_for_every_scorer(make_handler: MakeHandler) -> None:
    first, second = Recorded(), Recorded()
    handler = make_handler(
        [
            ScorerConfig(recording_scorer(first, "first"), sampling=0.5),
            ScorerConfig(recording_scorer(second, "second"), sampling=0.5),
        ]
    )

    for _ in range(40):
        weather_agent().invoke(QUESTION, config={"callbacks": [handler]})

    assert handler.flush(timeout=30)
    first_ids = {run.run_id for run in first.runs()}
    assert first_ids == {run.run_id for run in second.runs()}
    assert 0 < len(first_ids) < 40  # P(all or none of 40 at rate 0.5) is about 2e-12


def test_a_tool_that_reports_failure_is_an_error_not_evidence() -> None:
    sink = SpySink()
    handler = LiveScoringHandler(dispatcher=sink, emit_run_spans="never")
    model = ScriptedChatModel(
        responses=[weather_call("c1", "flaky_forecast"), weather_call("c2"), ANSWER]
    )
    agent = create_agent(model, tools=[get_weather, flaky_forecast])

    agent.invoke(QUESTION, config={"callbacks": [handler]})

    (run,) = sink.runs
    failed = run.steps[1]
    assert failed.kind == "tool"
    assert failed.tool_call is not None
    assert failed.tool_call.error == "no forecast for Paris"
    assert failed.tool_call.result is None
    assert not failed.tool_call.ok
    assert [r.tool_name for r in extract_tool_results(run)] == ["get_weather"]
    assert run.error is None


def test_a_raising_tool_ends_the_run_with_an_error_that_is_counted(
    make_handler: MakeHandler,
) -> None:
    recorded = Recorded()
    handler = make_handler([recording_scorer(recorded)])
    model = ScriptedChatModel(responses=[weather_call("c1", "broken_forecast"), ANSWER])
    agent = create_agent(model, tools=[broken_forecast])

    with pytest.raises(ValueError, match="forecast service down"):
        agent.invoke(QUESTION, config={"callbacks": [handler]})

    assert handler.flush(timeout=10)
    assert recorded.contexts == []
    stats = handler.stats()
    assert stats.dropped_by_reason == {"run_error": 1}
    assert handler.open_runs == 0


def test_failed_runs_are_scored_when_asked() -> None:
    sink = SpySink()
    handler = LiveScoringHandler(dispatcher=sink, emit_run_spans="never", score_failed_runs=True)
    model = ScriptedChatModel(responses=[weather_call("c1", "broken_forecast"), ANSWER])
    agent = create_agent(model, tools=[broken_forecast])

    with pytest.raises(ValueError, match="forecast service down"):
        agent.invoke(QUESTION, config={"callbacks": [handler]})

    (run,) = sink.runs
    assert run.error == "ValueError: forecast service down for Paris"
    assert run.output is None
    tool_step = run.steps[1]
    assert tool_step.tool_call is not None
    assert tool_step.tool_call.error == "ValueError: forecast service down for Paris"
    assert extract_tool_results(run) == []


def test_a_raising_model_ends_the_run_with_its_error() -> None:
    sink = SpySink()
    handler = LiveScoringHandler(dispatcher=sink, emit_run_spans="never", score_failed_runs=True)
    agent = create_agent(ScriptedChatModel(responses=[RuntimeError("model overloaded")]), tools=[])

    with pytest.raises(RuntimeError, match="model overloaded"):
        agent.invoke(QUESTION, config={"callbacks": [handler]})

    (run,) = sink.runs
    assert run.error == "RuntimeError: model overloaded"
    (step,) = run.steps
    assert step.error == "RuntimeError: model overloaded"
    assert handler.open_runs == 0


@pytest.mark.anyio
async def test_async_invoke_is_recorded(make_handler: MakeHandler) -> None:
    recorded = Recorded()
    handler = make_handler([recording_scorer(recorded)])

    result = await weather_agent().ainvoke(QUESTION, config={"callbacks": [handler]})

    assert result["messages"][-1].content == ANSWER
    assert await asyncio.to_thread(handler.flush, 10)
    (ctx,) = recorded.contexts
    assert ctx.output_text == ANSWER
    assert ctx.context is not None
    assert "Paris" in ctx.context[0]


@pytest.mark.anyio
async def test_async_stream_is_recorded() -> None:
    sink = SpySink()
    handler = LiveScoringHandler(dispatcher=sink, emit_run_spans="never")

    chunks = [
        chunk
        async for chunk in weather_agent().astream(
            QUESTION, config={"callbacks": [handler]}, stream_mode="messages"
        )
    ]

    assert chunks
    (run,) = sink.runs
    assert [s.kind for s in run.steps] == ["model", "tool", "model"]
    # Streamed turns arrive as chunks; the run holds plain messages scorers can read.
    assert run.steps[2].output.type == "ai"
    assert run.steps[0].tool_calls_requested[0].name == "get_weather"
    assert run.output[-1].content == ANSWER


def test_sync_stream_is_recorded() -> None:
    sink = SpySink()
    handler = LiveScoringHandler(dispatcher=sink, emit_run_spans="never")

    updates = list(weather_agent().stream(QUESTION, config={"callbacks": [handler]}))

    assert len(updates) == 3  # model, tools, model
    (run,) = sink.runs
    assert [s.kind for s in run.steps] == ["model", "tool", "model"]
    assert run.output[-1].content == ANSWER


def test_an_abandoned_stream_ends_the_run_as_failed() -> None:
    sink = SpySink()
    handler = LiveScoringHandler(dispatcher=sink, emit_run_spans="never")
    stream = weather_agent().stream(QUESTION, config={"callbacks": [handler]})

    next(stream)
    stream.close()

    assert sink.submitted == []
    assert [reason for _, reason in sink.dropped] == ["run_error"]
    assert handler.open_runs == 0


@pytest.mark.anyio
async def test_a_cancelled_run_ends_with_an_error() -> None:
    sink = SpySink()
    handler = LiveScoringHandler(dispatcher=sink, emit_run_spans="never", score_failed_runs=True)
    agent = weather_agent(delay=30.0)  # the first model call waits: cancel it there

    task = asyncio.ensure_future(agent.ainvoke(QUESTION, config={"callbacks": [handler]}))
    assert await asyncio.to_thread(sink.started.wait, 10)  # the run has started
    await asyncio.sleep(0.05)  # and is inside the model call
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    (run,) = sink.runs
    assert run.error == "CancelledError"
    assert handler.open_runs == 0


def test_runs_that_never_end_are_evicted_past_the_cap() -> None:
    sink = SpySink()
    handler = LiveScoringHandler(dispatcher=sink, emit_run_spans="never", max_open_runs=2)
    roots = [uuid.uuid4() for _ in range(3)]

    for root in roots:
        handler.on_chain_start({}, {"messages": []}, run_id=root, name="agent")
    evicted_child = uuid.uuid4()
    handler.on_chain_start({}, {}, run_id=evicted_child, parent_run_id=roots[0], name="model")

    assert handler.open_runs == 2
    assert handler.evicted_runs == 1
    assert [(d.key, reason) for d, reason in sink.dropped] == [(str(roots[0]), "evicted")]
    # A child of the evicted run is neither recorded nor mistaken for a new root.
    assert len(sink.keys) == 3
    handler.on_chain_end({}, run_id=evicted_child, parent_run_id=roots[0])
    handler.on_chain_end({"messages": []}, run_id=roots[0])
    assert sink.submitted == []
    handler.on_chain_end({"messages": []}, run_id=roots[2])
    assert [run.run_id for run in sink.runs] == [str(roots[2])]
    assert handler.open_runs == 1


def test_runs_older_than_the_ttl_are_evicted() -> None:
    sink = SpySink()
    handler = LiveScoringHandler(dispatcher=sink, emit_run_spans="never", open_run_ttl=0.01)
    stale, fresh = uuid.uuid4(), uuid.uuid4()

    handler.on_chain_start({}, {}, run_id=stale, name="agent")
    time.sleep(0.05)
    handler.on_chain_start({}, {}, run_id=fresh, name="agent")

    assert [(d.key, reason) for d, reason in sink.dropped] == [(str(stale), "evicted")]
    assert handler.open_runs == 1


def test_callbacks_never_raise_into_the_agent(caplog: pytest.LogCaptureFixture) -> None:
    sink = SpySink()
    handler = LiveScoringHandler(dispatcher=sink, emit_run_spans="never")
    root = uuid.uuid4()
    handler.on_chain_start({}, {"messages": []}, run_id=root, name="agent")
    model = uuid.uuid4()
    handler.on_chat_model_start({}, [[HumanMessage("hi")]], run_id=model, parent_run_id=root)

    with caplog.at_level(logging.DEBUG, logger="livescore_langchain"):
        handler.on_llm_end(None, run_id=model, parent_run_id=root)  # type: ignore[arg-type]
        handler.on_tool_start(42, "x", run_id=uuid.uuid4(), parent_run_id=root)  # type: ignore[arg-type]

    assert handler.callback_errors == 2
    # Each failure is logged once, naming the callback, with its traceback.
    failures = [r for r in caplog.records if r.name == "livescore_langchain"]
    assert [r.getMessage().split(" failed")[0] for r in failures] == [
        "livescore: on_llm_end",
        "livescore: on_tool_start",
    ]
    assert all(r.levelno == logging.DEBUG and r.exc_info for r in failures)
    handler.on_chain_end({"messages": []}, run_id=root)
    assert len(sink.runs) == 1


def test_an_interrupt_inside_a_callback_is_not_swallowed() -> None:
    # Only errors are the handler's to absorb: Ctrl-C must still stop the agent.
    class InterruptedSink(SpySink):
        def sample(self, key: str | None, conversation_id: str | None = None) -> Any:
            raise KeyboardInterrupt

    handler = LiveScoringHandler(dispatcher=InterruptedSink(), emit_run_spans="never")

    with pytest.raises(KeyboardInterrupt):
        handler.on_chain_start({}, {"messages": []}, run_id=uuid.uuid4(), name="agent")
    assert handler.callback_errors == 0


def test_message_dicts_in_the_input_are_kept_as_given() -> None:
    sink = SpySink()
    handler = LiveScoringHandler(dispatcher=sink, emit_run_spans="never")
    messages = [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "What is the weather in Paris?"},
    ]

    weather_agent().invoke({"messages": messages}, config={"callbacks": [handler]})

    (run,) = sink.runs
    assert run.input == messages  # recorded as the caller wrote them, not converted
    assert get_user_message(run) == "What is the weather in Paris?"


def test_a_model_called_on_its_own_is_a_run_of_one_turn() -> None:
    sink = SpySink()
    handler = LiveScoringHandler(dispatcher=sink, emit_run_spans="never")

    ScriptedChatModel(responses=["Bonjour"]).invoke("Say hello", config={"callbacks": [handler]})

    (run,) = sink.runs
    assert run.output.content == "Bonjour"
    assert [(s.kind, s.output.content) for s in run.steps] == [("model", "Bonjour")]
    assert get_user_message(run) == "Say hello"


def test_retrieved_documents_are_steps() -> None:
    class Shelf(BaseRetriever):
        def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
            return [Document(page_content=f"{query} is sunny"), Document(page_content="21°C")]

    sink = SpySink()
    handler = LiveScoringHandler(dispatcher=sink, emit_run_spans="never")
    chain = Shelf() | RunnableLambda(lambda docs: " ".join(d.page_content for d in docs))

    output = chain.invoke("Paris", config={"callbacks": [handler]})

    (run,) = sink.runs
    assert run.output == output == "Paris is sunny 21°C"
    (step,) = run.steps
    assert (step.kind, step.name, step.input) == ("retriever", "Shelf", "Paris")
    assert step.documents == ["Paris is sunny", "21°C"]


def _two_question_chain() -> Any:
    model = ScriptedChatModel(
        responses=[weather_call("c1"), "Sunny in Paris.", weather_call("c2"), "Still sunny."]
    )
    agent = create_agent(model, tools=[get_weather])

    def conversation(question: str, config: RunnableConfig) -> list[Any]:
        state = agent.invoke({"messages": [("user", question)]}, config=config)
        messages = [*state["messages"], HumanMessage("And tomorrow?")]
        return list(agent.invoke({"messages": messages}, config=config)["messages"])

    return RunnableLambda(conversation)


def test_per_step_scores_each_answering_turn_once(make_handler: MakeHandler) -> None:
    recorded = Recorded()
    handler = make_handler([recording_scorer(recorded)], per_step=True)

    _two_question_chain().invoke("Weather in Paris?", config={"callbacks": [handler]})

    assert handler.flush(timeout=10)
    contexts = sorted(recorded.contexts, key=lambda c: c.run.metadata["step_index"])
    assert [c.output_text for c in contexts] == ["Sunny in Paris.", "Still sunny."]
    assert [c.run.metadata["step_index"] for c in contexts] == [2, 5]
    first, second = contexts
    assert first.step is first.run.steps[-1]
    assert first.step is not None
    assert first.step.output.content == "Sunny in Paris."
    assert first.context is not None
    assert len(first.context) == 1  # only the evidence gathered up to that turn
    assert second.context is not None
    assert len(second.context) == 2
    assert first.run.metadata["root_run_id"] == second.run.metadata["root_run_id"]
    assert handler.stats().scored == 2


def test_run_level_scoring_scores_a_multi_turn_run_once(make_handler: MakeHandler) -> None:
    recorded = Recorded()
    handler = make_handler([recording_scorer(recorded)])

    _two_question_chain().invoke("Weather in Paris?", config={"callbacks": [handler]})

    assert handler.flush(timeout=10)
    (ctx,) = recorded.contexts
    assert ctx.output_text == "Still sunny."


def test_step_run_cuts_the_run_at_the_step() -> None:
    sink = SpySink()
    handler = LiveScoringHandler(dispatcher=sink, emit_run_spans="never")
    weather_agent().invoke(QUESTION, config={"callbacks": [handler]})
    (run,) = sink.runs

    cut = step_run(run, run.steps[2])

    assert cut.final_step is run.steps[2]
    assert cut.output.content == ANSWER
    assert cut.run_id == f"{run.run_id}:2"
    assert tool_contexts(cut, None) == tool_contexts(run, None)


def test_judge_model_calls_on_the_worker_are_ignored(make_handler: MakeHandler) -> None:
    judge_model = ScriptedChatModel(responses=["0.9"])

    def generate_score(ctx: Any) -> float:
        # A scorer whose judge is itself a LangChain model, traced by the same handler.
        reply = judge_model.invoke("Rate this answer", config={"callbacks": [handler]})
        return float(str(reply.content))

    scorer = create_scorer(id="lc-judge", description="d", generate_score=generate_score)
    handler = make_handler([scorer])

    weather_agent().invoke(QUESTION, config={"callbacks": [handler]})

    assert handler.flush(timeout=10)
    assert len(judge_model.calls) == 1
    stats = handler.stats()
    assert (stats.sampled, stats.scored) == (1, 1)  # the judge's call was not a run
    assert handler.open_runs == 0


def test_a_handler_told_not_to_ignore_scorer_calls_records_them(
    make_handler: MakeHandler,
) -> None:
    judge_model = ScriptedChatModel(responses=["0.9"])
    recorder_sink = SpySink()
    recorder = LiveScoringHandler(
        dispatcher=recorder_sink, emit_run_spans="never", ignore_scorer_calls=False
    )
    ignoring_sink = SpySink()
    ignoring = LiveScoringHandler(dispatcher=ignoring_sink, emit_run_spans="never")

    def generate_score(ctx: Any) -> float:
        reply = judge_model.invoke("Rate this answer", config={"callbacks": [recorder, ignoring]})
        return float(str(reply.content))

    scorer = create_scorer(id="lc-judge", description="d", generate_score=generate_score)
    handler = make_handler([scorer])

    weather_agent().invoke(QUESTION, config={"callbacks": [handler]})

    assert handler.flush(timeout=10)
    assert handler.stats().scored == 1
    (judge_run,) = recorder_sink.runs
    assert get_user_message(judge_run) == "Rate this answer"
    assert judge_run.output.content == "0.9"
    assert ignoring_sink.keys == []  # the default: not even a sampling decision


def test_handler_arguments_are_checked() -> None:
    scorer = recording_scorer(Recorded())
    with pytest.raises(ValueError, match="either scorers"):
        LiveScoringHandler()
    dispatcher = LiveDispatcher([scorer], register_atexit=False)
    with pytest.raises(ValueError, match="either scorers"):
        LiveScoringHandler([scorer], dispatcher=dispatcher)
    with pytest.raises(ValueError, match="emit_run_spans"):
        LiveScoringHandler(dispatcher=dispatcher, emit_run_spans="sometimes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_open_runs"):
        LiveScoringHandler(dispatcher=dispatcher, max_open_runs=0)
    with pytest.raises(ValueError, match="open_run_ttl"):
        LiveScoringHandler(dispatcher=dispatcher, open_run_ttl=0)
    dispatcher.shutdown()


def test_flush_shutdown_and_stats_delegate_to_the_dispatcher() -> None:
    recorded = Recorded()
    dispatcher = LiveDispatcher([recording_scorer(recorded)], register_atexit=False)
    handler = LiveScoringHandler(dispatcher=dispatcher, emit_run_spans="never")

    weather_agent().invoke(QUESTION, config={"callbacks": [handler]})

    assert handler.flush(timeout=10)
    assert handler.stats().scored == 1
    handler.shutdown(timeout=5)
    assert dispatcher.closed
    weather_agent().invoke(QUESTION, config={"callbacks": [handler]})
    assert handler.stats().dropped_by_reason == {"shutdown": 1}
    assert len(recorded.contexts) == 1


def test_a_message_list_as_output_reads_the_last_answer() -> None:
    sink = SpySink()
    handler = LiveScoringHandler(dispatcher=sink, emit_run_spans="never")
    chain = RunnableLambda(lambda q: [HumanMessage(q), AIMessage("Sunny.")])

    chain.invoke("Weather?", config={"callbacks": [handler]})

    (run,) = sink.runs
    assert run.output[-1].content == "Sunny."


def test_a_handler_nobody_holds_releases_its_dispatcher(
    tracer_provider: Any, meter_provider: Any
) -> None:
    # A handler per request, used once and dropped without shutdown(): before, each left
    # its dispatcher's three threads running for good (200 handlers, 601 threads).
    import gc
    import threading

    def dispatcher_threads() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name.startswith("livescore-langchain:")]

    before = len(dispatcher_threads())
    recorded = Recorded()
    for i in range(20):
        handler = LiveScoringHandler(
            [recording_scorer(recorded)],
            name=f"per-request-{i}",
            tracer_provider=tracer_provider,
            meter_provider=meter_provider,
        )
        weather_agent().invoke(QUESTION, config={"callbacks": [handler]})
        del handler
    gc.collect()
    deadline = time.monotonic() + 60
    while len(dispatcher_threads()) > before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(dispatcher_threads()) == before
    # What each was given was scored before it stopped.
    assert len(recorded.contexts) == 20


def test_a_handler_given_a_dispatcher_leaves_it_running_when_dropped(
    tracer_provider: Any, meter_provider: Any
) -> None:
    import gc

    recorded = Recorded()
    shared = LiveDispatcher([recording_scorer(recorded)], register_atexit=False)
    try:
        for _ in range(3):
            handler = LiveScoringHandler(dispatcher=shared, tracer_provider=tracer_provider)
            weather_agent().invoke(QUESTION, config={"callbacks": [handler]})
            del handler
            gc.collect()
        assert shared.flush(timeout=30)
        assert not shared.closed
        assert len(recorded.contexts) == 3
    finally:
        shared.shutdown(timeout=10)
