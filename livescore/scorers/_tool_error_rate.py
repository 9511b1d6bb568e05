"""The tool-error-rate scorer: the share of a conversation's tool calls that failed (no judge)."""

from __future__ import annotations

from typing import Any

from livescore._catalog import ScorerOptions, catalog_entry
from livescore.pii import RedactSpec
from livescore.scorers._conversation import (
    because,
    conversation_of,
    every,
    record_turns,
    turn_attributes,
    turns_phrase,
)
from livescore.scorers._judged import defect_label, round2
from livescore.scorers._text import code_scorer
from livescore.scoring import CalibrationSpec, NotScorable, Scorer, StepContext

__all__ = ("create_tool_error_rate_scorer",)


def create_tool_error_rate_scorer(
    *,
    id: str = "tool-error-rate",
    redact: RedactSpec | None = None,
    calibration: CalibrationSpec | None = None,
) -> Scorer:
    """Score how often the agent's tool calls failed over a whole conversation.

    A conversation scorer (no judge). The score is failed tool calls / tool calls over
    every turn, rounded half-up to 2 decimals: 0 is no failure, higher is worse.

    Its arguments are those of :func:`~livescore.scoring.create_scorer`.

    Returns:
        A conversation scorer: ``analyze_step_result = {"calls", "failed", "failures"}``, each
        failure ``{"turn", "tool", "error"}``. A conversation without a tool call is skipped.

    Example:
        >>> from livescore.runs import Conversation
        >>> conversation = Conversation.from_turns([
        ...     {"input": "Where?", "output": "In Lyon.",
        ...      "tool_calls": [{"name": "track", "args": {}, "result": "Lyon"}]},
        ...     {"input": "When?", "output": "I could not find out.",
        ...      "tool_calls": [{"name": "eta", "args": {}, "error": "timeout"}]},
        ... ])
        >>> result = create_tool_error_rate_scorer().run_sync(conversation)
        >>> result.score, result.reason
        (0.5, 'The score is 0.5 because 1 of 2 tool calls failed, in turn 2: eta (timeout).')
    """
    return code_scorer(
        _ToolErrorRate(), id=id, level="conversation", redact=redact, calibration=calibration
    )


class _ToolErrorRate:
    description = "Share of the conversation's tool calls that failed"
    preprocess = None
    label = staticmethod(defect_label)

    def analyze(self, ctx: StepContext) -> dict[str, Any]:
        calls = 0
        failures: list[dict[str, Any]] = []
        for number, run in conversation_of(ctx).turns():
            for step in run.steps:
                call = step.tool_call
                if step.kind != "tool" or call is None:
                    continue
                calls += 1
                error = call.error or step.error
                if error is not None:
                    failures.append({"turn": number, "tool": call.name, "error": error})
        if not calls:
            raise NotScorable("the agent called no tool in this conversation")
        record_turns(ctx, [f["turn"] for f in failures], calls)
        return {"calls": calls, "failed": len(failures), "failures": failures[:50]}

    def generate_score(self, ctx: StepContext) -> float:
        analysis = ctx.analyze_step_result
        return round2(analysis["failed"] / analysis["calls"])

    def generate_reason(self, ctx: StepContext) -> str:
        analysis = ctx.analyze_step_result
        calls, failures = analysis["calls"], analysis["failures"]
        if not failures:
            return because(ctx, f"{every(calls, 'tool call', 'tool calls')} succeeded.")
        where = turns_phrase(f["turn"] for f in failures)
        listed = "; ".join(f"{f['tool']} ({f['error']})" for f in failures[:5])
        failed = f"{analysis['failed']} of {calls} tool calls failed"
        return because(ctx, f"{failed}, in {where}: {listed}.")


@catalog_entry(
    "tool-error-rate",
    family="conversation",
    summary="share of the conversation's tool calls that failed",
    higher_is_better=False,
    predicts="tool_errors",
    factory="livescore.scorers.create_tool_error_rate_scorer",
    span_attributes=turn_attributes("turns with a failed tool call", "tool calls"),
    examples=("tool-error-rate",),
)
def _build(argument: str | None, options: ScorerOptions) -> Scorer:
    return create_tool_error_rate_scorer()
