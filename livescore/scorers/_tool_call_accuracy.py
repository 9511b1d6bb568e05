"""The tool-call accuracy scorer (code): did the agent call the right tool(s), in order."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from livescore._catalog import ScorerOptions, catalog_entry, split_names
from livescore._tool_calls import RecordedCall, describe_calls, is_subsequence, read_tool_calls
from livescore.pii import RedactSpec
from livescore.scorers._text import code_scorer
from livescore.scoring import CalibrationSpec, Scorer, StepContext

__all__ = (
    "TOOL_CALL_ACCURACY_LABELS",
    "create_tool_call_accuracy_scorer",
    "lcs_length",
    "lcs_share",
    "recorded_calls",
    "tool_calls_step",
)

TOOL_CALL_ACCURACY_LABELS = ("incorrect", "partial", "correct")
"""Every label of a tool-call accuracy score: 0, between 0 and 1 (partial credit), 1."""


def create_tool_call_accuracy_scorer(
    *,
    expected_tool: str | None = None,
    expected_tool_order: Sequence[str] | None = None,
    strict: bool = False,
    partial_credit: bool = False,
    id: str = "tool-call-accuracy",
    redact: RedactSpec | None = None,
    calibration: CalibrationSpec | None = None,
) -> Scorer:
    """Score whether the agent called the expected tool, or the expected tools in order.

    Reads the run's tool calls in order, failed and never-run ones included (a failed call
    still counts: the agent chose that tool). The score is 1 when the agent called
    ``expected_tool``, or made the calls of ``expected_tool_order`` in that order with others
    allowed between; else 0, and 0 for a run with no tool call.

    Args:
        expected_tool: The tool the agent should call.
        expected_tool_order: The tools the agent should call, in order (a tool may appear
            several times). With both given, the order decides and ``expected_tool`` must be
            one of its tools.
        strict: No other calls allowed: exactly one call to ``expected_tool``, or exactly the
            calls of the order.
        partial_credit: Score a partly right order by LCS, the longest common subsequence of
            the expected tools and the calls: LCS / expected, or with ``strict`` 2·LCS /
            (expected + calls).

    The other arguments are those of :func:`~livescore.scoring.create_scorer`.

    Returns:
        A scorer whose results carry ``preprocess_step_result = {"tool_calls": [{"name",
        "ok", "error"}...], "actual_tools"}`` and ``analyze_step_result =
        {"expected_tools", "matched", "correct", "failed_calls"}``.

    Example:
        >>> from livescore import Run, Step, ToolCall
        >>> scorer = create_tool_call_accuracy_scorer(expected_tool="get_weather")
        >>> run = Run(input="Weather in Paris?", output="Sunny.", steps=[
        ...     Step(kind="tool", tool_call=ToolCall("get_weather", error="timeout")),
        ...     Step(kind="tool", tool_call=ToolCall("get_weather", result="sunny")),
        ... ])
        >>> result = scorer.run_sync(run)
        >>> result.score, result.label
        (1.0, 'correct')
        >>> result.reason
        'Called get_weather as expected. Calls: get_weather (failed: timeout), get_weather.'
    """
    order = _expected(expected_tool, expected_tool_order)
    steps = _ToolCallAccuracy(order, expected_tool_order is None, strict, partial_credit)
    return code_scorer(steps, id=id, redact=redact, calibration=calibration)


@dataclass(frozen=True, slots=True)
class _ToolCallAccuracy:
    order: list[str]
    single: bool  # one expected tool, not an order
    strict: bool
    partial_credit: bool

    @property
    def description(self) -> str:
        kind = "tool" if self.single else "tool order"
        target = " → ".join(self.order)  # one tool when single
        nothing_else = ", and nothing else" if self.strict else ""
        return f"Whether the agent called the expected {kind} ({target}){nothing_else}"

    def preprocess(self, ctx: StepContext) -> dict[str, Any]:
        return tool_calls_step(ctx, "actual_tools")

    def analyze(self, ctx: StepContext) -> dict[str, Any]:
        calls, names = recorded_calls(ctx)
        if self.strict:
            correct = names == self.order
        elif self.single:
            correct = self.order[0] in names
        else:
            correct = is_subsequence(self.order, names)
        return {
            "expected_tools": list(self.order),
            "matched": lcs_length(self.order, names),
            "correct": correct,
            "failed_calls": [call.to_dict() for call in calls if not call.ok],
        }

    def generate_score(self, ctx: StepContext) -> float:
        analysis = ctx.analyze_step_result
        calls = ctx.state["calls"]
        if not calls:
            return 0.0
        if analysis["correct"]:
            return 1.0
        if not self.partial_credit:
            return 0.0
        return lcs_share(analysis["matched"], len(self.order), len(calls), strict=self.strict)

    def generate_reason(self, ctx: StepContext) -> str:
        calls: list[RecordedCall] = ctx.state["calls"]
        wanted = _wanted(self.order, single=self.single, strict=self.strict)
        if not calls:
            return f"No tool was called; expected {wanted}."
        made = f"Calls: {describe_calls(calls)}."
        if ctx.analyze_step_result["correct"]:
            verb = "Called" if self.single and not self.strict else "Made"
            return f"{verb} {wanted} as expected. {made}"
        matched = ctx.analyze_step_result["matched"]
        credit = (
            f" {matched} of the {len(self.order)} expected calls in order."
            if self.partial_credit and not self.single
            else ""
        )
        return f"Expected {wanted}; the agent did not.{credit} {made}"

    def label(self, score: float) -> str:
        return "correct" if score >= 1 else "partial" if score > 0 else "incorrect"


def tool_calls_step(ctx: StepContext, names_field: str) -> dict[str, Any]:
    """The code tool scorers' preprocess step: the run's tool calls (kept in
    ``ctx.state["calls"]``) as ``{"tool_calls": [...], names_field: [their names]}``."""
    calls = read_tool_calls(ctx.run)
    ctx.state["calls"] = calls
    return {
        "tool_calls": [call.to_dict() for call in calls],
        names_field: [call.name for call in calls],
    }


def recorded_calls(ctx: StepContext) -> tuple[list[RecordedCall], list[str]]:
    """The calls :func:`tool_calls_step` kept, and their names."""
    calls: list[RecordedCall] = ctx.state["calls"]
    return calls, [call.name for call in calls]


def lcs_length(expected: list[str], names: list[str]) -> int:
    """The length of the longest common subsequence of the expected tools and the calls."""
    # Imported on first use: `import livescore.scorers` stays light.
    from rapidfuzz.distance import LCSseq

    return LCSseq.similarity(expected, names) if names else 0


def lcs_share(matched: int, expected: int, calls: int, *, strict: bool) -> float:
    """The share of an expected sequence followed: LCS / expected (extra calls are free), or
    with ``strict`` 2·LCS / (expected + calls) (1 only for exactly the expected sequence)."""
    if strict:
        return 2.0 * matched / (expected + calls)
    return matched / expected


def _wanted(order: list[str], *, single: bool, strict: bool) -> str:
    if single:
        return f"exactly one call, to {order[0]}" if strict else order[0]
    sequence = " → ".join(order)
    return f"exactly the calls {sequence}" if strict else f"the calls {sequence} in this order"


def _tool_name(name: object, what: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"{what} must be a tool name (a string), not {type(name).__name__}")
    if not name.strip():
        raise ValueError(f"{what} is empty: give the tool's name")
    return name


def _expected(tool: object, order: object) -> list[str]:
    if tool is None and order is None:
        raise ValueError("give expected_tool (a tool name) or expected_tool_order (tool names)")
    if order is None:
        return [_tool_name(tool, "expected_tool")]
    if isinstance(order, str) or not isinstance(order, Sequence):
        raise TypeError("expected_tool_order must be a list of tool names, not one string")
    names = [_tool_name(name, "a tool name in expected_tool_order") for name in order]
    if not names:
        raise ValueError("expected_tool_order is empty: list the tools in the expected order")
    if tool is not None and _tool_name(tool, "expected_tool") not in names:
        raise ValueError(
            f"expected_tool {tool!r} is not in expected_tool_order {names}: the order decides "
            "the score, so give one of them"
        )
    return names


# -- in the catalog ---------------------------------------------------------------------------


@catalog_entry(
    "tool-call-accuracy",
    family="tools",
    summary="1 when the agent called the expected tool (or tools, in order), else 0",
    argument="TOOLS: a tool name, or A,B,C for an expected order",
    argument_required=True,
    factory="livescore.scorers.create_tool_call_accuracy_scorer",
    examples=("tool-call-accuracy:search", "tool-call-accuracy:search,answer"),
)
def _build(argument: str | None, options: ScorerOptions) -> Scorer:
    names = split_names(argument, "tool-call-accuracy")
    if len(names) == 1:
        return create_tool_call_accuracy_scorer(expected_tool=names[0])
    return create_tool_call_accuracy_scorer(expected_tool_order=names)
