"""A conversation's score as OpenTelemetry data: an evaluation span in the last covered turn's
trace, child of that turn's run span, linked to every covered turn's run span."""

from __future__ import annotations

from _otel_support import InMemoryOTel

from livescore import Run, create_scorer
from livescore.live import LiveDispatcher
from livescore.otel import OTelEmitter
from livescore.otel import attributes as A


def _hex(value: int, digits: int) -> str:
    return format(value, f"0{digits}x")


def test_a_conversation_score_nests_under_its_last_turn_and_links_every_turn(
    otel: InMemoryOTel,
) -> None:
    tracer = otel.tracer_provider.get_tracer("agent")
    turns = create_scorer(
        id="turns",
        description="turns",
        level="conversation",
        generate_score=lambda ctx: float(len(ctx.conversation.runs)),
    )
    emitter = OTelEmitter(tracer_provider=otel.tracer_provider, meter_provider=otel.meter_provider)
    dispatcher = LiveDispatcher(
        [turns], emitter=emitter, register_atexit=False, conversation_idle_timeout=None
    )
    run_spans = []
    for i in range(3):
        # Each turn is its own trace (a chat app handles one request per turn).
        with tracer.start_as_current_span(f"invoke_agent turn {i}") as span:
            ctx = span.get_span_context()
            run_spans.append((_hex(ctx.trace_id, 32), _hex(ctx.span_id, 16)))
            dispatcher.submit(
                Run(
                    input=f"q{i}",
                    output=f"a{i}",
                    trace_id=_hex(ctx.trace_id, 32),
                    span_id=_hex(ctx.span_id, 16),
                    conversation_id="chat-7",
                    run_id=f"turn-{i}",
                )
            )
    dispatcher.end_conversation("chat-7")
    assert dispatcher.flush(timeout=30)
    dispatcher.shutdown(timeout=5)

    (evaluation,) = otel.eval_spans()
    last_trace, last_span = run_spans[-1]
    assert _hex(evaluation.context.trace_id, 32) == last_trace
    assert evaluation.parent is not None
    assert _hex(evaluation.parent.span_id, 16) == last_span
    linked = {
        (_hex(link.context.trace_id, 32), _hex(link.context.span_id, 16))
        for link in evaluation.links
    }
    assert linked == set(run_spans)
    attrs = dict(evaluation.attributes or {})
    assert attrs[A.GEN_AI_CONVERSATION_ID] == "chat-7"
    assert attrs[A.OPENINFERENCE_SESSION_ID] == "chat-7"
    assert attrs[A.LIVESCORE_CONVERSATION_TURNS] == 3
    assert (
        attrs[A.LIVESCORE_CONVERSATION_FIRST_TURN],
        attrs[A.LIVESCORE_CONVERSATION_LAST_TURN],
    ) == (
        1,
        3,
    )
    assert A.LIVESCORE_CONVERSATION_TURNS_FORGOTTEN not in attrs
    assert attrs[A.GEN_AI_EVALUATION_SCORE_VALUE] == 3.0
    assert attrs[A.LIVESCORE_RUN_ID] == "turn-2"  # the last covered turn's
