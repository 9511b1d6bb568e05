"""OTLP payloads: both encodings decode to the same spans; garbage is refused clearly."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from _trace_support import genai_tool_run, memory_provider, otlp_json, otlp_json_line
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

from livescore.traces import OTLPDecodeError, decode_otlp_json, decode_otlp_protobuf, load_traces


def test_protobuf_and_json_decode_to_the_same_spans() -> None:
    provider, exporter = memory_provider()
    genai_tool_run(provider, question="q?", answer="a.")
    spans = exporter.get_finished_spans()
    from_pb = decode_otlp_protobuf(encode_spans(spans).SerializeToString()).spans
    from_json = decode_otlp_json(json.dumps(otlp_json(spans))).spans
    assert len(from_pb) == 4
    assert from_pb == from_json


@pytest.mark.parametrize(
    "body",
    [b"\xff\xff\xff\xff", b"\x0a\x05abc"],
)
def test_garbage_protobuf_is_refused(body: bytes) -> None:
    with pytest.raises(OTLPDecodeError, match="not an OTLP protobuf"):
        decode_otlp_protobuf(body)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("not json", "not JSON"),
        ("[1, 2]", "an object with resourceSpans"),
        ('{"resourceSpans": 3}', "resourceSpans must be a list"),
        (
            '{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "'
            + "1" * 32
            + '", "spanId": "'
            + "2" * 16
            + '", "attributes": 7}]}]}]}',
            "attributes",
        ),
    ],
)
def test_garbage_json_is_refused(body: str, message: str) -> None:
    with pytest.raises(OTLPDecodeError, match=message):
        decode_otlp_json(body)


def test_spans_with_invalid_ids_are_counted_as_rejected() -> None:
    payload = {"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "zz", "spanId": "01"}]}]}]}
    decoded = decode_otlp_json(payload)
    assert (decoded.spans, decoded.rejected) == ([], 1)


def test_a_stored_traces_file_with_runs_split_over_lines(tmp_path: Path) -> None:
    provider, exporter = memory_provider()
    genai_tool_run(provider, question="Weather in Lyon?", answer="Sunny.")
    genai_tool_run(provider, question="Weather in Paris?", answer="Rainy.")
    spans = list(exporter.get_finished_spans())
    lines = [otlp_json_line(spans[i : i + 3]) for i in range(0, len(spans), 3)]
    path = tmp_path / "traces.jsonl"
    path.write_text("\n".join([lines[0], "{broken", *reversed(lines[1:])]) + "\n", encoding="utf-8")
    stored = load_traces(path)
    assert sorted(r.output for r in stored) == ["Rainy.", "Sunny."]
    assert (stored.spans, stored.traces) == (8, 2)
    assert [(p.line, "not JSON" in p.message) for p in stored.problems] == [(2, True)]


def _one_span_request(**span: object) -> dict[str, object]:
    return {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}


def test_ids_of_the_wrong_length_are_refused_not_padded() -> None:
    # The OTLP specification: a trace id is exactly 16 bytes, a span id 8. "abc" and "0abc"
    # would otherwise be one trace.
    good = {"traceId": "4bf92f3577b34da6a3ce929d0e0e4736", "spanId": "00f067aa0ba902b7"}
    for bad in (
        {"traceId": "abc"},
        {"traceId": "0abc"},
        {"spanId": "f067aa0ba902b7"},
        {"parentSpanId": "b7"},
        {"traceId": "0" * 32},
    ):
        decoded = decode_otlp_json(_one_span_request(**{**good, **bad}))
        assert (decoded.spans, decoded.rejected) == ([], 1), bad
    assert len(decode_otlp_json(_one_span_request(**good)).spans) == 1


def test_base64_ids_of_protobuf_s_json_mapping_are_read() -> None:
    trace = bytes.fromhex("4bf92f3577b34da6a3ce929d0e0e4736")
    span = bytes.fromhex("00f067aa0ba902b7")
    parent = bytes.fromhex("1111111111111111")
    decoded = decode_otlp_json(
        _one_span_request(
            traceId=base64.b64encode(trace).decode(),
            spanId=base64.b64encode(span).decode(),
            parentSpanId=base64.b64encode(parent).decode(),
        )
    )
    [record] = decoded.spans
    assert (record.trace_id, record.span_id, record.parent_span_id) == (
        trace.hex(),
        span.hex(),
        parent.hex(),
    )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        (
            json.dumps(
                _one_span_request(
                    traceId="4bf92f3577b34da6a3ce929d0e0e4736",
                    spanId="00f067aa0ba902b7",
                    attributes=[{"key": "n", "value": {"intValue": 1}}],
                )
            ).replace('"intValue": 1', '"intValue": Infinity'),
            "out of range",
        ),
        (
            json.dumps(
                _one_span_request(
                    traceId="4bf92f3577b34da6a3ce929d0e0e4736", spanId="00f067aa0ba902b7"
                )
            ).replace("}]}]}]}", ', "startTimeUnixNano": -Infinity}]}]}]}'),
            "out of range",
        ),
    ],
)
def test_hostile_json_is_a_decode_error(body: str, message: str) -> None:
    with pytest.raises(OTLPDecodeError, match=message):
        decode_otlp_json(body)


def test_a_traces_file_is_read_line_by_line_with_a_line_cap(tmp_path: Path) -> None:
    provider, exporter = memory_provider()
    genai_tool_run(provider, question="Weather in Lyon?", answer="Sunny.")
    good = otlp_json_line(list(exporter.get_finished_spans()))
    deep = "[" * 1_500 + "]" * 1_500  # past the interpreter's depth, within the cap
    huge = '{"resourceSpans": [], "pad": "' + "x" * 5_000 + '"}'
    dataset = json.dumps({"input": "2+2?", "output": "4"})
    invalid = json.dumps(_one_span_request(traceId="abc", spanId="00f067aa0ba902b7"))
    path = tmp_path / "traces.jsonl"
    path.write_text("\n".join([deep, huge, good, dataset, invalid]) + "\n", encoding="utf-8")
    stored = load_traces(path, max_line_bytes=len(good) + 1)
    assert [r.output for r in stored] == ["Sunny."]
    problems = {p.line: p.message for p in stored.problems}
    assert sorted(problems) == [1, 2, 4, 5]
    assert "nested too deeply" in problems[1]
    assert f"longer than {len(good) + 1} bytes" in problems[2]
    assert "without --traces" in problems[4]
    assert "invalid trace or span id" in problems[5]
    assert "32 hex digits" in problems[5]
    assert stored.rejected_spans == 1
