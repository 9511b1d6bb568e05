"""One score's trouble stays in that score: sync hooks off the loop, BaseExceptions as values,
runs with no text to read skipped, and run_sync where a loop already runs."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import anyio
import pytest

from livescore import NotScorable, Run, StepContext, create_scorer
from livescore.otel import attributes as A
from livescore.scorers import create_hallucination_scorer, create_keyword_coverage_scorer
from livescore.testing import ScriptedJudge

# -- synchronous hooks run in worker threads --------------------------------------------------


@pytest.mark.anyio
async def test_a_blocking_sync_get_context_leaves_the_event_loop_free() -> None:
    started, release = threading.Event(), threading.Event()
    released_by_the_loop: list[bool] = []

    def get_context(run: Run, step: Any) -> list[str]:
        started.set()
        # Only a task on the same event loop sets `release`: if this ran on the loop, the
        # loop could not run that task and the wait would end by its timeout instead.
        released_by_the_loop.append(release.wait(10))
        return ["context"]

    scorer = create_scorer(
        id="s", description="d", get_context=get_context, generate_score=lambda ctx: 1.0
    )

    async def release_when_started() -> None:
        while not started.is_set():  # noqa: ASYNC110 (set from another thread)
            await anyio.sleep(0.005)
        release.set()

    results = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(release_when_started)
        results.append(await scorer.score({"input": "q", "output": "a"}))

    assert results[0].status == "scored"
    assert released_by_the_loop == [True]


@pytest.mark.anyio
async def test_a_sync_get_context_that_overruns_is_a_timeout_in_step_get_context() -> None:
    release = threading.Event()
    finished = threading.Event()

    def get_context(run: Run, step: Any) -> list[str]:
        release.wait(10)
        finished.set()
        return ["late"]

    scorer = create_scorer(
        id="s", description="d", get_context=get_context, generate_score=lambda ctx: 1.0
    )
    try:
        result = await scorer.score({"input": "q", "output": "a"}, timeout=0.2)
        hook_still_running = not finished.is_set()
    finally:
        release.set()

    assert (result.status, result.error_type, result.failed_step) == (
        "failed",
        "timeout",
        "get_context",
    )
    assert hook_still_running  # the score did not wait for the blocked thread


@pytest.mark.anyio
@pytest.mark.parametrize("sync_steps", ["thread", "inline"])
async def test_sync_steps_run_where_the_scorer_says(sync_steps: Any) -> None:
    loop_thread = threading.get_ident()
    seen: list[int] = []

    def score(ctx: StepContext) -> float:
        seen.append(threading.get_ident())
        return 1.0

    scorer = create_scorer(id="s", description="d", generate_score=score, sync_steps=sync_steps)
    assert (await scorer.score({"input": "q", "output": "a"})).status == "scored"
    assert (seen[0] == loop_thread) is (sync_steps == "inline")


def test_bad_sync_steps_setting_is_rejected() -> None:
    with pytest.raises(ValueError, match="sync_steps"):
        create_scorer(id="s", description="d", generate_score=lambda c: 1, sync_steps="loop")  # type: ignore[arg-type]


# -- BaseExceptions and broken exceptions fail one score only ------------------------------


class UnprintableError(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no message for you")


def _raising(exc: BaseException) -> Any:
    def step(ctx: StepContext) -> float:
        raise exc

    return step


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("exc", "error_type"),
    [
        (GeneratorExit(), "GeneratorExit"),
        (asyncio.CancelledError(), "CancelledError"),
        (UnprintableError(), "UnprintableError"),
    ],
)
async def test_base_exceptions_and_broken_messages_are_failed_scores(
    exc: BaseException, error_type: str
) -> None:
    for sync_steps in ("inline", "thread"):
        scorer = create_scorer(
            id="s", description="d", generate_score=_raising(exc), sync_steps=sync_steps
        )
        result = await scorer.score({"input": "q", "output": "a"})
        assert (result.status, result.failed_step, result.error_type) == (
            "failed",
            "generate_score",
            error_type,
        )
        assert result.error


@pytest.mark.anyio
async def test_an_unprintable_error_still_has_a_readable_reason() -> None:
    scorer = create_scorer(id="s", description="d", generate_score=_raising(UnprintableError()))
    result = await scorer.score({"input": "q", "output": "a"})
    assert result.error == "UnprintableError (its message could not be read)"


@pytest.mark.parametrize("exc", [KeyboardInterrupt(), SystemExit(3)])
def test_keyboard_interrupt_and_exit_from_a_scorer_off_the_main_thread_fail_the_score(
    exc: BaseException,
) -> None:
    scorer = create_scorer(id="s", description="d", generate_score=_raising(exc))
    results: list[Any] = []
    thread = threading.Thread(
        target=lambda: results.append(
            anyio.run(lambda: scorer.score({"input": "q", "output": "a"}))
        )
    )
    thread.start()
    thread.join(30)
    assert results[0].status == "failed"
    assert results[0].error_type == type(exc).__name__


@pytest.mark.anyio
async def test_a_real_cancellation_still_cancels() -> None:
    started = anyio.Event()

    async def forever(ctx: StepContext) -> float:
        started.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    scorer = create_scorer(id="s", description="d", generate_score=forever)
    outcome: list[Any] = []
    async with anyio.create_task_group() as tg:

        async def score() -> None:
            outcome.append(await scorer.score({"input": "q", "output": "a"}))

        tg.start_soon(score)
        await started.wait()
        tg.cancel_scope.cancel()
    assert outcome == []  # cancelled, not turned into a failed score


# -- runs with no text to read ---------------------------------------------------------------


@pytest.mark.anyio
async def test_an_output_with_no_answer_text_is_skipped_not_scored() -> None:
    # Regression: a RunnableLambda returning a dict scored 0.0 ("the output is empty").
    run = Run(input="What is the capital of France?", output={"answer": "Paris", "score": 0.9})
    judge = ScriptedJudge([])
    for scorer in (
        create_keyword_coverage_scorer(),
        create_hallucination_scorer(model=judge, context=["Paris is the capital."]),
    ):
        result = await scorer.score(run)
        assert (result.status, result.score) == ("skipped", None), scorer.id
        assert "no answer text found" in (result.reason or "")
        assert "['answer', 'score']" in (result.reason or "")
    assert judge.prompts == []


@pytest.mark.anyio
async def test_an_input_of_prompt_variables_skips_keyword_coverage_only() -> None:
    # Regression: `prompt | model | parser` runs have {"topic": ...} as input; keyword
    # coverage scored 0.0 or 1.0 against an empty string.
    run = Run(input={"topic": "bears"}, output="Bears hibernate in winter.")
    keyword = await create_keyword_coverage_scorer().score(run)
    assert keyword.status == "skipped"
    assert "no user text found" in (keyword.reason or "")
    # The hallucination scorer never reads the input.
    judge = ScriptedJudge(
        [
            {"claims": ["Bears hibernate in winter."]},
            {"verdicts": [{"statement": "x", "verdict": "no", "reason": "stated"}]},
            "The score is 0 because the claim is backed.",
        ]
    )
    hallucination = create_hallucination_scorer(model=judge, context=["Bears hibernate."])
    assert (await hallucination.score(run)).status == "scored"


@pytest.mark.anyio
async def test_the_hallucination_scorer_scores_a_run_with_an_empty_input() -> None:
    # Regression (SummEdits lines have an empty question): the input is not needed, and a
    # run with no input at all is no different for this scorer: it never reads it.
    one_score = [
        {"claims": ["The fee is 5 euros."]},
        {"verdicts": [{"statement": "x", "verdict": "yes", "reason": "it says 7"}]},
        "The score is 1 because the fee is 7 euros.",
    ]
    judge = ScriptedJudge(one_score * 2)
    scorer = create_hallucination_scorer(model=judge, context=["The fee is 7 euros."])
    for run in ({"input": "", "output": "The fee is 5 euros."}, {"output": "The fee is 5 euros."}):
        result = await scorer.score(run)
        assert (result.status, result.score) == ("scored", 1.0)


@pytest.mark.anyio
async def test_a_step_that_swallows_the_skip_still_skips() -> None:
    def sloppy(ctx: StepContext) -> float:
        try:
            return float(len(ctx.input_text))
        except Exception:
            return 0.0  # a broad except must not turn "no input" into a score

    scorer = create_scorer(id="s", description="d", generate_score=sloppy)
    result = await scorer.score(Run(input=None, output="a"))
    assert result.status == "skipped"
    assert "the run has no input" in (result.reason or "")


@pytest.mark.anyio
async def test_an_empty_answer_is_still_an_answer() -> None:
    scorer = create_scorer(
        id="s", description="d", generate_score=lambda ctx: float(len(ctx.output_text))
    )
    result = await scorer.score({"input": "q", "output": [{"role": "assistant", "content": ""}]})
    assert (result.status, result.score) == ("scored", 0.0)


@pytest.mark.anyio
async def test_not_scorable_keeps_working_from_steps() -> None:
    def refuse(ctx: StepContext) -> float:
        raise NotScorable("nothing here")

    result = await create_scorer(id="s", description="d", generate_score=refuse).score(
        {"input": "q", "output": "a"}
    )
    assert (result.status, result.reason) == ("skipped", "nothing here")


# -- get_context results and attributes ------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("returned", "message"),
    [
        (
            b"raw bytes",
            "get_context must return a list of strings (or one string, or None), not bytes",
        ),
        ({"doc": "x"}, "not dict"),
        (42, "not int"),
        (["fine", 7], "get_context returned a int at index 1"),
    ],
)
async def test_get_context_returning_the_wrong_type_names_itself_and_the_type(
    returned: Any, message: str
) -> None:
    scorer = create_scorer(
        id="s", description="d", get_context=lambda r, s: returned, generate_score=lambda c: 1
    )
    result = await scorer.score({"input": "q", "output": "a"})
    assert (result.status, result.failed_step, result.error_type) == (
        "failed",
        "get_context",
        "TypeError",
    )
    assert message in (result.error or "")


@pytest.mark.anyio
async def test_steps_set_span_attributes_through_the_context() -> None:
    def score(ctx: StepContext) -> float:
        ctx.attributes["myapp.items"] = 3
        return 1.0

    scorer = create_scorer(id="s", description="d", generate_score=score, max_text_chars=5)
    result = await scorer.score({"input": "q", "output": "a long answer"})
    assert result.attributes == {"myapp.items": 3, A.LIVESCORE_OUTPUT_TRUNCATED: True}
    assert result.to_dict()["attributes"] == result.attributes


@pytest.mark.anyio
async def test_an_attribute_that_no_span_can_hold_fails_the_step_that_set_it() -> None:
    def analyze(ctx: StepContext) -> None:
        ctx.attributes["myapp.items"] = ["a", "b"]  # type: ignore[assignment]

    scorer = create_scorer(id="s", description="d", analyze=analyze, generate_score=lambda ctx: 1.0)
    result = await scorer.score({"input": "q", "output": "a"})
    assert (result.status, result.failed_step, result.error_type) == (
        "failed",
        "analyze",
        "TypeError",
    )
    assert "attributes['myapp.items']" in (result.error or "")


# -- run_sync in notebooks -------------------------------------------------------------------


@pytest.mark.anyio
async def test_run_sync_works_inside_a_running_event_loop() -> None:
    # Regression: in a notebook cell (a loop runs in this thread) run_sync raised anyio's
    # "Already running asyncio in this thread".
    scorer = create_keyword_coverage_scorer()
    result = scorer.run_sync({"input": "React hooks", "output": "Hooks in React"})
    assert result.score == 1.0
