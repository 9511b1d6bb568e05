"""The Run record: construction, coercion from mappings, JSON round trips."""

from __future__ import annotations

import json

import pytest

from livescore import Run, Step, ToolCall
from livescore.runs import coerce_run


class _Message:
    """A LangChain-style message double, read by duck typing."""

    def __init__(self, type_: str, content: str) -> None:
        self.type = type_
        self.content = content


def _tool_step(result: object = "sunny", error: str | None = None) -> Step:
    return Step(
        kind="tool",
        name="weather",
        index=1,
        tool_call=ToolCall(
            "weather", call_id="c1", args={"city": "Oslo"}, result=result, error=error
        ),
    )


def test_run_ids_are_generated_and_unique() -> None:
    first, second = Run(input="a", output="b"), Run(input="a", output="b")
    assert first.run_id != second.run_id
    assert len(first.run_id) == 32


def test_final_step_is_the_last_model_turn() -> None:
    model_turns = [Step(kind="model", index=0, output="call"), Step(kind="model", index=2)]
    run = Run(steps=[model_turns[0], _tool_step(), model_turns[1]])
    assert run.final_step is model_turns[1]
    assert Run(steps=[_tool_step()]).final_step is None


def test_to_dict_is_json_safe_and_round_trips() -> None:
    run = Run(
        input=[_Message("human", "Weather in Oslo?")],
        output={"messages": [_Message("ai", "Sunny.")]},
        ground_truth="Sunny",
        trace_id="a" * 32,
        span_id="b" * 16,
        name="agent",
        steps=[Step(kind="model", index=0, output=b"raw"), _tool_step(result={"sky": object()})],
        metadata={"tags": ("x", "y")},
    )
    data = run.to_dict()
    json.dumps(data)  # raises if anything is not JSON-safe
    assert data["input"] == [{"role": "user", "content": "Weather in Oslo?"}]
    assert data["steps"][0]["output"] == "raw"
    assert data["steps"][1]["tool_call"]["result"]["sky"].startswith("<object")
    again = Run.from_dict(data)
    assert again.run_id == run.run_id
    assert again.trace_id == run.trace_id
    assert again.steps[1].tool_call is not None
    assert again.steps[1].tool_call.args == {"city": "Oslo"}
    assert again.metadata == {"tags": ["x", "y"]}


def test_coerce_run_accepts_runs_and_mappings() -> None:
    run = Run(input="q", output="a")
    assert coerce_run(run) is run
    coerced = coerce_run({"input": "q", "output": "a", "run_id": 7, "ground_truth": "a"})
    assert (coerced.input, coerced.output, coerced.run_id, coerced.ground_truth) == (
        "q",
        "a",
        "7",
        "a",
    )


def test_coerce_run_rejects_unknown_fields_and_types() -> None:
    with pytest.raises(TypeError, match="unknown run field"):
        coerce_run({"input": "q", "ouput": "typo"})
    with pytest.raises(TypeError, match=r"livescore\.Run or a mapping"):
        coerce_run("just a string")  # type: ignore[arg-type]


def test_from_dict_rejects_unknown_step_kinds() -> None:
    with pytest.raises(ValueError, match="unknown step kind"):
        Run.from_dict({"steps": [{"kind": "telepathy"}]})


def test_tool_call_ok_reflects_error() -> None:
    assert ToolCall("t").ok
    assert not ToolCall("t", error="boom").ok


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("4bf92f3577b34da6a3ce929d0e0e4736", "4bf92f3577b34da6a3ce929d0e0e4736"),
        ("4BF92F3577B34DA6A3CE929D0E0E4736", "4bf92f3577b34da6a3ce929d0e0e4736"),
        (" 0x4bf92f3577b34da6a3ce929d0e0e4736 ", "4bf92f3577b34da6a3ce929d0e0e4736"),
        ("0x1F", "0000000000000000000000000000001f"),
        ("0" * 32, None),
        ("not-hex", None),
        ("1" * 33, None),
        (None, None),
        (42, None),
    ],
)
def test_trace_ids_are_normalised_or_refused(given: object, expected: str | None) -> None:
    from livescore._trace_ids import normalize_trace_id

    assert normalize_trace_id(given) == expected


def test_trace_parent_round_trips_and_comes_back_remote() -> None:
    from livescore.runs import TraceParent

    parent = TraceParent.parse("4BF92F3577B34DA6A3CE929D0E0E4736", "0X00F067AA0BA902B7", 0)
    assert parent is not None
    assert (parent.trace_id, parent.span_id, parent.sampled) == (
        "4bf92f3577b34da6a3ce929d0e0e4736",
        "00f067aa0ba902b7",
        False,
    )
    rebuilt = TraceParent.from_dict(json.loads(json.dumps(parent.to_dict())))
    assert rebuilt is not None
    assert rebuilt.is_remote
    assert (rebuilt.trace_id, rebuilt.span_id, rebuilt.trace_flags) == (
        parent.trace_id,
        parent.span_id,
        0,
    )
    assert TraceParent.of_run(Run(trace_id="abc", span_id=None)) is None
