"""The trajectory scorer (code): the expected tool calls, efficiently, without forbidden ones."""

from __future__ import annotations

import bisect
import itertools
import json
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from livescore._catalog import ScorerOptions, catalog_entry, split_names
from livescore._tool_calls import RecordedCall, describe_calls
from livescore.pii import RedactSpec
from livescore.scorers._text import code_scorer
from livescore.scorers._tool_call_accuracy import followed, tool_calls_step, tool_names
from livescore.scoring import CalibrationSpec, Scorer, StepContext

__all__ = ("TRAJECTORY_LABELS", "TrajectoryOrdering", "create_trajectory_scorer")

TrajectoryOrdering: TypeAlias = Literal["relaxed", "strict", "unordered"]
"""How the expected steps are matched: in order with other calls allowed between
(``"relaxed"``), as the exact sequence (``"strict"``), or in any order (``"unordered"``)."""

TRAJECTORY_LABELS = ("poor", "fair", "good", "perfect")
"""Every label of a trajectory score: below 0.5 or a blacklist hit, below 0.8, below 1, 1."""

_REDUNDANT_COST = 0.2  # per consecutive repeat of the same call (Mastra's figure)
_RETRY_COST = 0.2  # per retry of a failing tool beyond max_retries (Mastra's figure)


def create_trajectory_scorer(
    *,
    expected_steps: Sequence[str],
    max_steps: int | None = None,
    blacklist: Iterable[str | Sequence[str]] = (),
    ordering: TrajectoryOrdering = "relaxed",
    max_retries: int = 2,
    id: str = "trajectory",
    redact: RedactSpec | None = None,
    calibration: CalibrationSpec | None = None,
) -> Scorer:
    """Score the agent's path: the expected tool calls, efficiently, without forbidden ones.

    The trajectory is the run's tool calls in order, never-run ones counted as failed. The
    score is ``accuracy × efficiency × failure_handling``, each from 0 to 1, so an agent on
    the wrong path earns no credit for being quick; a blacklist hit scores 0 outright.
    Mastra's code trajectory scorer averages these dimensions with weights instead, so a path
    with none of the expected tools can still score 0.43 there.

    Args:
        expected_steps: The tool names the agent should call, in order (``[]``: no call).
        max_steps: The most tool calls a good path needs (``None``: no budget).
        blacklist: Forbidden tools (a name) and forbidden sequences of consecutive calls (a
            list of names, e.g. ``["delete_user", "send_email"]``).
        ordering: How accuracy matches the expected steps (see :data:`TrajectoryOrdering`).
        max_retries: Retries in a row of a failing tool that cost nothing.

    The other arguments are those of :func:`~livescore.scoring.create_scorer`.

    Returns:
        A scorer whose ``analyze_step_result`` holds each dimension (``"accuracy"``,
        ``"efficiency"``, ``"failure_handling"``: its score and what it found) and
        ``"blacklist"`` (``{"passed", "tools", "sequences"}``).

    Example:
        >>> from livescore import Run, Step, ToolCall
        >>> scorer = create_trajectory_scorer(
        ...     expected_steps=["search", "summarize"], max_steps=3, blacklist=["delete_all"]
        ... )
        >>> run = Run(input="Summarise the news", output="...", steps=[
        ...     Step(kind="tool", tool_call=ToolCall("search", args={"q": "news"})),
        ...     Step(kind="tool", tool_call=ToolCall("search", args={"q": "news"})),
        ...     Step(kind="tool", tool_call=ToolCall("summarize")),
        ... ])
        >>> result = scorer.run_sync(run)
        >>> result.score, result.label
        (0.8, 'good')
        >>> for part in result.reason.split(". "):
        ...     print(part)
        Accuracy 1.00: followed 2 of 2 expected steps
        Efficiency 0.80: 3 calls (budget 3); 1 redundant repeat (search)
        Failure handling 1.00: no failed call.
    """
    expected = tool_names(expected_steps, "expected_steps")
    budget = None if max_steps is None else _count(max_steps, "max_steps")
    retries = _count(max_retries, "max_retries")
    if ordering not in ("relaxed", "strict", "unordered"):
        raise ValueError(f"ordering must be 'relaxed', 'strict' or 'unordered', not {ordering!r}")
    steps = _Trajectory(expected, ordering, budget, retries, *_blacklist(blacklist))
    return code_scorer(steps, id=id, redact=redact, calibration=calibration)


@dataclass(frozen=True, slots=True)
class _Trajectory:
    expected: list[str]
    ordering: str
    budget: int | None  # max_steps
    retries: int  # max_retries
    tools: frozenset[str]  # the blacklist's tools
    sequences: tuple[tuple[str, ...], ...]  # and its sequences

    @property
    def description(self) -> str:
        path = " → ".join(self.expected) if self.expected else "no tool call"
        return f"Trajectory accuracy × efficiency × failure handling (expected: {path})"

    def preprocess(self, ctx: StepContext) -> dict[str, Any]:
        return tool_calls_step(ctx, "actual_steps")

    def analyze(self, ctx: StepContext) -> dict[str, Any]:
        calls: list[RecordedCall] = ctx.state["calls"]
        names = [call.name for call in calls]
        dimensions = {
            "accuracy": _accuracy(self.expected, names, self.ordering),
            "efficiency": _efficiency(calls, self.budget),
            "failure_handling": _failure_handling(calls, self.retries),
        }
        ctx.state["reason"] = " ".join(said for _, said in dimensions.values())
        analysis = {name: figures for name, (figures, _) in dimensions.items()}
        analysis["blacklist"] = _blacklist_check(names, self.tools, self.sequences)
        return analysis

    def generate_score(self, ctx: StepContext) -> float:
        analysis = ctx.analyze_step_result
        if not analysis["blacklist"]["passed"]:
            return 0.0
        dimensions = ("accuracy", "efficiency", "failure_handling")
        return float(math.prod(analysis[name]["score"] for name in dimensions))

    def generate_reason(self, ctx: StepContext) -> str:
        black = ctx.analyze_step_result["blacklist"]
        if black["passed"]:
            return str(ctx.state["reason"])
        hits = [*black["tools"], *(" → ".join(s) for s in black["sequences"])]
        calls = describe_calls(ctx.state["calls"])
        return f"Blacklisted: {', '.join(hits)}. Score 0 whatever else. Calls: {calls}."

    def label(self, score: float) -> str:
        return TRAJECTORY_LABELS[bisect.bisect_right((0.5, 0.8, 1.0), score)]


# Each dimension: its figures (in analyze_step_result) and its sentence of the reason.


def _accuracy(expected: list[str], names: list[str], ordering: str) -> tuple[dict[str, Any], str]:
    remaining = Counter(names)
    missing = []
    for name in expected:
        if remaining[name] > 0:
            remaining[name] -= 1
        else:
            missing.append(name)
    wanted = set(expected)
    extra = [name for name in names if name not in wanted]
    if not expected:
        matched, score = 0, float(not names)
        said = f"but the agent made {len(names)}" if names else "none made"
        said = f"no tool call expected, {said}"
    else:
        if ordering == "unordered":
            matched = len(expected) - len(missing)
            score = matched / len(expected)
        else:
            matched, score = followed(expected, names, strict=ordering == "strict")
        said = f"followed {matched} of {len(expected)} expected steps"
        if missing:
            said += f"; missing {', '.join(missing)}"
        if extra:
            said += f"; extra {', '.join(dict.fromkeys(extra))}"
    figures = {
        "score": score,
        "matched": matched,
        "expected": len(expected),
        "missing": missing,
        "extra": extra,
    }
    return figures, f"Accuracy {score:.2f}: {said}."


def _same_args(first: Any, second: Any) -> bool:
    try:
        return json.dumps(first, sort_keys=True, default=str) == json.dumps(
            second, sort_keys=True, default=str
        )
    except (TypeError, ValueError):
        return first is second


def _efficiency(calls: list[RecordedCall], budget: int | None) -> tuple[dict[str, Any], str]:
    count = len(calls)
    if budget is None or count <= budget:
        within = 1.0
    elif budget == 0:
        within = 0.0
    else:
        within = max(0.0, 1.0 - (count - budget) / budget)
    redundant = [
        later.name
        for earlier, later in itertools.pairwise(calls)
        # Retrying a failed call is failure handling, not waste.
        if earlier.ok and earlier.name == later.name and _same_args(earlier.args, later.args)
    ]
    score = within * max(0.0, 1.0 - _REDUNDANT_COST * len(redundant))
    said = f"{count} calls" if budget is None else f"{count} calls (budget {budget})"
    if redundant:
        noun = "repeat" if len(redundant) == 1 else "repeats"
        said += f"; {len(redundant)} redundant {noun} ({', '.join(dict.fromkeys(redundant))})"
    figures = {
        "score": score,
        "calls": count,
        "max_steps": budget,
        "over_budget": budget is not None and count > budget,
        "redundant_calls": redundant,
    }
    return figures, f"Efficiency {score:.2f}: {said}."


def _failure_handling(calls: list[RecordedCall], max_retries: int) -> tuple[dict[str, Any], str]:
    excess = 0
    streak = 0  # retries in a row of the tool that just failed
    for earlier, later in itertools.pairwise(calls):
        if not earlier.ok and later.name == earlier.name:
            streak += 1
            if streak > max_retries:
                excess += 1
        else:
            streak = 0
    failed = [call for call in calls if not call.ok]
    score = max(0.0, 1.0 - _RETRY_COST * excess)
    said = f"{len(failed)} failed ({describe_calls(failed)})" if failed else "no failed call"
    if excess:
        said += f"; {excess} retries beyond the allowed ones"
    figures = {
        "score": score,
        "failed_calls": [call.to_dict() for call in failed],
        "excess_retries": excess,
    }
    return figures, f"Failure handling {score:.2f}: {said}."


def _blacklist_check(
    names: list[str], tools: frozenset[str], sequences: tuple[tuple[str, ...], ...]
) -> dict[str, Any]:
    hit_tools = sorted(tools.intersection(names))
    hit_sequences = [
        list(seq)
        for seq in sequences
        if any(tuple(names[at : at + len(seq)]) == seq for at in range(len(names) - len(seq) + 1))
    ]
    return {
        "passed": not hit_tools and not hit_sequences,
        "tools": hit_tools,
        "sequences": hit_sequences,
    }


def _blacklist(blacklist: object) -> tuple[frozenset[str], tuple[tuple[str, ...], ...]]:
    if isinstance(blacklist, str) or not isinstance(blacklist, Iterable):
        raise TypeError("blacklist must be a list of tool names and tool-name sequences")
    tools: set[str] = set()
    sequences: list[tuple[str, ...]] = []
    for item in blacklist:
        if isinstance(item, str):
            tools.update(tool_names([item], "blacklist"))
        elif sequence := tool_names(item, "a blacklist sequence"):
            sequences.append(tuple(sequence))
        else:
            raise ValueError("a blacklist sequence is empty: list the forbidden calls")
    return frozenset(tools), tuple(sequences)


def _count(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be a whole number, not {value!r}")
    if value < 0:
        raise ValueError(f"{what} must be 0 or more, not {value}")
    return value


# -- in the catalog ---------------------------------------------------------------------------


@catalog_entry(
    "trajectory",
    family="tools",
    summary="accuracy × efficiency × failure handling of the agent's tool calls",
    argument="STEPS: the expected tool calls, A,B,C",
    argument_required=True,
    factory="livescore.scorers.create_trajectory_scorer",
    examples=("trajectory:search,answer",),
)
def _build(argument: str | None, options: ScorerOptions) -> Scorer:
    return create_trajectory_scorer(expected_steps=split_names(argument, "trajectory"))
