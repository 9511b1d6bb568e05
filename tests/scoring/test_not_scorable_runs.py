"""A run that says it cannot be scored (``metadata["not_scorable"]``) is skipped by every
scorer with that reason, before any step or judge call runs."""

from __future__ import annotations

import anyio

from livescore import Run, create_scorer
from livescore.runs import NOT_SCORABLE_METADATA_KEY
from livescore.scorers import create_hallucination_scorer, create_keyword_coverage_scorer
from livescore.testing import ScriptedJudge

REASON = "the runtime recorded no content for this run"


def _empty_run(**metadata: object) -> Run:
    return Run(input=[], output=None, metadata=dict(metadata))


def test_every_scorer_skips_the_run_with_its_reason_and_no_judge_call() -> None:
    judge = ScriptedJudge([{"claims": ["x"]}])
    steps: list[str] = []
    scorers = [
        create_keyword_coverage_scorer(),
        create_hallucination_scorer(model=judge, context=["ground truth"]),
        create_scorer(
            id="custom",
            description="Counts its steps",
            get_context=lambda run, step: steps.append("get_context") or [],
            generate_score=lambda ctx: 1.0,
        ),
    ]
    run = _empty_run(**{NOT_SCORABLE_METADATA_KEY: REASON})

    async def score_all() -> list[tuple[str, str | None, float | None]]:
        results = [await scorer.score(run) for scorer in scorers]
        return [(r.status, r.reason, r.score) for r in results]

    assert anyio.run(score_all) == [("skipped", REASON, None)] * 3
    assert judge.prompts == []
    assert steps == []


def test_without_the_key_an_empty_run_is_scored_as_before() -> None:
    # Keyword coverage scores two empty texts 1.0 (the seed's rule): the reason integrations
    # mark runs whose content was never recorded instead of submitting empty text.
    result = create_keyword_coverage_scorer().run_sync(_empty_run())
    assert (result.status, result.score) == ("scored", 1.0)
