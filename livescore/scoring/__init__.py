"""The scorer pipeline: build scorers from steps and run them on runs."""

from livescore.scoring._result import NotScorable, ScoreResult, ScorerRunError, ScoreStatus
from livescore.scoring._scorer import (
    DEFAULT_MAX_TEXT_CHARS,
    ContextFunction,
    PromptStep,
    Scorer,
    StepContext,
    StepFunction,
    create_scorer,
)

__all__ = (
    "DEFAULT_MAX_TEXT_CHARS",
    "ContextFunction",
    "NotScorable",
    "PromptStep",
    "ScoreResult",
    "ScoreStatus",
    "Scorer",
    "ScorerRunError",
    "StepContext",
    "StepFunction",
    "create_scorer",
)
