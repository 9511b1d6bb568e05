"""The demo's LangChain agent: ``create_agent`` with two real tools and a chat model.

The chat model is a real OpenAI-compatible one when configured, else
:class:`ScriptedDemoModel`, which plays the model's part without any LLM: it calls the tools
the question needs and composes its answer from what they returned. One answer carries a
deliberately unsupported claim, so the hallucination scorer has something to find.

This module imports LangChain; the rest of the demo imports it only once LangChain is known
to be installed.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain.agents import create_agent
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool

from livescore.demo._docs import ORDERS, search_documents, split_sentences

__all__ = (
    "AGENT_NAME",
    "QUESTIONS",
    "SYSTEM_PROMPT",
    "UNSUPPORTED_CLAIM",
    "DemoQuestion",
    "ScriptedDemoModel",
    "build_agent",
    "get_order_status",
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


@tool
def search_docs(query: str) -> str:
    """Search Parcelly's help centre; returns the best matching pages."""
    docs = search_documents(query)
    if not docs:
        return f"No help-centre page matches {query!r}."
    return "\n\n".join(f"{doc.title} ({doc.slug}): {doc.text}" for doc in docs)


@tool
def get_order_status(order_id: str) -> dict[str, Any]:
    """Look up a Parcelly order by its id (like PX-1042): status, locker, deadlines."""
    order = ORDERS.get(order_id.strip().upper())
    if order is None:
        return {"error": f"no order with id {order_id!r}"}
    return dict(order)


_ORDER_ID = re.compile(r"\bPX-\d+\b", re.IGNORECASE)


class ScriptedDemoModel(BaseChatModel):
    """Plays the chat model's part without an LLM: really calls the tools, answers from them.

    First turn: asks for ``get_order_status`` when the question names an order id, else for
    ``search_docs`` (with the question's ``search_query``). Next turn: composes the answer
    from the tool results it was given: the order's fields, or the first sentences of the
    best page found. A question marked ``adds_unsupported_claim`` gets
    :data:`UNSUPPORTED_CLAIM` appended. Questions it does not know are searched as asked.

    Example:
        >>> model = ScriptedDemoModel()
        >>> model.invoke("Which countries does Parcelly deliver to?").tool_calls[0]["args"]
        {'query': 'countries'}
    """

    questions: tuple[DemoQuestion, ...] = QUESTIONS
    model_name: str = "scripted-demo-model"

    @property
    def _llm_type(self) -> str:
        return "scripted-demo-model"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedDemoModel:  # type: ignore[override]
        # create_agent binds the tools; this model knows its two tools already.
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._turn(messages))])

    def _turn(self, messages: list[BaseMessage]) -> AIMessage:
        start = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=0)
        question = str(messages[start].content) if messages else ""
        plan = next((q for q in self.questions if q.text == question), DemoQuestion(question))
        results = [m for m in messages[start + 1 :] if isinstance(m, ToolMessage)]
        if not results:
            order = _ORDER_ID.search(question)
            name, args = (
                ("get_order_status", {"order_id": order.group(0).upper()})
                if order
                else ("search_docs", {"query": plan.search_query or question})
            )
            call = {"name": name, "args": args, "id": f"call_{uuid.uuid4().hex[:12]}"}
            return AIMessage(content="", tool_calls=[call])
        answer = " ".join(_answer_from(plan, m) for m in results).strip()
        if not answer:
            answer = "I could not find that in Parcelly's help centre."
        if plan.adds_unsupported_claim:
            answer = f"{answer} {UNSUPPORTED_CLAIM}"
        return AIMessage(content=answer)


def _answer_from(plan: DemoQuestion, message: ToolMessage) -> str:
    content = message.content if isinstance(message.content, str) else str(message.content)
    if message.status == "error":
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


def build_agent(model: BaseChatModel | None = None) -> Any:
    """The demo agent: ``create_agent`` with ``search_docs`` and ``get_order_status``.

    Args:
        model: The chat model; :class:`ScriptedDemoModel` by default.

    Example:
        >>> agent = build_agent()
        >>> out = agent.invoke({"messages": [{"role": "user", "content": "Where is PX-1042?"}]})
        >>> "Berlin" in out["messages"][-1].content
        True
    """
    return create_agent(
        model if model is not None else ScriptedDemoModel(),
        tools=[search_docs, get_order_status],
        system_prompt=SYSTEM_PROMPT,
        name=AGENT_NAME,
    )
