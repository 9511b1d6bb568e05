"""The conversation model: turns numbered from 1, the dataset form, and the JSON-safe copy."""

from __future__ import annotations

import json

import pytest

from livescore import Run
from livescore.runs import Conversation, coerce_conversation, get_run_context


def test_a_run_carries_its_conversation_id_through_to_dict_and_back() -> None:
    run = Run(input="Hi", output="Hello", conversation_id="thread-1")
    again = Run.from_dict(json.loads(json.dumps(run.to_dict())))
    assert again.conversation_id == "thread-1"
    assert Run.from_dict({"input": "x", "conversation_id": 42}).conversation_id == "42"
    assert Run().conversation_id is None


def test_turns_are_numbered_from_the_first_turn_kept() -> None:
    conversation = Conversation("c", [Run(run_id="a"), Run(run_id="b")], first_turn=5)
    assert conversation.last_turn == 6
    assert [(n, r.run_id) for n, r in conversation.turns()] == [(5, "a"), (6, "b")]
    assert conversation.last_run is not None
    assert conversation.last_run.run_id == "b"
    empty = Conversation("e")
    assert (empty.last_turn, empty.last_run) == (0, None)


def test_the_dataset_form_makes_one_run_per_turn_with_its_tool_calls() -> None:
    conversation = Conversation.from_turns(
        [
            {
                "input": "Where is order 7?",
                "output": "It left Lyon.",
                "tool_calls": [
                    {"name": "track", "args": {"order": 7}, "result": {"at": "Lyon"}},
                    {"name": "eta", "args": {}, "error": "timeout"},
                ],
            },
            {"input": "Thanks", "output": "Welcome", "metadata": {"lang": "en"}},
        ],
        id="c7",
    )
    first, second = conversation.runs
    assert (first.run_id, second.run_id) == ("c7:1", "c7:2")
    assert {r.conversation_id for r in conversation.runs} == {"c7"}
    # A tool result is ground truth, a failed call is not.
    assert get_run_context(first) == [
        '{"tool": "track", "arguments": {"order": 7}, "result": {"at": "Lyon"}}'
    ]
    assert first.steps[1].error == "timeout"
    assert second.metadata == {"lang": "en"}


@pytest.mark.parametrize(
    ("turns", "message"),
    [
        ([{"output": "x"}], "turn 1: missing field 'input'"),
        ([{"input": "a", "output": "b"}, "text"], "turn 2: expected an object"),
        ([{"input": "a", "output": "b", "tool_calls": [{"args": {}}]}], "needs a 'name'"),
        ([{"input": "a", "output": "b", "tool_calls": "x"}], "'tool_calls' must be a list"),
    ],
)
def test_malformed_turns_say_which_turn(turns: list[object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Conversation.from_turns(turns)  # type: ignore[arg-type]


def test_to_dict_and_from_dict_round_trip() -> None:
    conversation = Conversation.from_turns([{"input": "a", "output": "b"}], id="c")
    conversation.first_turn = 3
    again = Conversation.from_dict(json.loads(json.dumps(conversation.to_dict())))
    assert (again.id, again.first_turn, again.runs[0].output) == ("c", 3, "b")
    with pytest.raises(ValueError, match="needs an 'id'"):
        Conversation.from_dict({"runs": []})
    with pytest.raises(ValueError, match="first_turn"):
        Conversation.from_dict({"id": "c", "first_turn": 0})


def test_coerce_conversation_reads_every_form() -> None:
    run = Run(input="a", output="b", conversation_id="t")
    assert coerce_conversation(run).id == "t"
    assert coerce_conversation(Run(run_id="r")).id == "r"  # a run alone: its own conversation
    assert coerce_conversation({"id": "d", "turns": [{"input": "a", "output": "b"}]}).id == "d"
    assert coerce_conversation({"id": "e", "runs": [run.to_dict()]}).runs[0].output == "b"
    assert coerce_conversation({"input": "a", "output": "b"}).last_turn == 1
    with pytest.raises(TypeError, match="a conversation must be"):
        coerce_conversation(42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'turns' must be a list"):
        coerce_conversation({"turns": "nope"})
