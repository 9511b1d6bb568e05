"""PromptStep hooks: ``skip_if``/``skip_result`` (answer without the judge) and ``parse``."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from livescore import PromptStep, ScorerRunError, StepContext, create_scorer
from livescore.testing import ScriptedJudge


class Claims(BaseModel):
    claims: list[str]


class Everything(BaseModel):
    claims: list[str]
    reason: str


def _count(ctx: StepContext) -> float:
    return float(len(ctx.preprocess_step_result["claims"]))


def _extract(**hooks: Any) -> PromptStep[Claims]:
    return PromptStep(
        description="extract claims",
        output_schema=Claims,
        create_prompt=lambda ctx: f"CLAIMS OF: {ctx.output_text}",
        **hooks,
    )


@pytest.mark.anyio
async def test_skip_if_true_answers_without_the_judge() -> None:
    judge = ScriptedJudge([])
    scorer = create_scorer(
        id="claims",
        description="count claims",
        model=judge,
        preprocess=_extract(
            skip_if=lambda ctx: not ctx.output_text.strip(),
            skip_result=lambda ctx: {"claims": []},
        ),
        generate_score=_count,
    )

    result = await scorer.run({"input": "q", "output": "   "})

    assert judge.prompts == []
    assert result.score == 0.0
    assert result.preprocess_step_result == {"claims": []}
    assert result.preprocess_prompt is None
    assert result.usage.calls == 0
    assert "preprocess" not in result.step_usage


@pytest.mark.anyio
async def test_skip_if_false_asks_the_judge() -> None:
    judge = ScriptedJudge([{"claims": ["a", "b"]}])
    scorer = create_scorer(
        id="claims",
        description="count claims",
        model=judge,
        preprocess=_extract(
            skip_if=lambda ctx: not ctx.output_text.strip(),
            skip_result=lambda ctx: {"claims": []},
        ),
        generate_score=_count,
    )

    result = await scorer.run({"input": "q", "output": "a and b"})

    assert result.score == 2.0
    assert result.preprocess_prompt == "CLAIMS OF: a and b"
    assert result.step_usage["preprocess"].calls == 1


@pytest.mark.anyio
async def test_skip_result_may_be_async_and_defaults_to_none() -> None:
    async def no_claims(ctx: StepContext) -> dict[str, list[str]]:
        return {"claims": []}

    scorer = create_scorer(
        id="claims",
        description="count claims",
        model=ScriptedJudge([]),
        preprocess=_extract(skip_if=lambda ctx: True, skip_result=no_claims),
        analyze=PromptStep(
            description="never asked",
            output_schema=Claims,
            create_prompt=lambda ctx: "unused",
            skip_if=lambda ctx: True,
        ),
        generate_score=_count,
    )

    result = await scorer.run({"input": "q", "output": "text"})

    assert result.preprocess_step_result == {"claims": []}
    assert result.analyze_step_result is None


@pytest.mark.anyio
async def test_parse_splits_one_answer_across_steps_through_state() -> None:
    def keep_reason(answer: Everything, ctx: StepContext) -> dict[str, list[str]]:
        ctx.state["reason"] = answer.reason
        return {"claims": answer.claims}

    judge = ScriptedJudge([{"claims": ["a"], "reason": "one claim"}])
    scorer = create_scorer(
        id="claims",
        description="count claims",
        model=judge,
        preprocess=PromptStep(
            description="everything at once",
            output_schema=Everything,
            create_prompt=lambda ctx: ctx.output_text,
            parse=keep_reason,
        ),
        generate_score=_count,
        generate_reason=lambda ctx: ctx.state["reason"],
    )

    result = await scorer.run({"input": "q", "output": "a"})

    assert result.preprocess_step_result == {"claims": ["a"]}
    assert result.reason == "one claim"
    assert len(judge.prompts) == 1


@pytest.mark.anyio
async def test_parse_failure_is_a_step_failure_with_the_call_counted() -> None:
    def broken(answer: Claims, ctx: StepContext) -> Any:
        raise KeyError("nope")

    scorer = create_scorer(
        id="claims",
        description="count claims",
        model=ScriptedJudge([{"claims": []}]),
        preprocess=_extract(parse=broken),
        generate_score=_count,
    )

    with pytest.raises(ScorerRunError) as info:
        await scorer.run({"input": "q", "output": "a"})

    assert info.value.step == "preprocess"
    assert info.value.result.usage.calls == 1
