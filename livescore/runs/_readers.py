"""Helpers that read evidence and messages out of a :class:`~livescore.runs.Run`."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from livescore.runs._model import Run

__all__ = (
    "CONTEXT_METADATA_KEY",
    "NOT_SCORABLE_METADATA_KEY",
    "ToolResult",
    "extract_retrieved_documents",
    "extract_tool_results",
    "get_assistant_message",
    "get_run_context",
    "get_user_message",
    "message_text",
)

CONTEXT_METADATA_KEY = "context"
"""Where a run carries ground truth given with it (a dataset item's ``context``)."""

NOT_SCORABLE_METADATA_KEY = "not_scorable"
"""Where a run says why no scorer can judge it (say, its runtime recorded no content): every
scorer then skips it with that reason instead of scoring empty text."""


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
        """One context string: ``{"tool": name, "result": result}`` as JSON (the seed's form).

        A result that is itself JSON text (LangChain hands dict results to the model as JSON)
        is embedded as JSON, not as an escaped string, so the judge reads it as the model did.

        Example:
            >>> ToolResult("weather", "c1", {}, '{"sky": "sunny"}').to_context()
            '{"tool": "weather", "result": {"sky": "sunny"}}'
        """
        return json.dumps({"tool": self.tool_name, "result": _maybe_json(self.result)}, default=str)


def _maybe_json(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def extract_tool_results(run: Run) -> list[ToolResult]:
    """Return the successful tool results of ``run``, in call order.

    Failed calls are left out: an error message is not evidence of anything the agent says.

    Example:
        >>> from livescore import Run, Step, ToolCall
        >>> run = Run(steps=[Step(kind="tool", tool_call=ToolCall("weather", result="sunny"))])
        >>> [r.result for r in extract_tool_results(run)]
        ['sunny']
    """
    results: list[ToolResult] = []
    for step in run.steps:
        call = step.tool_call
        if step.kind == "tool" and call is not None and call.ok and step.error is None:
            results.append(ToolResult(call.name, call.call_id, call.args, call.result))
    return results


def get_run_context(run: Run, step: Any = None) -> list[str]:
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
    given = run.metadata.get(CONTEXT_METADATA_KEY)
    if isinstance(given, str):
        return [given]
    if isinstance(given, Sequence) and given:
        return [v if isinstance(v, str) else message_text(v) for v in given]
    context: list[str] = []
    for item in run.steps:
        call = item.tool_call
        if item.kind == "tool" and call is not None and call.ok and item.error is None:
            context.append(ToolResult(call.name, call.call_id, call.args, call.result).to_context())
        elif item.kind == "retriever":
            context.extend(item.documents)
    return context


def extract_retrieved_documents(run: Run) -> list[str]:
    """Return the text of every document retrieved during ``run``, in order."""
    return [doc for step in run.steps if step.kind == "retriever" for doc in step.documents]


def message_text(value: Any) -> str:
    """The text of a message, a list of content parts, or a plain value.

    Accepts strings, role/content dicts, LangChain-style message objects (by duck typing: a
    ``content`` attribute) and OpenAI-style content part lists (``{"type": "text", ...}``).
    """
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        if "content" in value:
            return message_text(value["content"])
        if value.get("type") == "text" and isinstance(value.get("text"), str):
            return str(value["text"])
        return ""
    if isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        parts = (message_text(part) for part in value)
        return "\n".join(p for p in parts if p)
    content = getattr(value, "content", None)
    if content is not None:
        return message_text(content)
    raise TypeError(f"cannot read text from a {type(value).__name__}")


def _role(message: Any) -> str | None:
    if isinstance(message, Mapping):
        role = message.get("role") or message.get("type")
    else:
        role = getattr(message, "role", None) or getattr(message, "type", None)
    if role is None:
        return None
    return {"human": "user", "ai": "assistant"}.get(str(role), str(role))


def _is_message_list(value: Any) -> bool:
    return (
        isinstance(value, Sequence)
        and not isinstance(value, str | bytes | bytearray)
        and any(_role(m) is not None for m in value)
    )


def get_user_message(run: Run) -> str:
    """The text of the last user message of ``run.input`` (or the input itself as text)."""
    value = run.input
    if isinstance(value, Mapping) and "messages" in value:
        value = value["messages"]
    if _is_message_list(value):
        for message in reversed(value):
            if _role(message) == "user":
                return message_text(message)
        return ""
    return message_text(value)


def get_assistant_message(run: Run) -> str:
    """The text of the final assistant message of ``run.output`` (or the output as text)."""
    value = run.output
    if isinstance(value, Mapping) and "messages" in value:
        value = value["messages"]
    if _is_message_list(value):
        for message in reversed(value):
            if _role(message) == "assistant":
                return message_text(message)
        return ""
    return message_text(value)
