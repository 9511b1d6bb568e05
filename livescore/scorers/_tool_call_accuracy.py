"""The tool-call accuracy scorer (code), and what it shares with the trajectory scorer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from livescore._catalog import ScorerOptions, catalog_entry, split_names
from livescore._tool_calls import RecordedCall, describe_calls, read_tool_calls
from livescore.pii import RedactSpec
from livescore.scorers._text import code_scorer
from livescore.scoring import CalibrationSpec, Scorer, StepContext

__all__ = (
    "TOOL_CALL_ACCURACY_LABELS",
    "create_tool_call_accuracy_scorer",
    "followed",
    "tool_calls_step",
    "tool_names",
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
        expected_tool_order: The tools the agent should call, in order (repeats allowed); it
            decides when both are given, and must then hold ``expected_tool``.
        strict: No other calls allowed: exactly one call to the tool, or exactly the order.
        partial_credit: Score a partly right order by its longest common subsequence (LCS)
            with the calls: LCS / expected, or with ``strict`` 2·LCS / (expected + calls).

    The other arguments are those of :func:`~livescore.scoring.create_scorer`.

    Returns:
        A scorer whose ``analyze_step_result`` is ``{"expected_tools", "matched" (the LCS),
        "correct", "failed_calls"}``.

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
        calls: list[RecordedCall] = ctx.state["calls"]
        matched, share = followed(self.order, [call.name for call in calls], strict=self.strict)
        ctx.state["share"] = share
        return {
            "expected_tools": list(self.order),
            "matched": matched,
            # A share of 1 is the whole order in order (strict: exactly the order), so it
            # is also "called the one expected tool".
            "correct": share == 1,
            "failed_calls": [call.to_dict() for call in calls if not call.ok],
        }

    def generate_score(self, ctx: StepContext) -> float:
        share: float = ctx.state["share"]
        return share if self.partial_credit else float(share == 1)

    def generate_reason(self, ctx: StepContext) -> str:
        calls: list[RecordedCall] = ctx.state["calls"]
        sequence = " → ".join(self.order)
        if self.single:
            wanted = f"exactly one call, to {sequence}" if self.strict else sequence
        elif self.strict:
            wanted = f"exactly the calls {sequence}"
        else:
            wanted = f"the calls {sequence} in this order"
        if not calls:
            return f"No tool was called; expected {wanted}."
        made = f"Calls: {describe_calls(calls)}."
        if ctx.analyze_step_result["correct"]:
            verb = "Called" if self.single and not self.strict else "Made"
            return f"{verb} {wanted} as expected. {made}"
        credit = ""
        if self.partial_credit and not self.single:
            matched = ctx.analyze_step_result["matched"]
            credit = f" {matched} of the {len(self.order)} expected calls in order."
        return f"Expected {wanted}; the agent did not.{credit} {made}"

    def label(self, score: float) -> str:
        return "correct" if score >= 1 else "partial" if score > 0 else "incorrect"


def tool_calls_step(ctx: StepContext, names_field: str) -> dict[str, Any]:
    """The tool scorers' preprocess step; it keeps the calls in ``ctx.state["calls"]``."""
    calls = read_tool_calls(ctx.run)
    ctx.state["calls"] = calls
    return {
        "tool_calls": [call.to_dict() for call in calls],
        names_field: [call.name for call in calls],
    }


def followed(expected: list[str], names: list[str], *, strict: bool) -> tuple[int, float]:
    """The LCS of the expected tools and the calls, and LCS / expected (``strict``: 2·LCS /
    (expected + calls), 1 only for exactly the expected sequence)."""
    # Imported on first use: `import livescore.scorers` stays light.
    from rapidfuzz.distance import LCSseq

    matched = LCSseq.similarity(expected, names) if names else 0
    if strict:
        return matched, 2.0 * matched / (len(expected) + len(names))
    return matched, matched / len(expected)


def tool_names(value: object, what: str) -> list[str]:
    """``value`` as a list of tool names; ``what`` names it in the errors."""
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise TypeError(f"{what} must be a list of tool names, not {type(value).__name__}")
    for name in value:
        if not isinstance(name, str):
            raise TypeError(f"{what} must hold tool names (strings), not {type(name).__name__}")
        if not name.strip():
            raise ValueError(f"{what} has an empty tool name")
    return list(value)


def _expected(tool: object, order: object) -> list[str]:
    if tool is None and order is None:
        raise ValueError("give expected_tool (a tool name) or expected_tool_order (tool names)")
    if tool is not None and not isinstance(tool, str):
        raise TypeError(f"expected_tool must be a tool name (a string), not {type(tool).__name__}")
    single = tool_names([] if tool is None else [tool], "expected_tool")
    if order is None:
        return single
    names = tool_names(order, "expected_tool_order")
    if not names:
        raise ValueError("expected_tool_order is empty: list the tools in the expected order")
    if single and single[0] not in names:
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
