"""One-word classifications: OpenAIJudge.classify over HTTP, the logprob reading, the fallback."""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any

import anyio
import pytest

from livescore.judges import (
    Classification,
    JudgeConfigError,
    JudgeReply,
    JudgeServerError,
    OpenAIJudge,
    classify_with_object,
    resolve_judge,
)
from livescore.judges._classify import classification_from_completion
from livescore.scorers import create_hallucination_scorer
from livescore.testing import OpenAITestServer, Reply, ScriptedJudge

WORDS = ("supported", "unsupported")


def classify(judge: Any, choices: Sequence[str] = WORDS) -> JudgeReply[Classification]:
    async def ask() -> JudgeReply[Classification]:
        reply: JudgeReply[Classification] = await judge.classify(
            system="You check claims.", prompt="Is it supported?", choices=choices
        )
        return reply

    return anyio.run(ask)


def completion(*alternatives: tuple[str, float]) -> dict[str, Any]:
    top = [{"token": t, "logprob": math.log(p)} for t, p in alternatives]
    return {"choices": [{"logprobs": {"content": [{**top[0], "top_logprobs": top}]}}]}


# -- reading the logprobs ----------------------------------------------------------------


def test_prefix_tokens_count_for_the_one_word_they_start() -> None:
    found = classification_from_completion(
        completion(("unsupported", 0.5), ("Supported", 0.2), ("un", 0.1), ("sup", 0.1)), WORDS
    )
    assert found is not None
    assert found.label == "unsupported"
    assert found.probabilities["unsupported"] == pytest.approx(0.6 / 0.9)
    assert found.probabilities["supported"] == pytest.approx(0.3 / 0.9)
    assert found.mass == pytest.approx(0.9)
    assert found.from_logprobs


def test_a_token_that_starts_two_words_counts_for_neither() -> None:
    # "s" starts both "sure" and "supported": it says nothing about which.
    found = classification_from_completion(
        completion(("s", 0.6), ("supported", 0.1), ("sure", 0.3)), ("supported", "sure")
    )
    assert found is not None
    assert found.probabilities["supported"] == pytest.approx(0.25)
    assert found.mass == pytest.approx(0.4)


def test_no_logprobs_or_no_matching_token_reads_as_none() -> None:
    assert classification_from_completion({"choices": [{"logprobs": None}]}, WORDS) is None
    assert classification_from_completion({"choices": []}, WORDS) is None
    assert classification_from_completion(completion(("The", 0.9), (" answer", 0.1)), WORDS) is None


def test_the_first_token_alone_is_read_when_no_alternatives_are_given() -> None:
    body = {"choices": [{"logprobs": {"content": [{"token": "no", "logprob": -0.1}]}}]}
    found = classification_from_completion(body, ("yes", "no"))
    assert found is not None
    assert (found.label, found.probability("no")) == ("no", 1.0)


def test_choices_must_be_two_distinct_words() -> None:
    with pytest.raises(JudgeConfigError, match="two or more distinct"):
        classify(ScriptedJudge([{"a": 1.0}]), choices=("yes",))
    with pytest.raises(JudgeConfigError, match="two or more distinct"):
        classify(ScriptedJudge([{"a": 1.0}]), choices=("Yes", "yes"))


# -- OpenAIJudge over HTTP ---------------------------------------------------------------


def test_one_call_asks_for_one_token_and_its_top_logprobs() -> None:
    reply = Reply.token_probabilities({"unsupported": 0.7, "supported": 0.2, "Unsupported": 0.05})
    with OpenAITestServer([reply]) as server:
        judge = OpenAIJudge("m", base_url=server.base_url)
        answer = classify(judge)
        (request,) = server.requests
    assert request["max_tokens"] == 1
    assert request["logprobs"] is True
    assert request["top_logprobs"] == 20
    assert answer.value.probability("unsupported") == pytest.approx(0.75 / 0.95)
    assert answer.value.from_logprobs
    assert answer.usage.calls == 1


def test_a_server_without_logprobs_gets_the_structured_answer_and_is_remembered(
    caplog: pytest.LogCaptureFixture,
) -> None:
    replies = [Reply.text("supported"), {"verdict": "Unsupported"}, {"verdict": "supported"}]
    with OpenAITestServer(replies) as server:
        judge = OpenAIJudge("m", base_url=server.base_url)
        with caplog.at_level(logging.WARNING, logger="livescore.judges"):
            first = classify(judge)
            second = classify(OpenAIJudge("m", base_url=server.base_url))
        requests = server.requests
    assert first.value == Classification.certain("unsupported", WORDS)
    assert first.usage.calls == 2  # the one-token try, then the structured answer
    assert second.value.label == "supported"
    assert second.usage.calls == 1  # the next judge of the process goes straight to it
    assert "logprobs" not in requests[1]
    assert "logprobs" not in requests[2]
    assert requests[1]["response_format"]["type"] == "json_schema"
    warnings = [r.getMessage() for r in caplog.records if "gives no logprobs" in r.getMessage()]
    assert len(warnings) == 1, warnings


def test_a_server_that_refuses_logprobs_with_a_500_is_not_retried() -> None:
    # llama-cpp-python's server started with logits_all=False answers this way.
    refusal = Reply.error(500, "logprobs is not supported for models created with logits_all=False")
    with OpenAITestServer([refusal, {"verdict": "supported"}]) as server:
        judge = OpenAIJudge("m", base_url=server.base_url, max_retries=3, backoff_base=0.01)
        answer = classify(judge)
        count = len(server.requests)
    assert answer.value.label == "supported"
    assert not answer.value.from_logprobs
    assert count == 2


def test_other_server_errors_still_fail_as_themselves() -> None:
    with OpenAITestServer([Reply.server_error(), Reply.server_error()]) as server:
        judge = OpenAIJudge("m", base_url=server.base_url, max_retries=1, backoff_base=0.01)
        with pytest.raises(JudgeServerError):
            classify(judge)


def test_an_answer_that_starts_no_word_falls_back_that_time_only() -> None:
    replies = [
        Reply.token_probabilities({"The": 0.9, "A": 0.1}),
        {"verdict": "unsupported"},
        Reply.token_probabilities({"supported": 0.9, "unsupported": 0.1}),
    ]
    with OpenAITestServer(replies) as server:
        judge = OpenAIJudge("m", base_url=server.base_url)
        first, second = classify(judge), classify(judge)
    assert (first.value.label, first.value.from_logprobs) == ("unsupported", False)
    assert second.value.from_logprobs
    assert second.value.probability("supported") == pytest.approx(0.9)


def test_cached_classifications_cost_nothing() -> None:
    with OpenAITestServer([Reply.token_probabilities({"supported": 0.6, "unsupported": 0.4})]) as s:
        judge = OpenAIJudge("m", base_url=s.base_url, cache=True)
        first, second = classify(judge), classify(judge)
    assert first.value == second.value
    assert second.usage.cached == 1
    assert second.usage.calls == 0


def test_the_test_server_omits_logprobs_unless_asked() -> None:
    reply = Reply.token_probabilities({"yes": 0.8, "no": 0.2})
    with OpenAITestServer([reply, reply]) as server:
        judge = OpenAIJudge("m", base_url=server.base_url)
        plain = anyio.run(lambda: judge.generate_text(system="s", prompt="p"))
        asked = classify(judge, choices=("yes", "no"))
    assert plain.value == "yes"
    assert asked.value.probability("yes") == pytest.approx(0.8)


# -- judges without logprobs ---------------------------------------------------------------


class OldJudge:
    """A judge written before ``classify``: model_name, generate_object and generate_text."""

    def __init__(self, inner: ScriptedJudge) -> None:
        self.inner = inner
        self.model_name = "old"

    async def generate_object(self, **kwargs: Any) -> Any:
        return await self.inner.generate_object(**kwargs)

    async def generate_text(self, **kwargs: Any) -> Any:
        return await self.inner.generate_text(**kwargs)


def test_a_judge_without_classify_still_resolves_and_answers_from_its_object() -> None:
    judge = OldJudge(ScriptedJudge([{"verdict": "no"}]))
    assert resolve_judge(judge) is judge

    # The logprob mode asks it for the word through its structured answer.
    scorer = create_hallucination_scorer(
        model=judge,  # type: ignore[arg-type]
        judge_mode="logprob",
        context=["The sky is green."],
    )
    result = scorer.run_sync({"input": "What colour is the sky?", "output": "Blue."})
    assert result.status == "scored", result.error
    assert result.score == 1.0
    assert result.flags["verdict_from_logprobs"] is False


def test_classify_with_object_reads_the_word_case_insensitively_and_retries_once() -> None:
    scripted = ScriptedJudge(["maybe", {"verdict": " SUPPORTED. "}])

    async def ask() -> JudgeReply[Classification]:
        return await classify_with_object(scripted, system="s", prompt="p", choices=WORDS)

    answer = anyio.run(ask)
    assert answer.value.label == "supported"
    assert answer.usage.calls == 2
    assert "Your previous answer was invalid" in scripted.prompts[1]


def test_the_scripted_judge_takes_probabilities_or_a_structured_answer() -> None:
    scripted = ScriptedJudge([{"supported": 1, "unsupported": 3}, {"verdict": "supported"}])
    first, second = classify(scripted), classify(scripted)
    assert first.value.probability("unsupported") == pytest.approx(0.75)
    assert first.value.from_logprobs
    assert second.value == Classification.certain("supported", WORDS)
    assert scripted.prompts == ["Is it supported?", "Is it supported?"]


def test_classification_needs_some_probability() -> None:
    with pytest.raises(ValueError, match="none of the words"):
        Classification.from_probabilities({"yes": 0.0, "no": 0.0})
    assert Classification(**Classification.certain("no", ["yes", "no"]).to_dict()).label == "no"
