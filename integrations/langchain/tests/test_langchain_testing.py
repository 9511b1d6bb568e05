"""ScriptedChatModel: the chat model test double that drives create_agent."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from livescore_langchain.testing import ScriptedChatModel


def test_replays_turns_in_order_with_tool_calls() -> None:
    model = ScriptedChatModel(
        responses=[
            AIMessage("", tool_calls=[{"name": "add", "args": {"a": 1}, "id": "c1"}]),
            "done",
        ]
    )

    first = model.invoke("add")
    second = model.invoke("go on")

    assert first.tool_calls == [{"name": "add", "args": {"a": 1}, "id": "c1", "type": "tool_call"}]
    assert second.content == "done"
    assert [m[0].content for m in model.calls] == ["add", "go on"]


def test_bind_tools_returns_the_model() -> None:
    model = ScriptedChatModel(responses=["x"])

    assert model.bind_tools([]) is model


def test_tool_calls_without_ids_get_ids() -> None:
    model = ScriptedChatModel(
        responses=[AIMessage("", tool_calls=[{"name": "a", "args": {}, "id": None}])]
    )

    (call,) = model.invoke("x").tool_calls

    assert call["id"] == "call_1_0"


def test_exceptions_and_functions_are_turns() -> None:
    def echo(messages: list[BaseMessage]) -> AIMessage:
        return AIMessage(f"you said {messages[-1].content}")

    model = ScriptedChatModel(responses=[echo, RuntimeError("overloaded")])

    assert model.invoke([HumanMessage("hi")]).content == "you said hi"
    with pytest.raises(RuntimeError, match="overloaded"):
        model.invoke("again")


def test_running_out_of_turns_is_a_clear_error() -> None:
    model = ScriptedChatModel(responses=["only one"])
    model.invoke("a")

    with pytest.raises(ValueError, match="ran out of responses at call 2"):
        model.invoke("b")


def test_streaming_yields_words_then_tool_calls() -> None:
    model = ScriptedChatModel(
        responses=[
            AIMessage("Let me check", tool_calls=[{"name": "w", "args": {"c": "P"}, "id": "c9"}])
        ]
    )

    chunks = list(model.stream("x"))
    total = chunks[0]
    for chunk in chunks[1:]:
        total += chunk

    # (LangChain closes every stream with an empty chunk of its own.)
    assert [c.content for c in chunks if c.content] == ["Let ", "me ", "check"]
    assert total.content == "Let me check"
    assert total.tool_calls == [{"name": "w", "args": {"c": "P"}, "id": "c9", "type": "tool_call"}]


@pytest.mark.anyio
async def test_async_streaming_matches() -> None:
    model = ScriptedChatModel(responses=["one two"])

    chunks = [chunk.content async for chunk in model.astream("x")]

    assert [c for c in chunks if c] == ["one ", "two"]
