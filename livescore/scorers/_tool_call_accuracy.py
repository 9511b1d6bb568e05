"""The tool-call accuracy scorer (code): did the agent call the right tool(s), in order."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from livescore._catalog import ScorerOptions, catalog_entry, split_names
from livescore._tool_calls import RecordedCall, describe_calls, is_subsequence, read_tool_calls
from livescore.pii import RedactSpec
from livescore.scoring import CalibrationSpec, Scorer, StepContext, create_scorer

__all__ = ("TOOL_CALL_ACCURACY_LABELS", "create_tool_call_accuracy_scorer")

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

    Reads the run's tool calls (``Run.steps`` of kind ``"tool"``, in order, plus any call a
    model turn requested that never ran). A call that failed still counts as a call — the
    agent chose that tool — and the reason says which calls failed and why.

    Rules (score 1 or 0 unless ``partial_credit``):

    - No tool call at all → 0.
    - ``expected_tool``: 1 when the agent called it (``strict=True``: when it made exactly
      one call, to that tool).
    - ``expected_tool_order``: 1 when the calls contain these tools in this order, other calls
      allowed between them (``strict=True``: when the calls are exactly this sequence). A
      tool may appear several times in the order ("search", "read", "search").
    - ``partial_credit=True``: the share of the expected sequence the agent got right, with
      LCS = the longest common subsequence of the expected tools and the calls: LCS /
      expected (extra calls are free), or with ``strict=True`` 2·LCS / (expected + calls)
      (extra calls cost too). One call too few out of three in order → 0.67 instead of 0.

    Args:
        expected_tool: The tool the agent should call.
        expected_tool_order: The tools the agent should call, in order. With both given, the
            order decides and ``expected_tool`` must be one of its tools.
        strict: No other calls allowed (see above).
        partial_credit: Give a share for a partly right sequence instead of 0.
        id: The scorer id on results, spans and metrics.
        redact: Keeps personal data from the judge (see ``Scorer.with_redaction``).
        calibration: Labels fitted on yours (see ``Scorer.with_calibration``).

    Returns:
        A scorer whose results carry ``preprocess_step_result = {"tool_calls": [{"name",
        "ok", "error"}...], "actual_tools": [...]}``, ``analyze_step_result =
        {"expected_tools": [...], "matched": int, "correct": bool, "failed_calls": [...]}``,
        the score, a label (``correct``, ``partial``, ``incorrect``) and a reason.

    Raises:
        ValueError: Neither ``expected_tool`` nor ``expected_tool_order`` is given, a tool
            name is empty, the order is empty, or ``expected_tool`` is not in the order.
        TypeError: A tool name is not a string, or the order is a single string.

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
    single = expected_tool_order is None

    def preprocess(ctx: StepContext) -> dict[str, Any]:
        calls = read_tool_calls(ctx.run)
        ctx.state["calls"] = calls
        return {
            "tool_calls": [call.to_dict() for call in calls],
            "actual_tools": [call.name for call in calls],
        }

    def analyze(ctx: StepContext) -> dict[str, Any]:
        # Imported on first use: `import livescore.scorers` stays light.
        from rapidfuzz.distance import LCSseq

        calls: list[RecordedCall] = ctx.state["calls"]
        names = [call.name for call in calls]
        if strict:
            correct = names == order
        elif single:
            correct = order[0] in names
        else:
            correct = is_subsequence(order, names)
        return {
            "expected_tools": list(order),
            "matched": LCSseq.similarity(order, names) if names else 0,
            "correct": correct,
            "failed_calls": [call.to_dict() for call in calls if not call.ok],
        }

    def generate_score(ctx: StepContext) -> float:
        analysis = ctx.analyze_step_result
        calls = ctx.state["calls"]
        if not calls:
            return 0.0
        if analysis["correct"]:
            return 1.0
        if not partial_credit:
            return 0.0
        matched: int = analysis["matched"]
        if strict:
            return 2.0 * matched / (len(order) + len(calls))
        return matched / len(order)

    def generate_reason(ctx: StepContext) -> str:
        calls: list[RecordedCall] = ctx.state["calls"]
        wanted = _wanted(order, single=single, strict=strict)
        if not calls:
            return f"No tool was called; expected {wanted}."
        made = f"Calls: {describe_calls(calls)}."
        if ctx.analyze_step_result["correct"]:
            verb = "Called" if single and not strict else "Made"
            return f"{verb} {wanted} as expected. {made}"
        matched = ctx.analyze_step_result["matched"]
        credit = (
            f" {matched} of the {len(order)} expected calls in order."
            if partial_credit and not single
            else ""
        )
        return f"Expected {wanted}; the agent did not.{credit} {made}"

    kind = "tool" if single else "tool order"
    target = order[0] if single else " → ".join(order)
    return create_scorer(
        id=id,
        description=f"Whether the agent called the expected {kind} ({target})"
        + (", and nothing else" if strict else ""),
        preprocess=preprocess,
        analyze=analyze,
        generate_score=generate_score,
        generate_reason=generate_reason,
        label=lambda s: "correct" if s >= 1 else "partial" if s > 0 else "incorrect",
        sync_steps="inline",  # pure CPU: a thread hop would cost more than the step
        redact=redact,
        calibration=calibration,
    )


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
