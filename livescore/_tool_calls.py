"""The tool calls of a run, as the tool-call scorers and the quick checks read them
(failed calls and calls requested but never run included)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from livescore.runs import Run

__all__ = ("RecordedCall", "describe_calls", "is_subsequence", "read_tool_calls")


@dataclass(frozen=True, slots=True)
class RecordedCall:
    """One tool call of a run, successful or not.

    Attributes:
        name: The tool's name.
        args: The arguments it was called with.
        error: Why it failed; ``None`` when it succeeded.
        ran: ``False`` for a call the model requested that never ran (the run stopped
            first); such a call counts as failed.

    Example:
        >>> call = RecordedCall("search", {"q": "news"}, error="timeout")
        >>> call.ok, call.to_dict()
        (False, {'name': 'search', 'ok': False, 'error': 'timeout'})
    """

    name: str
    args: Any = None
    error: str | None = None
    ran: bool = True

    @property
    def ok(self) -> bool:
        """Whether the call ran and succeeded."""
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe summary for step results: name, ok, error (no arguments or results)."""
        return {"name": self.name, "ok": self.ok, "error": self.error}


def read_tool_calls(run: Run) -> list[RecordedCall]:
    """Every tool call of ``run``, in order: the calls that ran (``Step(kind="tool")``) and the
    calls a model turn requested that never ran.

    A call that raised or returned an error is a failed call (``error`` set). A requested call
    counts as never run only when the integration records call ids on the tool steps (the
    LangChain handler does); otherwise requested calls cannot be matched and are left out.

    Example:
        >>> from livescore import Run, Step, ToolCall
        >>> run = Run(steps=[
        ...     Step(kind="tool", tool_call=ToolCall("search", error="timeout")),
        ...     Step(kind="tool", tool_call=ToolCall("search", result="ok")),
        ... ])
        >>> [(c.name, c.ok) for c in read_tool_calls(run)]
        [('search', False), ('search', True)]
    """
    calls: list[RecordedCall] = []
    executed_ids: set[str] = set()
    ids_known = True
    for step in run.steps:
        call = step.tool_call
        if step.kind == "tool" and call is not None:
            if call.call_id:
                executed_ids.add(call.call_id)
            else:
                ids_known = False
    for step in run.steps:
        call = step.tool_call
        if step.kind == "tool" and call is not None:
            error = call.error if call.error is not None else step.error
            calls.append(RecordedCall(call.name, call.args, error))
        elif step.kind == "model" and ids_known:
            for requested in step.tool_calls_requested:
                if requested.call_id and requested.call_id not in executed_ids:
                    calls.append(
                        RecordedCall(
                            requested.name,
                            requested.args,
                            "requested by the model but never ran",
                            ran=False,
                        )
                    )
    return calls


def describe_calls(calls: Iterable[RecordedCall], *, limit: int = 12) -> str:
    """The calls on one line, failures marked: ``"search (failed: timeout), summarize"``.

    Example:
        >>> describe_calls([RecordedCall("search", error="timeout"), RecordedCall("sum")])
        'search (failed: timeout), sum'
        >>> describe_calls([])
        'none'
    """
    items = list(calls)
    if not items:
        return "none"
    parts = [
        call.name if call.ok else f"{call.name} (failed: {_short(call.error or 'error')})"
        for call in items[:limit]
    ]
    if len(items) > limit:
        parts.append(f"and {len(items) - limit} more")
    return ", ".join(parts)


def _short(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def is_subsequence(expected: Sequence[str], actual: Sequence[str]) -> bool:
    """Whether ``expected`` appears in ``actual`` in order, other items allowed between.

    Example:
        >>> is_subsequence(["search", "answer"], ["search", "lookup", "answer"])
        True
        >>> is_subsequence(["a", "b", "a"], ["a", "b"])
        False
    """
    remaining = iter(actual)
    return all(name in remaining for name in expected)
