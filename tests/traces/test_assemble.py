"""Runs from spans: both conventions, nesting, content-less spans, bounds and accounting."""

from __future__ import annotations

import json

import pytest
from _trace_support import assistant, genai_tool_run, memory_provider, otlp_json, user

from livescore.runs import NOT_SCORABLE_METADATA_KEY, get_run_context
from livescore.traces import (
    AssemblyLimits,
    SpanEvent,
    SpanRecord,
    TraceAssembler,
    decode_otlp_json,
    from_readable_span,
    runs_from_spans,
)

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


def span(
    span_id: str, parent: str | None, start: int, trace: str = TRACE, **attributes: object
) -> SpanRecord:
    return SpanRecord(
        trace,
        span_id.rjust(16, "0"),
        parent and parent.rjust(16, "0"),
        "s",
        start,
        start + 1,
        attributes,
    )


def test_a_genai_tool_run_becomes_one_run_with_its_tool_result_as_context() -> None:
    provider, exporter = memory_provider()
    genai_tool_run(provider, question="Weather in Lyon?", answer="Sunny in Lyon.")
    spans = [from_readable_span(s) for s in exporter.get_finished_spans()]
    runs = runs_from_spans([s for s in spans if s is not None])
    assert len(runs) == 1
    run = runs[0]
    assert run.input == [{"role": "user", "content": "Weather in Lyon?"}]
    assert run.output == "Sunny in Lyon."
    assert run.name == "weather"
    assert run.metadata["conversation_id"] == "conv-1"
    assert run.conversation_id == "conv-1"
    assert [s.kind for s in run.steps] == ["model", "tool", "model"]
    assert run.steps[0].tool_calls_requested[0].call_id == "c1"
    assert get_run_context(run) == [
        '{"tool": "get_weather", "arguments": {"city": "Lyon"}, "result": "sunny, 24 °C"}'
    ]
    root = next(s for s in exporter.get_finished_spans() if s.parent is None)
    assert run.span_id == format(root.context.span_id, "016x")
    assert run.trace_id == format(root.context.trace_id, "032x")


def test_the_response_id_is_the_run_spans_else_the_answering_model_calls() -> None:
    provider, exporter = memory_provider()
    genai_tool_run(provider, question="Weather in Lyon?", answer="Sunny in Lyon.")
    spans = [from_readable_span(s) for s in exporter.get_finished_spans()]
    (run,) = runs_from_spans([s for s in spans if s is not None])
    assert run.response_id == "chatcmpl-answers"  # not the turn that asked for the tool
    assert run.to_dict()["response_id"] == "chatcmpl-answers"  # it travels to a worker
    own = span(
        "a",
        None,
        0,
        **{
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.response.id": "resp_agent",
            "gen_ai.input.messages": user("q"),
            "gen_ai.output.messages": assistant("a"),
        },
    )
    answer = span(
        "b",
        "a",
        1,
        **{
            "gen_ai.operation.name": "chat",
            "gen_ai.response.id": "chatcmpl-b",
            "gen_ai.output.messages": assistant("a"),
        },
    )
    (run,) = runs_from_spans([own, answer])
    assert run.response_id == "resp_agent"
    (run,) = runs_from_spans(
        [
            span(
                "c",
                None,
                0,
                **{
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.input.messages": user("q"),
                    "gen_ai.output.messages": assistant("a"),
                },
            )
        ]
    )
    assert run.response_id is None


def test_the_otlp_json_form_gives_the_same_run() -> None:
    provider, exporter = memory_provider()
    genai_tool_run(provider, question="Weather in Lyon?", answer="Sunny in Lyon.")
    finished = exporter.get_finished_spans()
    direct = runs_from_spans([s for s in map(from_readable_span, finished) if s is not None])
    decoded = decode_otlp_json(json.dumps(otlp_json(finished)))
    assert decoded.rejected == 0
    # The SDK's OTLP encoder leaves the trace flags' random bit out: the rest is identical.
    got = [{**r.to_dict(), "trace_flags": 1} for r in runs_from_spans(decoded.spans)]
    assert got == [{**r.to_dict(), "trace_flags": 1} for r in direct]


def test_only_the_outermost_agent_span_is_a_run() -> None:
    spans = [
        span(
            "1",
            None,
            0,
            **{
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.input.messages": user("q"),
                "gen_ai.output.messages": assistant("a"),
            },
        ),
        span(
            "2",
            "1",
            1,
            **{"openinference.span.kind": "AGENT", "input.value": "inner", "output.value": "x"},
        ),
        span(
            "3",
            "2",
            2,
            **{
                "openinference.span.kind": "TOOL",
                "tool.name": "t",
                "input.value": "{}",
                "output.value": "r",
            },
        ),
    ]
    runs = runs_from_spans(spans)
    assert [r.span_id for r in runs] == ["0000000000000001"]
    assert [s.kind for s in runs[0].steps] == ["tool"]  # the inner agent's tool is the run's


def test_openinference_messages_documents_and_errors_are_read() -> None:
    spans = [
        span(
            "1",
            None,
            0,
            **{
                "openinference.span.kind": "AGENT",
                "input.value": json.dumps({"task": "Where is Lyon?"}),
                "output.value": "In France.",
                "session.id": "s-9",
            },
        ),
        span(
            "2",
            "1",
            1,
            **{
                "openinference.span.kind": "RETRIEVER",
                "input.value": "Lyon",
                "retrieval.documents.0.document.content": "Lyon is a city in France.",
                "retrieval.documents.1.document.content": "Lyon has 500k people.",
            },
        ),
        span(
            "3",
            "1",
            2,
            **{
                "openinference.span.kind": "LLM",
                "llm.model_name": "m",
                "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.content": "Where is Lyon?",
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.content": "In France.",
            },
        ),
    ]
    failing = SpanRecord(
        TRACE,
        "0000000000000004",
        "0000000000000001",
        "tool",
        3,
        4,
        {"openinference.span.kind": "TOOL", "tool.name": "maps"},
        (SpanEvent("exception", {"exception.type": "TimeoutError", "exception.message": "slow"}),),
        error="",
    )
    run = runs_from_spans([*spans, failing])[0]
    assert run.input == "Where is Lyon?"
    assert run.output == "In France."
    assert run.metadata["conversation_id"] == "s-9"
    assert run.conversation_id == "s-9"
    assert [s.kind for s in run.steps] == ["retriever", "model", "tool"]
    assert run.steps[0].documents == ["Lyon is a city in France.", "Lyon has 500k people."]
    assert run.steps[2].error == "TimeoutError: slow"
    assert get_run_context(run) == ["Lyon is a city in France.", "Lyon has 500k people."]


def test_a_trace_without_an_agent_span_is_a_run_when_its_root_has_input_and_output() -> None:
    chat = span(
        "1",
        None,
        0,
        **{
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": user("Hi"),
            "gen_ai.output.messages": assistant("Hello"),
        },
    )
    assert [r.output for r in runs_from_spans([chat])] == ["Hello"]
    bare = span("2", None, 0, trace="1" * 32, **{"http.method": "GET"})
    assert runs_from_spans([bare]) == []


def test_content_less_spans_give_a_run_that_says_why_it_cannot_be_scored() -> None:
    spans = [
        span("1", None, 0, **{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a"}),
        span(
            "2",
            "1",
            1,
            **{
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": '[{"role": "user", "parts": [{"type": "text"}]}]',
            },
        ),
        span("3", "1", 2, **{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t"}),
    ]
    run = runs_from_spans(spans)[0]
    reason = run.metadata[NOT_SCORABLE_METADATA_KEY]
    assert "no input or output" in reason
    assert "content" in reason


def test_the_earlier_event_form_of_the_genai_conventions_is_read() -> None:
    root = SpanRecord(
        TRACE,
        "0000000000000001",
        None,
        "invoke_agent",
        0,
        1,
        {"gen_ai.operation.name": "invoke_agent"},
        (
            SpanEvent("gen_ai.user.message", {"content": "What is 2+2?"}),
            SpanEvent("gen_ai.choice", {"message": json.dumps({"content": [{"text": "4"}]})}),
        ),
    )
    run = runs_from_spans([root])[0]
    assert run.input == [{"role": "user", "content": "What is 2+2?"}]
    assert run.output == "4"


def genai_root(span_id: str, trace: str) -> SpanRecord:
    return span(
        span_id,
        None,
        5,
        trace=trace,
        **{
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.input.messages": user("q"),
            "gen_ai.output.messages": assistant("a"),
        },
    )


def test_out_of_order_spans_are_assembled_when_the_trace_goes_quiet() -> None:
    assembler = TraceAssembler(AssemblyLimits(quiet_period=2.0))
    tool = span(
        "2",
        "1",
        1,
        **{
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "t",
            "gen_ai.tool.call.result": "r",
        },
    )
    assert assembler.add([genai_root("1", TRACE)], now=0.0) == []  # the run span first
    assert assembler.add([tool], now=1.0) == []  # its child later, in another request
    assert assembler.collect(now=2.5) == []  # quiet for 1.5 s only
    runs = assembler.collect(now=3.0)
    assert [[s.kind for s in r.steps] for r in runs] == [["tool"]]
    late = span("3", "1", 2, **{"gen_ai.operation.name": "chat"})
    assert assembler.add([late], now=4.0) == []
    stats = assembler.stats()
    assert stats.spans_dropped == {"late": 1}
    assert stats.spans_received == stats.spans_finished + 1


@pytest.mark.parametrize(
    ("limits", "reason"),
    [
        (AssemblyLimits(max_traces=2), "max_traces"),
        (AssemblyLimits(max_spans_per_trace=1), "max_spans_per_trace"),
        (AssemblyLimits(max_bytes=1500), "max_bytes"),
    ],
)
def test_bounds_evict_traces_and_every_span_is_accounted_for(
    limits: AssemblyLimits, reason: str
) -> None:
    evicted: list[tuple[str, str, bool]] = []
    assembler = TraceAssembler(limits, on_evict=lambda *args: evicted.append(args))
    for n in range(5):
        trace = f"{n + 1:032x}"
        assembler.add(
            [
                genai_root("1", trace),
                span("2", "1", 1, trace=trace, **{"gen_ai.operation.name": "chat"}),
            ],
            now=float(n),
        )
    stats = assembler.stats()
    assert stats.traces_evicted.get(reason, 0) >= 1
    assert {r for _, r, _ in evicted} == {reason}
    assert all(agent for _, _, agent in evicted)
    assert stats.bytes_held <= limits.max_bytes
    assert stats.traces_open <= limits.max_traces
    assert stats.spans_received == (
        stats.spans_finished
        + sum(stats.spans_dropped.values())
        + stats.spans_evicted
        + stats.spans_held
    )


def test_an_old_trace_is_evicted_and_its_late_spans_dropped() -> None:
    assembler = TraceAssembler(AssemblyLimits(max_trace_age=10.0, quiet_period=5.0))
    for second in range(0, 12, 2):  # never quiet for 5 s
        assembler.add([span(f"{second + 10}", "1", second)], now=float(second))
        assert assembler.collect(now=float(second)) == []
    assert assembler.stats().traces_evicted == {"max_trace_age": 1}
    assembler.add([genai_root("1", TRACE)], now=13.0)
    assert assembler.stats().spans_dropped == {"evicted_trace": 1}


def test_traces_no_scorer_samples_cost_no_memory() -> None:
    assembler = TraceAssembler(keep_trace=lambda trace_id: False)
    assembler.add([genai_root("1", TRACE), span("2", "1", 1)], now=0.0)
    stats = assembler.stats()
    assert (stats.spans_held, stats.spans_dropped) == (0, {"not_sampled": 2})


def test_each_trace_finishes_as_its_root_arrives_within_a_batch() -> None:
    assembler = TraceAssembler(AssemblyLimits(max_traces=1), finish_on_root=True)
    first, second = genai_root("1", "1" * 32), genai_root("2", "2" * 32)
    twin = first.__class__(**{**_fields(first), "span_id": "3" * 16})
    runs = assembler.add([first, twin, second])
    # No eviction for the cap of one open trace, and the first trace's second root is late.
    assert [r.trace_id for r in runs] == ["1" * 32, "2" * 32]
    stats = assembler.stats()
    assert (stats.traces_evicted, stats.spans_dropped) == ({}, {"late": 1})


def _fields(record: SpanRecord) -> dict[str, object]:
    return {name: getattr(record, name) for name in record.__dataclass_fields__}


class _CountingSpan(SpanRecord):
    """A span that counts how often its parent link is read: the work of assembly, measured
    without a clock."""

    __slots__ = ()
    reads = 0

    @property  # type: ignore[misc]
    def parent_span_id(self) -> str | None:  # type: ignore[override]
        _CountingSpan.reads += 1
        return _PARENT.__get__(self)  # type: ignore[no-any-return]

    @parent_span_id.setter
    def parent_span_id(self, value: str | None) -> None:
        _PARENT.__set__(self, value)


_PARENT = SpanRecord.__dict__["parent_span_id"]


def test_assembly_is_linear_in_spans_with_thousands_of_sibling_runs() -> None:
    # 2,000 agent runs under one workflow span: each run's descendants and ancestors come
    # from one index of the trace, not from a scan of the whole trace per run (n² reads).
    count = 2_000
    agent = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.input.messages": user("2+2?"),
        "gen_ai.output.messages": assistant("4"),
    }
    root = _CountingSpan(TRACE, "f" * 16, None, "workflow", 0, 10**9, {})
    spans = [root] + [
        _CountingSpan(TRACE, f"{i + 1:016x}", root.span_id, "invoke_agent", i, i + 1, agent)
        for i in range(count)
    ]
    _CountingSpan.reads = 0
    runs = runs_from_spans(spans)
    assert len(runs) == count
    assert {run.output for run in runs} == {"4"}
    assert _CountingSpan.reads < 20 * len(spans), _CountingSpan.reads


def test_a_child_ending_just_after_its_root_is_part_of_the_run() -> None:
    # In process, async work the root did not await may end after it: within the grace it
    # is part of the run, not a late span dropped.
    assembler = TraceAssembler(AssemblyLimits(late_span_grace=0.5), finish_on_root=True)
    root = genai_root("1", TRACE)
    tool = span("2", "1", 2, **{"gen_ai.operation.name": "execute_tool"})
    assert assembler.add([root], now=10.0) == []
    assert assembler.next_deadline() == 10.5
    assert assembler.add([tool], now=10.2) == []
    assert assembler.collect(now=10.4) == []
    [run] = assembler.collect(now=10.5)
    assert len(run.steps) == 1
    stats = assembler.stats()
    assert (stats.spans_finished, stats.spans_dropped, stats.traces_evicted) == (2, {}, {})


def test_traces_waiting_for_late_children_are_finished_not_evicted_for_room() -> None:
    limits = AssemblyLimits(max_traces=2, late_span_grace=0.5)
    assembler = TraceAssembler(limits, finish_on_root=True)
    runs = assembler.add([genai_root("1", f"{n + 1:032x}") for n in range(5)], now=0.0)
    runs += assembler.finish_rooted()
    assert len(runs) == 5
    assert assembler.stats().traces_evicted == {}
