"""livescore: score what AI agents say, live, in production, as OpenTelemetry data.

Example:
    >>> from livescore.scorers import create_keyword_coverage_scorer
    >>> scorer = create_keyword_coverage_scorer()
    >>> scorer.run_sync({"input": "Python generators", "output": "Generators in Python"}).score
    1.0
"""

from livescore._errors import LivescoreError
from livescore.evals import EvalResult, run_evals, run_evals_sync
from livescore.judges import Judge, JudgeError, JudgeUsage, resolve_judge
from livescore.runs import (
    Run,
    Step,
    ToolCall,
    ToolResult,
    extract_retrieved_documents,
    extract_tool_results,
    get_assistant_message,
    get_run_context,
    get_user_message,
)
from livescore.scoring import (
    NotScorable,
    PromptStep,
    Scorer,
    ScoreResult,
    ScorerRunError,
    StepContext,
    create_scorer,
)

__version__ = "0.1.0"

__all__ = (
    "EvalResult",
    "Judge",
    "JudgeError",
    "JudgeUsage",
    "LivescoreError",
    "NotScorable",
    "PromptStep",
    "Run",
    "ScoreResult",
    "Scorer",
    "ScorerRunError",
    "Step",
    "StepContext",
    "ToolCall",
    "ToolResult",
    "__version__",
    "create_scorer",
    "extract_retrieved_documents",
    "extract_tool_results",
    "get_assistant_message",
    "get_run_context",
    "get_user_message",
    "resolve_judge",
    "run_evals",
    "run_evals_sync",
)
