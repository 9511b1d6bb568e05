"""With redact=, no e-mail, phone number or name from the run reaches the judge's HTTP
requests, the exported spans and events, the sinks or the results: live and run_evals."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from _pii_support import (
    CONTEXT,
    EMAIL,
    NAME,
    claims_judge,
    leaks,
    personal_run,
    redactor,
)

from livescore import Run, run_evals
from livescore.live import LiveDispatcher
from livescore.otel import OTelEmitter
from livescore.pii import Detection
from livescore.scorers import create_hallucination_scorer
from livescore.sinks import LangfuseSink

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "otel"))
from _otel_support import InMemoryOTel
from score_api_doubles import LangfuseTestReceiver

from livescore.testing import OpenAITestServer, ScriptedJudge


def caught(otel: InMemoryOTel) -> list[Any]:
    spans = [dict(s.attributes or {}) | {"name": s.name} for s in otel.spans()]
    events = [
        {"body": r.log_record.body, "attributes": dict(r.log_record.attributes or {})}
        for r in otel.log_exporter.get_finished_logs()
    ]
    return [spans, events]


def test_live_scores_send_and_export_placeholders_only() -> None:
    otel = InMemoryOTel.create()
    with OpenAITestServer(responder=claims_judge) as server, LangfuseTestReceiver() as langfuse:
        sink = LangfuseSink(
            public_key="pk", secret_key="sk", base_url=langfuse.url, initial_backoff=0.01
        )
        dispatcher = LiveDispatcher(
            [create_hallucination_scorer(model=server.judge(), context=CONTEXT)],
            emitter=OTelEmitter(
                tracer_provider=otel.tracer_provider,
                meter_provider=otel.meter_provider,
                logger_provider=otel.logger_provider,
            ),
            sinks=[sink],
            redact=redactor(),
            register_atexit=False,
        )
        dispatcher.submit(personal_run())
        assert dispatcher.flush(timeout=60)
        dispatcher.shutdown(timeout=10)
        assert sink.flush(timeout=30)
        requests = list(server.requests)
        scores = langfuse.scores()
        sink.shutdown()
    try:
        (span,) = otel.eval_spans()
        attributes = dict(span.attributes or {})
        assert attributes["gen_ai.evaluation.score.value"] == 0.0  # both claims supported
        assert "<PERSON_1>" in attributes["gen_ai.evaluation.explanation"]
        assert len(requests) == 3
        assert scores
        prompts = json.dumps(requests)
        assert "<PERSON_1>" in prompts
        assert "<EMAIL_1>" in prompts
        assert "<PHONE_1>" in prompts
        assert leaks([requests, scores, *caught(otel)]) == []
    finally:
        otel.shutdown()


def test_the_same_run_unredacted_does_send_the_values() -> None:
    # The check above can fail: without redact= the judge and the spans see the values.
    otel = InMemoryOTel.create()
    with OpenAITestServer(responder=claims_judge) as server:
        dispatcher = LiveDispatcher(
            [create_hallucination_scorer(model=server.judge(), context=CONTEXT)],
            emitter=OTelEmitter(tracer_provider=otel.tracer_provider),
            register_atexit=False,
        )
        dispatcher.submit(personal_run())
        assert dispatcher.flush(timeout=60)
        dispatcher.shutdown(timeout=10)
        requests = list(server.requests)
    otel.shutdown()
    assert NAME in leaks([requests])
    assert EMAIL in leaks([requests])
    assert NAME in leaks(caught(otel))


def test_run_evals_items_and_scores_hold_placeholders_only() -> None:
    otel = InMemoryOTel.create()
    item = {
        "input": personal_run().input,
        "output": personal_run().output,
        "context": CONTEXT,
        "ground_truth": f"{NAME} joined in 2019",
    }
    with OpenAITestServer(responder=claims_judge) as server:
        scorer = create_hallucination_scorer(model=server.judge())
        result = anyio.run(
            lambda: run_evals(
                [item],
                [scorer],
                tracer_provider=otel.tracer_provider,
                logger_provider=otel.logger_provider,
                redact=redactor(),
            )
        )
        requests = list(server.requests)
    otel.shutdown()
    (record,) = result.items
    assert record.scores["hallucination"].score == 0.0
    row = record.to_dict()
    # The row and the score name the same person the same way.
    assert "<PERSON_1>" in row["input"]
    assert "<PERSON_1>" in str(row["context"])
    assert "<PERSON_1>" in (record.scores["hallucination"].reason or "")
    assert leaks([requests, row, result.to_dict(), *caught(otel)]) == []


def test_a_detector_that_raises_fails_the_score_and_sends_nothing() -> None:
    def broken(text: str) -> list[Detection]:
        raise RuntimeError(f"cannot read {text}")

    otel = InMemoryOTel.create()
    with OpenAITestServer(responder=claims_judge) as server:
        dispatcher = LiveDispatcher(
            [create_hallucination_scorer(model=server.judge(), context=CONTEXT)],
            emitter=OTelEmitter(tracer_provider=otel.tracer_provider),
            redact=broken,
            register_atexit=False,
        )
        dispatcher.submit(personal_run())
        assert dispatcher.flush(timeout=60)
        dispatcher.shutdown(timeout=10)
        assert server.requests == []
    otel.shutdown()
    (span,) = otel.eval_spans()
    attributes = dict(span.attributes or {})
    assert attributes["error.type"] == "redaction"
    assert leaks(caught(otel)) == []  # the detector's message quoted the text: not kept
    assert dispatcher.stats().failed == 1


def test_redaction_of_the_context_failing_also_fails_the_score() -> None:
    def picky(text: str) -> list[Detection]:
        if "Customer record" in text:
            raise ValueError("no")
        return []

    scorer = create_hallucination_scorer(model=ScriptedJudge([]), context=CONTEXT)
    result = anyio.run(lambda: scorer.with_redaction(picky).score(Run(input="q", output="a.")))
    assert (result.status, result.failed_step, result.error_type) == (
        "failed",
        "redaction",
        "redaction",
    )


def test_with_redaction_leaves_the_original_scorer_as_it_was() -> None:
    scorer = create_hallucination_scorer(model=ScriptedJudge([]), context=CONTEXT)
    assert scorer.with_redaction(redactor()).redact is redactor()
    assert scorer.redact is None


def test_broker_and_redact_are_refused_together_with_where_to_redact() -> None:
    scorer = create_hallucination_scorer(model=ScriptedJudge([]), context=CONTEXT)
    with pytest.raises(ValueError, match="livescore worker --redact"):
        LiveDispatcher([scorer], broker="redis://127.0.0.1:1/0", redact=redactor())
    with pytest.raises(ValueError, match="livescore worker --redact"):
        anyio.run(
            lambda: run_evals([], [scorer], broker="redis://127.0.0.1:1/0", redact=redactor())
        )
