"""The demo's scenario, free of any framework: documents, search, tools, the scripted turns."""

from __future__ import annotations

import json

from livescore.demo import ToolOutput, ToolRequest
from livescore.demo._docs import load_documents, search_documents, split_sentences, words
from livescore.demo._scenario import (
    QUESTIONS,
    UNSUPPORTED_CLAIM,
    get_order_status,
    scripted_turn,
    search_docs,
)


def _answer(question: str) -> tuple[str, str]:
    """The scripted model's two turns, with the tool really called in between."""
    request = scripted_turn(question, [])
    assert isinstance(request, ToolRequest)
    tool = {"search_docs": search_docs, "get_order_status": get_order_status}[request.name]
    result = tool(**request.args)
    text = result if isinstance(result, str) else json.dumps(result)
    answer = scripted_turn(question, [ToolOutput(text)])
    assert isinstance(answer, str)
    return text, answer


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
    assert "72 hours" in search_docs("holding period Plus")
    assert "No help-centre page" in search_docs("zebra")
    assert get_order_status("px-1042")["locker"].startswith("Berlin")
    assert get_order_status("PX-9") == {"error": "no order with id 'PX-9'"}


def test_scripted_answers_come_from_the_tool_results() -> None:
    tool_text, answer = _answer(QUESTIONS[0].text)
    assert "72 hours" in answer
    # Every sentence of the answer is in what the tool returned.
    assert all(sentence in tool_text for sentence in split_sentences(answer))


def test_one_answer_carries_the_unsupported_claim() -> None:
    flagged = [q for q in QUESTIONS if q.adds_unsupported_claim]
    assert len(flagged) == 1
    tool_text, answer = _answer(flagged[0].text)
    assert answer.endswith(UNSUPPORTED_CLAIM)
    assert "drone" not in tool_text.lower()
    assert UNSUPPORTED_CLAIM not in _answer(QUESTIONS[2].text)[1]


def test_orders_failures_and_unknown_questions() -> None:
    assert "You can pick it up until Friday 18:00." in _answer("Where is PX-1042?")[1]
    assert "no order with id 'PX-777'" in _answer("Status of PX-777?")[1]
    assert _answer("How heavy can a parcel be, maximum weight?")[1].startswith(
        "Parcelly lockers come in three sizes."
    )
    assert scripted_turn("Tell me about security", []) == ToolRequest(
        "search_docs", {"query": "Tell me about security"}
    )
    failed = scripted_turn("Where is PX-1042?", [ToolOutput("timeout", failed=True)])
    assert failed == "I could not look that up: timeout"


def test_the_scenario_does_not_import_an_agent_framework() -> None:
    import subprocess
    import sys

    code = (
        "import sys, livescore.demo; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('langchain', 'langchain_core', 'langgraph', 'livescore_langchain')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"
