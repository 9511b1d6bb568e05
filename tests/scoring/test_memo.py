"""RunMemo: identical judge requests of one run are sent once, even in flight; the scorer that
reused an answer says so; failures, cancellations and mismatched checks are never shared."""

from __future__ import annotations

import re
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from livescore import PromptStep, create_scorer
from livescore.otel import attributes as A
from livescore.scorers import create_faithfulness_scorer, create_hallucination_scorer
from livescore.scoring import RunMemo, Scorer, ScoreResult
from livescore.testing import OpenAITestServer, Reply, ScriptedJudge

pytestmark = pytest.mark.anyio

CONTEXT = ["The Lyon depot opens at 8 am and closes at 6 pm."]
RUN = {"input": "Hours?", "output": "It opens at 8 am and closes at 7 pm.", "run_id": "r1"}
CLAIMS = ["The depot opens at 8 am.", "The depot closes at 7 pm."]


def claims_judge(body: dict[str, Any]) -> Any:
    """Answers the claim-based scorers: claims, then one verdict per claim, then a reason."""
    response_format = body.get("response_format") or {}
    name = response_format.get("json_schema", {}).get("name")
    prompt = str(body["messages"][-1]["content"])
    if name == "ExtractedClaims":
        return {"claims": CLAIMS}
    if name in ("ClaimVerdicts", "FaithfulnessVerdicts"):
        marks = ("no", "yes") if name == "ClaimVerdicts" else ("yes", "no")
        found = re.findall(r'<claim index="\d+">(.*?)</claim>', prompt)
        return {
            "verdicts": [
                {"statement": c, "verdict": marks[i % 2], "reason": "r"}
                for i, c in enumerate(found)
            ]
        }
    return "The score is as computed."


def requests_named(server: OpenAITestServer, name: str) -> list[dict[str, Any]]:
    return [
        r
        for r in server.requests
        if (r.get("response_format") or {}).get("json_schema", {}).get("name") == name
    ]


async def score_together(scorers: list[Scorer], memo: RunMemo | None) -> dict[str, ScoreResult]:
    """Score RUN with every scorer at once, as live scoring and run_evals do."""
    results: dict[str, ScoreResult] = {}

    async def one(scorer: Scorer) -> None:
        results[scorer.id] = await scorer.score(RUN, memo=memo)

    async with anyio.create_task_group() as tg:
        for scorer in scorers:
            tg.start_soon(one, scorer)
    return results


async def test_hallucination_and_faithfulness_extract_the_claims_once() -> None:
    async with OpenAITestServer(responder=claims_judge) as server:
        judge = server.judge()
        scorers = [
            create_hallucination_scorer(model=judge, context=CONTEXT),
            create_faithfulness_scorer(model=judge, context=CONTEXT),
        ]
        memo = RunMemo()
        results = await score_together(scorers, memo)

    hallucination, faithfulness = results["hallucination"], results["faithfulness"]
    assert (hallucination.score, faithfulness.score) == (0.5, 0.5)
    assert len(requests_named(server, "ExtractedClaims")) == 1  # in flight: asked once
    assert len(server.requests) == 5  # claims once, verdicts twice, reasons twice
    # The first asker paid for it; the other says it reused the answer.
    assert hallucination.usage.calls == 3
    assert hallucination.usage.shared == 0
    assert faithfulness.usage.calls == 2
    assert faithfulness.usage.shared == 1
    assert faithfulness.step_usage["preprocess"].calls == 0
    assert faithfulness.step_usage["preprocess"].shared == 1
    assert faithfulness.attributes[A.LIVESCORE_JUDGE_SHARED] == 1
    assert A.LIVESCORE_JUDGE_SHARED not in hallucination.attributes
    assert faithfulness.preprocess_step_result == hallucination.preprocess_step_result
    assert faithfulness.to_dict()["usage"]["shared"] == 1
    assert (memo.requests, memo.reused, memo.calls_saved) == (5, 1, 1)


async def test_without_a_memo_each_scorer_asks_for_itself() -> None:
    async with OpenAITestServer(responder=claims_judge) as server:
        judge = server.judge()
        scorers = [
            create_hallucination_scorer(model=judge, context=CONTEXT),
            create_faithfulness_scorer(model=judge, context=CONTEXT),
        ]
        results = await score_together(scorers, None)

    assert len(requests_named(server, "ExtractedClaims")) == 2
    assert len(server.requests) == 6
    assert all(r.usage.shared == 0 for r in results.values())


async def test_two_judges_with_the_same_settings_share_but_other_models_do_not() -> None:
    async with OpenAITestServer(responder=claims_judge) as server:
        same = [
            create_hallucination_scorer(model=server.judge(), context=CONTEXT),
            create_faithfulness_scorer(model=server.judge(), context=CONTEXT),
        ]
        await score_together(same, RunMemo())
        shared = len(requests_named(server, "ExtractedClaims"))
        other = [
            create_hallucination_scorer(model=server.judge("model-a"), context=CONTEXT),
            create_faithfulness_scorer(model=server.judge("model-b"), context=CONTEXT),
        ]
        await score_together(other, RunMemo())

    assert shared == 1
    assert len(requests_named(server, "ExtractedClaims")) == 3  # one more per model


async def test_a_failed_request_is_not_shared() -> None:
    replies: list[Any] = [Reply.server_error()]
    async with OpenAITestServer(replies, responder=claims_judge) as server:
        judge = server.judge(max_retries=0)
        memo = RunMemo()
        first = await create_hallucination_scorer(model=judge, context=CONTEXT).score(
            RUN, memo=memo
        )
        second = await create_faithfulness_scorer(model=judge, context=CONTEXT).score(
            RUN, memo=memo
        )

    assert first.status == "failed"
    assert first.failed_step == "preprocess"
    assert second.status == "scored"  # it asked again, and got an answer
    assert second.usage.shared == 0
    assert len(requests_named(server, "ExtractedClaims")) == 2


async def test_a_cancelled_asker_hands_the_request_to_the_next_one() -> None:
    # The first request hangs past the first scorer's timeout; the second scorer, waiting
    # on it, sends the request itself once the first gives up.
    replies: list[Any] = [Reply.hang()]
    async with OpenAITestServer(replies, responder=claims_judge) as server:
        judge = server.judge()
        hallucination = create_hallucination_scorer(model=judge, context=CONTEXT)
        faithfulness = create_faithfulness_scorer(model=judge, context=CONTEXT)
        memo = RunMemo()
        results: dict[str, ScoreResult] = {}

        async def one(scorer: Scorer, seconds: float | None) -> None:
            results[scorer.id] = await scorer.score(RUN, memo=memo, timeout=seconds)

        async with anyio.create_task_group() as tg:
            tg.start_soon(one, hallucination, 0.3)
            tg.start_soon(one, faithfulness, None)

    assert results["hallucination"].status == "failed"
    assert results["hallucination"].error_type == "timeout"
    assert results["faithfulness"].status == "scored"
    assert results["faithfulness"].usage.shared == 0
    assert len(requests_named(server, "ExtractedClaims")) == 2


class Items(BaseModel):
    items: list[str]


def items_scorer(scorer_id: str, judge: Any, want: int | None) -> Scorer:
    def validate(answer: Items, ctx: Any) -> None:
        if want is not None and len(answer.items) != want:
            raise ValueError(f"expected {want} items")

    return create_scorer(
        id=scorer_id,
        description="counts items",
        model=judge,
        preprocess=PromptStep(
            description="list items",
            output_schema=Items,
            system="List the items.",
            create_prompt=lambda ctx: f"Items of: {ctx.output_text}",
            validate=validate,
        ),
        generate_score=lambda ctx: float(len(ctx.preprocess_step_result["items"])),
    )


async def test_a_shared_answer_that_fails_the_second_askers_check_is_asked_again() -> None:
    judge = ScriptedJudge([{"items": ["a"]}, {"items": ["a", "b"]}])
    memo = RunMemo()
    lenient = await items_scorer("lenient", judge, None).score(RUN, memo=memo)
    strict = await items_scorer("strict", judge, 2).score(RUN, memo=memo)

    assert (lenient.score, strict.score) == (1.0, 2.0)
    assert strict.usage.calls == 1
    assert strict.usage.shared == 0
    assert len(judge.prompts) == 2


async def test_a_shared_answer_is_a_copy() -> None:
    judge = ScriptedJudge([{"items": ["a"]}])
    memo = RunMemo()

    def mutate(answer: Items, ctx: Any) -> dict[str, Any]:
        answer.items.append("changed by the first scorer")
        return answer.model_dump()

    first = create_scorer(
        id="first",
        description="mutates its answer",
        model=judge,
        preprocess=PromptStep(
            description="list items",
            output_schema=Items,
            system="List the items.",
            create_prompt=lambda ctx: f"Items of: {ctx.output_text}",
            parse=mutate,
        ),
        generate_score=lambda ctx: float(len(ctx.preprocess_step_result["items"])),
    )
    assert (await first.score(RUN, memo=memo)).score == 2.0
    second = await items_scorer("second", judge, None).score(RUN, memo=memo)

    assert second.score == 1.0
    assert second.usage.shared == 1


async def test_free_text_requests_are_shared_too() -> None:
    judge = ScriptedJudge(["Hello."])
    memo = RunMemo()

    def reason_scorer(scorer_id: str) -> Scorer:
        return create_scorer(
            id=scorer_id,
            description="asks for text",
            model=judge,
            generate_score=lambda ctx: 1.0,
            generate_reason=PromptStep(
                description="say hello",
                output_schema=None,
                create_prompt=lambda ctx: "Say hello.",
            ),
        )

    first = await reason_scorer("a").score(RUN, memo=memo)
    second = await reason_scorer("b").score(RUN, memo=memo)

    assert first.reason == second.reason == "Hello."
    assert (first.usage.calls, second.usage.shared) == (1, 1)
    assert repr(memo) == "RunMemo(requests=1, reused=1, calls_saved=1)"
