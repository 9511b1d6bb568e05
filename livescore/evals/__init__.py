"""Offline evaluation: the live scorers over a dataset (``run_evals``), datasets, reports.

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

from livescore.evals._calibrate import calibrate_scorers, fit_calibration
from livescore.evals._compare import (
    BaselineError,
    Comparison,
    ItemChange,
    ScorerComparison,
    load_baseline,
    summary_markdown,
)
from livescore.evals._cost import CostEstimate, sample_indices
from livescore.evals._dataset import Dataset, DatasetProblem, load_dataset
from livescore.evals._labels import LabelQuality
from livescore.evals._quality import (
    BinaryQuality,
    SplitThreshold,
    binary_quality,
    cohen_kappa,
    split_threshold,
)
from livescore.evals._report import QualityRow, render_report, write_report
from livescore.evals._result import (
    EvalCollector,
    EvalResult,
    HistogramBin,
    ItemFailure,
    ItemResult,
    ScoreAggregate,
    ScoreDistribution,
)
from livescore.evals._results_file import ResultsFile
from livescore.evals._run_evals import (
    OnItemComplete,
    Target,
    estimate_cost,
    run_evals,
    run_evals_sync,
)
from livescore.evals._targets import AgentTarget, TargetAdapter, resolve_target

__all__ = (
    "AgentTarget",
    "BaselineError",
    "BinaryQuality",
    "Comparison",
    "CostEstimate",
    "Dataset",
    "DatasetProblem",
    "EvalCollector",
    "EvalResult",
    "HistogramBin",
    "ItemChange",
    "ItemFailure",
    "ItemResult",
    "LabelQuality",
    "OnItemComplete",
    "QualityRow",
    "ResultsFile",
    "ScoreAggregate",
    "ScoreDistribution",
    "ScorerComparison",
    "SplitThreshold",
    "Target",
    "TargetAdapter",
    "binary_quality",
    "calibrate_scorers",
    "cohen_kappa",
    "estimate_cost",
    "fit_calibration",
    "load_baseline",
    "load_dataset",
    "render_report",
    "resolve_target",
    "run_evals",
    "run_evals_sync",
    "sample_indices",
    "split_threshold",
    "summary_markdown",
    "write_report",
)
