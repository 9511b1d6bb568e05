"""What every dashboard sink says about a score: its target span, text and metadata."""

from __future__ import annotations

import uuid
from typing import Any, Literal

from livescore._errors import SkipRecord
from livescore.otel import attributes as A
from livescore.runs import TraceParent
from livescore.sinks._base import ScoreRecord

__all__ = ("ContentPolicy", "score_key", "score_metadata", "target_span")

# One namespace for livescore's deterministic ids (a retry sends the same id again).
_ID_NAMESPACE = uuid.UUID("6f1d1b2e-3c1a-5b8e-9d0f-4a6c2b1e7d53")


class ContentPolicy:
    """What user-derived text (explanations, error messages) a sink sends: like the
    emitter's ``capture_content`` (``"full"``, ``"truncated"`` or ``"none"``).

    Example:
        >>> ContentPolicy("truncated", 5).text("abcdefgh")
        'abcd…'
    """

    def __init__(
        self, capture: Literal["full", "truncated", "none"] = "full", max_chars: int = 1000
    ) -> None:
        if capture not in ("full", "truncated", "none"):
            raise ValueError(
                f"capture_content must be 'full', 'truncated' or 'none', not {capture!r}"
            )
        if isinstance(max_chars, bool) or not isinstance(max_chars, int) or max_chars < 1:
            raise ValueError(f"max_content_chars must be an int >= 1, not {max_chars!r}")
        self.capture = capture
        self.max_chars = max_chars

    def text(self, value: str | None) -> str | None:
        """``value`` as the policy allows (``None`` for nothing)."""
        if not value or self.capture == "none":
            return None
        if self.capture == "truncated" and len(value) > self.max_chars:
            return value[: self.max_chars - 1] + "…"
        return value


def target_span(record: ScoreRecord) -> TraceParent:
    """The span a dashboard attaches the score to: the run's span.

    Raises:
        SkipRecord: ``"no_span"`` (the run has no span to attach to) or
            ``"trace_not_sampled"`` (its span was never exported, so no dashboard has it).
    """
    parent = record.parent
    if parent is None:
        raise SkipRecord("no_span")
    if not parent.sampled:
        raise SkipRecord("trace_not_sampled")
    return parent


def score_key(record: ScoreRecord, parent: TraceParent) -> str:
    """A deterministic id for one score of one run on one span (the same on every retry).

    Example:
        >>> from livescore import Run, ScoreResult
        >>> parent = TraceParent("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7")
        >>> record = ScoreRecord(Run(run_id="r1"), ScoreResult("r1", "tone", score=1.0),
        ...                      parent, 1.0, "live", None)
        >>> score_key(record, parent) == score_key(record, parent)
        True
    """
    name = f"{parent.trace_id}:{parent.span_id}:{record.result.scorer_id}:{record.run.run_id}"
    return str(uuid.uuid5(_ID_NAMESPACE, name))


def score_metadata(record: ScoreRecord, content: ContentPolicy) -> dict[str, Any]:
    """The score's facts as a flat, JSON-safe dict, keyed by the evaluation span's
    attribute names (``livescore.judge.model``, ``livescore.claims.total``…)."""
    result = record.result
    meta: dict[str, Any] = {
        A.LIVESCORE_STATUS: result.status,
        A.LIVESCORE_RUN_ID: record.run.run_id,
        A.LIVESCORE_SOURCE: record.source,
        A.LIVESCORE_DURATION: round(float(result.duration_s), 6),
    }
    if record.scorer_version is not None:
        meta[A.LIVESCORE_SCORER_VERSION] = record.scorer_version
    if record.sample_rate is not None:
        meta[A.LIVESCORE_SAMPLE_RATE] = float(record.sample_rate)
    if result.judge_model:
        meta[A.LIVESCORE_JUDGE_MODEL] = result.judge_model
    usage = result.usage
    if usage.calls:
        meta[A.LIVESCORE_JUDGE_CALLS] = usage.calls
        meta[A.LIVESCORE_JUDGE_INPUT_TOKENS] = usage.input_tokens
        meta[A.LIVESCORE_JUDGE_OUTPUT_TOKENS] = usage.output_tokens
        meta[A.LIVESCORE_JUDGE_LATENCY] = round(float(usage.latency_s), 6)
    if result.status == "failed":
        meta[A.ERROR_TYPE] = result.error_type or "error"
        if result.failed_step:
            meta[A.LIVESCORE_FAILED_STEP] = result.failed_step
    for key, value in result.attributes.items():
        if isinstance(value, str):
            text = content.text(value)
            if text is not None:
                meta[key] = text
        elif isinstance(value, bool | int | float):
            meta[key] = value
    return meta
