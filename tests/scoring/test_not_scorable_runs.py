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


def test_the_key_gives_the_reason_a_dashboard_shows_instead_of_a_generic_one() -> None:
    scorer = create_keyword_coverage_scorer()
    generic = scorer.run_sync(_empty_run())
    marked = scorer.run_sync(_empty_run(**{NOT_SCORABLE_METADATA_KEY: REASON}))
    assert (generic.status, marked.status) == ("skipped", "skipped")
    assert generic.reason != REASON  # without the key: only "no answer text"
    assert marked.reason == REASON  # with it: why there is none
    scored = scorer.run_sync(Run(input="Rust ownership", output="Ownership in Rust"))
    assert (scored.status, scored.score) == ("scored", 1.0)
