"""Checks of the run's tool calls: called-tool, did-not-call, tool-order, max-tool-calls,
no-tool-errors, used-no-tools."""

from __future__ import annotations

from collections.abc import Sequence

from livescore._catalog import ScorerOptions, catalog_entry, split_names
from livescore._tool_calls import RecordedCall, describe_calls, is_subsequence, read_tool_calls
from livescore.checks._check import Check, CheckResult
from livescore.runs import Run, RunLike
from livescore.scoring import Scorer

__all__ = (
    "called_tool",
    "called_tool_scorer",
    "did_not_call",
    "did_not_call_scorer",
    "max_tool_calls",
    "max_tool_calls_scorer",
    "no_tool_errors",
    "no_tool_errors_scorer",
    "tool_order",
    "tool_order_scorer",
    "used_no_tools",
    "used_no_tools_scorer",
)


def _tool(name: object) -> str:
    if not isinstance(name, str):
        raise TypeError(f"a tool name must be a string, not {type(name).__name__}")
    if not name.strip():
        raise ValueError("the tool name is empty: give the tool's name")
    return name


def _count(value: object, what: str, *, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be a whole number, not {value!r}")
    if value < least:
        raise ValueError(f"{what} must be {least} or more, not {value}")
    return value


def _calls(run: Run) -> tuple[list[RecordedCall], str]:
    calls = read_tool_calls(run)
    return calls, f"tool calls: {describe_calls(calls)}"


def _times(count: int) -> str:
    return "once" if count == 1 else f"{count} times"


def _failures(calls: list[RecordedCall]) -> str:
    failed = [call for call in calls if not call.ok]
    if not failed:
        return ""
    errors = "; ".join(dict.fromkeys(call.error or "error" for call in failed))
    return f" ({len(failed)} failed: {errors})"


# -- called_tool ------------------------------------------------------------------------------


def _called_tool_check(name: str, times: int) -> Check:
    tool = _tool(name)
    least = _count(times, "times", least=1)
    wanted = f"{tool} at least {_times(least)}" if least > 1 else tool

    def evaluate(run: Run) -> CheckResult:
        calls, evidence = _calls(run)
        mine = [call for call in calls if call.name == tool]
        passed = len(mine) >= least
        if mine:
            reason = f"the agent called {tool} {_times(len(mine))}{_failures(mine)}"
            if not passed:
                reason += f", fewer than {least}"
        else:
            reason = f"the agent never called {tool}"
        return CheckResult(
            "called-tool",
            passed=passed,
            reason=reason,
            details={"count": len(mine), "failed": sum(not c.ok for c in mine), "times": least},
            evidence=evidence,
        )

    return Check("called-tool", f"The agent called {wanted}", evaluate, text_input=False)


def called_tool(run: RunLike, name: str, *, times: int = 1) -> CheckResult:
    """Check that the agent called tool ``name`` (at least ``times`` times).

    A call that failed still counts (the agent chose the tool); the reason says it failed.
    Combine with :func:`no_tool_errors` to require success.

    Example:
        >>> from livescore import Run, Step, ToolCall
        >>> run = Run(steps=[Step(kind="tool", tool_call=ToolCall("search", error="timeout"))])
        >>> called_tool(run, "search")
        <called-tool passed: the agent called search once (1 failed: timeout)>
    """
    return _called_tool_check(name, times)(run)


def called_tool_scorer(name: str, *, times: int = 1, id: str = "called-tool") -> Scorer:
    """:func:`called_tool` as a scorer: 1 when the agent called ``name`` enough times."""
    return _called_tool_check(name, times).scorer(id=id)


# -- did_not_call -----------------------------------------------------------------------------


def _did_not_call_check(name: str) -> Check:
    tool = _tool(name)

    def evaluate(run: Run) -> CheckResult:
        calls, evidence = _calls(run)
        count = sum(call.name == tool for call in calls)
        reason = (
            f"the agent called {tool} {_times(count)}"
            if count
            else f"the agent never called {tool}"
        )
        return CheckResult(
            "did-not-call", count == 0, reason, details={"count": count}, evidence=evidence
        )

    return Check("did-not-call", f"The agent did not call {tool}", evaluate, text_input=False)


def did_not_call(run: RunLike, name: str) -> CheckResult:
    """Check that the agent never called tool ``name`` (a dangerous or costly one).

    Example:
        >>> from livescore import Run
        >>> bool(did_not_call(Run(), "delete_account"))
        True
    """
    return _did_not_call_check(name)(run)


def did_not_call_scorer(name: str, *, id: str = "did-not-call") -> Scorer:
    """:func:`did_not_call` as a scorer: 1 when the agent never called ``name``."""
    return _did_not_call_check(name).scorer(id=id)


# -- tool_order -------------------------------------------------------------------------------


def _tool_order_check(names: Sequence[str], strict: bool) -> Check:
    if isinstance(names, str) or not isinstance(names, Sequence):
        raise TypeError("the tool order must be a list of tool names, not one string")
    order = [_tool(name) for name in names]
    if not order:
        raise ValueError("the tool order is empty: list the tools in the expected order")
    shown = " → ".join(order)
    how = "exactly" if strict else "in this order"

    def evaluate(run: Run) -> CheckResult:
        calls, evidence = _calls(run)
        actual = [call.name for call in calls]
        passed = actual == order if strict else is_subsequence(order, actual)
        verb = "made" if passed else "did not make"
        return CheckResult(
            "tool-order",
            passed,
            f"the agent {verb} the calls {shown} {how}",
            details={"expected": order, "actual": actual},
            evidence=evidence,
        )

    return Check("tool-order", f"The agent called {shown} {how}", evaluate, text_input=False)


def tool_order(run: RunLike, names: Sequence[str], *, strict: bool = False) -> CheckResult:
    """Check that the agent called the tools ``names`` in this order (other calls allowed
    between them; ``strict=True``: exactly these calls).

    Example:
        >>> from livescore import Run, Step, ToolCall
        >>> run = Run(steps=[Step(kind="tool", tool_call=ToolCall(n)) for n in ["a", "x", "b"]])
        >>> bool(tool_order(run, ["a", "b"])), bool(tool_order(run, ["a", "b"], strict=True))
        (True, False)
    """
    return _tool_order_check(names, strict)(run)


def tool_order_scorer(
    names: Sequence[str], *, strict: bool = False, id: str = "tool-order"
) -> Scorer:
    """:func:`tool_order` as a scorer: 1 when the calls follow the order, else 0."""
    return _tool_order_check(names, strict).scorer(id=id)


# -- max_tool_calls ---------------------------------------------------------------------------


def _max_tool_calls_check(limit: int) -> Check:
    most = _count(limit, "the maximum number of tool calls", least=0)

    def evaluate(run: Run) -> CheckResult:
        calls, evidence = _calls(run)
        count = len(calls)
        relation = "within" if count <= most else "over"
        return CheckResult(
            "max-tool-calls",
            count <= most,
            f"the agent made {count} tool call{'s' * (count != 1)}, {relation} the limit of {most}",
            details={"count": count, "max": most},
            evidence=evidence,
        )

    return Check(
        "max-tool-calls", f"The agent made at most {most} tool calls", evaluate, text_input=False
    )


def max_tool_calls(run: RunLike, limit: int) -> CheckResult:
    """Check that the agent made at most ``limit`` tool calls (failed ones included).

    Raises:
        ValueError: ``limit`` is negative.

    Example:
        >>> from livescore import Run, Step, ToolCall
        >>> run = Run(steps=[Step(kind="tool", tool_call=ToolCall("search"))] * 3)
        >>> max_tool_calls(run, 2)
        <max-tool-calls FAILED: the agent made 3 tool calls, over the limit of 2; tool calls: search, search, search>
    """  # noqa: E501
    return _max_tool_calls_check(limit)(run)


def max_tool_calls_scorer(limit: int, *, id: str = "max-tool-calls") -> Scorer:
    """:func:`max_tool_calls` as a scorer: 1 when the agent stayed within ``limit`` calls."""
    return _max_tool_calls_check(limit).scorer(id=id)


# -- no_tool_errors ---------------------------------------------------------------------------


def _no_tool_errors_check() -> Check:
    def evaluate(run: Run) -> CheckResult:
        calls, evidence = _calls(run)
        failed = [call for call in calls if not call.ok]
        if failed:
            reason = f"{len(failed)} of {len(calls)} tool calls failed: {describe_calls(failed)}"
        else:
            reason = (
                "no tool was called"
                if not calls
                else "the tool call succeeded"
                if len(calls) == 1
                else f"all {len(calls)} tool calls succeeded"
            )
        return CheckResult(
            "no-tool-errors",
            not failed,
            reason,
            details={"failed": len(failed), "calls": len(calls)},
            # The reason already names every call when they all failed.
            evidence=evidence if len(failed) < len(calls) else "",
        )

    return Check("no-tool-errors", "No tool call failed", evaluate, text_input=False)


def no_tool_errors(run: RunLike) -> CheckResult:
    """Check that no tool call failed (raised, returned an error, or never ran).

    Example:
        >>> from livescore import Run, Step, ToolCall
        >>> run = Run(steps=[Step(kind="tool", tool_call=ToolCall("search", error="HTTP 503"))])
        >>> no_tool_errors(run)
        <no-tool-errors FAILED: 1 of 1 tool calls failed: search (failed: HTTP 503)>
    """
    return _no_tool_errors_check()(run)


def no_tool_errors_scorer(*, id: str = "no-tool-errors") -> Scorer:
    """:func:`no_tool_errors` as a scorer: 1 when every tool call succeeded."""
    return _no_tool_errors_check().scorer(id=id)


# -- used_no_tools ----------------------------------------------------------------------------


def _used_no_tools_check() -> Check:
    def evaluate(run: Run) -> CheckResult:
        calls, evidence = _calls(run)
        reason = (
            f"the agent made {len(calls)} tool call{'s' * (len(calls) != 1)}"
            if calls
            else "the agent called no tool"
        )
        return CheckResult(
            "used-no-tools", not calls, reason, details={"calls": len(calls)}, evidence=evidence
        )

    return Check("used-no-tools", "The agent called no tool", evaluate, text_input=False)


def used_no_tools(run: RunLike) -> CheckResult:
    """Check that the agent answered without calling any tool (small talk, refusals).

    Example:
        >>> from livescore import Run
        >>> bool(used_no_tools(Run(input="Hi", output="Hello!")))
        True
    """
    return _used_no_tools_check()(run)


def used_no_tools_scorer(*, id: str = "used-no-tools") -> Scorer:
    """:func:`used_no_tools` as a scorer: 1 when the agent called no tool."""
    return _used_no_tools_check().scorer(id=id)


# -- in the scorer catalog (`livescore eval --scorer called-tool:search`) ----------------------
# The argument is part of the id, as for the text checks.


@catalog_entry(
    "called-tool",
    family="checks",
    summary="check: 1 when the agent called TOOL",
    argument="TOOL: a tool name",
    argument_required=True,
    factory="livescore.checks.called_tool_scorer",
    examples=("called-tool:search",),
)
def _build_called_tool(argument: str | None, options: ScorerOptions) -> Scorer:
    name = split_names(argument, "called-tool")[0]
    return called_tool_scorer(name, id=f"called-tool:{argument}")


@catalog_entry(
    "did-not-call",
    family="checks",
    summary="check: 1 when the agent never called TOOL",
    argument="TOOL: a tool name",
    argument_required=True,
    factory="livescore.checks.did_not_call_scorer",
    examples=("did-not-call:delete",),
)
def _build_did_not_call(argument: str | None, options: ScorerOptions) -> Scorer:
    name = split_names(argument, "did-not-call")[0]
    return did_not_call_scorer(name, id=f"did-not-call:{argument}")


@catalog_entry(
    "tool-order",
    family="checks",
    summary="check: 1 when the agent called the tools in this order",
    argument="TOOLS: A,B,C",
    argument_required=True,
    factory="livescore.checks.tool_order_scorer",
    examples=("tool-order:search,answer",),
)
def _build_tool_order(argument: str | None, options: ScorerOptions) -> Scorer:
    return tool_order_scorer(split_names(argument, "tool-order"), id=f"tool-order:{argument}")


@catalog_entry(
    "max-tool-calls",
    family="checks",
    summary="check: 1 when the agent made at most N tool calls",
    argument="N: a whole number",
    argument_required=True,
    factory="livescore.checks.max_tool_calls_scorer",
    examples=("max-tool-calls:3",),
)
def _build_max_tool_calls(argument: str | None, options: ScorerOptions) -> Scorer:
    try:
        limit = int(argument or "")
    except ValueError:
        raise ValueError(f"max-tool-calls needs a whole number, not {argument!r}") from None
    return max_tool_calls_scorer(limit, id=f"max-tool-calls:{argument}")


@catalog_entry(
    "no-tool-errors",
    family="checks",
    summary="check: 1 when no tool call failed",
    factory="livescore.checks.no_tool_errors_scorer",
    examples=("no-tool-errors",),
)
def _build_no_tool_errors(argument: str | None, options: ScorerOptions) -> Scorer:
    return no_tool_errors_scorer()


@catalog_entry(
    "used-no-tools",
    family="checks",
    summary="check: 1 when the agent called no tool",
    factory="livescore.checks.used_no_tools_scorer",
    examples=("used-no-tools",),
)
def _build_used_no_tools(argument: str | None, options: ScorerOptions) -> Scorer:
    return used_no_tools_scorer()
