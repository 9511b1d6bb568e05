"""Reading evidence and messages out of runs."""

from __future__ import annotations

import json

import pytest

from livescore import (
    Run,
    Step,
    ToolCall,
    extract_retrieved_documents,
    extract_tool_results,
    get_assistant_message,
    get_user_message,
)
from livescore.runs import message_text


class _Message:
    def __init__(self, type_: str, content: object) -> None:
        self.type = type_
        self.content = content


def test_extract_tool_results_keeps_successful_calls_in_order() -> None:
    run = Run(
        steps=[
            Step(kind="model", index=0),
            Step(kind="tool", index=1, tool_call=ToolCall("search", "c1", {"q": "x"}, "doc A")),
            Step(kind="tool", index=2, tool_call=ToolCall("fetch", "c2", {}, None, error="404")),
            Step(kind="tool", index=3, tool_call=ToolCall("calc", "c3", {"e": "1+1"}, 2)),
        ]
    )
    results = extract_tool_results(run)
    assert [(r.tool_name, r.call_id, r.result) for r in results] == [
        ("search", "c1", "doc A"),
        ("calc", "c3", 2),
    ]
    assert json.loads(results[1].to_context()) == {"tool": "calc", "result": 2}


def test_extract_retrieved_documents() -> None:
    run = Run(
        steps=[
            Step(kind="retriever", documents=["one", "two"]),
            Step(kind="model"),
            Step(kind="retriever", documents=["three"]),
        ]
    )
    assert extract_retrieved_documents(run) == ["one", "two", "three"]


def test_messages_from_plain_strings() -> None:
    run = Run(input="What is RAG?", output="Retrieval-augmented generation.")
    assert get_user_message(run) == "What is RAG?"
    assert get_assistant_message(run) == "Retrieval-augmented generation."


def test_messages_from_role_dicts_and_message_objects() -> None:
    run = Run(
        input={"messages": [{"role": "system", "content": "Be brief"}, _Message("human", "Hi")]},
        output={
            "messages": [
                _Message("human", "Hi"),
                _Message("ai", [{"type": "text", "text": "Hello"}, {"type": "text", "text": "!"}]),
                _Message("tool", "ignored"),
            ]
        },
    )
    assert get_user_message(run) == "Hi"
    assert get_assistant_message(run) == "Hello\n!"


def test_message_list_without_assistant_gives_empty_text() -> None:
    run = Run(input=[{"role": "user", "content": "q"}], output=[{"role": "user", "content": "q"}])
    assert get_assistant_message(run) == ""


def test_non_text_values_raise_clear_errors() -> None:
    with pytest.raises(TypeError, match="cannot read text from a int"):
        message_text(42)
    assert message_text(None) == ""


def test_run_context_prefers_the_given_context_then_tool_results_and_documents() -> None:
    from livescore import Run, Step, ToolCall, get_run_context

    run = Run(
        steps=[
            Step(
                kind="tool", tool_call=ToolCall("get_city", args={"city": "Lyon"}, result="France")
            ),
            Step(kind="tool", tool_call=ToolCall("broken", result=None, error="boom")),
            Step(kind="retriever", documents=["Lyon is on the Rhône."]),
        ]
    )
    context = get_run_context(run)
    assert len(context) == 2
    assert '"get_city"' in context[0]
    assert "France" in context[0]
    assert context[1] == "Lyon is on the Rhône."

    run.metadata["context"] = ["Given."]
    assert get_run_context(run) == ["Given."]
    assert get_run_context(Run()) == []
