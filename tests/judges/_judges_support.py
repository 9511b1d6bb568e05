"""Shared pieces of the judge tests: a scorer whose score is one judge prompt."""

from __future__ import annotations

from livescore import Scorer, create_scorer
from livescore.judges import OpenAIJudge
from livescore.scoring import PromptStep

LONG_SYSTEM = "You answer yes or no. " * 40  # instructions as long as real ones


def one_prompt_scorer(
    judge: OpenAIJudge, scorer_id: str = "asked", *, system: str = LONG_SYSTEM
) -> Scorer:
    """A scorer whose score is one judge prompt: the run's output (so its usage varies with
    the run), under ``system``; 1.0 when the judge says yes."""
    return create_scorer(
        id=scorer_id,
        description="one prompt step",
        model=judge,
        generate_score=PromptStep(
            description="Answer yes or no",
            output_schema=None,
            system=system,
            create_prompt=lambda ctx: ctx.output_text,
            parse=lambda text, ctx: 1.0 if "yes" in str(text) else 0.0,
        ),
    )
