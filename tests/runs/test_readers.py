"""Reading evidence and messages out of runs."""

from __future__ import annotations

import json

import pytest

from livescore import Run, Step, ToolCall, extract_tool_results, get_run_context
from livescore._messages import message_text
from livescore.runs import extract_retrieved_documents, get_assistant_message, get_user_message


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
    assert json.loads(results[1].to_context()) == {
        "tool": "calc",
        "arguments": {"e": "1+1"},
        "result": 2,
    }


def test_tool_context_ties_the_result_to_the_call_and_keeps_text_as_it_is() -> None:
    # Regression: to_context() escaped non-ASCII ("Rh\u00f4ne") and dropped the arguments,
    # so a judge could not tie "Lyon is in France" to get_city(city="Lyon").
    lyon = ToolCall("get_city", "c1", {"city": "Lyon"}, '{"country": "France", "river": "Rhône"}')
    tokyo = ToolCall("get_city", "c2", '{"city": "東京"}', "日本")
    run = Run(steps=[Step(kind="tool", tool_call=lyon), Step(kind="tool", tool_call=tokyo)])

    first, second = (r.to_context() for r in extract_tool_results(run))

    assert first == (
        '{"tool": "get_city", "arguments": {"city": "Lyon"}, '
        '"result": {"country": "France", "river": "Rhône"}}'
    )
    assert second == '{"tool": "get_city", "arguments": {"city": "東京"}, "result": "日本"}'
    assert "\\u" not in first + second


def test_a_call_without_arguments_leaves_them_out() -> None:
    for args in (None, {}, ""):
        context = extract_tool_results(
            Run(steps=[Step(kind="tool", tool_call=ToolCall("now", args=args, result="noon"))])
        )[0].to_context()
        assert json.loads(context) == {"tool": "now", "result": "noon"}


def test_every_reader_accepts_the_mapping_form_of_a_run() -> None:
    # Regression: extract_tool_results(mapping) raised AttributeError, though scorers
    # accept mappings.
    run = {
        "input": [{"role": "user", "content": "Where is Lyon?"}],
        "output": "In France.",
        "steps": [
            {
                "kind": "tool",
                "tool_call": {"name": "get_city", "args": {"city": "Lyon"}, "result": "France"},
            },
            {"kind": "retriever", "documents": ["Lyon is on the Rhône."]},
        ],
    }
    assert [r.result for r in extract_tool_results(run)] == ["France"]
    assert extract_retrieved_documents(run) == ["Lyon is on the Rhône."]
    assert get_user_message(run) == "Where is Lyon?"
    assert get_assistant_message(run) == "In France."
    assert len(get_run_context(run)) == 2


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", ""),
        ("Hello", "Hello"),
        ({"messages": []}, ""),
        ([{"type": "text", "text": "Hi"}], "Hi"),
        ({"role": "assistant", "content": None}, ""),
        (None, None),
        ({"topic": "bears"}, None),
        ({"answer": "42", "sources": []}, None),
        ([{"role": "user", "content": "only the question"}], None),
        ([{"unknown": 1}], None),
    ],
)
def test_the_readers_tell_not_found_from_empty(value: object, expected: str | None) -> None:
    run = Run(input=value, output=value)
    assert get_assistant_message(run) == expected
    if not isinstance(value, list) or expected is not None:  # a user message list differs
        assert get_user_message(run) == expected


def test_get_user_message_needs_a_user_message() -> None:
    run = Run(input={"messages": [{"role": "system", "content": "Be brief"}]})
    assert get_user_message(run) is None
    assert get_user_message(Run(input=[{"role": "user", "content": ""}])) == ""


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


def test_message_list_without_assistant_gives_no_text() -> None:
    run = Run(input=[{"role": "user", "content": "q"}], output=[{"role": "user", "content": "q"}])
    assert get_assistant_message(run) is None
    assert get_user_message(run) == "q"


def test_non_text_values_raise_clear_errors() -> None:
    with pytest.raises(TypeError, match="cannot read text from an int"):
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
