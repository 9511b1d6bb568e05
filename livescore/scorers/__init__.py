"""Prebuilt scorers: hallucination (LLM judge); keyword coverage, completeness, content
similarity, textual difference, tone, tool-call accuracy and trajectory (code); and their
catalog."""

from livescore.scorers._catalog import (
    CatalogEntry,
    ScorerOptions,
    build_scorer,
    get_catalog_entry,
    parse_scorer_spec,
    register_scorer,
    scorer_catalog,
)
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
from livescore.scorers._text import Reference, dice_similarity
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
from livescore.scorers._tool_calls import RecordedCall, read_tool_calls
from livescore.scorers._trajectory import (
    TRAJECTORY_LABELS,
    TrajectoryOrdering,
    create_trajectory_scorer,
)

__all__ = (
    "COMPLETENESS_LABELS",
    "HALLUCINATION_LABELS",
    "KEYWORD_COVERAGE_LABELS",
    "SIMILARITY_LABELS",
    "TONE_CONSISTENCY_LABELS",
    "TONE_MATCH_LABELS",
    "TOOL_CALL_ACCURACY_LABELS",
    "TRAJECTORY_LABELS",
    "CatalogEntry",
    "CompletenessReference",
    "Elements",
    "EmptyContextPolicy",
    "HallucinationMode",
    "KeywordExtractor",
    "KeywordReference",
    "Keywords",
    "RecordedCall",
    "Reference",
    "ScorerOptions",
    "TrajectoryOrdering",
    "build_scorer",
    "builtin_compound_terms",
    "create_completeness_scorer",
    "create_content_similarity_scorer",
    "create_hallucination_scorer",
    "create_keyword_coverage_scorer",
    "create_textual_difference_scorer",
    "create_tone_scorer",
    "create_tool_call_accuracy_scorer",
    "create_trajectory_scorer",
    "dice_similarity",
    "extract_elements",
    "get_catalog_entry",
    "hallucination_label",
    "keyword_coverage_label",
    "parse_scorer_spec",
    "read_tool_calls",
    "register_scorer",
    "scorer_catalog",
    "sentence_tones",
    "sequence_ratio",
    "similarity_label",
    "smart_stopwords",
    "text_tone",
)
