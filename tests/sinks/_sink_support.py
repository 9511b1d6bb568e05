"""Test doubles and records for the sink tests."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from livescore import Run, ScoreResult
from livescore.judges import JudgeUsage
from livescore.runs import TraceParent
from livescore.scoring import CoveredTurns
from livescore.sinks import BatchingSink, DeliveryResult, ScoreRecord

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"


def span_id(n: int) -> str:
    return f"{n:016x}"


def make_record(
    n: int = 1,
    *,
    scorer_id: str = "hallucination",
    score: float | None = 0.25,
    label: str | None = "low",
    reason: str | None = "One claim is not in the tool results.",
    status: str = "scored",
    judge_model: str | None = "judge-model",
    span: str | None = None,
    trace_flags: int = 1,
    parent: bool = True,
    error: str | None = None,
    error_type: str | None = None,
    source: str = "live",
    turns: CoveredTurns | None = None,
) -> ScoreRecord:
    """A finished score of run ``r{n}`` on span ``n`` of one trace."""
    run = Run(input="q", output="a", run_id=f"r{n}")
    result = ScoreResult(
        run_id=run.run_id,
        scorer_id=scorer_id,
        status=status,  # type: ignore[arg-type]
        score=score if status == "scored" else None,
        label=label if status == "scored" else None,
        reason=reason,
        judge_model=judge_model,
        error=error,
        error_type=error_type,
        failed_step="analyze" if status == "failed" else None,
        duration_s=0.5,
        usage=JudgeUsage(calls=2, input_tokens=300, output_tokens=40, latency_s=0.4)
        if judge_model
        else JudgeUsage(),
        attributes={"livescore.claims.total": 4, "livescore.claims.hallucinated": 1},
        turns=turns,
    )
    target = TraceParent(TRACE_ID, span or span_id(n), trace_flags) if parent else None
    return ScoreRecord(
        run=run,
        result=result,
        parent=target,
        sample_rate=0.5,
        source=source,
        scorer_version="2",
    )


class RecordingBatchSink(BatchingSink[str]):
    """A test double: payloads are run ids; ``answer`` decides each delivery's fate.

    ``gate``, when set, holds every delivery until it opens (``entered`` is set once a
    delivery waits on it), so a test can keep the worker busy.
    """

    name = "recording"

    def __init__(
        self,
        answer: Callable[[Sequence[str], int], DeliveryResult | None] | None = None,
        *,
        gate: threading.Event | None = None,
        **options: Any,
    ) -> None:
        self.answer = answer
        self.gate = gate
        self.entered = threading.Event()
        self.batches: list[list[str]] = []
        self.closed_count = 0
        self.lock = threading.Lock()
        super().__init__(**options)

    def prepare(self, record: ScoreRecord) -> str:
        return record.run.run_id

    def deliver(self, batch: Sequence[str]) -> DeliveryResult | None:
        self.entered.set()
        if self.gate is not None:
            self.gate.wait(30)
        with self.lock:
            self.batches.append(list(batch))
            call = len(self.batches)
        return self.answer(batch, call) if self.answer is not None else None

    def close(self) -> None:
        self.closed_count += 1

    def delivered(self) -> list[str]:
        with self.lock:
            return [item for batch in self.batches for item in batch]
