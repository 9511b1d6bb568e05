"""Prebuilt scorers: hallucination (LLM judge) and keyword coverage (code), and their catalog."""

from livescore.scorers._catalog import (
    CatalogEntry,
    ScorerOptions,
    build_scorer,
    get_catalog_entry,
    parse_scorer_spec,
    register_scorer,
    scorer_catalog,
)
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
    "CatalogEntry",
    "EmptyContextPolicy",
    "HallucinationMode",
    "KeywordExtractor",
    "KeywordReference",
    "Keywords",
    "ScorerOptions",
    "build_scorer",
    "builtin_compound_terms",
    "create_hallucination_scorer",
    "create_keyword_coverage_scorer",
    "get_catalog_entry",
    "hallucination_label",
    "keyword_coverage_label",
    "parse_scorer_spec",
    "register_scorer",
    "scorer_catalog",
    "smart_stopwords",
)
