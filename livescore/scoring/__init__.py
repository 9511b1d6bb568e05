"""The scorer pipeline: :func:`create_scorer` builds a :class:`Scorer` from steps;
:meth:`Scorer.score` never raises (a failure is a :class:`ScoreResult` with ``status ==
"failed"``).

Example:
    >>> from livescore.scoring import create_scorer
    >>> short = create_scorer(id="short", description="1 when the answer is short",
    ...                       generate_score=lambda ctx: float(len(ctx.output_text) < 20))
    >>> short.run_sync({"input": "2+2?", "output": "4"}).score
    1.0
"""

from livescore._errors import NotScorable, ScorerRunError
from livescore.scoring._calibration import (
    Calibration,
    CalibrationEntry,
    CalibrationError,
    CalibrationSpec,
    DefectWhen,
)
from livescore.scoring._memo import RunMemo
from livescore.scoring._result import CoveredTurns, ScoreResult
from livescore.scoring._scorer import (
    ContextFunction,
    PromptStep,
    Scorer,
    ScorerLevel,
    StepContext,
    StepFunction,
    create_scorer,
)

__all__ = (
    "Calibration",
    "CalibrationEntry",
    "CalibrationError",
    "CalibrationSpec",
    "ContextFunction",
    "CoveredTurns",
    "DefectWhen",
    "NotScorable",
    "PromptStep",
    "RunMemo",
    "ScoreResult",
    "Scorer",
    "ScorerLevel",
    "ScorerRunError",
    "StepContext",
    "StepFunction",
    "create_scorer",
)
