"""The demo's world: document search, tools, and the scripted model answering from tools."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import ToolMessage

from livescore.demo._agent import (
    QUESTIONS,
    UNSUPPORTED_CLAIM,
    ScriptedDemoModel,
    build_agent,
    get_order_status,
    search_docs,
)
from livescore.demo._docs import load_documents, search_documents, split_sentences, words


def _ask(question: str) -> list[Any]:
    out = build_agent().invoke({"messages": [{"role": "user", "content": question}]})
    return list(out["messages"])


def test_a_dozen_documents_ship_with_the_demo() -> None:
    docs = load_documents()
    assert len(docs) == 12
    assert all(doc.title and doc.text for doc in docs)
    assert {"countries", "holding-period", "returns"} <= {doc.slug for doc in docs}


def test_search_ranks_the_right_page_first() -> None:
    assert search_documents("holding period hours Plus plan")[0].slug == "holding-period"
    assert search_documents("refund returns")[0].slug == "returns"
    assert search_documents("zebra xylophone") == []
    assert words("Parcels were held") == {"parcel", "were", "held"}
    assert split_sentences("One. Two!  Three?") == ["One.", "Two!", "Three?"]


def test_tools_return_real_data() -> None:
    assert "72 hours" in search_docs.invoke({"query": "holding period Plus"})
    assert "No help-centre page" in search_docs.invoke({"query": "zebra"})
    assert get_order_status.invoke({"order_id": "px-1042"})["locker"].startswith("Berlin")
    assert get_order_status.invoke({"order_id": "PX-9"}) == {"error": "no order with id 'PX-9'"}


def test_scripted_answers_come_from_the_tool_results() -> None:
    messages = _ask(QUESTIONS[0].text)
    tool_text = next(m.content for m in messages if isinstance(m, ToolMessage))
    answer = messages[-1].content
    assert "72 hours" in answer
    # Every sentence of the answer is in what the tool returned.
    assert all(sentence in tool_text for sentence in split_sentences(answer))


def test_one_answer_carries_the_unsupported_claim() -> None:
    flagged = [q for q in QUESTIONS if q.adds_unsupported_claim]
    assert len(flagged) == 1
    messages = _ask(flagged[0].text)
    tool_text = next(m.content for m in messages if isinstance(m, ToolMessage))
    assert messages[-1].content.endswith(UNSUPPORTED_CLAIM)
    assert "drone" not in tool_text.lower()
    others = _ask(QUESTIONS[2].text)
    assert UNSUPPORTED_CLAIM not in others[-1].content


def test_orders_and_unknown_questions() -> None:
    assert "You can pick it up until Friday 18:00." in _ask("Where is PX-1042?")[-1].content
    assert "no order with id 'PX-777'" in _ask("Status of PX-777?")[-1].content
    answer = _ask("How heavy can a parcel be, maximum weight?")[-1].content
    assert answer.startswith("Parcelly lockers come in three sizes.")
    first = ScriptedDemoModel().invoke("Tell me about security")
    assert first.tool_calls[0]["args"] == {"query": "Tell me about security"}
