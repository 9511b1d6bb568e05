"""``Scorer.score``: the one non-raising call that live scoring, evals and workers share."""

from __future__ import annotations

import time

import anyio
import pytest
from pydantic import BaseModel

from livescore import LivescoreError, NotScorable, PromptStep, ScorerRunError, create_scorer
from livescore.judges import JudgeError
from livescore.testing import ScriptedJudge


class Claims(BaseModel):
    claims: list[str]


@pytest.mark.anyio
async def test_a_failing_step_is_a_value_not_an_exception() -> None:
    scorer = create_scorer(id="boom", description="d", generate_score=lambda ctx: 1 / 0)

    result = await scorer.score({"input": "q", "output": "a", "run_id": "r1"})

    assert (result.status, result.failed_step, result.error_type) == (
        "failed",
        "generate_score",
        "ZeroDivisionError",
    )
    assert result.run_id == "r1"
    assert result.score is None
    assert "division by zero" in (result.error or "")


@pytest.mark.anyio
async def test_run_raises_what_score_returns() -> None:
    scorer = create_scorer(id="boom", description="d", generate_score=lambda ctx: 1 / 0)
    run = {"input": "q", "output": "a", "run_id": "r1"}

    value = await scorer.score(run)
    with pytest.raises(ScorerRunError) as caught:
        await scorer.run(run)

    assert caught.value.result.to_dict() | {"duration_s": 0} == value.to_dict() | {"duration_s": 0}
    assert caught.value.step == "generate_score"
    assert isinstance(caught.value.__cause__, ZeroDivisionError)
    assert isinstance(caught.value, LivescoreError)


@pytest.mark.anyio
async def test_an_unreadable_run_fails_in_step_input() -> None:
    scorer = create_scorer(id="s", description="d", generate_score=lambda ctx: 1.0)

    result = await scorer.score(42)  # type: ignore[arg-type]

    assert (result.status, result.failed_step, result.error_type) == (
        "failed",
        "input",
        "TypeError",
    )
    with pytest.raises(TypeError):
        await scorer.run(42)  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_not_scorable_is_a_skip() -> None:
    def refuse(ctx: object) -> float:
        raise NotScorable("nothing to judge")

    scorer = create_scorer(id="s", description="d", generate_score=refuse)

    result = await scorer.score({"input": "q", "output": "a"})

    assert (result.status, result.reason, result.failed_step) == (
        "skipped",
        "nothing to judge",
        None,
    )


@pytest.mark.anyio
async def test_a_judge_failure_keeps_its_error_type_and_usage() -> None:
    judge = ScriptedJudge([JudgeError("judge down", error_type="server_error")])
    scorer = create_scorer(
        id="s",
        description="d",
        model=judge,
        preprocess=PromptStep(
            description="claims", output_schema=Claims, create_prompt=lambda ctx: "x"
        ),
        generate_score=lambda ctx: 0.0,
    )

    result = await scorer.score({"input": "q", "output": "a"})

    assert (result.status, result.failed_step, result.error_type) == (
        "failed",
        "preprocess",
        "server_error",
    )


@pytest.mark.anyio
async def test_timeout_names_the_step_that_overran_and_keeps_earlier_usage() -> None:
    judge = ScriptedJudge([{"claims": ["a"]}])

    async def slow_score(ctx: object) -> float:
        await anyio.sleep(5)
        return 1.0

    scorer = create_scorer(
        id="slow",
        description="d",
        model=judge,
        preprocess=PromptStep(
            description="claims", output_schema=Claims, create_prompt=lambda ctx: "x"
        ),
        generate_score=slow_score,
    )

    result = await scorer.score({"input": "q", "output": "a"}, timeout=0.2)

    assert (result.status, result.error_type, result.failed_step) == (
        "failed",
        "timeout",
        "generate_score",
    )
    assert result.usage.calls == 1  # the preprocess call that finished is kept
    assert result.preprocess_step_result == {"claims": ["a"]}


@pytest.mark.anyio
async def test_a_synchronous_step_that_overruns_counts_as_a_timeout() -> None:
    def blocking(ctx: object) -> float:
        time.sleep(0.3)  # no checkpoint: the cancel scope cannot fire
        return 1.0

    scorer = create_scorer(id="sync", description="d", generate_score=blocking)

    result = await scorer.score({"input": "q", "output": "a"}, timeout=0.1)

    assert (result.status, result.error_type, result.failed_step) == (
        "failed",
        "timeout",
        "generate_score",
    )


@pytest.mark.anyio
async def test_a_step_raising_timeout_error_itself_is_not_the_scorer_timeout() -> None:
    def raises(ctx: object) -> float:
        raise TimeoutError("the step's own timeout")

    scorer = create_scorer(id="s", description="d", generate_score=raises)

    result = await scorer.score({"input": "q", "output": "a"}, timeout=10)

    assert result.error_type == "TimeoutError"
    assert result.error == "the step's own timeout"


def test_create_scorer_takes_the_judge_as_model() -> None:
    judge = ScriptedJudge([])
    scorer = create_scorer(id="s", description="d", model=judge, generate_score=lambda c: 1)
    assert scorer.judge is judge
    with pytest.raises(TypeError, match="unexpected keyword argument 'judge'"):
        create_scorer(id="s", description="d", judge=judge, generate_score=lambda c: 1)  # type: ignore[call-arg]
