"""Prebuilt scorers and their catalog.

LLM-judged: hallucination, faithfulness, answer relevancy, answer similarity, context
relevance, context precision, toxicity, bias, prompt alignment, tool-call accuracy (LLM) and
criteria. Code: keyword coverage, completeness, content similarity, textual difference, tone,
tool-call accuracy and trajectory.

Each scorer's module declares its catalog entry (:func:`catalog_entry`): ``livescore eval
--scorer NAME``, :func:`build_scorer` and :func:`scorer_catalog` find it there. The judge
scorers other than hallucination are imported on first use (``import livescore.scorers``
stays at the cost of the code scorers' data): a name below is looked up in the ``__all__``
of the package's modules the first time it is used.
"""

from __future__ import annotations

import ast
import functools
import importlib
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from livescore._catalog import (
    SCORER_FAMILIES,
    CatalogEntry,
    ScorerOptions,
    build_scorer,
    catalog_entry,
    get_catalog_entry,
    parse_scorer_spec,
    register_scorer,
    scorer_catalog,
    scorer_span_attributes,
)
from livescore._text import dice_similarity
from livescore._tool_calls import RecordedCall, read_tool_calls
from livescore.scorers._completeness import (
    COMPLETENESS_LABELS,
    CompletenessReference,
    Elements,
    create_completeness_scorer,
    extract_elements,
)
from livescore.scorers._content_similarity import (
    SIMILARITY_LABELS,
    create_content_similarity_scorer,
    similarity_label,
)
from livescore.scorers._hallucination import (
    HALLUCINATION_LABELS,
    EmptyContextPolicy,
    HallucinationMode,
    create_hallucination_scorer,
    hallucination_label,
)
from livescore.scorers._judged import (
    DEFECT_LABELS,
    FAITHFULNESS_LABELS,
    JUDGED_QUALITY_LABELS,
    JudgeMode,
)
from livescore.scorers._keyword_coverage import (
    KEYWORD_COVERAGE_LABELS,
    KeywordReference,
    create_keyword_coverage_scorer,
    keyword_coverage_label,
)
from livescore.scorers._keywords import (
    KeywordExtractor,
    Keywords,
    builtin_compound_terms,
    smart_stopwords,
)
from livescore.scorers._text import Reference
from livescore.scorers._textual_difference import create_textual_difference_scorer, sequence_ratio
from livescore.scorers._tone import (
    TONE_CONSISTENCY_LABELS,
    TONE_MATCH_LABELS,
    create_tone_scorer,
    sentence_tones,
    text_tone,
)
from livescore.scorers._tool_call_accuracy import (
    TOOL_CALL_ACCURACY_LABELS,
    create_tool_call_accuracy_scorer,
)
from livescore.scorers._trajectory import (
    TRAJECTORY_LABELS,
    TrajectoryOrdering,
    create_trajectory_scorer,
)

if TYPE_CHECKING:
    from livescore.scorers._answer_relevancy import create_answer_relevancy_scorer
    from livescore.scorers._answer_similarity import create_answer_similarity_scorer
    from livescore.scorers._bias import create_bias_scorer
    from livescore.scorers._context_precision import (
        create_context_precision_scorer,
        mean_average_precision,
    )
    from livescore.scorers._context_relevance import create_context_relevance_scorer
    from livescore.scorers._criteria import create_criteria_scorer, parse_rubric
    from livescore.scorers._faithfulness import create_faithfulness_scorer
    from livescore.scorers._prompt_alignment import (
        AlignmentMode,
        create_prompt_alignment_scorer,
        find_system_prompt,
    )
    from livescore.scorers._tool_call_accuracy_llm import (
        AvailableTool,
        create_tool_call_accuracy_scorer_llm,
    )
    from livescore.scorers._toxicity import create_toxicity_scorer

__all__ = (
    "COMPLETENESS_LABELS",
    "DEFECT_LABELS",
    "FAITHFULNESS_LABELS",
    "HALLUCINATION_LABELS",
    "JUDGED_QUALITY_LABELS",
    "KEYWORD_COVERAGE_LABELS",
    "SCORER_FAMILIES",
    "SIMILARITY_LABELS",
    "TONE_CONSISTENCY_LABELS",
    "TONE_MATCH_LABELS",
    "TOOL_CALL_ACCURACY_LABELS",
    "TRAJECTORY_LABELS",
    "AlignmentMode",
    "AvailableTool",
    "CatalogEntry",
    "CompletenessReference",
    "Elements",
    "EmptyContextPolicy",
    "HallucinationMode",
    "JudgeMode",
    "KeywordExtractor",
    "KeywordReference",
    "Keywords",
    "RecordedCall",
    "Reference",
    "ScorerOptions",
    "TrajectoryOrdering",
    "build_scorer",
    "builtin_compound_terms",
    "catalog_entry",
    "create_answer_relevancy_scorer",
    "create_answer_similarity_scorer",
    "create_bias_scorer",
    "create_completeness_scorer",
    "create_content_similarity_scorer",
    "create_context_precision_scorer",
    "create_context_relevance_scorer",
    "create_criteria_scorer",
    "create_faithfulness_scorer",
    "create_hallucination_scorer",
    "create_keyword_coverage_scorer",
    "create_prompt_alignment_scorer",
    "create_textual_difference_scorer",
    "create_tone_scorer",
    "create_tool_call_accuracy_scorer",
    "create_tool_call_accuracy_scorer_llm",
    "create_toxicity_scorer",
    "create_trajectory_scorer",
    "dice_similarity",
    "extract_elements",
    "find_system_prompt",
    "get_catalog_entry",
    "hallucination_label",
    "keyword_coverage_label",
    "mean_average_precision",
    "parse_rubric",
    "parse_scorer_spec",
    "read_tool_calls",
    "register_scorer",
    "scorer_catalog",
    "scorer_span_attributes",
    "sentence_tones",
    "sequence_ratio",
    "similarity_label",
    "smart_stopwords",
    "text_tone",
)

_ALL = re.compile(r"^__all__ = (\([^)]*\))", re.MULTILINE)


@functools.cache
def _exported_by() -> dict[str, str]:
    """Which private module exports each name (read from the modules' ``__all__``, without
    importing them)."""
    found: dict[str, str] = {}
    for path in sorted(Path(__file__).parent.glob("_[!_]*.py")):
        match = _ALL.search(path.read_text(encoding="utf-8"))
        for name in ast.literal_eval(match.group(1)) if match else ():
            found.setdefault(name, path.stem)
    return found


def __getattr__(name: str) -> Any:
    module = _exported_by().get(name) if name in __all__ else None
    if module is None:
        raise AttributeError(f"module 'livescore.scorers' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"livescore.scorers.{module}"), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
