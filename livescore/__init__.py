"""livescore: score what AI agents say, live, in production, as OpenTelemetry data.

``import livescore`` is cheap (serverless agents pay it on every cold start): each name
below is imported from its subpackage the first time it is used, so the judge client
(``openai``), the report templates (``jinja2``), the terminal UI (``rich``) and the
OpenTelemetry SDK load only when something needs them.

Example:
    >>> from livescore.scorers import create_keyword_coverage_scorer
    >>> scorer = create_keyword_coverage_scorer()
    >>> scorer.run_sync({"input": "Python generators", "output": "Generators in Python"}).score
    1.0
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from livescore._errors import LivescoreError

if TYPE_CHECKING:
    from livescore._version import __version__
    from livescore.evals import EvalResult, run_evals, run_evals_sync
    from livescore.judges import Judge, JudgeError, JudgeUsage, resolve_judge
    from livescore.runs import (
        Conversation,
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

__all__ = (
    "Conversation",
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

# Where each lazily imported name lives.
_LAZY = {
    "__version__": "livescore._version",
    **dict.fromkeys(("EvalResult", "run_evals", "run_evals_sync"), "livescore.evals"),
    **dict.fromkeys(("Judge", "JudgeError", "JudgeUsage", "resolve_judge"), "livescore.judges"),
    **dict.fromkeys(
        (
            "Conversation",
            "Run",
            "Step",
            "ToolCall",
            "ToolResult",
            "extract_retrieved_documents",
            "extract_tool_results",
            "get_assistant_message",
            "get_run_context",
            "get_user_message",
        ),
        "livescore.runs",
    ),
    **dict.fromkeys(
        (
            "NotScorable",
            "PromptStep",
            "Scorer",
            "ScoreResult",
            "ScorerRunError",
            "StepContext",
            "create_scorer",
        ),
        "livescore.scoring",
    ),
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'livescore' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
