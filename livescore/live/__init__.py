"""Live scoring: sample runs on the hot path, score them on a background worker.

Example:
    >>> from livescore import Run
    >>> from livescore.live import LiveDispatcher, ScorerConfig
    >>> from livescore.scorers import create_keyword_coverage_scorer
    >>> with LiveDispatcher(
    ...     [ScorerConfig(create_keyword_coverage_scorer(), sampling={"type": "ratio", "rate": 1})],
    ...     register_atexit=False,
    ... ) as dispatcher:
    ...     dispatcher.submit(Run(input="Rust ownership", output="Ownership in Rust"))
    ...     dispatcher.flush(timeout=10)
    True
    True
"""

from livescore.live._dispatcher import LiveDispatcher, OverflowPolicy
from livescore.live._executor import Executor, ScoringJob
from livescore.live._guard import is_scoring
from livescore.live._recorder import RunRecorder, record_run
from livescore.live._sampling import (
    SamplingDecision,
    SamplingSpec,
    ScorerConfig,
    sample_fraction,
    sample_rate_of,
)
from livescore.live._stats import DispatchStats, ScorerStats

__all__ = (
    "DispatchStats",
    "Executor",
    "LiveDispatcher",
    "OverflowPolicy",
    "RunRecorder",
    "SamplingDecision",
    "SamplingSpec",
    "ScorerConfig",
    "ScorerStats",
    "ScoringJob",
    "is_scoring",
    "record_run",
    "sample_fraction",
    "sample_rate_of",
)
