"""OTelEmitter: evaluation spans, span events and metrics, on the real OpenTelemetry SDK."""

from __future__ import annotations

from typing import Any

import pytest
from _otel_support import InMemoryOTel
from opentelemetry.trace import SpanKind, StatusCode

from livescore import Run, ScoreResult
from livescore.judges import JudgeUsage
from livescore.otel import OTelEmitter, attributes
from livescore.otel._emitter import run_span_context

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
SPAN_ID = "00f067aa0ba902b7"
SECRET = "the user's private address is 12 Elm Street"


def emitter_for(otel: InMemoryOTel, **kwargs: Any) -> OTelEmitter:
    return OTelEmitter(otel.tracer_provider, otel.meter_provider, **kwargs)


def traced_run(**kwargs: Any) -> Run:
    return Run(input="q", output="a", run_id="run-1", trace_id=TRACE_ID, span_id=SPAN_ID, **kwargs)


def scored_result(**kwargs: Any) -> ScoreResult:
    values: dict[str, Any] = {
        "run_id": "run-1",
        "scorer_id": "hallucination",
        "score": 0.25,
        "label": "low",
        "reason": f"The score is 0.25 because {SECRET}",
        "usage": JudgeUsage(calls=3, input_tokens=300, output_tokens=40, latency_s=1.5),
        "duration_s": 2.0,
        "judge_model": "gpt-4o-mini",
        "flags": {"claims_total": 4, "claims_hallucinated": 1, "output_truncated": True},
        "attributes": {
            "livescore.claims.total": 4,
            "livescore.claims.hallucinated": 1,
            "livescore.output_truncated": True,
        },
    }
    values.update(kwargs)
    return ScoreResult(**values)


def all_text(span: Any) -> str:
    """Every attribute, event attribute and status text of a span, as one string."""
    parts = [str(v) for v in (span.attributes or {}).values()]
    for event in span.events:
        parts.extend(str(v) for v in (event.attributes or {}).values())
    parts.append(span.status.description or "")
    return "\n".join(parts)


# -- spans -------------------------------------------------------------------------------------


def test_score_span_is_a_child_of_the_run_span_with_one_link(otel: InMemoryOTel) -> None:
    emitter_for(otel).emit(traced_run(), scored_result(), sample_rate=0.5, scorer_version="3")
    (span,) = otel.spans()
    assert span.name == "evaluation hallucination"
    assert span.kind == SpanKind.INTERNAL
    assert span.context.trace_id == int(TRACE_ID, 16)
    assert span.parent is not None
    assert span.parent.span_id == int(SPAN_ID, 16)
    assert span.parent.trace_id == int(TRACE_ID, 16)
    assert len(span.links) == 1
    assert span.links[0].context.span_id == int(SPAN_ID, 16)
    assert span.links[0].context.trace_id == int(TRACE_ID, 16)
    assert span.status.status_code == StatusCode.UNSET


def test_score_span_attributes(otel: InMemoryOTel) -> None:
    emitter_for(otel).emit(traced_run(), scored_result(), sample_rate=0.5, scorer_version="3")
    (span,) = otel.spans()
    attrs = dict(span.attributes or {})
    assert attrs == {
        "gen_ai.operation.name": "evaluation",
        "gen_ai.evaluation.name": "hallucination",
        "gen_ai.evaluation.score.value": 0.25,
        "gen_ai.evaluation.score.label": "low",
        "gen_ai.evaluation.explanation": f"The score is 0.25 because {SECRET}",
        "openinference.span.kind": "EVALUATOR",
        "evaluations.0.evaluation.name": "hallucination",
        "evaluations.0.evaluation.score": 0.25,
        "evaluations.0.evaluation.label": "low",
        "evaluations.0.evaluation.explanation": f"The score is 0.25 because {SECRET}",
        "livescore.scorer.id": "hallucination",
        "livescore.scorer.version": "3",
        "livescore.status": "scored",
        "livescore.sample_rate": 0.5,
        "livescore.run.id": "run-1",
        "livescore.source": "live",
        "livescore.duration_s": 2.0,
        "livescore.judge.model": "gpt-4o-mini",
        "livescore.judge.calls": 3,
        "livescore.judge.input_tokens": 300,
        "livescore.judge.output_tokens": 40,
        "livescore.judge.latency_s": 1.5,
        "livescore.claims.total": 4,
        "livescore.claims.hallucinated": 1,
        "livescore.output_truncated": True,
    }
    (event,) = span.events
    assert event.name == "gen_ai.evaluation.result"
    assert dict(event.attributes or {}) == {
        "gen_ai.evaluation.name": "hallucination",
        "gen_ai.evaluation.score.value": 0.25,
        "gen_ai.evaluation.score.label": "low",
        "gen_ai.evaluation.explanation": f"The score is 0.25 because {SECRET}",
    }


def test_span_times_come_from_the_score(otel: InMemoryOTel) -> None:
    emitter = emitter_for(otel)
    emitter.emit(traced_run(), scored_result(), sample_rate=1.0, start_time_ns=1_000)
    emitter.emit(traced_run(), scored_result(duration_s=2.0), sample_rate=1.0)
    explicit, derived = otel.spans()
    assert explicit.start_time == 1_000
    assert derived.end_time is not None
    assert derived.start_time is not None
    assert derived.end_time - derived.start_time == 2_000_000_000
    assert derived.events[0].timestamp == derived.end_time


def test_nests_under_a_real_run_span_that_already_ended(otel: InMemoryOTel) -> None:
    tracer = otel.tracer_provider.get_tracer("agent")
    with tracer.start_as_current_span("invoke_agent demo") as agent_span:
        ctx = agent_span.get_span_context()
    run = Run(
        input="q",
        output="a",
        trace_id=format(ctx.trace_id, "032x"),
        span_id=format(ctx.span_id, "016x"),
        trace_flags=int(ctx.trace_flags),
    )
    emitter_for(otel).emit(run, scored_result(run_id=run.run_id), sample_rate=1.0)
    agent, score = otel.spans()
    assert score.parent is not None
    assert score.parent.span_id == agent.context.span_id
    assert score.context.trace_id == agent.context.trace_id


def test_failed_score_span_has_error_type_and_error_status(otel: InMemoryOTel) -> None:
    result = ScoreResult(
        run_id="run-1",
        scorer_id="hallucination",
        status="failed",
        error="judge timed out after 30 s",
        error_type="timeout",
        failed_step="analyze",
        usage=JudgeUsage(calls=2, input_tokens=100, output_tokens=0, latency_s=30.0),
    )
    emitter_for(otel).emit(traced_run(), result, sample_rate=1.0)
    (span,) = otel.spans()
    attrs = dict(span.attributes or {})
    assert attrs["error.type"] == "timeout"
    assert attrs["livescore.status"] == "failed"
    assert attrs["livescore.failed_step"] == "analyze"
    assert "gen_ai.evaluation.score.value" not in attrs
    assert span.status.status_code == StatusCode.ERROR
    assert span.status.description == "timeout: judge timed out after 30 s"
    (event,) = span.events
    assert dict(event.attributes or {}) == {
        "gen_ai.evaluation.name": "hallucination",
        "error.type": "timeout",
    }


def test_skipped_score_span_has_the_reason_and_no_score(otel: InMemoryOTel) -> None:
    result = ScoreResult(
        run_id="run-1", scorer_id="hallucination", status="skipped", reason="no context"
    )
    emitter_for(otel).emit(traced_run(), result, sample_rate=1.0)
    (span,) = otel.spans()
    attrs = dict(span.attributes or {})
    assert attrs["livescore.status"] == "skipped"
    assert attrs["livescore.skip_reason"] == "no context"
    assert "gen_ai.evaluation.score.value" not in attrs
    assert "gen_ai.evaluation.explanation" not in attrs
    assert "error.type" not in attrs
    assert span.status.status_code == StatusCode.UNSET


@pytest.mark.parametrize(
    "ids",
    [
        {},
        {"trace_id": TRACE_ID},  # no span id: nothing to nest under
        {"trace_id": "not-hex", "span_id": SPAN_ID},
        {"trace_id": "0" * 32, "span_id": SPAN_ID},  # the invalid all-zero id
    ],
)
def test_run_without_a_usable_trace_gets_a_root_span(
    otel: InMemoryOTel, ids: dict[str, str]
) -> None:
    run = Run(input="q", output="a", run_id="orphan", **ids)
    emitter_for(otel).emit(run, scored_result(run_id="orphan"), sample_rate=1.0)
    (span,) = otel.spans()
    assert span.parent is None
    assert span.links == ()
    assert span.context.trace_id != int(TRACE_ID, 16)
    assert (span.attributes or {})["livescore.run.id"] == "orphan"


def test_a_score_of_an_unsampled_trace_is_a_new_root_linked_to_the_run(
    otel: InMemoryOTel,
) -> None:
    # As a child of the unsampled run span, the SDK's ParentBased sampler would drop the
    # score span (the dispatcher only lets such runs through with score_unsampled_traces).
    emitter_for(otel).emit(traced_run(trace_flags=0), scored_result(), sample_rate=1.0)
    (span,) = otel.spans()
    assert span.parent is None
    assert span.context.trace_id != int(TRACE_ID, 16)
    (link,) = span.links
    assert (link.context.trace_id, link.context.span_id) == (int(TRACE_ID, 16), int(SPAN_ID, 16))
    assert (span.attributes or {})["livescore.run.trace_id"] == TRACE_ID
    assert otel.counts("livescore.runs", "livescore.status") == {("scored",): 1}


def test_an_explicit_parent_places_the_span(otel: InMemoryOTel) -> None:
    from livescore.runs import TraceParent

    parent = TraceParent("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331")
    run = Run(input="q", output="a", run_id="no-ids")
    emitter_for(otel).emit(run, scored_result(run_id="no-ids"), sample_rate=1.0, parent=parent)
    (span,) = otel.spans()
    assert span.parent is not None
    assert (span.parent.trace_id, span.parent.span_id) == (
        int(parent.trace_id, 16),
        int(parent.span_id, 16),
    )


def test_scorer_attributes_never_override_the_emitters_own(otel: InMemoryOTel) -> None:
    result = scored_result(attributes={"livescore.status": "made-up", "myapp.n": 2})
    emitter_for(otel).emit(traced_run(), result, sample_rate=1.0)
    attrs = dict(otel.spans()[0].attributes or {})
    assert (attrs["livescore.status"], attrs["myapp.n"]) == ("scored", 2)


def test_text_attributes_of_scorers_follow_content_capture(otel: InMemoryOTel) -> None:
    result = scored_result(attributes={"myapp.note": SECRET, "myapp.n": 2})
    emitter_for(otel, capture_content="none").emit(traced_run(), result, sample_rate=1.0)
    emitter_for(otel, capture_content="truncated", max_content_chars=10).emit(
        traced_run(), result, sample_rate=1.0
    )
    first, second = (dict(s.attributes or {}) for s in otel.spans())
    assert "myapp.note" not in first
    assert first["myapp.n"] == 2
    assert second["myapp.note"] == SECRET[:9] + "…"


def test_flush_force_flushes_the_sdk_providers(otel: InMemoryOTel) -> None:
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    otel.tracer_provider.add_span_processor(
        BatchSpanProcessor(otel.exporter, schedule_delay_millis=60_000)
    )
    emitter = emitter_for(otel)
    emitter.emit(traced_run(), scored_result(), sample_rate=1.0)
    before = len(otel.spans())  # the simple processor's copy only
    assert emitter.flush(timeout=10) is True
    assert len(otel.spans()) == before + 1  # the batch processor's copy, flushed
    assert OTelEmitter().flush(timeout=1) is True  # API-only global providers: nothing to do


def test_run_span_context_reads_the_run() -> None:
    ctx = run_span_context(traced_run(trace_flags=1))
    assert ctx is not None
    assert (ctx.trace_id, ctx.span_id, int(ctx.trace_flags)) == (
        int(TRACE_ID, 16),
        int(SPAN_ID, 16),
        1,
    )
    assert ctx.is_remote is False
    assert run_span_context(Run()) is None


# -- content capture ----------------------------------------------------------------------


def test_capture_none_removes_every_user_text(otel: InMemoryOTel) -> None:
    emitter = emitter_for(otel, capture_content="none")
    emitter.emit(traced_run(), scored_result(), sample_rate=1.0)
    emitter.emit(
        traced_run(),
        ScoreResult(
            run_id="run-1",
            scorer_id="hallucination",
            status="failed",
            error=f"judge refused: {SECRET}",
            error_type="invalid_response",
        ),
        sample_rate=1.0,
    )
    emitter.emit(
        traced_run(),
        ScoreResult(run_id="run-1", scorer_id="h", status="skipped", reason=SECRET),
        sample_rate=1.0,
    )
    scored, failed, skipped = otel.spans()
    for span in (scored, failed, skipped):
        assert "Elm Street" not in all_text(span)
    assert "gen_ai.evaluation.explanation" not in (scored.attributes or {})
    assert "evaluations.0.evaluation.explanation" not in (scored.attributes or {})
    assert (scored.attributes or {})["gen_ai.evaluation.score.value"] == 0.25
    assert failed.status.description == "invalid_response"
    assert "livescore.skip_reason" not in (skipped.attributes or {})


def test_capture_truncated_cuts_long_text(otel: InMemoryOTel) -> None:
    emitter = emitter_for(otel, capture_content="truncated", max_content_chars=20)
    emitter.emit(traced_run(), scored_result(reason="x" * 100), sample_rate=1.0)
    emitter.emit(traced_run(), scored_result(reason="short"), sample_rate=1.0)
    long, short = otel.spans()
    explanation = (long.attributes or {})["gen_ai.evaluation.explanation"]
    assert explanation == "x" * 19 + "…"
    assert long.events[0].attributes is not None
    assert long.events[0].attributes["gen_ai.evaluation.explanation"] == explanation
    assert (short.attributes or {})["gen_ai.evaluation.explanation"] == "short"


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"capture_content": "some"}, ValueError, "capture_content"),
        ({"max_content_chars": 0}, ValueError, "max_content_chars"),
        ({"max_content_chars": 1.5}, TypeError, "max_content_chars"),
    ],
)
def test_bad_options_are_rejected(kwargs: dict[str, Any], error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        OTelEmitter(**kwargs)


# -- metrics -------------------------------------------------------------------------------------


def test_metrics_for_scores_failures_skips_samples_and_drops(otel: InMemoryOTel) -> None:
    emitter = emitter_for(otel)
    emitter.record_sampled("hallucination", 4)
    emitter.emit(traced_run(), scored_result(score=0.25), sample_rate=1.0)
    emitter.emit(traced_run(), scored_result(score=0.75), sample_rate=1.0)
    emitter.emit(
        traced_run(),
        ScoreResult(
            run_id="r", scorer_id="hallucination", status="failed", error_type="rate_limited"
        ),
        sample_rate=1.0,
    )
    emitter.emit(
        traced_run(),
        ScoreResult(run_id="r", scorer_id="hallucination", status="skipped", reason="x"),
        sample_rate=1.0,
    )
    emitter.record_dropped("hallucination", "queue_full", 2)

    runs = otel.counts("livescore.runs", "livescore.status", "error.type", "livescore.reason")
    assert runs == {
        ("sampled", None, None): 4,
        ("scored", None, None): 2,
        ("failed", "rate_limited", None): 1,
        ("skipped", None, None): 1,
        ("dropped", None, "queue_full"): 2,
    }
    (score,) = otel.points("livescore.score")
    assert score.count == 2
    assert score.sum == pytest.approx(1.0)
    assert dict(score.attributes) == {
        "gen_ai.evaluation.name": "hallucination",
        "livescore.scorer.id": "hallucination",
    }
    assert list(score.explicit_bounds)[:3] == [0.0, 0.05, 0.1]

    (latency,) = otel.points("livescore.judge.latency")
    assert latency.count == 2
    assert latency.sum == pytest.approx(3.0)
    assert latency.attributes["livescore.judge.model"] == "gpt-4o-mini"
    tokens = otel.counts("livescore.judge.tokens", "gen_ai.token.type")
    assert tokens == {("input",): 600, ("output",): 80}


def test_queue_depth_gauge_reads_registered_sources(otel: InMemoryOTel) -> None:
    class FakeQueue:
        depth = 3

        def report(self) -> list[tuple[int, dict[str, str]]]:
            return [(self.depth, {attributes.LIVESCORE_DISPATCHER: "main"})]

    queue = FakeQueue()
    emitter = emitter_for(otel)
    emitter.observe_queue_depth(queue.report)
    (point,) = otel.points("livescore.queue.depth")
    assert point.value == 3
    assert dict(point.attributes) == {"livescore.dispatcher": "main"}

    del queue  # held weakly: a collected dispatcher stops reporting
    import gc

    gc.collect()
    assert otel.points("livescore.queue.depth") == []


def test_every_emitted_name_is_a_constant() -> None:
    names = {v for k, v in vars(attributes).items() if k.isupper() and isinstance(v, str)}
    for name in (
        "gen_ai.evaluation.score.value",
        "livescore.reason",
        "gen_ai.token.type",
        "livescore.queue.depth",
    ):
        assert name in names
