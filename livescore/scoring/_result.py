"""What a score is: :class:`ScoreResult`, and :class:`CoveredTurns` for a conversation's."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from livescore.judges import JudgeUsage
from livescore.runs import Conversation, TraceParent

__all__ = ("AttributeValue", "CoveredTurns", "ScoreResult", "ScoreStatus")

ScoreStatus = Literal["scored", "skipped", "failed"]
"""How a scoring attempt ended (a dropped run never reaches a scorer and has no result)."""

AttributeValue: TypeAlias = str | bool | int | float
"""A value a scorer may put in :attr:`ScoreResult.attributes`: safe for JSON and for an
OpenTelemetry span attribute."""


@dataclass(frozen=True, slots=True)
class CoveredTurns:
    """The turns of a conversation that one conversation score covers (every score of a
    conversation is kept: one after three turns covers 1-3, one after four 1-4).

    Attributes:
        conversation_id: The conversation's id (``gen_ai.conversation.id`` on the span).
        first: The number of the first turn covered (1 unless earlier turns were forgotten
            to keep memory bounded).
        last: The number of the last turn covered: the conversation's length so far.
        run_ids: The run id of each covered turn, oldest first.
        spans: Each covered turn's run span (``None`` for a turn without one), oldest
            first: the score's span links to each.

    Example:
        >>> from livescore import Run
        >>> from livescore.runs import Conversation
        >>> covered = CoveredTurns.of(Conversation("c1", [Run(run_id="a"), Run(run_id="b")]))
        >>> covered.count, covered.run_ids
        (2, ('a', 'b'))
    """

    conversation_id: str
    first: int
    last: int
    run_ids: tuple[str, ...] = ()
    spans: tuple[TraceParent | None, ...] = ()

    @property
    def count(self) -> int:
        """How many turns the score covers."""
        return self.last - self.first + 1

    @classmethod
    def of(cls, conversation: Conversation) -> CoveredTurns:
        """Every turn ``conversation`` holds."""
        return cls(
            conversation.id,
            conversation.first_turn,
            conversation.last_turn,
            tuple(run.run_id for run in conversation.runs),
            tuple(TraceParent.of_run(run) for run in conversation.runs),
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict (see :meth:`from_dict`)."""
        return {
            "conversation_id": self.conversation_id,
            "first": self.first,
            "last": self.last,
            "run_ids": list(self.run_ids),
            "spans": [s.to_dict() if s is not None else None for s in self.spans],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CoveredTurns:
        """Rebuild from :meth:`to_dict` (a fleet worker's reply)."""
        spans = data.get("spans") or ()
        return cls(
            str(data["conversation_id"]),
            int(data["first"]),
            int(data["last"]),
            tuple(str(r) for r in data.get("run_ids") or ()),
            tuple(TraceParent.from_dict(s) if isinstance(s, Mapping) else None for s in spans),
        )


@dataclass(slots=True)
class ScoreResult:
    """The outcome of one scorer (``scorer_id``) on one run (``run_id``).

    ``preprocess_prompt``, ``analyze_prompt`` and ``generate_reason_prompt`` are the prompts
    those steps sent to the judge (``None`` for a step written in code).

    Attributes:
        status: ``"scored"``, ``"skipped"`` (not scorable; see ``reason``) or ``"failed"``.
        score: The score; ``None`` unless ``status == "scored"``.
        label: A low-cardinality reading of the score, when the scorer defines one.
        reason: Why the score is what it is; for a skip, why the run was not scorable.
        preprocess_step_result: What the preprocess step returned (a plain dict for a
            prebuilt scorer, with Mastra's keys in snake_case).
        analyze_step_result: What the analyze step returned.
        usage: Judge cost of the whole score.
        step_usage: Judge cost per step name.
        error: The failure message when ``status == "failed"``.
        error_type: A short failure class (``"timeout"``, ``"invalid_response"``…).
        failed_step: The step that failed.
        duration_s: Wall time of the whole score, in seconds.
        judge_model: The judge model's name, when a judge was used.
        flags: Facts about the input worth recording (``{"output_truncated": True}``).
        attributes: Scalar span attributes the steps set through ``ctx.attributes``,
            copied onto the evaluation span as they are.
        turns: For a conversation score, the turns it covers; ``None`` for a run's score.
    """

    run_id: str
    scorer_id: str
    status: ScoreStatus = "scored"
    score: float | None = None
    label: str | None = None
    reason: str | None = None
    preprocess_step_result: Any = None
    preprocess_prompt: str | None = None
    analyze_step_result: Any = None
    analyze_prompt: str | None = None
    generate_reason_prompt: str | None = None
    usage: JudgeUsage = field(default_factory=JudgeUsage)
    step_usage: dict[str, JudgeUsage] = field(default_factory=dict)
    error: str | None = None
    error_type: str | None = None
    failed_step: str | None = None
    duration_s: float = 0.0
    judge_model: str | None = None
    flags: dict[str, Any] = field(default_factory=dict)
    attributes: dict[str, AttributeValue] = field(default_factory=dict)
    turns: CoveredTurns | None = None

    @property
    def ok(self) -> bool:
        """Whether a score was produced."""
        return self.status == "scored"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict of the result (sets become sorted lists)."""
        data = {name: getattr(self, name) for name in _FIELDS}
        data["preprocess_step_result"] = _plain(self.preprocess_step_result)
        data["analyze_step_result"] = _plain(self.analyze_step_result)
        data["usage"] = dataclasses.asdict(self.usage)
        data["step_usage"] = {k: dataclasses.asdict(v) for k, v in self.step_usage.items()}
        data["flags"] = _plain(self.flags)
        data["attributes"] = dict(self.attributes)
        data["turns"] = self.turns.to_dict() if self.turns is not None else None
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ScoreResult:
        """Rebuild a result from :meth:`to_dict` (how a fleet worker sends it back).

        Example:
            >>> result = ScoreResult(run_id="r1", scorer_id="demo", score=0.5)
            >>> ScoreResult.from_dict(result.to_dict()) == result
            True
        """
        known = {f: data[f] for f in _FIELDS if f in data and f not in _NESTED}
        usage = data.get("usage")
        if isinstance(usage, Mapping):
            known["usage"] = _usage_of(usage)
        step_usage = data.get("step_usage")
        if isinstance(step_usage, Mapping):
            known["step_usage"] = {
                str(k): _usage_of(v) for k, v in step_usage.items() if isinstance(v, Mapping)
            }
        turns = data.get("turns")
        if isinstance(turns, Mapping):
            known["turns"] = CoveredTurns.from_dict(turns)
        return cls(**known)


_FIELDS = tuple(f.name for f in dataclasses.fields(ScoreResult))
_NESTED = frozenset({"usage", "step_usage", "turns"})
_COUNTS = ("calls", "input_tokens", "output_tokens", "cached", "shared", "cached_input_tokens")


def _usage_of(data: Mapping[str, Any]) -> JudgeUsage:
    usage = JudgeUsage(**{name: int(data.get(name) or 0) for name in _COUNTS})
    usage.latency_s = float(data.get("latency_s") or 0.0)
    cost = data.get("cost_usd")
    if not isinstance(cost, bool) and isinstance(cost, int | float):
        usage.cost_usd = float(cost)
    return usage


def _plain(value: Any) -> Any:
    if isinstance(value, set | frozenset):
        return sorted(_plain(v) for v in value)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if hasattr(value, "model_dump"):
        return _plain(value.model_dump())
    return value
