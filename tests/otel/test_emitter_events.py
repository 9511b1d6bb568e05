"""OTelEmitter's gen_ai.evaluation.result events (the Logs API), on the real SDK.

An event is parented to the run's span, not to livescore's evaluation span; a skipped score
has none; ``emit`` chooses spans, events or both; ``semconv_proposals`` adds the attributes
of the open convention proposals.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import Any

import pytest
from _otel_support import InMemoryOTel
from opentelemetry._logs import SeverityNumber
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor, InMemoryLogRecordExporter
from opentelemetry.trace import TraceFlags

from livescore import Run, ScoreResult
from livescore._emit import parse_emit
from livescore.judges import JudgeUsage
from livescore.otel import OTelEmitter
from livescore.runs import TraceParent

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
SPAN_ID = "00f067aa0ba902b7"
SECRET = "the user's private address is 12 Elm Street"


def emitter_for(otel: InMemoryOTel, **kwargs: Any) -> OTelEmitter:
    return OTelEmitter(
        otel.tracer_provider, otel.meter_provider, logger_provider=otel.logger_provider, **kwargs
    )


def traced_run(**kwargs: Any) -> Run:
    return Run(input="q", output="a", run_id="run-1", trace_id=TRACE_ID, span_id=SPAN_ID, **kwargs)


def scored(**kwargs: Any) -> ScoreResult:
    values: dict[str, Any] = {
        "run_id": "run-1",
        "scorer_id": "hallucination",
        "score": 0.25,
        "label": "low",
        "reason": f"The score is 0.25 because {SECRET}",
        "usage": JudgeUsage(calls=3, input_tokens=300, output_tokens=40, latency_s=1.5),
        "duration_s": 2.0,
        "judge_model": "gpt-4o-mini",
        "attributes": {"livescore.claims.total": 4},
    }
    values.update(kwargs)
    return ScoreResult(**values)


def failed(**kwargs: Any) -> ScoreResult:
    values: dict[str, Any] = {
        "run_id": "run-1",
        "scorer_id": "hallucination",
        "status": "failed",
        "error": f"judge timed out reading {SECRET}",
        "error_type": "timeout",
        "failed_step": "analyze",
        "judge_model": "gpt-4o-mini",
        "usage": JudgeUsage(calls=1, input_tokens=120, output_tokens=0, latency_s=30.0),
    }
    values.update(kwargs)
    return ScoreResult(**values)


def test_a_score_is_one_event_parented_to_the_run_span_not_the_evaluation_span(
    otel: InMemoryOTel,
) -> None:
    emitter_for(otel).emit(traced_run(), scored(), sample_rate=0.5, scorer_version="3")
    (event,) = otel.events()
    (span,) = otel.eval_spans()
    assert event.event_name == "gen_ai.evaluation.result"
    assert event.trace_id == int(TRACE_ID, 16)
    assert event.span_id == int(SPAN_ID, 16)
    assert event.span_id != span.context.span_id  # not livescore's own evaluation span
    assert event.trace_flags == TraceFlags.SAMPLED
    assert event.severity_number == SeverityNumber.INFO
    assert event.body == "evaluation hallucination = 0.25 (low)"
    assert event.timestamp == span.end_time


def test_the_event_attributes_follow_the_conventions_plus_livescore_extras(
    otel: InMemoryOTel,
) -> None:
    emitter_for(otel).emit(traced_run(), scored(), sample_rate=0.5, scorer_version="3")
    (event,) = otel.events()
    assert dict(event.attributes) == {
        "gen_ai.evaluation.name": "hallucination",
        "gen_ai.evaluation.score.value": 0.25,
        "gen_ai.evaluation.score.label": "low",
        "gen_ai.evaluation.explanation": f"The score is 0.25 because {SECRET}",
        "livescore.status": "scored",
        "livescore.run.id": "run-1",
        "livescore.source": "live",
        "livescore.scorer.version": "3",
        "livescore.sample_rate": 0.5,
        "livescore.judge.model": "gpt-4o-mini",
        "livescore.judge.calls": 3,
        "livescore.judge.input_tokens": 300,
        "livescore.judge.output_tokens": 40,
    }
    assert isinstance(event.attributes["gen_ai.evaluation.score.value"], float)


def test_an_integer_score_is_sent_as_a_double(otel: InMemoryOTel) -> None:
    emitter_for(otel).emit(traced_run(), scored(score=1, label=None), sample_rate=None)
    (event,) = otel.events()
    value = event.attributes["gen_ai.evaluation.score.value"]
    assert value == 1.0
    assert isinstance(value, float)
    assert "gen_ai.evaluation.score.label" not in event.attributes
    assert "livescore.sample_rate" not in event.attributes  # a predicate sampled it


def test_a_failed_score_carries_error_type_and_no_score(otel: InMemoryOTel) -> None:
    emitter_for(otel).emit(traced_run(), failed(), sample_rate=1.0, scorer_version="3")
    (event,) = otel.events()
    attrs = dict(event.attributes)
    assert attrs["error.type"] == "timeout"
    assert attrs["livescore.status"] == "failed"
    assert attrs["livescore.failed_step"] == "analyze"
    assert attrs["livescore.error.message"] == f"judge timed out reading {SECRET}"
    assert attrs["livescore.judge.calls"] == 1
    for absent in (
        "gen_ai.evaluation.score.value",
        "gen_ai.evaluation.score.label",
        "gen_ai.evaluation.explanation",
    ):
        assert absent not in attrs
    assert event.severity_number == SeverityNumber.WARN
    assert event.body == "evaluation hallucination failed: timeout"
    assert event.span_id == int(SPAN_ID, 16)


def test_a_failure_without_a_type_is_an_error(otel: InMemoryOTel) -> None:
    emitter_for(otel).emit(traced_run(), failed(error_type=None), sample_rate=1.0)
    (event,) = otel.events()
    assert event.attributes["error.type"] == "error"


def test_a_skipped_score_is_not_an_evaluation_result(otel: InMemoryOTel) -> None:
    skipped = ScoreResult(
        run_id="run-1", scorer_id="hallucination", status="skipped", reason="no context"
    )
    emitter_for(otel).emit(traced_run(), skipped, sample_rate=1.0)
    assert otel.events() == []
    (span,) = otel.eval_spans()  # the span still records it, with its reason
    assert span.attributes["livescore.skip_reason"] == "no context"
    counts = otel.counts("livescore.runs", "livescore.status")
    assert counts[("skipped",)] == 1


def test_the_given_parent_wins_over_the_run_ids(otel: InMemoryOTel) -> None:
    parent = TraceParent("1" * 32, "2" * 16)
    emitter_for(otel).emit(Run(run_id="r"), scored(), sample_rate=1.0, parent=parent)
    (event,) = otel.events()
    assert (event.trace_id, event.span_id) == (int("1" * 32, 16), int("2" * 16, 16))


def test_a_run_without_a_span_gives_an_event_without_trace_context_even_inside_a_span(
    otel: InMemoryOTel,
) -> None:
    tracer = otel.tracer_provider.get_tracer("test")
    with tracer.start_as_current_span("unrelated request"):
        emitter_for(otel).emit(Run(run_id="r9"), scored(run_id="r9"), sample_rate=1.0)
    (event,) = otel.events()
    assert not event.trace_id
    assert not event.span_id
    assert event.attributes["livescore.run.id"] == "r9"


def test_an_unsampled_run_keeps_its_span_as_the_events_parent(otel: InMemoryOTel) -> None:
    run = traced_run(trace_flags=0)
    emitter_for(otel).emit(run, scored(), sample_rate=1.0)
    (event,) = otel.events()
    (span,) = otel.eval_spans()
    # The span is a new root (a ParentBased sampler would drop a child of an unsampled
    # span); the event names the run's span all the same, with its flags.
    assert span.parent is None
    assert event.span_id == int(SPAN_ID, 16)
    assert event.trace_flags == TraceFlags.DEFAULT


def test_the_response_id_goes_on_the_event_and_the_span(otel: InMemoryOTel) -> None:
    emitter_for(otel).emit(traced_run(response_id="chatcmpl-42"), scored(), sample_rate=1.0)
    (event,) = otel.events()
    (span,) = otel.eval_spans()
    assert event.attributes["gen_ai.response.id"] == "chatcmpl-42"
    assert span.attributes["gen_ai.response.id"] == "chatcmpl-42"


def test_content_capture_applies_to_events(otel: InMemoryOTel) -> None:
    emitter = emitter_for(otel, capture_content="none")
    emitter.emit(traced_run(), scored(), sample_rate=1.0)
    emitter.emit(traced_run(), failed(), sample_rate=1.0)
    text = "\n".join(str(v) for e in otel.events() for v in e.attributes.values())
    text += "\n".join(str(e.body) for e in otel.events())
    assert SECRET not in text
    first, second = otel.events()
    assert "gen_ai.evaluation.explanation" not in first.attributes
    assert first.attributes["gen_ai.evaluation.score.value"] == 0.25  # scores are kept
    assert "livescore.error.message" not in second.attributes


def test_truncated_content_is_cut_on_events(otel: InMemoryOTel) -> None:
    emitter_for(otel, capture_content="truncated", max_content_chars=10).emit(
        traced_run(), scored(), sample_rate=1.0
    )
    (event,) = otel.events()
    assert event.attributes["gen_ai.evaluation.explanation"] == "The score…"


# -- what is emitted ---------------------------------------------------------------------------


def test_both_by_default(otel: InMemoryOTel) -> None:
    emitter = emitter_for(otel)
    assert emitter.signals == ("spans", "events")
    emitter.emit(traced_run(), scored(), sample_rate=1.0)
    assert len(otel.eval_spans()) == 1
    assert len(otel.events()) == 1


def test_spans_only(otel: InMemoryOTel) -> None:
    emitter_for(otel, emit=("spans",)).emit(traced_run(), scored(), sample_rate=1.0)
    assert len(otel.eval_spans()) == 1
    assert otel.events() == []


def test_events_only_still_records_the_metrics(otel: InMemoryOTel) -> None:
    emitter_for(otel, emit="events").emit(traced_run(), scored(), sample_rate=1.0)
    assert otel.spans() == []
    assert len(otel.events()) == 1
    assert otel.counts("livescore.runs", "livescore.status")[("scored",)] == 1
    (point,) = otel.points("livescore.score")
    assert point.sum == 0.25


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("spans,events", ("spans", "events")),
        ("events,spans", ("spans", "events")),
        (" Events ", ("events",)),
        (["spans", "spans"], ("spans",)),
        (("events",), ("events",)),
    ],
)
def test_parse_emit(value: Any, expected: tuple[str, ...]) -> None:
    assert parse_emit(value) == expected


@pytest.mark.parametrize(("value", "message"), [("logs", "unknown signal"), ("", "no signal")])
def test_parse_emit_refuses_what_is_not_a_signal(value: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        OTelEmitter(emit=value)


# -- open convention proposals -------------------------------------------------------------------

PROPOSALS = (
    "gen_ai.evaluation.evaluator.id",
    "gen_ai.evaluation.evaluator.version",
    "gen_ai.evaluation.evaluator.type",
    "gen_ai.evaluation.target",
)


def test_proposals_are_off_by_default(otel: InMemoryOTel) -> None:
    emitter_for(otel).emit(traced_run(name="support-bot"), scored(), sample_rate=1.0)
    (event,) = otel.events()
    (span,) = otel.eval_spans()
    for name in PROPOSALS:
        assert name not in event.attributes
        assert name not in (span.attributes or {})


def test_proposals_on_events_and_spans(otel: InMemoryOTel) -> None:
    emitter = emitter_for(otel, semconv_proposals=True)
    emitter.emit(traced_run(name="support-bot"), scored(), sample_rate=1.0, scorer_version="3")
    code = ScoreResult(run_id="run-1", scorer_id="keyword-coverage", score=1.0)
    emitter.emit(traced_run(), code, sample_rate=1.0)
    judged, deterministic = otel.events()
    expected = {
        "gen_ai.evaluation.evaluator.id": "hallucination",
        "gen_ai.evaluation.evaluator.version": "3",
        "gen_ai.evaluation.evaluator.type": "llm_judge",
        "gen_ai.evaluation.target": "support-bot",
    }
    assert {k: judged.attributes[k] for k in PROPOSALS} == expected
    span = next(s for s in otel.eval_spans() if s.name == "evaluation hallucination")
    assert {k: (span.attributes or {})[k] for k in PROPOSALS} == expected
    # A code scorer, no version given, a run without a name.
    assert deterministic.attributes["gen_ai.evaluation.evaluator.type"] == "deterministic"
    assert "gen_ai.evaluation.evaluator.version" not in deterministic.attributes
    assert "gen_ai.evaluation.target" not in deterministic.attributes


def test_a_failed_judged_score_is_still_an_llm_judge(otel: InMemoryOTel) -> None:
    emitter_for(otel, semconv_proposals=True).emit(traced_run(), failed(), sample_rate=1.0)
    (event,) = otel.events()
    assert event.attributes["gen_ai.evaluation.evaluator.type"] == "llm_judge"


# -- providers -----------------------------------------------------------------------------------


def test_flush_exports_batched_events() -> None:
    exporter = InMemoryLogRecordExporter()
    provider = LoggerProvider()
    # A long delay: only the flush can export the record in time.
    provider.add_log_record_processor(
        BatchLogRecordProcessor(exporter, schedule_delay_millis=60_000)
    )
    try:
        emitter = OTelEmitter(logger_provider=provider, emit="events")
        emitter.emit(traced_run(), scored(), sample_rate=1.0)
        assert exporter.get_finished_logs() == ()
        assert emitter.flush(timeout=10) is True
        (record,) = exporter.get_finished_logs()
        assert record.log_record.event_name == "gen_ai.evaluation.result"
    finally:
        provider.shutdown()


def test_the_global_logger_provider_by_default_even_when_set_later() -> None:
    # The global provider can be set once per process: a fresh interpreter.
    code = textwrap.dedent(
        f"""
        from opentelemetry._logs import set_logger_provider
        from opentelemetry.sdk._logs import LoggerProvider
        from opentelemetry.sdk._logs.export import (
            InMemoryLogRecordExporter, SimpleLogRecordProcessor)
        from livescore import Run, ScoreResult
        from livescore.otel import OTelEmitter

        emitter = OTelEmitter()  # before the SDK is set up, as a library is
        exporter = InMemoryLogRecordExporter()
        provider = LoggerProvider()
        provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
        set_logger_provider(provider)
        emitter.emit(Run(run_id="r", trace_id="{TRACE_ID}", span_id="{SPAN_ID}"),
                     ScoreResult(run_id="r", scorer_id="demo", score=1.0), sample_rate=1.0)
        (record,) = exporter.get_finished_logs()
        print(record.log_record.event_name, format(record.log_record.span_id, "016x"))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.split() == ["gen_ai.evaluation.result", SPAN_ID]
