"""Quick checks: zero-judge pass/fail tests of an agent run, as pytest assertions and as
scorers.

Each check has two forms with the same arguments:

- ``checks.includes(run, "refund")`` returns a :class:`CheckResult`, true when the run
  passes, for tests: ``assert checks.includes(run, "refund")`` fails with a message naming
  the check, the reason and the answer (or the tool calls) it looked at;
- ``checks.includes_scorer("refund")`` returns a :class:`~livescore.Scorer` scoring 1 (pass)
  or 0 (fail) with the reason, for live scoring and ``run_evals``.

Arguments are checked when the check is built (an empty text, an invalid regex, a negative
count raise ``ValueError`` there), never at the first live run.

Example:
    >>> from livescore import Run, Step, ToolCall, checks
    >>> run = Run(
    ...     input="Where is my refund?",
    ...     output="Your refund was sent on Monday.",
    ...     steps=[Step(kind="tool", tool_call=ToolCall("lookup_refund", result="sent"))],
    ... )
    >>> assert checks.includes(run, "refund")
    >>> assert checks.called_tool(run, "lookup_refund")
    >>> checks.did_not_call(run, "lookup_refund")
    <did-not-call FAILED: the agent called lookup_refund once; tool calls: lookup_refund>
    >>> checks.excludes_scorer("error").run_sync(run).score
    1.0
"""

from livescore.checks._check import CheckResult
from livescore.checks._text_checks import (
    equals,
    equals_scorer,
    excludes,
    excludes_scorer,
    includes,
    includes_scorer,
    matches,
    matches_scorer,
    similarity,
    similarity_scorer,
)
from livescore.checks._tool_checks import (
    called_tool,
    called_tool_scorer,
    did_not_call,
    did_not_call_scorer,
    max_tool_calls,
    max_tool_calls_scorer,
    no_tool_errors,
    no_tool_errors_scorer,
    tool_order,
    tool_order_scorer,
    used_no_tools,
    used_no_tools_scorer,
)

__all__ = (
    "CheckResult",
    "called_tool",
    "called_tool_scorer",
    "did_not_call",
    "did_not_call_scorer",
    "equals",
    "equals_scorer",
    "excludes",
    "excludes_scorer",
    "includes",
    "includes_scorer",
    "matches",
    "matches_scorer",
    "max_tool_calls",
    "max_tool_calls_scorer",
    "no_tool_errors",
    "no_tool_errors_scorer",
    "similarity",
    "similarity_scorer",
    "tool_order",
    "tool_order_scorer",
    "used_no_tools",
    "used_no_tools_scorer",
)
