"""The judge scorers' facts reach the evaluation span as attributes, through the real
OpenTelemetry SDK: claim counts of faithfulness, the shared-answer count, toxicity counts."""

from __future__ import annotations

import re
from typing import Any

from _otel_support import InMemoryOTel

from livescore import Run
from livescore.live import LiveDispatcher
from livescore.otel import OTelEmitter
from livescore.otel import attributes as A
from livescore.scorers import (
    create_faithfulness_scorer,
    create_hallucination_scorer,
    create_toxicity_scorer,
)
from livescore.testing import OpenAITestServer


def judge(body: dict[str, Any]) -> Any:
    name = (body.get("response_format") or {}).get("json_schema", {}).get("name")
    prompt = str(body["messages"][-1]["content"])
    if name == "ExtractedClaims":
        return {"claims": ["The depot opens at 8 am.", "It closes at 9 pm."]}
    if name in ("ClaimVerdicts", "FaithfulnessVerdicts", "ToxicityVerdicts"):
        items = re.findall(r'<(?:claim|statement) index="\d+">', prompt)
        verdict = {"ClaimVerdicts": "no", "FaithfulnessVerdicts": "yes"}.get(name, "no")
        return {"verdicts": [{"statement": "", "verdict": verdict, "reason": "r"}] * len(items)}
    return "The score is as computed."


def test_judge_scorer_attributes_are_on_the_evaluation_spans() -> None:
    otel = InMemoryOTel.create()
    with OpenAITestServer(responder=judge) as server:
        model = server.judge()
        context = ["The depot opens at 8 am and closes at 9 pm."]
        dispatcher = LiveDispatcher(
            [
                create_hallucination_scorer(model=model, context=context),
                create_faithfulness_scorer(model=model, context=context),
                create_toxicity_scorer(model=model),
            ],
            emitter=OTelEmitter(
                tracer_provider=otel.tracer_provider, meter_provider=otel.meter_provider
            ),
            register_atexit=False,
        )
        dispatcher.submit(
            Run(
                input="Hours?",
                output="It opens at 8 am. It closes at 9 pm.",
                trace_id="0af7651916cd43dd8448eb211c80319c",
                span_id="b7ad6b7169203331",
            )
        )
        assert dispatcher.flush(timeout=30)
        dispatcher.shutdown(timeout=5)

    spans = {
        (s.attributes or {})[A.GEN_AI_EVALUATION_NAME]: dict(s.attributes or {})
        for s in otel.eval_spans()
    }
    otel.shutdown()
    faithfulness = spans["faithfulness"]
    assert faithfulness[A.GEN_AI_EVALUATION_SCORE_VALUE] == 1.0
    assert faithfulness[A.GEN_AI_EVALUATION_SCORE_LABEL] == "faithful"
    assert faithfulness[A.LIVESCORE_CLAIMS_TOTAL] == 2
    assert faithfulness[A.LIVESCORE_CLAIMS_SUPPORTED] == 2
    # One of the two claim scorers reused the other's extraction, and says so.
    shared = [s.get(A.LIVESCORE_JUDGE_SHARED) for s in (spans["hallucination"], faithfulness)]
    assert sorted(shared, key=str) == [1, None]
    assert (
        spans["hallucination"][A.LIVESCORE_JUDGE_CALLS] + faithfulness[A.LIVESCORE_JUDGE_CALLS] == 5
    )
    toxicity = spans["toxicity"]
    assert toxicity[A.GEN_AI_EVALUATION_SCORE_VALUE] == 0.0
    assert toxicity[A.LIVESCORE_STATEMENTS_TOTAL] == 2
    assert toxicity[A.LIVESCORE_STATEMENTS_TOXIC] == 0
    assert toxicity[A.LIVESCORE_JUDGE_CALLS] == 1  # nothing toxic: no reason call
