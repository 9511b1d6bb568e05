"""Offline evaluation: the live scorers over a dataset, from Python or the ``livescore`` CLI.

Example:
    >>> from livescore import create_scorer
    >>> from livescore.evals import run_evals_sync
    >>> short = create_scorer(
    ...     id="short", description="1 when the answer is short",
    ...     generate_score=lambda ctx: float(len(ctx.output_text) < 20),
    ... )
    >>> run_evals_sync([{"input": "2+2?", "output": "4"}], [short]).scores["short"].mean
    1.0
"""

from livescore.evals._quality import BinaryQuality, auroc, binary_quality
from livescore.evals._report import render_report, write_report
from livescore.evals._result import (
    EvalResult,
    HistogramBin,
    ItemFailure,
    ItemResult,
    ScoreAggregate,
    ScoreDistribution,
)
from livescore.evals._run_evals import (
    CONTEXT_METADATA_KEY,
    OnItemComplete,
    Target,
    get_item_context,
    run_evals,
    run_evals_sync,
)

__all__ = (
    "CONTEXT_METADATA_KEY",
    "BinaryQuality",
    "EvalResult",
    "HistogramBin",
    "ItemFailure",
    "ItemResult",
    "OnItemComplete",
    "ScoreAggregate",
    "ScoreDistribution",
    "Target",
    "auroc",
    "binary_quality",
    "get_item_context",
    "render_report",
    "run_evals",
    "run_evals_sync",
    "write_report",
)
