"""Prebuilt scorers: hallucination (LLM judge) and keyword coverage (code)."""

from livescore.scorers._hallucination import (
    HALLUCINATION_LABELS,
    EmptyContextPolicy,
    HallucinationMode,
    create_hallucination_scorer,
    hallucination_label,
)

__all__ = (
    "HALLUCINATION_LABELS",
    "EmptyContextPolicy",
    "HallucinationMode",
    "create_hallucination_scorer",
    "hallucination_label",
)
