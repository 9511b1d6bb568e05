"""OTLP payloads: both encodings decode to the same spans; garbage is refused clearly."""

from __future__ import annotations

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
            '{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "01", "spanId": "02", '
            '"attributes": 7}]}]}]}',
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
