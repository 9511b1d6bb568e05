"""Helpers that read evidence and messages out of a :class:`~livescore.runs.Run`.

Every reader takes a :class:`~livescore.runs.Run` or its mapping form, as scorers do.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from livescore._messages import find_message, message_text
from livescore.runs._model import RunLike, coerce_run

__all__ = (
    "CONTEXT_METADATA_KEY",
    "NOT_SCORABLE_METADATA_KEY",
    "NO_INPUT_METADATA_KEY",
    "ToolResult",
    "extract_retrieved_documents",
    "extract_tool_results",
    "get_assistant_message",
    "get_run_context",
    "get_user_message",
)

CONTEXT_METADATA_KEY = "context"
"""Where a run carries ground truth given with it (a dataset item's ``context``)."""

NOT_SCORABLE_METADATA_KEY = "not_scorable"
"""Where a run says why no scorer can judge it (say, its runtime recorded no content): every
scorer then skips it with that reason instead of scoring empty text."""

NO_INPUT_METADATA_KEY = "no_input"
"""Where a run without an input says why (where its integration looked): a scorer that needs
the input skips with that reason; one that does not (hallucination) still scores."""


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A successful tool call: evidence a scorer may judge the output against.

    Attributes:
        tool_name: The tool's name.
        call_id: The model's id for the call, when known.
        args: The arguments the tool got.
        result: What the tool returned.
    """

    tool_name: str
    call_id: str | None
    args: Any
    result: Any

    def to_context(self) -> str:
        """One context string: the call and its result as JSON, as the model saw them.

        ``{"tool": name, "arguments": {...}, "result": ...}``: the arguments tie the result
        to what was asked (``get_city(city="Lyon")`` → ``"France"``), so a judge can check
        "Lyon is in France". Arguments are left out when there are none. Text stays as it is
        (no ``\\u`` escapes), and a result or arguments that are themselves JSON text
        (LangChain hands dict results to the model as JSON) are embedded as JSON.

        Example:
            >>> ToolResult("get_city", "c1", {"city": "Lyon"}, "France").to_context()
            '{"tool": "get_city", "arguments": {"city": "Lyon"}, "result": "France"}'
            >>> ToolResult("weather", "c2", {}, '{"sky": "sunny", "city": "Rhône"}').to_context()
            '{"tool": "weather", "result": {"sky": "sunny", "city": "Rhône"}}'
        """
        payload: dict[str, Any] = {"tool": self.tool_name}
        args = _maybe_json(self.args)
        if args is not None and args != {} and args != "":
            payload["arguments"] = args
        payload["result"] = _maybe_json(self.result)
        return json.dumps(payload, ensure_ascii=False, default=str)


def _maybe_json(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def extract_tool_results(run: RunLike) -> list[ToolResult]:
    """Return the successful tool results of ``run``, in call order.

    Failed calls are left out: an error message is not evidence of anything the agent says.

    Example:
        >>> from livescore import Run, Step, ToolCall
        >>> run = Run(steps=[Step(kind="tool", tool_call=ToolCall("weather", result="sunny"))])
        >>> [r.result for r in extract_tool_results(run)]
        ['sunny']
    """
    results: list[ToolResult] = []
    for step in coerce_run(run).steps:
        call = step.tool_call
        if step.kind == "tool" and call is not None and call.ok and step.error is None:
            results.append(ToolResult(call.name, call.call_id, call.args, call.result))
    return results


def get_run_context(run: RunLike, step: Any = None) -> list[str]:
    """The ground truth a run carries: the default ``get_context`` of judge scorers.

    A context given with the run (a dataset item's ``context``, kept in
    ``run.metadata["context"]``) wins; otherwise the run's own evidence: each successful
    tool call (name, arguments and result, via :meth:`ToolResult.to_context`) and each
    retrieved document, in the order the agent received them. An empty list means the run
    carries no ground truth (judge scorers then skip it as not scorable).

    Example:
        >>> from livescore import Run, Step, ToolCall
        >>> run = Run(steps=[Step(kind="retriever", documents=["Paris is in France."])])
        >>> get_run_context(run)
        ['Paris is in France.']
        >>> get_run_context(Run(metadata={"context": "Given."}))
        ['Given.']
    """
    record = coerce_run(run)
    given = record.metadata.get(CONTEXT_METADATA_KEY)
    if isinstance(given, str):
        return [given]
    if isinstance(given, Sequence) and given:
        return [v if isinstance(v, str) else message_text(v) for v in given]
    context: list[str] = []
    for item in record.steps:
        call = item.tool_call
        if item.kind == "tool" and call is not None and call.ok and item.error is None:
            context.append(ToolResult(call.name, call.call_id, call.args, call.result).to_context())
        elif item.kind == "retriever":
            context.extend(item.documents)
    return context


def extract_retrieved_documents(run: RunLike) -> list[str]:
    """Return the text of every document retrieved during ``run``, in order.

    Example:
        >>> extract_retrieved_documents({"steps": [{"kind": "retriever", "documents": ["A"]}]})
        ['A']
    """
    steps = coerce_run(run).steps
    return [doc for step in steps if step.kind == "retriever" for doc in step.documents]


def get_user_message(run: RunLike) -> str | None:
    """The text of the user's last message, or ``None`` when the input holds no text at all.

    ``None`` ("not found") differs from ``""`` (an empty message): a run whose input is a
    mapping of prompt variables (``{"topic": "..."}``), a message list without a user
    message, or nothing at all has no user text to score, and scorers skip it as not
    scorable instead of scoring an empty string. Write ``get_user_message(run) or ""``
    where any text will do.

    Raises:
        TypeError: The input is not text-like (a number, bytes…).

    Example:
        >>> get_user_message({"input": {"messages": [{"role": "user", "content": "Hi"}]}})
        'Hi'
        >>> get_user_message({"input": {"topic": "bears"}}) is None
        True
    """
    return find_message(coerce_run(run).input, "user")


def get_assistant_message(run: RunLike) -> str | None:
    """The text of the agent's final answer, or ``None`` when the output holds no text.

    As :func:`get_user_message`: ``{"answer": ...}`` or a message list without an assistant
    message gives ``None``; an empty answer gives ``""``.

    Example:
        >>> get_assistant_message({"output": "Hello!"})
        'Hello!'
        >>> get_assistant_message({"output": {"result": 42}}) is None
        True
    """
    return find_message(coerce_run(run).output, "assistant")
