"""The demo's scenario, the same on every runtime: the agent, its questions and tools, and
the scripted model that plays the agent's model when no LLM is configured.

Plain Python (no agent framework). Each runtime's demo agent (LangChain's ``create_agent``,
the OpenAI Agents SDK, …) wraps these tools in its own tool type and drives its scripted
model with :func:`scripted_tool_call` and :func:`scripted_answer`, so every runtime asks the
same questions, calls the same tools over the same documents and gives the same answers,
one of them with a claim no document supports.

Example:
    >>> scripted_tool_call("Where is my order PX-1042?")
    ('get_order_status', {'order_id': 'PX-1042'})
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from livescore.demo._docs import ORDERS, search_documents, split_sentences

__all__ = (
    "AGENT_NAME",
    "QUESTIONS",
    "SYSTEM_PROMPT",
    "UNSUPPORTED_CLAIM",
    "DemoQuestion",
    "get_order_status",
    "scripted_answer",
    "scripted_tool_call",
    "search_docs",
)

AGENT_NAME = "parcelly-support"
SYSTEM_PROMPT = (
    "You are the support assistant of Parcelly, a parcel-locker service. Use search_docs for "
    "questions about the service and get_order_status for questions about an order. Answer "
    "in two or three sentences, only with facts from the tool results."
)

UNSUPPORTED_CLAIM = "Parcelly also delivers to France and Italy by drone within 24 hours."
"""The claim the scripted model adds to one answer; no document supports it."""


@dataclass(frozen=True, slots=True)
class DemoQuestion:
    """One question the demo asks, and how the scripted model handles it.

    Attributes:
        text: The question.
        search_query: The query the scripted model sends to ``search_docs`` (a real model
            writes its own); the question itself when ``None``.
        sentences: How many sentences of the best page the scripted answer uses.
        adds_unsupported_claim: Whether the scripted model adds :data:`UNSUPPORTED_CLAIM`.
    """

    text: str
    search_query: str | None = None
    sentences: int = 2
    adds_unsupported_claim: bool = False


QUESTIONS: tuple[DemoQuestion, ...] = (
    DemoQuestion(
        "How long does a parcel stay in the locker on the Plus plan?",
        search_query="holding period hours Plus plan",
    ),
    DemoQuestion("Where is my order PX-1042, and until when can I pick it up?"),
    DemoQuestion(
        "What is the largest locker size, and what is the maximum parcel weight?",
        search_query="locker sizes maximum weight",
        sentences=3,
    ),
    DemoQuestion(
        "Which countries does Parcelly deliver to?",
        search_query="countries",
        adds_unsupported_claim=True,
    ),
    DemoQuestion(
        "How do I return a parcel, and how fast is the refund paid?",
        search_query="returns refund",
        sentences=3,
    ),
)


def search_docs(query: str) -> str:
    """Search Parcelly's help centre; returns the best matching pages.

    Example:
        >>> "72 hours" in search_docs("holding period Plus")
        True
    """
    docs = search_documents(query)
    if not docs:
        return f"No help-centre page matches {query!r}."
    return "\n\n".join(f"{doc.title} ({doc.slug}): {doc.text}" for doc in docs)


def get_order_status(order_id: str) -> dict[str, Any]:
    """Look up a Parcelly order by its id (like PX-1042): status, locker, deadlines.

    Example:
        >>> get_order_status("px-1042")["status"]
        'ready_for_pickup'
    """
    order = ORDERS.get(order_id.strip().upper())
    if order is None:
        return {"error": f"no order with id {order_id!r}"}
    return dict(order)


_ORDER_ID = re.compile(r"\bPX-\d+\b", re.IGNORECASE)


def _plan(question: str) -> DemoQuestion:
    return next((q for q in QUESTIONS if q.text == question), DemoQuestion(question))


def scripted_tool_call(question: str) -> tuple[str, dict[str, Any]]:
    """The scripted model's first turn: the tool call the question needs.

    ``get_order_status`` when the question names an order id, else ``search_docs`` with
    the question's ``search_query`` (questions it does not know are searched as asked).
    """
    order = _ORDER_ID.search(question)
    if order:
        return "get_order_status", {"order_id": order.group(0).upper()}
    return "search_docs", {"query": _plan(question).search_query or question}


def scripted_answer(question: str, tool_results: Sequence[str], *, failed: bool = False) -> str:
    """The scripted model's answer, composed from the tool results it was given.

    The order's fields, or the first sentences of the best page found; the question marked
    ``adds_unsupported_claim`` gets :data:`UNSUPPORTED_CLAIM` appended.

    Args:
        question: The user's question.
        tool_results: The tool results as the model saw them (JSON text for an order).
        failed: Whether the tool call failed (its result is then the error message).

    Example:
        >>> result = json.dumps(get_order_status("PX-2077"))
        >>> scripted_answer("Where is PX-2077?", [result]).endswith("expected on Thursday.")
        True
    """
    plan = _plan(question)
    answer = " ".join(_answer_from(plan, text, failed) for text in tool_results).strip()
    if not answer:
        answer = "I could not find that in Parcelly's help centre."
    if plan.adds_unsupported_claim:
        answer = f"{answer} {UNSUPPORTED_CLAIM}"
    return answer


def _answer_from(plan: DemoQuestion, content: str, failed: bool) -> str:
    if failed:
        return f"I could not look that up: {content}"
    try:
        data = json.loads(content)
    except ValueError:
        data = None
    if isinstance(data, dict) and "order_id" in data:
        return _order_answer(data)
    if isinstance(data, dict) and "error" in data:
        return f"I could not find that: {data['error']}."
    # Search results: "Title (slug): text" pages separated by blank lines, best first.
    best = content.split("\n\n")[0]
    text = best.partition("): ")[2] or best
    return " ".join(split_sentences(text)[: plan.sentences])


def _order_answer(order: dict[str, Any]) -> str:
    status = str(order.get("status", "unknown")).replace("_", " ")
    text = f"Your order {order['order_id']} is {status} at {order.get('locker', 'its locker')}."
    if "pickup_deadline" in order:
        text += f" You can pick it up until {order['pickup_deadline']}."
    if "expected_delivery" in order:
        text += f" It is expected on {order['expected_delivery']}."
    return text
