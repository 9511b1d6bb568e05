"""The scorer pipeline: build scorers from steps and run them on runs."""

from livescore.scoring._memo import RunMemo
from livescore.scoring._result import (
    AttributeValue,
    CoveredTurns,
    NotScorable,
    ScoreResult,
    ScorerRunError,
    ScoreStatus,
)
from livescore.scoring._scorer import (
    DEFAULT_MAX_TEXT_CHARS,
    SYNC_HOOK_THREADS,
    ContextFunction,
    PipelineStep,
    PromptStep,
    Scorer,
    ScorerLevel,
    StepContext,
    StepFunction,
    SyncSteps,
    create_scorer,
)

__all__ = (
    "DEFAULT_MAX_TEXT_CHARS",
    "SYNC_HOOK_THREADS",
    "AttributeValue",
    "ContextFunction",
    "CoveredTurns",
    "NotScorable",
    "PipelineStep",
    "PromptStep",
    "RunMemo",
    "ScoreResult",
    "ScoreStatus",
    "Scorer",
    "ScorerLevel",
    "ScorerRunError",
    "StepContext",
    "StepFunction",
    "SyncSteps",
    "create_scorer",
)
