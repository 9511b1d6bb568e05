"""Prebuilt scorers: hallucination (LLM judge) and keyword coverage (code)."""

from livescore.scorers._hallucination import (
    HALLUCINATION_LABELS,
    EmptyContextPolicy,
    HallucinationMode,
    create_hallucination_scorer,
    hallucination_label,
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

__all__ = (
    "HALLUCINATION_LABELS",
    "KEYWORD_COVERAGE_LABELS",
    "EmptyContextPolicy",
    "HallucinationMode",
    "KeywordExtractor",
    "KeywordReference",
    "Keywords",
    "builtin_compound_terms",
    "create_hallucination_scorer",
    "create_keyword_coverage_scorer",
    "hallucination_label",
    "keyword_coverage_label",
    "smart_stopwords",
)
