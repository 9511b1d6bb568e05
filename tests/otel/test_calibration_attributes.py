"""A calibrated score says which calibration set its label, on its span and on its event,
whatever the content capture (an id and two numbers, no user text)."""

from __future__ import annotations

from _otel_support import InMemoryOTel

from livescore import Run
from livescore.otel import OTelEmitter
from livescore.otel import attributes as A
from livescore.scoring import Calibration, CalibrationEntry, ScoreResult

CALIBRATION = Calibration(
    "hallucinated",
    (
        CalibrationEntry(
            "hallucination", "m", 0.3, "high", probability_map=((0.0, 0.0), (1.0, 1.0))
        ),
    ),
    created="2026-12-06T04:00:00+00:00",
)


def test_span_and_event_carry_the_calibration_even_without_content(otel: InMemoryOTel) -> None:
    raw = ScoreResult(run_id="run-1", scorer_id="hallucination", score=0.4, judge_model="m")
    result = CALIBRATION.apply(raw)
    emitter = OTelEmitter(
        otel.tracer_provider,
        otel.meter_provider,
        logger_provider=otel.logger_provider,
        capture_content="none",
    )

    emitter.emit(Run(input="q", output="a", run_id="run-1"), result, sample_rate=1.0)

    (span,) = otel.eval_spans()
    (event,) = otel.events()
    for attrs in (dict(span.attributes or {}), dict(event.attributes or {})):
        assert attrs[A.LIVESCORE_CALIBRATION] == CALIBRATION.id
        assert attrs[A.LIVESCORE_CALIBRATION_THRESHOLD] == 0.3
        assert attrs[A.LIVESCORE_CALIBRATION_PROBABILITY] == 0.4
        assert attrs[A.GEN_AI_EVALUATION_SCORE_LABEL] == "hallucinated"
    assert raw.label is None  # apply made a copy
    assert A.LIVESCORE_CALIBRATION not in raw.attributes


def test_an_uncalibrated_score_carries_none_of_them(otel: InMemoryOTel) -> None:
    emitter = OTelEmitter(
        otel.tracer_provider, otel.meter_provider, logger_provider=otel.logger_provider
    )
    result = ScoreResult(run_id="run-1", scorer_id="hallucination", score=0.4, judge_model="m")

    emitter.emit(Run(input="q", output="a", run_id="run-1"), result, sample_rate=1.0)

    (span,) = otel.eval_spans()
    assert not any(k.startswith("livescore.calibration") for k in span.attributes or {})
