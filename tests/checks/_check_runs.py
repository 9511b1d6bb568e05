"""Runs with tool calls for the quick check tests."""

from __future__ import annotations

from typing import Any

from livescore import Run, Step, ToolCall


def tool_run(*calls: str | tuple[str, str] | tuple[str, Any, str | None]) -> Run:
    """A run whose tool calls are ``calls``: a name, ``(name, error)``, or ``(name, args,
    error)``."""
    steps = []
    for index, call in enumerate(calls):
        if isinstance(call, str):
            name, args, error = call, {"n": index}, None
        elif len(call) == 2:
            name, args, error = call[0], {"n": index}, call[1]
        else:
            name, args, error = call
        result = None if error else f"{name} result"
        steps.append(
            Step(
                kind="tool",
                name=name,
                index=index,
                tool_call=ToolCall(name, f"c{index}", args, result, error),
                error=error,
            )
        )
    return Run(input="Do the thing.", output="Done.", steps=steps)
