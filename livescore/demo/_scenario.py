"""The demo's scenario, free of any agent framework: questions, tools, the scripted model.

Parcelly's support agent answers questions with two tools, ``search_docs`` and
``get_order_status``. When no LLM is configured, :func:`scripted_turn` plays the model's
part: it asks for the tool the question needs, then composes the answer from what the tool
returned, and adds one deliberately unsupported claim to one answer so the hallucination
scorer has something to find. Each runtime's demo agent (LangChain's lives in
``livescore_langchain``) wires these pieces into its framework.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from livescore.demo._docs import ORDERS, search_documents, split_sentences

__all__ = (
    "AGENT_NAME",
    "QUESTIONS",
    "SCENARIO",
    "SYSTEM_PROMPT",
    "UNSUPPORTED_CLAIM",
    "DemoQuestion",
    "DemoScenario",
    "ToolOutput",
    "ToolRequest",
    "get_order_status",
    "scripted_turn",
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
    """Search Parcelly's help centre; returns the best matching pages."""
    docs = search_documents(query)
    if not docs:
        return f"No help-centre page matches {query!r}."
    return "\n\n".join(f"{doc.title} ({doc.slug}): {doc.text}" for doc in docs)


def get_order_status(order_id: str) -> dict[str, Any]:
    """Look up a Parcelly order by its id (like PX-1042): status, locker, deadlines."""
    order = ORDERS.get(order_id.strip().upper())
    if order is None:
        return {"error": f"no order with id {order_id!r}"}
    return dict(order)


@dataclass(frozen=True, slots=True)
class ToolRequest:
    """The scripted model asks for a tool call.

    Attributes:
        name: ``search_docs`` or ``get_order_status``.
        args: The call's arguments.
    """

    name: str
    args: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """What a tool returned, as the model reads it.

    Attributes:
        content: The result as text (JSON text for dict results).
        failed: Whether the tool raised.
    """

    content: str
    failed: bool = False


_ORDER_ID = re.compile(r"\bPX-\d+\b", re.IGNORECASE)


def scripted_turn(
    question: str,
    outputs: Sequence[ToolOutput],
    questions: Sequence[DemoQuestion] = QUESTIONS,
) -> ToolRequest | str:
    """The scripted model's next turn: a tool request, or the answer from the tool outputs.

    First turn (no outputs yet): ``get_order_status`` when the question names an order id,
    else ``search_docs`` with the question's ``search_query``. Next turn: the answer, from
    the order's fields or the first sentences of the best page found; a question marked
    ``adds_unsupported_claim`` gets :data:`UNSUPPORTED_CLAIM` appended. Unknown questions
    are searched as asked.

    Example:
        >>> scripted_turn("Which countries does Parcelly deliver to?", [])
        ToolRequest(name='search_docs', args={'query': 'countries'})
        >>> scripted_turn("Where is PX-1042?", [ToolOutput('{"error": "no order"}')])
        'I could not find that: no order.'
    """
    plan = next((q for q in questions if q.text == question), DemoQuestion(question))
    if not outputs:
        order = _ORDER_ID.search(question)
        if order:
            return ToolRequest("get_order_status", {"order_id": order.group(0).upper()})
        return ToolRequest("search_docs", {"query": plan.search_query or question})
    answer = " ".join(_answer_from(plan, output) for output in outputs).strip()
    if not answer:
        answer = "I could not find that in Parcelly's help centre."
    if plan.adds_unsupported_claim:
        answer = f"{answer} {UNSUPPORTED_CLAIM}"
    return answer


def _answer_from(plan: DemoQuestion, output: ToolOutput) -> str:
    if output.failed:
        return f"I could not look that up: {output.content}"
    try:
        data = json.loads(output.content)
    except ValueError:
        data = None
    if isinstance(data, dict) and "order_id" in data:
        return _order_answer(data)
    if isinstance(data, dict) and "error" in data:
        return f"I could not find that: {data['error']}."
    # Search results: "Title (slug): text" pages separated by blank lines, best first.
    best = output.content.split("\n\n")[0]
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


@dataclass(frozen=True, slots=True)
class DemoScenario:
    """What a runtime's demo agent is made of: Parcelly's support agent, its tools, its
    questions, and the scripted model that plays its model without an LLM.

    Attributes:
        agent_name: The agent's name (``gen_ai.agent.name`` on its spans).
        system_prompt: The agent's instructions.
        tools: The agent's tools, plain functions with docstrings: ``search_docs(query)``
            and ``get_order_status(order_id)``.
        questions: The questions the demo asks, and how the scripted model answers each.

    Example:
        >>> [tool.__name__ for tool in SCENARIO.tools]
        ['search_docs', 'get_order_status']
        >>> SCENARIO.scripted_turn("Where is PX-1042?", [])
        ToolRequest(name='get_order_status', args={'order_id': 'PX-1042'})
    """

    agent_name: str
    system_prompt: str
    tools: tuple[Callable[..., Any], ...]
    questions: tuple[DemoQuestion, ...]

    def scripted_turn(self, question: str, outputs: Sequence[ToolOutput]) -> ToolRequest | str:
        """The scripted model's next turn for ``question``, given the tool ``outputs`` so
        far: a tool request, or the answer (see :func:`scripted_turn`)."""
        return scripted_turn(question, outputs, self.questions)


SCENARIO = DemoScenario(
    agent_name=AGENT_NAME,
    system_prompt=SYSTEM_PROMPT,
    tools=(search_docs, get_order_status),
    questions=QUESTIONS,
)
"""The demo's scenario, as every runtime's demo agent gets it (:attr:`DemoSetup.scenario
<livescore.demo.DemoSetup.scenario>`)."""
