"""The live path end to end: dispatcher + OTelEmitter + a judged scorer, on the real SDK."""

from __future__ import annotations

from _otel_support import InMemoryOTel

from livescore import NotScorable, Run, StepContext, create_scorer
from livescore.live import LiveDispatcher, ScorerConfig
from livescore.otel import OTelEmitter
from livescore.scorers import create_hallucination_scorer
from livescore.testing import ScriptedJudge


def test_scores_from_the_worker_nest_under_the_agent_span(otel: InMemoryOTel) -> None:
    judge = ScriptedJudge(
        [
            {"claims": ["Paris is the capital of France", "Paris has 90 million people"]},
            {
                "verdicts": [
                    {"statement": "Paris is the capital of France", "verdict": "no", "reason": "y"},
                    {"statement": "Paris has 90 million people", "verdict": "yes", "reason": "no"},
                ]
            },
            "The score is 0.5 because one of two claims is unsupported.",
        ]
    )
    hallucination = create_hallucination_scorer(
        model=judge, context=["Paris is the capital of France."]
    )

    def no_context(ctx: StepContext) -> float:
        raise NotScorable("nothing to compare with")

    skipper = create_scorer(id="skipper", description="x", generate_score=no_context)
    emitter = OTelEmitter(otel.tracer_provider, otel.meter_provider)
    dispatcher = LiveDispatcher(
        [ScorerConfig(hallucination, sampling=1.0), skipper],
        emitter=emitter,
        register_atexit=False,
    )

    tracer = otel.tracer_provider.get_tracer("agent")
    with tracer.start_as_current_span("invoke_agent geo") as agent_span:
        ctx = agent_span.get_span_context()
        run = Run(
            input="Tell me about Paris.",
            output="Paris is the capital of France. It has 90 million people.",
            trace_id=format(ctx.trace_id, "032x"),
            span_id=format(ctx.span_id, "016x"),
        )
    # the run's span has ended before the scores exist, as in production
    assert dispatcher.submit(run) is True
    assert dispatcher.flush(timeout=20) is True
    dispatcher.shutdown(timeout=5)

    agent = next(s for s in otel.spans() if s.name == "invoke_agent geo")
    scores = {s.name: s for s in otel.eval_spans()}
    assert set(scores) == {"evaluation hallucination", "evaluation skipper"}
    for span in scores.values():
        assert span.parent is not None
        assert span.parent.span_id == agent.context.span_id
        assert span.context.trace_id == agent.context.trace_id

    attrs = dict(scores["evaluation hallucination"].attributes or {})
    assert attrs["gen_ai.evaluation.score.value"] == 0.5
    assert attrs["livescore.claims.total"] == 2
    assert attrs["livescore.claims.hallucinated"] == 1
    assert attrs["livescore.judge.calls"] == 3
    assert attrs["livescore.judge.model"] == "scripted"
    assert attrs["livescore.sample_rate"] == 1.0
    assert attrs["gen_ai.evaluation.explanation"].startswith("The score is 0.5")
    assert (scores["evaluation skipper"].attributes or {})["livescore.status"] == "skipped"

    runs = otel.counts("livescore.runs", "livescore.scorer.id", "livescore.status")
    assert runs == {
        ("hallucination", "sampled"): 1,
        ("hallucination", "scored"): 1,
        ("skipper", "sampled"): 1,
        ("skipper", "skipped"): 1,
    }


def test_counters_match_stats_when_runs_are_dropped(otel: InMemoryOTel) -> None:
    scorer = create_scorer(id="c", description="x", generate_score=lambda ctx: 1.0)
    emitter = OTelEmitter(otel.tracer_provider, otel.meter_provider)
    dispatcher = LiveDispatcher([scorer], emitter=emitter, register_atexit=False)
    dispatcher.drop(dispatcher.sample("t1"), "evicted")
    dispatcher.submit(Run(input="q", output="a"))
    dispatcher.shutdown(timeout=10)
    dispatcher.submit(Run(input="q", output="a"))  # after shutdown: a counted no-op

    stats = dispatcher.stats()
    assert (stats.sampled, stats.scored, stats.dropped) == (3, 1, 2)
    runs = otel.counts("livescore.runs", "livescore.status", "livescore.reason")
    assert runs == {
        ("sampled", None): 3,
        ("scored", None): 1,
        ("dropped", "evicted"): 1,
        ("dropped", "shutdown"): 1,
    }
    # the run without a trace id became a root span, findable by run id
    (span,) = otel.eval_spans()
    assert span.parent is None


def test_queue_depth_gauge_reports_the_dispatcher(otel: InMemoryOTel) -> None:
    scorer = create_scorer(id="c", description="x", generate_score=lambda ctx: 1.0)
    emitter = OTelEmitter(otel.tracer_provider, otel.meter_provider)
    dispatcher = LiveDispatcher([scorer], emitter=emitter, register_atexit=False, name="gauge-test")
    (point,) = otel.points("livescore.queue.depth")
    assert point.value == 0
    assert point.attributes["livescore.dispatcher"] == "gauge-test"
    dispatcher.shutdown(timeout=1)
