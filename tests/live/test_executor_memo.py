"""Live scoring shares identical judge requests between the scorers of one run: the
in-process executor gives each job a RunMemo (so fleet workers, which feed it, do too)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from _live_support import FakeEmitter, assert_invariant, make_run

from livescore.live import InProcessExecutor, LiveDispatcher
from livescore.otel import attributes as A
from livescore.scorers import create_faithfulness_scorer, create_hallucination_scorer
from livescore.testing import OpenAITestServer

CONTEXT = ["Paris is the capital of France."]


def claims_judge(body: dict[str, Any]) -> Any:
    name = (body.get("response_format") or {}).get("json_schema", {}).get("name")
    if name == "ExtractedClaims":
        return {"claims": ["Paris is the capital of France."]}
    if name in ("ClaimVerdicts", "FaithfulnessVerdicts"):
        found = re.findall(r'<claim index="\d+">', str(body["messages"][-1]["content"]))
        verdict = "no" if name == "ClaimVerdicts" else "yes"
        return {"verdicts": [{"statement": "", "verdict": verdict, "reason": "r"}] * len(found)}
    return "The score is as computed."


def extraction_requests(server: OpenAITestServer) -> int:
    return sum(
        1
        for r in server.requests
        if (r.get("response_format") or {}).get("json_schema", {}).get("name") == "ExtractedClaims"
    )


@pytest.mark.parametrize(("share", "per_run"), [(True, 5), (False, 6)])
def test_each_job_extracts_its_claims_once(share: bool, per_run: int) -> None:
    runs = 4
    with OpenAITestServer(responder=claims_judge) as server:
        judge = server.judge()
        emitter = FakeEmitter()
        dispatcher = LiveDispatcher(
            [
                create_hallucination_scorer(model=judge, context=CONTEXT),
                create_faithfulness_scorer(model=judge, context=CONTEXT),
            ],
            emitter=emitter,
            executor=InProcessExecutor(share_judge_calls=share),
            register_atexit=False,
        )
        for i in range(runs):
            dispatcher.submit(make_run(i))
        assert dispatcher.flush(timeout=30)
        dispatcher.shutdown(timeout=5)

    assert_invariant(dispatcher)
    assert emitter.statuses() == ["scored"] * (2 * runs)
    # Sharing never crosses jobs: one extraction per run with the memo, two without.
    assert extraction_requests(server) == runs * (1 if share else 2)
    assert len(server.requests) == runs * per_run
    results = [r for _, r, _ in emitter.results]
    assert sum(r.usage.calls for r in results) == runs * per_run
    assert sum(r.usage.shared for r in results) == (runs if share else 0)
    shared_spans = [r for r in results if A.LIVESCORE_JUDGE_SHARED in r.attributes]
    assert len(shared_spans) == (runs if share else 0)


def test_the_executor_says_when_sharing_is_off() -> None:
    assert repr(InProcessExecutor()) == "InProcessExecutor(max_concurrency=16)"
    assert "share_judge_calls=False" in repr(InProcessExecutor(share_judge_calls=False))
