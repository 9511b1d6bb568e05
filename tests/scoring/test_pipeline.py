"""The scorer pipeline: steps in order, prompt steps, context, skips and failures."""

from __future__ import annotations

import math
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from pydantic import BaseModel

from livescore import (
    NotScorable,
    PromptStep,
    Run,
    Scorer,
    ScorerRunError,
    Step,
    StepContext,
    create_scorer,
)
from livescore.judges import JudgeError
from livescore.testing import ScriptedJudge


class Claims(BaseModel):
    claims: list[str]


class Verdict(BaseModel):
    score: float


def _claims_step() -> PromptStep[Claims]:
    return PromptStep(
        description="extract claims",
        output_schema=Claims,
        create_prompt=lambda ctx: f"CLAIMS OF: {ctx.output_text}",
    )


@pytest.mark.anyio
async def test_steps_run_in_order_and_see_earlier_results() -> None:
    seen: list[str] = []

    def preprocess(ctx: StepContext) -> dict[str, Any]:
        seen.append("preprocess")
        return {"words": ctx.output_text.split()}

    async def analyze(ctx: StepContext) -> dict[str, Any]:
        seen.append("analyze")
        await anyio.lowlevel.checkpoint()
        return {"count": len(ctx.preprocess_step_result["words"])}

    def generate_score(ctx: StepContext) -> float:
        seen.append("generate_score")
        return float(ctx.analyze_step_result["count"])

    def generate_reason(ctx: StepContext) -> str:
        seen.append("generate_reason")
        return f"{ctx.score} words"

    scorer = create_scorer(
        id="words",
        description="counts words",
        preprocess=preprocess,
        analyze=analyze,
        generate_score=generate_score,
        generate_reason=generate_reason,
        label=lambda s: "long" if s > 2 else "short",
    )
    result = await scorer.run({"input": "q", "output": "one two three", "run_id": "r1"})
    assert seen == ["preprocess", "analyze", "generate_score", "generate_reason"]
    assert (result.run_id, result.scorer_id, result.status) == ("r1", "words", "scored")
    assert result.score == 3.0
    assert result.label == "long"
    assert result.reason == "3.0 words"
    assert result.preprocess_step_result == {"words": ["one", "two", "three"]}
    assert result.analyze_step_result == {"count": 3}
    assert result.judge_model is None


@pytest.mark.anyio
async def test_prompt_steps_record_prompts_and_usage() -> None:
    judge = ScriptedJudge([{"claims": ["a", "b"]}, "Because two claims."], tokens_per_call=7)
    scorer = create_scorer(
        id="claims",
        description="counts claims",
        model=judge,
        preprocess=_claims_step(),
        generate_score=lambda ctx: len(ctx.preprocess_step_result["claims"]),
        generate_reason=PromptStep(
            description="explain",
            output_schema=None,
            create_prompt=lambda ctx: f"EXPLAIN {ctx.score}",
        ),
    )
    result = await scorer.run(Run(input="q", output="A and B."))
    assert result.preprocess_step_result == {"claims": ["a", "b"]}
    assert result.preprocess_prompt == "CLAIMS OF: A and B."
    assert result.generate_reason_prompt == "EXPLAIN 2.0"
    assert result.reason == "Because two claims."
    assert result.usage.calls == 2
    assert result.usage.input_tokens == 14
    assert set(result.step_usage) == {"preprocess", "generate_reason"}
    assert result.judge_model == "scripted"


@pytest.mark.anyio
async def test_prompt_step_as_generate_score_reads_the_score_field() -> None:
    scorer = create_scorer(
        id="judge-score",
        description="judge gives the score",
        model=ScriptedJudge([{"score": 0.25}]),
        generate_score=PromptStep(
            description="score", output_schema=Verdict, create_prompt=lambda ctx: "score it"
        ),
    )
    assert (await scorer.run({"input": "q", "output": "a"})).score == 0.25


@pytest.mark.anyio
async def test_validate_failure_triggers_one_corrective_retry() -> None:
    def must_have_two(answer: Claims, ctx: StepContext) -> None:
        if len(answer.claims) != 2:
            raise ValueError("expected 2 claims")

    step = PromptStep(
        description="claims",
        output_schema=Claims,
        create_prompt=lambda ctx: "claims",
        validate=must_have_two,
    )
    judge = ScriptedJudge([{"claims": ["a"]}, {"claims": ["a", "b"]}])
    scorer = create_scorer(
        id="two",
        description="",
        model=judge,
        preprocess=step,
        generate_score=lambda ctx: 1.0,
    )
    result = await scorer.run({"input": "q", "output": "a"})
    assert result.usage.calls == 2
    assert "expected 2 claims" in judge.prompts[1]


@pytest.mark.anyio
async def test_get_context_overrides_static_context_and_runs_once() -> None:
    calls: list[tuple[str, Step | None]] = []

    async def get_context(run: Run, step: Step | None) -> list[str]:
        calls.append((run.run_id, step))
        return ["dynamic"]

    scorer = create_scorer(
        id="ctx",
        description="",
        context=["static"],
        get_context=get_context,
        preprocess=lambda ctx: ctx.context,
        analyze=lambda ctx: ctx.context,
        generate_score=lambda ctx: float(len(ctx.context or [])),
        generate_reason=lambda ctx: ",".join(ctx.context or []),
    )
    final = Step(kind="model", index=3, output="a")
    result = await scorer.run(Run(input="q", output="a", run_id="r", steps=[final]))
    assert calls == [("r", final)]
    assert result.preprocess_step_result == ["dynamic"]
    assert result.reason == "dynamic"


@pytest.mark.anyio
async def test_static_context_and_explicit_step() -> None:
    picked = Step(kind="model", index=0, output="first")
    steps: list[Step | None] = []
    scorer = create_scorer(
        id="ctx",
        description="",
        context=["fact"],
        get_context=None,
        preprocess=lambda ctx: steps.append(ctx.step),
        generate_score=lambda ctx: float(len(ctx.context or [])),
    )
    result = await scorer.run(Run(output="x", steps=[picked, Step(kind="model")]), step=picked)
    assert result.score == 1.0
    assert steps == [picked]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("returned", "expected"),
    [(None, []), ("one", ["one"]), (["a", {"content": "b"}], ["a", "b"])],
)
async def test_get_context_return_forms(returned: Any, expected: list[str]) -> None:
    scorer = create_scorer(
        id="ctx",
        description="",
        get_context=lambda run, step: returned,
        generate_score=lambda ctx: 0.0,
        generate_reason=lambda ctx: repr(ctx.context),
    )
    assert (await scorer.run({"output": "x"})).reason == repr(expected)


@pytest.mark.anyio
async def test_get_context_exception_is_a_step_failure() -> None:
    def broken(run: Run, step: Step | None) -> list[str]:
        raise RuntimeError("vector store down")

    scorer = create_scorer(id="ctx", description="", get_context=broken, generate_score=lambda c: 1)
    with pytest.raises(ScorerRunError) as info:
        await scorer.run({"input": "q", "output": "a", "run_id": "r9"})
    assert info.value.step == "get_context"
    assert info.value.result.status == "failed"
    assert info.value.result.failed_step == "get_context"
    assert info.value.result.error == "vector store down"
    assert info.value.error_type == "RuntimeError"
    assert info.value.result.run_id == "r9"


@pytest.mark.anyio
async def test_failure_keeps_the_partial_result() -> None:
    scorer = create_scorer(
        id="partial",
        description="",
        model=ScriptedJudge(
            [{"claims": ["a"]}, JudgeError("server melted", error_type="server_error")]
        ),
        preprocess=_claims_step(),
        analyze=PromptStep(
            description="verdicts", output_schema=Claims, create_prompt=lambda ctx: "verdicts"
        ),
        generate_score=lambda ctx: 1.0,
    )
    with pytest.raises(ScorerRunError) as info:
        await scorer.run({"input": "q", "output": "a"})
    partial = info.value.result
    assert info.value.step == "analyze"
    assert partial.preprocess_step_result == {"claims": ["a"]}
    assert partial.error_type == "server_error"
    assert partial.score is None
    assert partial.usage.calls == 1


@pytest.mark.anyio
async def test_not_scorable_skips_with_a_reason() -> None:
    def preprocess(ctx: StepContext) -> None:
        raise NotScorable("no context")

    scorer = create_scorer(
        id="s", description="", preprocess=preprocess, generate_score=lambda c: 1
    )
    result = await scorer.run({"input": "q", "output": "a"})
    assert (result.status, result.reason, result.score, result.ok) == (
        "skipped",
        "no context",
        None,
        False,
    )


@pytest.mark.anyio
@pytest.mark.parametrize("bad", ["high", None, math.nan, math.inf, True])
async def test_generate_score_must_return_a_finite_number(bad: Any) -> None:
    scorer = create_scorer(id="s", description="", generate_score=lambda ctx: bad)
    with pytest.raises(ScorerRunError) as info:
        await scorer.run({"input": "q", "output": "a"})
    assert info.value.step == "generate_score"


@pytest.mark.anyio
@pytest.mark.parametrize("output", [12345, 1.5, b"bytes", object()])
async def test_non_text_output_is_skipped_with_its_type(output: Any) -> None:
    # A number is "no answer text", like a mapping of fields: skipped, never a failure.
    scorer = create_scorer(
        id="s", description="", generate_score=lambda ctx: float(len(ctx.output_text))
    )
    result = await scorer.score({"input": "q", "output": output})
    assert result.status == "skipped"
    assert result.reason is not None
    assert f"its output is {'an' if type(output).__name__[0] in 'aeiou' else 'a'} " in result.reason
    assert type(output).__name__ in result.reason


@pytest.mark.anyio
async def test_long_text_is_truncated_and_flagged() -> None:
    scorer = create_scorer(
        id="s",
        description="",
        generate_score=lambda ctx: float(len(ctx.output_text)),
        max_text_chars=100,
    )
    result = await scorer.run({"input": "q", "output": "x" * 1_000_000})
    assert result.score == 100.0
    assert result.flags == {"output_truncated": True, "output_chars": 1_000_000}


def test_run_sync_from_plain_code() -> None:
    scorer = create_scorer(id="s", description="", generate_score=lambda ctx: 0.5)
    assert scorer.run_sync({"input": "q", "output": "a"}).score == 0.5


def test_result_to_dict_is_plain() -> None:
    scorer = create_scorer(
        id="s",
        description="",
        preprocess=lambda ctx: {"keywords": {"b", "a"}},
        generate_score=lambda ctx: 0.5,
    )
    data = scorer.run_sync({"input": "q", "output": "a"}).to_dict()
    assert data["preprocess_step_result"] == {"keywords": ["a", "b"]}
    assert data["usage"]["calls"] == 0


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"id": ""}, ValueError, "non-empty string id"),
        ({"preprocess": 3}, TypeError, "function or a PromptStep"),
        ({"context": "not a list"}, TypeError, "list of strings"),
        ({"max_text_chars": 0}, ValueError, "positive"),
        (
            {"preprocess": PromptStep("p", Claims, lambda ctx: "")},
            ValueError,
            "needs a judge",
        ),
    ],
)
def test_bad_configuration_is_a_clear_error(
    kwargs: dict[str, Any], error: type[Exception], match: str
) -> None:
    base: dict[str, Any] = {"id": "s", "description": "", "generate_score": lambda ctx: 1.0}
    with pytest.raises(error, match=match):
        Scorer(**{**base, **kwargs})
