"""The logprob judge mode of the hallucination and faithfulness scorers, over real HTTP."""

from __future__ import annotations

from typing import Any

import pytest
from _judge_support import system_prompt, user_prompt

from livescore.otel import attributes as A
from livescore.scorers import (
    create_faithfulness_scorer,
    create_hallucination_scorer,
    create_toxicity_scorer,
)
from livescore.testing import OpenAITestServer, Reply, ScriptedJudge

CONTEXT = ["The first iPhone was announced on January 9, 2007, by Steve Jobs."]
RUN = {"input": "When was it announced?", "output": "It was announced in 2008."}


async def score(build: Any, replies: list[Any], run: Any = RUN) -> tuple[Any, list[Any]]:
    async with OpenAITestServer(replies) as server:
        result = await build(server.judge()).score(run)
        return result, list(server.requests)


@pytest.mark.anyio
async def test_hallucination_scores_the_probability_of_no_in_one_call() -> None:
    result, requests = await score(
        lambda judge: create_hallucination_scorer(
            model=judge, judge_mode="logprob", context=CONTEXT
        ),
        [Reply.token_probabilities({"no": 0.6, "yes": 0.3, "No": 0.1})],
    )
    (request,) = requests
    assert result.status == "scored", result.error
    assert result.score == pytest.approx(0.7)
    assert result.label == "high"
    assert request["max_tokens"] == 1
    assert request["logprobs"] is True
    prompt = user_prompt(request)
    assert prompt == (
        f"Context:\n{CONTEXT[0]}\n\n"
        f"Question: {RUN['input']}\n\n"  # short answers only make claims with their question
        f"Answer: {RUN['output']}\n\n"
        "Is every statement in the answer supported by the context? Answer yes or no."
    )
    assert system_prompt(request) == "You check whether an answer is supported by a context."
    assert result.flags["verdict_probability"] == pytest.approx(0.7)
    assert result.flags["verdict_from_logprobs"] is True
    assert result.flags["claims_total"] == 1  # the whole output is the one item judged
    assert result.attributes[A.LIVESCORE_VERDICT_PROBABILITY] == pytest.approx(0.7)
    assert result.analyze_step_result["verdicts"][0]["verdict"] == "yes"
    assert "probability of 0.70" in (result.reason or "")
    assert result.usage.calls == 1


@pytest.mark.anyio
async def test_faithfulness_asks_the_same_question_and_scores_its_mirror() -> None:
    reply = Reply.token_probabilities({"yes": 0.8, "no": 0.2})
    faithful, f_requests = await score(
        lambda judge: create_faithfulness_scorer(
            model=judge, judge_mode="logprob", context=CONTEXT
        ),
        [reply],
    )
    hallucinated, h_requests = await score(
        lambda judge: create_hallucination_scorer(
            model=judge, judge_mode="logprob", context=CONTEXT
        ),
        [reply],
    )
    assert faithful.score == pytest.approx(0.8)
    assert hallucinated.score == pytest.approx(0.2)
    assert f_requests[0]["messages"] == h_requests[0]["messages"]
    assert faithful.flags["claims_unsure"] == 0
    assert faithful.flags["claims_supported"] == 1


@pytest.mark.anyio
async def test_a_server_without_logprobs_gives_the_structured_word_and_says_so() -> None:
    result, requests = await score(
        lambda judge: create_hallucination_scorer(
            model=judge, judge_mode="logprob", context=CONTEXT, scale=10
        ),
        [Reply.text("no"), {"verdict": "no"}],
    )
    assert result.score == 10.0
    assert result.flags["verdict_from_logprobs"] is False
    assert result.attributes[A.LIVESCORE_VERDICT_FROM_LOGPROBS] is False
    assert "gave no token probabilities" in (result.reason or "")
    assert len(requests) == 2


@pytest.mark.anyio
async def test_nothing_to_judge_costs_no_call() -> None:
    def build(judge: Any) -> Any:
        return create_hallucination_scorer(model=judge, judge_mode="logprob", context=CONTEXT)

    empty, requests = await score(build, [], {"input": "q", "output": ""})
    assert (empty.status, empty.score, requests) == ("scored", 0.0, [])
    skipped, requests = await score(
        lambda judge: create_hallucination_scorer(model=judge, judge_mode="logprob"),
        [],
        {"input": "q", "output": "Paris is in France."},
    )
    assert (skipped.status, requests) == ("skipped", [])


def test_all_unsupported_without_context_still_needs_no_call() -> None:
    judge = ScriptedJudge([])
    scorer = create_hallucination_scorer(
        model=judge, judge_mode="logprob", on_empty_context="all_unsupported", context=[]
    )
    result = scorer.run_sync({"input": "q", "output": "Paris is in France."})
    assert (result.score, judge.prompts) == (1.0, [])


@pytest.mark.anyio
async def test_a_judge_error_fails_the_score_in_the_analyze_step() -> None:
    result, _ = await score(
        lambda judge: create_hallucination_scorer(
            model=judge, judge_mode="logprob", context=CONTEXT
        ),
        [Reply.error(400, "model not found")],
    )
    assert result.status == "failed"
    assert result.failed_step == "analyze"
    assert result.error_type == "bad_request"


def test_scorers_without_the_mode_refuse_it_by_name() -> None:
    with pytest.raises(ValueError, match="'logprob' is not available to this scorer"):
        create_toxicity_scorer(model=ScriptedJudge(), judge_mode="logprob")
