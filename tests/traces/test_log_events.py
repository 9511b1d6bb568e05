"""Log events (an instrumentation's log records, holding the messages when content is
captured in events) in the TraceAssembler: joined to their span whichever came first, and
held under the spans' bounds and accounting; and OTLP logs decoding."""

from __future__ import annotations

import json

from livescore.runs import Run
from livescore.traces import (
    AssemblyLimits,
    LogEvent,
    SpanEvent,
    SpanRecord,
    TraceAssembler,
    decode_otlp_logs_json,
)

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
ROOT, CHAT = "00f067aa0ba902b7", "00f067aa0ba902b8"
DETAILS = "gen_ai.client.inference.operation.details"


def spans(trace: str = TRACE) -> list[SpanRecord]:
    chat = SpanRecord(trace, CHAT, ROOT, "chat m", 1, 2, {"gen_ai.operation.name": "chat"})
    return [chat, SpanRecord(trace, ROOT, None, "weather-agent", 0, 3)]


def details(trace: str = TRACE, span: str = CHAT) -> LogEvent:
    return LogEvent(
        trace,
        span,
        SpanEvent(
            DETAILS,
            {
                "gen_ai.input.messages": [
                    {"role": "user", "parts": [{"type": "text", "content": "Weather?"}]}
                ],
                "gen_ai.output.messages": [
                    {"role": "assistant", "parts": [{"type": "text", "content": "Sunny."}]}
                ],
            },
        ),
    )


def io(runs: list[Run]) -> list[tuple[object, object]]:
    return [(run.input, run.output) for run in runs]


def test_an_event_before_its_span_and_one_after_are_both_joined() -> None:
    before = TraceAssembler(AssemblyLimits(quiet_period=1))
    before.add([details()], now=0)
    before.add(spans(), now=0)
    after = TraceAssembler(AssemblyLimits(quiet_period=1))
    after.add(spans(), now=0)
    after.add([details()], now=0.5)  # it keeps the trace open: quiet from here
    assert after.collect(now=1.2) == []
    for assembler in (before, after):
        assert io(assembler.collect(now=10)) == [("Weather?", "Sunny.")]
        stats = assembler.stats()
        assert (stats.events_received, stats.events_joined, stats.events_held) == (1, 1, 0)
        assert stats.bytes_held == 0


def test_in_process_order_events_then_root_finishes_with_them() -> None:
    assembler = TraceAssembler(AssemblyLimits(quiet_period=0), finish_on_root=True)
    chat, root = spans()
    assert io(assembler.add([chat, details(), root], now=0)) == [("Weather?", "Sunny.")]
    assembler.add([details()], now=0)  # after the root: the trace is finished
    stats = assembler.stats()
    assert stats.events_joined == 1
    assert stats.events_dropped == {"late": 1}


def test_events_are_dropped_with_unsampled_and_evicted_traces() -> None:
    other = "1" * 32
    assembler = TraceAssembler(
        AssemblyLimits(max_spans_per_trace=2, quiet_period=60), keep_trace=lambda t: t != other
    )
    assembler.add([details(trace=other)], now=0)
    assembler.add([*spans(), details()], now=0)  # two spans and an event: past the cap
    assembler.add([details()], now=0)  # its trace was evicted
    stats = assembler.stats()
    assert stats.events_dropped == {"not_sampled": 1, "evicted_trace": 1}
    assert stats.traces_evicted == {"max_spans_per_trace": 1}
    assert (stats.events_evicted, stats.events_held, stats.bytes_held) == (1, 0, 0)


def test_an_event_whose_span_never_came_is_counted() -> None:
    assembler = TraceAssembler(AssemblyLimits(quiet_period=0))
    assembler.add([*spans(), details(span="00000000000000ff")], now=0)
    assembler.drain()
    assert assembler.stats().events_dropped == {"no_span": 1}


def test_events_count_against_the_memory_cap() -> None:
    big = details()
    assembler = TraceAssembler(AssemblyLimits(max_bytes=big.size + 10, quiet_period=60))
    assembler.add([big], now=0)
    assert assembler.stats().bytes_held == big.size
    assembler.add([details(trace="2" * 32)], now=0)  # the older trace goes
    stats = assembler.stats()
    assert stats.traces_evicted == {"max_bytes": 1}
    assert stats.bytes_held == big.size


def test_older_events_carry_their_content_in_the_body() -> None:
    record = {
        "traceId": TRACE,
        "spanId": CHAT,
        "eventName": "gen_ai.choice",
        "attributes": [{"key": "gen_ai.system", "value": {"stringValue": "openai"}}],
        "body": {
            "kvlistValue": {
                "values": [
                    {"key": "index", "value": {"intValue": "0"}},
                    {
                        "key": "message",
                        "value": {
                            "kvlistValue": {
                                "values": [{"key": "content", "value": {"stringValue": "Sunny."}}]
                            }
                        },
                    },
                ]
            }
        },
    }
    named_by_attribute = {
        "traceId": TRACE,
        "spanId": CHAT,
        "attributes": [{"key": "event.name", "value": {"stringValue": "gen_ai.user.message"}}],
        "body": {"stringValue": "Weather?"},
    }
    payload = {"resourceLogs": [{"scopeLogs": [{"logRecords": [record, named_by_attribute]}]}]}
    decoded = decode_otlp_logs_json(json.dumps(payload))
    choice = {"gen_ai.system": "openai", "index": 0, "message": {"content": "Sunny."}}
    assert [(e.event.name, dict(e.event.attributes)) for e in decoded.events] == [
        ("gen_ai.choice", choice),
        ("gen_ai.user.message", {"event.name": "gen_ai.user.message", "body": "Weather?"}),
    ]
    assembler = TraceAssembler(AssemblyLimits(quiet_period=0))
    assembler.add([*decoded.events, *spans()], now=0)
    [run] = assembler.drain()
    assert run.output == "Sunny."
