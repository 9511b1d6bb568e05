"""Prebuilt scorers, LLM-judged and code, and their catalog (``livescore eval --scorer NAME``,
:func:`build_scorer`); a judge scorer that gives one verdict per item is a :class:`JudgeSpec`
built by :func:`judge_scorer`. Each name loads its module the first time it is used.

Example:
    >>> from livescore.scorers import create_keyword_coverage_scorer
    >>> scorer = create_keyword_coverage_scorer()
    >>> scorer.run_sync({"input": "Python generators", "output": "Generators in Python"}).score
    1.0
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from livescore._catalog import (
        SCORER_FAMILIES,
        CatalogEntry,
        ScorerOptions,
        build_scorer,
        catalog_entry,
        scorer_catalog,
    )
    from livescore.scorers._answer_relevancy import create_answer_relevancy_scorer
    from livescore.scorers._answer_similarity import create_answer_similarity_scorer
    from livescore.scorers._bias import create_bias_scorer
    from livescore.scorers._completeness import create_completeness_scorer
    from livescore.scorers._content_similarity import create_content_similarity_scorer
    from livescore.scorers._context_precision import create_context_precision_scorer
    from livescore.scorers._context_relevance import create_context_relevance_scorer
    from livescore.scorers._conversation_completeness import create_conversation_completeness_scorer
    from livescore.scorers._conversation_hallucination import (
        create_conversation_hallucination_scorer,
    )
    from livescore.scorers._conversation_relevancy import create_conversation_relevancy_scorer
    from livescore.scorers._criteria import create_criteria_scorer
    from livescore.scorers._faithfulness import create_faithfulness_scorer
    from livescore.scorers._hallucination import create_hallucination_scorer
    from livescore.scorers._judge_spec import (
        JudgePrompts,
        JudgeSpec,
        LogprobSpec,
        Shown,
        StatementVerdict,
        judge_catalog_entry,
        judge_scorer,
    )
    from livescore.scorers._keyword_coverage import create_keyword_coverage_scorer
    from livescore.scorers._knowledge_retention import create_knowledge_retention_scorer
    from livescore.scorers._prompt_alignment import create_prompt_alignment_scorer
    from livescore.scorers._role_adherence import create_role_adherence_scorer
    from livescore.scorers._textual_difference import create_textual_difference_scorer
    from livescore.scorers._tone import create_tone_scorer
    from livescore.scorers._tool_call_accuracy import create_tool_call_accuracy_scorer
    from livescore.scorers._tool_call_accuracy_llm import create_tool_call_accuracy_scorer_llm
    from livescore.scorers._tool_error_rate import create_tool_error_rate_scorer
    from livescore.scorers._toxicity import create_toxicity_scorer
    from livescore.scorers._trajectory import create_trajectory_scorer
    from livescore.scorers._turn_count import create_turn_count_scorer
    from livescore.scorers._user_frustration import create_user_frustration_scorer

__all__ = (
    "SCORER_FAMILIES",
    "CatalogEntry",
    "JudgePrompts",
    "JudgeSpec",
    "LogprobSpec",
    "ScorerOptions",
    "Shown",
    "StatementVerdict",
    "build_scorer",
    "catalog_entry",
    "create_answer_relevancy_scorer",
    "create_answer_similarity_scorer",
    "create_bias_scorer",
    "create_completeness_scorer",
    "create_content_similarity_scorer",
    "create_context_precision_scorer",
    "create_context_relevance_scorer",
    "create_conversation_completeness_scorer",
    "create_conversation_hallucination_scorer",
    "create_conversation_relevancy_scorer",
    "create_criteria_scorer",
    "create_faithfulness_scorer",
    "create_hallucination_scorer",
    "create_keyword_coverage_scorer",
    "create_knowledge_retention_scorer",
    "create_prompt_alignment_scorer",
    "create_role_adherence_scorer",
    "create_textual_difference_scorer",
    "create_tone_scorer",
    "create_tool_call_accuracy_scorer",
    "create_tool_call_accuracy_scorer_llm",
    "create_tool_error_rate_scorer",
    "create_toxicity_scorer",
    "create_trajectory_scorer",
    "create_turn_count_scorer",
    "create_user_frustration_scorer",
    "judge_catalog_entry",
    "judge_scorer",
    "scorer_catalog",
)


def _module_of(name: str) -> str | None:
    """Where a public name lives: ``create_<x>_scorer[_llm]`` in ``_<x>[_llm].py``, the
    catalog's names in ``livescore._catalog``, the judge spec's names in ``_judge_spec.py``."""
    if name not in __all__:
        return None
    if name.startswith("create_"):
        return f"livescore.scorers._{name.removeprefix('create_').replace('_scorer', '')}"
    catalog = importlib.import_module("livescore._catalog")  # every scorer module imports it
    return "livescore._catalog" if name in catalog.__all__ else "livescore.scorers._judge_spec"


def __getattr__(name: str) -> Any:
    module = _module_of(name)
    if module is None:
        raise AttributeError(f"module 'livescore.scorers' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
