"""What a score is: :class:`ScoreResult`, and the errors of the scorer pipeline."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from livescore.judges import JudgeUsage

__all__ = ("AttributeValue", "ScoreResult", "ScoreStatus")

ScoreStatus = Literal["scored", "skipped", "failed"]
"""How a scoring attempt ended (a dropped run never reaches a scorer and has no result)."""

AttributeValue: TypeAlias = str | bool | int | float
"""A value a scorer may put in :attr:`ScoreResult.attributes`: safe for JSON and for an
OpenTelemetry span attribute."""


@dataclass(slots=True)
class ScoreResult:
    """The outcome of one scorer on one run.

    Step results are plain dicts (or whatever a custom step returned), with Mastra's keys
    in snake_case (``claims``, ``verdicts``, ``reference_keywords``…).

    Attributes:
        run_id: The scored run's id.
        scorer_id: The scorer's id (``"hallucination"``, ``"keyword-coverage"``…).
        status: ``"scored"``, ``"skipped"`` (not scorable; see ``reason``) or ``"failed"``.
        score: The score; ``None`` unless ``status == "scored"``.
        label: A low-cardinality reading of the score (``"low"``, ``"high"``…), when the
            scorer defines one.
        reason: Why the score is what it is; for a skip, why the run was not scorable.
        preprocess_step_result: What the preprocess step returned.
        preprocess_prompt: The prompt the preprocess step sent to the judge.
        analyze_step_result: What the analyze step returned.
        analyze_prompt: The prompt the analyze step sent to the judge.
        generate_reason_prompt: The prompt the reason step sent to the judge.
        usage: Judge cost of the whole score.
        step_usage: Judge cost per step name.
        error: The failure message when ``status == "failed"``.
        error_type: A short failure class (``"timeout"``, ``"invalid_response"``…).
        failed_step: The step that failed.
        duration_s: Wall time of the whole score, in seconds.
        judge_model: The judge model's name, when a judge was used.
        flags: Facts about the input worth recording (``{"output_truncated": True}``).
        attributes: Facts for the score's span, by attribute name (names from
            :mod:`livescore.otel.attributes`, such as ``livescore.claims.total``): scalar
            values a scorer's steps set through ``ctx.attributes``. The emitter copies them
            onto the evaluation span as they are, so a new scorer adds span attributes
            without touching the emitter.
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

    @property
    def ok(self) -> bool:
        """Whether a score was produced."""
        return self.status == "scored"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict of the result (sets become sorted lists)."""
        return {
            "run_id": self.run_id,
            "scorer_id": self.scorer_id,
            "status": self.status,
            "score": self.score,
            "label": self.label,
            "reason": self.reason,
            "preprocess_step_result": _plain(self.preprocess_step_result),
            "preprocess_prompt": self.preprocess_prompt,
            "analyze_step_result": _plain(self.analyze_step_result),
            "analyze_prompt": self.analyze_prompt,
            "generate_reason_prompt": self.generate_reason_prompt,
            "usage": _usage_dict(self.usage),
            "step_usage": {k: _usage_dict(v) for k, v in self.step_usage.items()},
            "error": self.error,
            "error_type": self.error_type,
            "failed_step": self.failed_step,
            "duration_s": self.duration_s,
            "judge_model": self.judge_model,
            "flags": _plain(self.flags),
            "attributes": dict(self.attributes),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ScoreResult:
        """Rebuild a result from :meth:`to_dict` (how a fleet worker sends it back).

        Example:
            >>> result = ScoreResult(run_id="r1", scorer_id="demo", score=0.5)
            >>> ScoreResult.from_dict(result.to_dict()) == result
            True
        """
        known = {f: data[f] for f in _RESULT_FIELDS if f in data}
        usage = data.get("usage")
        if isinstance(usage, Mapping):
            known["usage"] = _usage_of(usage)
        step_usage = data.get("step_usage")
        if isinstance(step_usage, Mapping):
            known["step_usage"] = {
                str(k): _usage_of(v) for k, v in step_usage.items() if isinstance(v, Mapping)
            }
        return cls(**known)


_RESULT_FIELDS = (
    "run_id",
    "scorer_id",
    "status",
    "score",
    "label",
    "reason",
    "preprocess_step_result",
    "preprocess_prompt",
    "analyze_step_result",
    "analyze_prompt",
    "generate_reason_prompt",
    "error",
    "error_type",
    "failed_step",
    "duration_s",
    "judge_model",
    "flags",
    "attributes",
)


def _usage_of(data: Mapping[str, Any]) -> JudgeUsage:
    return JudgeUsage(
        calls=int(data.get("calls") or 0),
        input_tokens=int(data.get("input_tokens") or 0),
        output_tokens=int(data.get("output_tokens") or 0),
        latency_s=float(data.get("latency_s") or 0.0),
        cached=int(data.get("cached") or 0),
        shared=int(data.get("shared") or 0),
        cached_input_tokens=int(data.get("cached_input_tokens") or 0),
        cost_usd=_cost_of(data.get("cost_usd")),
    )


def _cost_of(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _usage_dict(usage: JudgeUsage) -> dict[str, Any]:
    return {
        "calls": usage.calls,
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "latency_s": usage.latency_s,
        "cached": usage.cached,
        "shared": usage.shared,
        "cached_input_tokens": usage.cached_input_tokens,
        "cost_usd": usage.cost_usd,
    }


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
