"""LiveScoringProcessor on real Agents SDK runs: the Run it builds and hands to the scorers.

Every agent here is a real ``agents.Agent`` run by the real ``Runner`` on the SDK's own
OpenAI model classes, which talk HTTP to an OpenAITestServer on 127.0.0.1 that scripts the
model's turns (a tool call, then the answer).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from _sdk_support import (
    ANSWER,
    QUESTION,
    WEATHER,
    Entry,
    ModelApi,
    Recorded,
    ScriptedModels,
    SpySink,
    recording_scorer,
    run_agent,
    weather_agent,
    weather_turns,
)
from agents import (
    Agent,
    GuardrailFunctionOutput,
    InputGuardrail,
    InputGuardrailTripwireTriggered,
    RunConfig,
    Runner,
    function_tool,
    trace,
)

from livescore import extract_tool_results, get_run_context
from livescore.live import LiveDispatcher
from livescore.runs import get_user_message
from livescore.testing import OpenAITestServer, Reply
from livescore_openai_agents import NO_CONTENT_REASON, LiveScoringProcessor

MakeProcessor = Callable[..., LiveScoringProcessor]

pytestmark = pytest.mark.anyio

APIS: list[ModelApi] = ["chat_completions", "responses"]
ENTRIES: list[Entry] = ["run", "run_sync", "run_streamed"]


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("entry", ENTRIES)
async def test_run_holds_input_output_steps_and_tool_results(
    make_processor: MakeProcessor,
    model_server: OpenAITestServer,
    models: ScriptedModels,
    api: ModelApi,
    entry: Entry,
) -> None:
    recorded = Recorded()
    processor = make_processor([recording_scorer(recorded)])
    model_server.enqueue(*weather_turns())

    answer = await run_agent(weather_agent(models, api), QUESTION, entry, models)

    assert await anyio.to_thread.run_sync(processor.flush, 10)
    assert answer == ANSWER
    (ctx,) = recorded.contexts
    run = ctx.run
    assert run.name == "weather-agent"
    assert run.input == [{"role": "user", "content": QUESTION}]
    assert get_user_message(run) == QUESTION
    assert (ctx.input_text, ctx.output_text) == (QUESTION, ANSWER)
    assert run.output == ANSWER
    assert run.error is None
    assert [(s.kind, s.name, s.index) for s in run.steps] == [
        ("model", "scripted-model", 0),
        ("tool", "get_weather", 1),
        ("model", "scripted-model", 2),
    ]
    first, tool_step, final = run.steps
    assert [(c.name, c.call_id, c.args) for c in first.tool_calls_requested] == [
        ("get_weather", "call_w1", {"city": "Paris"})
    ]
    assert tool_step.tool_call is not None
    assert tool_step.tool_call.call_id == "call_w1"
    assert tool_step.tool_call.args == {"city": "Paris"}
    assert tool_step.tool_call.result == WEATHER  # the tool's own return value
    assert final.output["content"] == ANSWER
    assert ctx.step is final
    (evidence,) = extract_tool_results(run)
    assert ctx.context == get_run_context(run) == [evidence.to_context()]
    assert json.loads(evidence.to_context()) == {
        "tool": "get_weather",
        "arguments": {"city": "Paris"},
        "result": WEATHER,
    }
    assert run.metadata["integration"] == "openai-agents"
    assert run.metadata["agents"] == ["weather-agent"]
    assert run.metadata["sdk_trace_id"].startswith("trace_")
    assert json.loads(json.dumps(run.to_dict()))["output"] == ANSWER  # a JSON-safe record
    assert processor.callback_errors == 0
    assert processor.open_runs == 0


@pytest.mark.parametrize("api", APIS)
async def test_a_handoff_run_is_one_run_across_both_agents(
    make_processor: MakeProcessor,
    model_server: OpenAITestServer,
    models: ScriptedModels,
    api: ModelApi,
) -> None:
    sink = SpySink()
    make_processor(dispatcher=sink)
    specialist = weather_agent(models, api)
    triage = Agent(
        name="triage",
        instructions="Hand weather questions to the weather agent.",
        handoffs=[specialist],
        model=models(api),
    )
    model_server.enqueue(
        Reply.tool_calls(("transfer_to_weather_agent", {}), ids=["call_h1"]),
        *weather_turns("call_w2"),
    )

    answer = await Runner.run(triage, QUESTION)

    assert answer.final_output == ANSWER
    (run,) = sink.runs
    assert run.name == "triage"  # the run's first agent
    assert run.metadata["agents"] == ["triage", "weather-agent"]
    assert run.metadata["handoffs"] == [{"from": "triage", "to": "weather-agent"}]
    assert run.output == ANSWER
    assert run.input == [{"role": "user", "content": QUESTION}]
    assert [(s.kind, s.name) for s in run.steps] == [
        ("model", "scripted-model"),
        ("model", "scripted-model"),
        ("tool", "get_weather"),
        ("model", "scripted-model"),
    ]
    assert [c.name for c in run.steps[0].tool_calls_requested] == ["transfer_to_weather_agent"]
    # The handoff is not evidence: only the weather tool's result is.
    assert [r.tool_name for r in extract_tool_results(run)] == ["get_weather"]
    assert sink.dropped == []


async def test_an_agent_called_as_a_tool_is_part_of_the_callers_run(
    make_processor: MakeProcessor, model_server: OpenAITestServer, models: ScriptedModels
) -> None:
    sink = SpySink()
    make_processor(dispatcher=sink)
    expert = weather_agent(models, name="weather-expert")
    host = Agent(
        name="host",
        instructions="Ask the weather expert, then answer.",
        tools=[expert.as_tool(tool_name="ask_expert", tool_description="Weather questions")],
        model=models(),
    )
    expert_answer = "Paris: 21°C, sunny."
    model_server.enqueue(
        Reply.tool_calls(("ask_expert", {"input": QUESTION}), ids=["call_x1"]),  # host
        Reply.tool_calls(("get_weather", {"city": "Paris"}), ids=["call_x2"]),  # expert
        Reply.text(expert_answer),  # expert answers the host
        Reply.text(ANSWER),  # host answers the user
    )

    result = await Runner.run(host, QUESTION)

    assert result.final_output == ANSWER
    (run,) = sink.runs  # one run: the nested Runner.run is a step of the host's run
    assert run.name == "host"
    assert run.output == ANSWER
    assert run.metadata["agents"] == ["host"]  # the run's own agents
    tools = [(r.tool_name, r.call_id, r.result) for r in extract_tool_results(run)]
    assert tools == [
        ("ask_expert", "call_x1", expert_answer),
        ("get_weather", "call_x2", WEATHER),
    ]
    assert run.steps[-1].output["content"] == ANSWER


async def test_two_runs_in_one_trace_are_two_runs(
    make_processor: MakeProcessor, model_server: OpenAITestServer, models: ScriptedModels
) -> None:
    sink = SpySink()
    make_processor(dispatcher=sink)
    agent = weather_agent(models)
    model_server.enqueue(*weather_turns("call_a"), Reply.text("Bring sunglasses."))

    with trace("Conversation", group_id="thread-7", metadata={"user": "u-1"}):
        await Runner.run(agent, QUESTION)
        await Runner.run(agent, "Anything to bring?")

    first, second = sink.runs
    assert (first.output, second.output) == (ANSWER, "Bring sunglasses.")
    assert second.input == [{"role": "user", "content": "Anything to bring?"}]
    assert first.run_id != second.run_id
    for run in (first, second):
        assert run.metadata["workflow_name"] == "Conversation"
        assert run.metadata["group_id"] == "thread-7"
        assert run.metadata["user"] == "u-1"


async def test_without_task_spans_the_trace_is_the_run(
    make_processor: MakeProcessor, model_server: OpenAITestServer, models: ScriptedModels
) -> None:
    sink = SpySink()
    make_processor(dispatcher=sink)
    model_server.enqueue(*weather_turns())
    config = RunConfig(tracing={"include_task_and_turn_spans": False})

    await Runner.run(weather_agent(models), QUESTION, run_config=config)

    (run,) = sink.runs
    assert run.output == ANSWER
    assert run.run_id == run.metadata["sdk_trace_id"]
    assert [s.kind for s in run.steps] == ["model", "tool", "model"]


async def test_a_tool_error_the_model_sees_is_recorded_and_not_evidence(
    make_processor: MakeProcessor, model_server: OpenAITestServer, models: ScriptedModels
) -> None:
    sink = SpySink()
    make_processor(dispatcher=sink)
    model_server.enqueue(
        Reply.tool_calls(("flaky_forecast", {"city": "Paris"}), ids=["call_f1"]),
        Reply.text("I could not get a forecast."),
    )

    await Runner.run(weather_agent(models), "Forecast for Paris?")

    (run,) = sink.runs
    tool_step = run.steps[1]
    assert tool_step.tool_call is not None
    assert tool_step.tool_call.error is not None
    assert "Error running tool" in tool_step.tool_call.error
    assert tool_step.tool_call.result is None
    assert extract_tool_results(run) == []
    assert run.error is None  # the run itself answered
    assert run.output == "I could not get a forecast."


async def test_an_agent_that_stops_at_a_tool_answers_with_its_result(
    make_processor: MakeProcessor, model_server: OpenAITestServer, models: ScriptedModels
) -> None:
    sink = SpySink()
    make_processor(dispatcher=sink)
    model_server.enqueue(Reply.tool_calls(("get_weather", {"city": "Paris"}), ids=["call_s1"]))
    agent = weather_agent(models, tool_use_behavior="stop_on_first_tool")

    result = await Runner.run(agent, QUESTION)

    assert result.final_output == str(WEATHER)  # the SDK turns the result into text
    (run,) = sink.runs
    assert run.output == result.final_output
    assert run.error is None


# -- failed runs ---------------------------------------------------------------------------


async def _fails(agent: Agent[Any], **kwargs: Any) -> None:
    with pytest.raises(Exception):  # noqa: B017, PT011 - each case raises its own kind
        await Runner.run(agent, QUESTION, **kwargs)


async def test_failed_runs_are_dropped_as_run_errors_and_scored_on_request(
    make_processor: MakeProcessor, model_server: OpenAITestServer, models: ScriptedModels
) -> None:
    sink = SpySink()
    make_processor(dispatcher=sink)
    agent = weather_agent(models)
    model_server.enqueue(Reply.server_error())  # the model call fails
    await _fails(agent)
    model_server.enqueue(Reply.tool_calls(("broken_forecast", {"city": "Paris"}), ids=["c_b"]))
    await _fails(agent)  # a tool raises out of the run
    model_server.enqueue(Reply.tool_calls(("get_weather", {"city": "Paris"}), ids=["c_m"]))
    await _fails(agent, max_turns=1)  # MaxTurnsExceeded
    model_server.enqueue(Reply.refusal("I can't share the weather."))
    await _fails(agent)  # the SDK raises ModelRefusalError: no answer
    model_server.enqueue(
        Reply.tool_calls(("get_weather", {"city": "Paris"}), ids=["same"]),
        Reply.tool_calls(("get_weather", {"city": "Rome"}), ids=["same"]),
    )
    await _fails(agent)  # a reused call id: ModelBehaviorError, marked on no span

    assert sink.submitted == []
    assert sink.reasons == ["run_error"] * 5

    scoring_sink = SpySink()
    make_processor(dispatcher=scoring_sink, score_failed_runs=True)
    model_server.enqueue(Reply.server_error())
    await _fails(agent)
    (run,) = scoring_sink.runs
    assert run.output is None
    assert run.error is not None
    assert "Error in agent run" in run.error
    assert "500" in run.error


async def test_a_cancelled_run_is_dropped_as_a_run_error(
    make_processor: MakeProcessor, model_server: OpenAITestServer, models: ScriptedModels
) -> None:
    sink = SpySink()
    processor = make_processor(dispatcher=sink)
    started = anyio.Event()

    @function_tool
    async def slow_lookup(city: str) -> str:
        """A lookup that takes its time."""
        started.set()
        await anyio.sleep(30)
        return "never"

    agent = weather_agent(models, tools=[slow_lookup])
    model_server.enqueue(Reply.tool_calls(("slow_lookup", {"city": "Paris"}), ids=["c_slow"]))

    async with anyio.create_task_group() as tg:
        tg.start_soon(Runner.run, agent, QUESTION)
        await started.wait()
        tg.cancel_scope.cancel()

    assert sink.submitted == []
    assert sink.reasons == ["run_error"]
    assert processor.open_runs == 0


# -- content the SDK did not record ------------------------------------------------------------


@pytest.mark.parametrize("api", APIS)
async def test_runs_traced_without_content_are_skipped_with_the_reason(
    make_processor: MakeProcessor,
    model_server: OpenAITestServer,
    models: ScriptedModels,
    api: ModelApi,
) -> None:
    recorded = Recorded()
    processor = make_processor([recording_scorer(recorded)])
    model_server.enqueue(*weather_turns())
    config = RunConfig(trace_include_sensitive_data=False)

    result = await Runner.run(weather_agent(models, api), QUESTION, run_config=config)

    assert await anyio.to_thread.run_sync(processor.flush, 10)
    assert result.final_output == ANSWER
    assert recorded.contexts == []  # the scorer never ran on empty text
    stats = processor.stats()
    assert (stats.sampled, stats.skipped, stats.scored) == (1, 1, 0)


async def test_a_no_content_run_carries_no_text_and_says_why(
    make_processor: MakeProcessor, model_server: OpenAITestServer, models: ScriptedModels
) -> None:
    sink = SpySink()
    make_processor(dispatcher=sink)
    model_server.enqueue(*weather_turns())

    await Runner.run(
        weather_agent(models),
        QUESTION,
        run_config=RunConfig(trace_include_sensitive_data=False),
    )

    (run,) = sink.runs
    assert run.metadata["not_scorable"] == NO_CONTENT_REASON
    assert (run.input, run.output) == ([], None)
    assert all(s.input is None and s.output is None for s in run.steps)


# -- sampling, guard, lifecycle --------------------------------------------------------------


async def test_an_unsampled_run_is_not_recorded(
    make_processor: MakeProcessor, model_server: OpenAITestServer, models: ScriptedModels
) -> None:
    sink = SpySink(sampled=False)
    make_processor(dispatcher=sink)
    model_server.enqueue(*weather_turns())

    await Runner.run(weather_agent(models), QUESTION)

    assert len(sink.keys) == 1  # decided once, at the run's start
    assert (sink.submitted, sink.dropped) == ([], [])


async def test_a_judge_that_is_an_agent_is_never_scored(
    make_processor: MakeProcessor, model_server: OpenAITestServer, models: ScriptedModels
) -> None:
    judge_agent = Agent(name="judge", instructions="Judge.", model=models())
    verdicts: list[str] = []

    async def judged(ctx: Any) -> float:
        result = await Runner.run(judge_agent, f"Is this polite? {ctx.output_text}")
        verdicts.append(str(result.final_output))
        return 1.0

    from livescore import create_scorer

    scorer = create_scorer(
        id="agent-judge", description="An SDK agent as judge", generate_score=judged
    )
    processor = make_processor([scorer])
    model_server.enqueue(*weather_turns(), Reply.text("polite"))

    await Runner.run(weather_agent(models), QUESTION)

    assert await anyio.to_thread.run_sync(processor.flush, 10)
    assert verdicts == ["polite"]
    stats = processor.stats()
    assert (stats.sampled, stats.scored) == (1, 1)  # the judge's own run was not sampled


async def test_runs_that_never_end_are_evicted_and_counted(
    make_processor: MakeProcessor, model_server: OpenAITestServer, models: ScriptedModels
) -> None:
    sink = SpySink()
    processor = make_processor(dispatcher=sink, max_open_runs=1)
    gate = anyio.Event()
    started = anyio.Event()

    @function_tool
    async def wait_for_gate(city: str) -> str:
        """Waits until the test opens the gate."""
        started.set()
        await gate.wait()
        return "late"

    slow = weather_agent(models, tools=[wait_for_gate], name="slow")
    fast = weather_agent(models, name="fast")
    # The server answers in arrival order: the slow run's call, then the fast run's turns.
    model_server.enqueue(
        Reply.tool_calls(("wait_for_gate", {"city": "Paris"}), ids=["c_g"]), *weather_turns()
    )

    async with anyio.create_task_group() as tg:
        tg.start_soon(Runner.run, slow, QUESTION)
        await started.wait()
        await Runner.run(fast, QUESTION)  # a second open run evicts the slow one
        model_server.enqueue(Reply.text("The slow answer."))
        gate.set()

    assert processor.evicted_runs == 1
    assert sink.reasons == ["evicted"]
    (run,) = sink.runs  # the fast run; the evicted one's end is ignored
    assert run.name == "fast"
    assert processor.open_runs == 0
    assert processor.callback_errors == 0


async def test_a_failing_sink_never_reaches_the_agent(
    make_processor: MakeProcessor, model_server: OpenAITestServer, models: ScriptedModels
) -> None:
    processor = make_processor(dispatcher=SpySink(fail_sample=True))
    model_server.enqueue(*weather_turns())

    result = await Runner.run(weather_agent(models), QUESTION)

    assert result.final_output == ANSWER
    assert processor.callback_errors >= 1


def test_force_flush_and_shutdown_follow_who_owns_the_dispatcher(
    make_processor: MakeProcessor,
) -> None:
    shared = SpySink()
    borrowing = make_processor(dispatcher=shared, register=False)
    borrowing.force_flush()
    borrowing.shutdown()
    assert (shared.flushes, shared.shutdowns) == (2, 0)  # its owner stops it

    owning = make_processor([recording_scorer(Recorded())], register=False)
    owning.shutdown(timeout=5)
    assert isinstance(owning.dispatcher, LiveDispatcher)
    assert owning.dispatcher.closed


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "either scorers"),
        ({"scorers": [], "dispatcher": SpySink()}, "either scorers"),
        ({"dispatcher": SpySink(), "emit_run_spans": "sometimes"}, "emit_run_spans"),
        ({"dispatcher": SpySink(), "max_open_runs": 0}, "max_open_runs"),
        ({"dispatcher": SpySink(), "open_run_ttl": 0}, "open_run_ttl"),
        ({"dispatcher": SpySink(), "name": ""}, "name"),
    ],
)
def test_bad_arguments_are_clear_errors(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        LiveScoringProcessor(**kwargs)


async def test_a_tripped_guardrail_is_a_run_error(
    make_processor: MakeProcessor, model_server: OpenAITestServer, models: ScriptedModels
) -> None:
    sink = SpySink()
    make_processor(dispatcher=sink)

    def refuse_everything(ctx: Any, agent: Any, given: Any) -> GuardrailFunctionOutput:
        return GuardrailFunctionOutput(output_info="off topic", tripwire_triggered=True)

    agent = weather_agent(
        models, input_guardrails=[InputGuardrail(guardrail_function=refuse_everything)]
    )
    model_server.enqueue(*weather_turns())  # the guardrail may run beside the first turn

    with pytest.raises(InputGuardrailTripwireTriggered):
        await Runner.run(agent, QUESTION)

    assert sink.submitted == []
    assert sink.reasons == ["run_error"]


async def test_a_streamed_run_cancelled_by_its_consumer_is_a_run_error(
    make_processor: MakeProcessor, model_server: OpenAITestServer, models: ScriptedModels
) -> None:
    sink = SpySink()
    processor = make_processor(dispatcher=sink)
    started = anyio.Event()

    @function_tool
    async def slow_lookup(city: str) -> str:
        """A lookup that takes its time."""
        started.set()
        await anyio.sleep(30)
        return "never"

    model_server.enqueue(Reply.tool_calls(("slow_lookup", {"city": "Paris"}), ids=["c_s"]))
    streamed = Runner.run_streamed(weather_agent(models, tools=[slow_lookup]), QUESTION)
    async with anyio.create_task_group() as tg:

        async def consume() -> None:
            async for _ in streamed.stream_events():
                pass

        tg.start_soon(consume)
        await started.wait()
        streamed.cancel()

    assert sink.submitted == []
    assert sink.reasons == ["run_error"]
    assert processor.open_runs == 0


async def test_concurrent_runs_are_recorded_apart(
    make_processor: MakeProcessor, model_server: OpenAITestServer, models: ScriptedModels
) -> None:
    sink = SpySink()
    make_processor(dispatcher=sink)
    cities = ["Paris", "Rome", "Oslo", "Lima", "Kyiv"]

    def per_city(body: dict[str, Any]) -> Reply:
        messages = body["messages"]
        city = next(c for c in cities if c in str(messages[1]["content"]))
        if messages[-1]["role"] != "tool":
            return Reply.tool_calls(("get_weather", {"city": city}), ids=[f"call_{city}"])
        return Reply.text(f"Sunny in {city}.")

    model_server.responder = per_city
    agent = weather_agent(models)
    async with anyio.create_task_group() as tg:
        for city in cities:
            tg.start_soon(Runner.run, agent, f"Weather in {city}?")

    assert len(sink.runs) == len(cities)
    for run in sink.runs:
        city = run.input[0]["content"].removeprefix("Weather in ").removesuffix("?")
        assert run.output == f"Sunny in {city}."
        (result,) = extract_tool_results(run)
        assert (result.call_id, result.args) == (f"call_{city}", {"city": city})
