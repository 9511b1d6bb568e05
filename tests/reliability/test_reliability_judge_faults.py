"""Judge faults over real HTTP: every one ends as a failed score with a reason, or a success
after retry, and the agent's result never changes.

Each case runs a real ``create_agent`` agent with a :class:`LiveScoringHandler` whose
hallucination scorer talks to :class:`OpenAITestServer`; the server plays the fault first,
then answers well. What we check is what a user sees: the evaluation span exported by the
SDK, and the agent's messages next to those of the same agent run without livescore.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from _reliability_support import (
    FAST_JUDGE,
    MakeHandler,
    evaluation_spans,
    grounded_reply,
    only_evaluation,
    question,
    tool_contexts,
    transcript,
    weather_agent,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from livescore.otel import attributes as A
from livescore.scorers import create_hallucination_scorer
from livescore.scorers._judged import JudgeMode
from livescore.testing import OpenAITestServer, Reply, ReplyLike

CLAIMS = ["It is 21°C in Paris.", "It is sunny in Paris."]
TWO_CLAIMS = {"claims": CLAIMS}
ONE_VERDICT = {"verdicts": [{"statement": CLAIMS[0], "verdict": "no", "reason": "Tool."}]}
TWO_VERDICTS = {"verdicts": [{"statement": c, "verdict": "no", "reason": "Tool."} for c in CLAIMS]}
ONE_CALL_SHORT = {
    "claims": CLAIMS,
    "verdicts": [{"statement": CLAIMS[0], "verdict": "no", "reason": "Tool."}],
    "reason": "One verdict is missing.",
}


@dataclass(frozen=True)
class Fault:
    """A scripted fault: the replies served first, and the outcome the user must see."""

    replies: tuple[ReplyLike, ...]
    status: str
    error_type: str | None = None
    failed_step: str | None = None
    reason_mentions: str = ""
    judge_calls: int | None = None  # on the span: every attempt is counted
    judge_mode: JudgeMode = "three_step"
    options: dict[str, object] = field(default_factory=dict)


# FAST_JUDGE allows 2 retries: three faults in a row exhaust them.
FAULTS = {
    "429 with retry-after, then success": Fault(
        (Reply.rate_limited(retry_after=0.05),) * 2, "scored", judge_calls=3 + 2
    ),
    "429 storm": Fault(
        (Reply.rate_limited(retry_after=0.01),) * 3,
        "failed",
        "rate_limited",
        "preprocess",
        "429",
        judge_calls=3,
    ),
    "500, then success": Fault((Reply.server_error(),), "scored", judge_calls=2 + 2),
    "500s": Fault(
        (Reply.server_error(), Reply.server_error(502), Reply.server_error(503)),
        "failed",
        "server_error",
        "preprocess",
        "HTTP 503",
        judge_calls=3,
    ),
    "timeout, then success": Fault((Reply.hang(5),), "scored", judge_calls=2 + 2),
    "timeouts": Fault(
        (Reply.hang(5),) * 2,
        "failed",
        "timeout",
        "preprocess",
        "timed out",
        judge_calls=2,
        options={"max_retries": 1},
    ),
    "dropped connection, then success": Fault((Reply.drop(),), "scored", judge_calls=2 + 2),
    "dropped connections": Fault(
        (Reply.drop(),) * 3, "failed", "connection_error", "preprocess", "connection"
    ),
    "broken response body": Fault(
        (Reply.broken_body(),) * 3, "failed", "invalid_response", "preprocess", "JSON"
    ),
    "broken JSON in the answer": Fault(
        (Reply.text('{"claims": ["It is 21'),) * 2,
        "failed",
        "invalid_response",
        "preprocess",
        "not valid JSON",
        judge_calls=2,  # the answer, and one corrective retry
    ),
    "broken JSON, corrected on retry": Fault(
        (Reply.text('{"claims": ["It is 21'),), "scored", judge_calls=2 + 2
    ),
    "JSON that breaks the schema": Fault(
        ({"claims": "It is 21°C in Paris."}, {"statements": CLAIMS}),
        "failed",
        "invalid_response",
        "preprocess",
        "schema",
        judge_calls=2,
    ),
    "wrong verdict count": Fault(
        (TWO_CLAIMS, ONE_VERDICT, ONE_VERDICT),
        "failed",
        "invalid_response",
        "analyze",
        "verdicts",
        judge_calls=3,
    ),
    "wrong verdict count, one call": Fault(
        (ONE_CALL_SHORT, ONE_CALL_SHORT),
        "failed",
        "invalid_response",
        "preprocess",
        "verdict",
        judge_calls=2,
        judge_mode="one_call",
    ),
    "empty replies": Fault(
        (Reply.empty(),) * 2, "failed", "invalid_response", "preprocess", "empty"
    ),
    "empty reason, twice": Fault(
        (TWO_CLAIMS, TWO_VERDICTS, Reply.empty(), Reply.empty()),
        "failed",
        "invalid_response",
        "generate_reason",
        "empty",
    ),
    "refusals": Fault(
        (Reply.refusal(),) * 2, "failed", "invalid_response", "preprocess", "refused"
    ),
}


@pytest.mark.parametrize("name", list(FAULTS))
def test_a_judge_fault_ends_as_a_failed_score_or_a_retried_success(
    name: str, make_handler: MakeHandler, exporter: InMemorySpanExporter
) -> None:
    fault = FAULTS[name]
    expected = transcript(weather_agent().invoke(question()))
    with OpenAITestServer(fault.replies, responder=grounded_reply) as server:
        scorer = create_hallucination_scorer(
            model=server.judge(**{**FAST_JUDGE, **fault.options}),
            get_context=tool_contexts,
            judge_mode=fault.judge_mode,
        )
        handler = make_handler([scorer])

        result = weather_agent().invoke(question(), config={"callbacks": [handler]})

        assert handler.flush(timeout=30)
    assert transcript(result) == expected
    span = only_evaluation(exporter.get_finished_spans(), "hallucination")
    attrs = dict(span.attributes or {})
    assert attrs[A.LIVESCORE_STATUS] == fault.status
    if fault.judge_calls is not None:
        assert attrs[A.LIVESCORE_JUDGE_CALLS] == fault.judge_calls
    (event,) = [e for e in span.events if e.name == A.GEN_AI_EVALUATION_RESULT_EVENT]
    event_attrs = dict(event.attributes or {})
    if fault.status == "scored":
        assert attrs[A.GEN_AI_EVALUATION_SCORE_VALUE] == 0.0
        assert A.ERROR_TYPE not in attrs
        assert span.status.status_code is not StatusCode.ERROR
        assert event_attrs[A.GEN_AI_EVALUATION_SCORE_VALUE] == 0.0
    else:
        assert attrs[A.ERROR_TYPE] == fault.error_type
        assert attrs[A.LIVESCORE_FAILED_STEP] == fault.failed_step
        assert A.GEN_AI_EVALUATION_SCORE_VALUE not in attrs
        assert event_attrs[A.ERROR_TYPE] == fault.error_type
        assert span.status.status_code is StatusCode.ERROR
        description = span.status.description or ""
        assert description.startswith(f"{fault.error_type}: ")
        assert fault.reason_mentions.lower() in description.lower()
    stats = handler.stats()
    assert (stats.sampled, stats.scored + stats.failed) == (1, 1)
    assert stats.failed_by_type == ({fault.error_type: 1} if fault.error_type else {})


def test_faults_on_every_run_never_touch_the_agent_and_never_leak_into_it(
    make_handler: MakeHandler, exporter: InMemorySpanExporter
) -> None:
    # A judge that fails in a different way on every request, for many runs in a row.
    faults = [
        Reply.server_error(),
        Reply.rate_limited(retry_after=0.01),
        Reply.drop(),
        Reply.broken_body(),
        Reply.text("not json"),
    ]
    served = iter(range(10_000))

    def responder(body: dict[str, object]) -> ReplyLike:
        return faults[next(served) % len(faults)]

    baseline = [transcript(weather_agent().invoke(question())) for _ in range(10)]
    with OpenAITestServer(responder=responder) as server:
        scorer = create_hallucination_scorer(
            model=server.judge(**{**FAST_JUDGE, "max_retries": 0}),
            get_context=tool_contexts,
        )
        handler = make_handler([scorer])

        results = [
            transcript(weather_agent().invoke(question(), config={"callbacks": [handler]}))
            for _ in range(10)
        ]

        assert handler.flush(timeout=30)
    assert results == baseline
    spans = evaluation_spans(exporter.get_finished_spans(), "hallucination")
    assert len(spans) == 10
    assert {dict(s.attributes or {})[A.LIVESCORE_STATUS] for s in spans} == {"failed"}
    assert handler.stats().failed == 10


def test_a_fault_after_stepping_down_from_json_schema_is_retried_on_the_lower_rung(
    make_handler: MakeHandler, exporter: InMemorySpanExporter
) -> None:
    # A llama.cpp-like server refuses json_schema; the judge steps down to json_object, and
    # the 500 that follows is retried there, not taken for another refusal.
    answer = grounded_reply(
        {"response_format": {"type": "json_schema", "json_schema": {"name": "OneCallAnswer"}}}
    )
    with OpenAITestServer(
        [Reply.server_error()], responder=lambda body: answer, reject_json_schema=True
    ) as server:
        scorer = create_hallucination_scorer(
            model=server.judge(**FAST_JUDGE), get_context=tool_contexts, judge_mode="one_call"
        )
        handler = make_handler([scorer])
        weather_agent().invoke(question(), config={"callbacks": [handler]})
        assert handler.flush(timeout=30)
        formats = [(r.get("response_format") or {}).get("type") for r in server.requests]
    assert formats == ["json_schema", "json_object", "json_object"]
    span = only_evaluation(exporter.get_finished_spans(), "hallucination")
    assert dict(span.attributes or {})[A.LIVESCORE_STATUS] == "scored"
