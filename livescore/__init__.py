"""livescore: score what AI agents say, live, in production, as OpenTelemetry data.

The names a first program needs are here; the prebuilt scorers are in
:mod:`livescore.scorers`, the quick checks in :mod:`livescore.checks`, and each subpackage
holds the rest of its part (:mod:`livescore.live`, :mod:`livescore.sinks`,
:mod:`livescore.fleet`…).

- a run and its evidence: :class:`Run`, :class:`Step`, :class:`ToolCall`,
  :func:`get_run_context`, :func:`extract_tool_results`;
- a scorer: :func:`create_scorer`, :class:`Scorer`, :class:`PromptStep`,
  :class:`StepContext`, :class:`ScoreResult`, :class:`NotScorable`;
- the judge: :class:`OpenAIJudge`, :class:`Judge` (any ``model=`` takes either, or the
  string ``"openai/<model>"``);
- live scoring: :class:`LiveDispatcher`, :class:`ScorerConfig`, :func:`record_run`,
  :class:`OTelEmitter` (where the scores go), and :class:`LiveScoringSpanProcessor` for any
  agent that OpenTelemetry traces;
- a dataset: :func:`run_evals`, :func:`run_evals_sync`, :class:`EvalResult`,
  :class:`ItemResult`, :func:`write_report`;
- errors: :class:`LivescoreError`, the base of :class:`JudgeError` (and
  :class:`JudgeConfigError`) and :class:`ScorerRunError`.

``import livescore`` is cheap (serverless agents pay it on every cold start): each name is
imported from its subpackage the first time it is used, so the judge client (``openai``),
the report templates (``jinja2``), the terminal UI (``rich``) and the OpenTelemetry SDK
load only when something needs them.

Example:
    >>> from livescore import LiveDispatcher, Run, ScorerConfig
    >>> from livescore.scorers import create_keyword_coverage_scorer
    >>> with LiveDispatcher(
    ...     [ScorerConfig(create_keyword_coverage_scorer(), sampling=1.0)], register_atexit=False
    ... ) as dispatcher:
    ...     dispatcher.submit(Run(input="Python generators", output="Generators in Python"))
    ...     dispatcher.flush(timeout=10)
    True
    True
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from livescore._errors import JudgeConfigError, JudgeError, LivescoreError, ScorerRunError
    from livescore._version import __version__
    from livescore.collect import LiveScoringSpanProcessor
    from livescore.evals import EvalResult, ItemResult, run_evals, run_evals_sync, write_report
    from livescore.judges import Judge, OpenAIJudge
    from livescore.live import LiveDispatcher, ScorerConfig, record_run
    from livescore.otel import OTelEmitter
    from livescore.runs import Run, Step, ToolCall, extract_tool_results, get_run_context
    from livescore.scoring import (
        NotScorable,
        PromptStep,
        Scorer,
        ScoreResult,
        StepContext,
        create_scorer,
    )

__all__ = (
    "EvalResult",
    "ItemResult",
    "Judge",
    "JudgeConfigError",
    "JudgeError",
    "LiveDispatcher",
    "LiveScoringSpanProcessor",
    "LivescoreError",
    "NotScorable",
    "OTelEmitter",
    "OpenAIJudge",
    "PromptStep",
    "Run",
    "ScoreResult",
    "Scorer",
    "ScorerConfig",
    "ScorerRunError",
    "Step",
    "StepContext",
    "ToolCall",
    "__version__",
    "create_scorer",
    "extract_tool_results",
    "get_run_context",
    "record_run",
    "run_evals",
    "run_evals_sync",
    "write_report",
)

# Where each lazily imported name lives.
_LAZY = {
    "__version__": "livescore._version",
    **dict.fromkeys(
        ("JudgeConfigError", "JudgeError", "LivescoreError", "ScorerRunError"), "livescore._errors"
    ),
    **dict.fromkeys(
        ("EvalResult", "ItemResult", "run_evals", "run_evals_sync", "write_report"),
        "livescore.evals",
    ),
    **dict.fromkeys(("Judge", "OpenAIJudge"), "livescore.judges"),
    **dict.fromkeys(("LiveDispatcher", "ScorerConfig", "record_run"), "livescore.live"),
    "OTelEmitter": "livescore.otel",
    "LiveScoringSpanProcessor": "livescore.collect",
    **dict.fromkeys(
        ("Run", "Step", "ToolCall", "extract_tool_results", "get_run_context"), "livescore.runs"
    ),
    **dict.fromkeys(
        ("NotScorable", "PromptStep", "Scorer", "ScoreResult", "StepContext", "create_scorer"),
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
