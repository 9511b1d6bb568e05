"""The verdict a judge gives one item (:class:`StatementVerdict`, its spellings read as its
words), and the count of verdicts by word."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, field_validator

__all__ = ("StatementVerdict", "normalise_word", "spelling_validator", "tally")


def normalise_word(value: object, spellings: Mapping[str, Iterable[str]]) -> object:
    """The canonical verdict for a judge's spelling of it, or ``value`` unchanged (for the
    schema to reject). Case, edge punctuation, spaces, ``_`` and ``-`` do not matter;
    ``True`` / ``False`` read as ``"yes"`` / ``"no"`` where those are canonical.

    Example:
        >>> words = {"yes": ["y", "supported"], "no": ["n"]}
        >>> normalise_word(" YES. ", words), normalise_word(True, words)
        ('yes', 'yes')
        >>> normalise_word("Supported", words), normalise_word("maybe", words)
        ('yes', 'maybe')
    """
    if isinstance(value, bool):
        word = "yes" if value else "no"
        return word if word in spellings else value
    if not isinstance(value, str):
        return value
    cleaned = value.strip().strip(".!\"'").lower().replace("_", " ").replace("-", " ")
    key = " ".join(cleaned.split())
    for canonical, others in spellings.items():
        if key == canonical or key in others:
            return canonical
    return value


class StatementVerdict(BaseModel):
    """One item's verdict: the item (``statement``), the judge's ``verdict`` and a ``reason``.

    A scorer subclasses it with its own docstring (the judge sees it in the answer's schema),
    narrows ``verdict`` to its words (``Literal["yes", "no"]``) and sets ``spellings``: the
    judge's other ways of writing each word (:func:`normalise_word`); anything else is
    rejected and the judge asked again.

    Example:
        >>> from typing import Literal
        >>> class Verdict(StatementVerdict):
        ...     "A verdict."
        ...     spellings = {"yes": ("y", "true"), "no": ("n", "false")}
        ...     verdict: Literal["yes", "no"]
        >>> Verdict(statement="s", verdict=" True. ", reason="r").verdict
        'yes'
    """

    spellings: ClassVar[Mapping[str, Iterable[str]]] = {}

    statement: str
    verdict: str
    reason: str

    @field_validator("verdict", mode="before")
    @classmethod
    def _normalise(cls, value: object) -> object:
        return normalise_word(value, cls.spellings)


def spelling_validator(field: str, spellings: Mapping[str, Iterable[str]]) -> Any:
    """A pydantic validator that reads the judge's ``spellings`` of ``field``'s words as those
    words (:func:`normalise_word`), for an answer's model.

    Example:
        >>> from typing import Literal
        >>> class Match(BaseModel):
        ...     kind: Literal["exact", "missing"]
        ...     _spelling = spelling_validator("kind", {"exact": ("same",)})
        >>> Match(kind=" Same. ").kind
        'exact'
    """

    def normalise(cls: type[BaseModel], value: object) -> object:
        return normalise_word(value, spellings)

    return field_validator(field, mode="before")(classmethod(normalise))


def tally(verdicts: Iterable[Mapping[str, Any]], field: str = "verdict") -> Counter[str]:
    """How many ``verdicts`` say each word (a missing word counts 0).

    Example:
        >>> counts = tally([{"verdict": "yes"}, {"verdict": "no"}, {"verdict": "yes"}])
        >>> counts["yes"], counts["unsure"]
        (2, 0)
    """
    return Counter(verdict[field] for verdict in verdicts)
