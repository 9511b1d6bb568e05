"""The demo's world: Parcelly, a fictional parcel-locker service, its documents and orders.

Plain Python (no LangChain): the documents ship in ``livescore/demo/docs/``; the search is a
small stemmed keyword ranking, enough to find the right page for the demo's questions.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

import snowballstemmer

__all__ = (
    "ORDERS",
    "Document",
    "load_documents",
    "search_documents",
    "split_sentences",
    "words",
)

_STOPWORDS = frozenset(
    re.findall(
        r"\w+",
        """a an and are as at be by can do does for from how i in is it its long many much my of
        on or the their there this to until up what when where which who why will with you your
        parcelly""",
    )
)
_WORD = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_stemmer = snowballstemmer.stemmer("english")


@dataclass(frozen=True, slots=True)
class Document:
    """One page of Parcelly's help centre.

    Attributes:
        slug: The file name without ``.md`` (``"holding-period"``).
        title: The page title.
        text: The page body.
    """

    slug: str
    title: str
    text: str

    @property
    def sentences(self) -> list[str]:
        """The body split into sentences."""
        return split_sentences(self.text)


def words(text: str) -> set[str]:
    """The stemmed content words of ``text`` (stopwords left out).

    Example:
        >>> sorted(words("How long are parcels held?"))
        ['held', 'parcel']
    """
    tokens = [t for t in _WORD.findall(text.lower()) if t not in _STOPWORDS]
    return {str(w) for w in _stemmer.stemWords(tokens)}


@functools.cache
def load_documents() -> tuple[Document, ...]:
    """Every help-centre page shipped with the demo, sorted by slug."""
    folder = resources.files("livescore.demo").joinpath("docs")
    docs = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".md"):
            continue
        raw = entry.read_text(encoding="utf-8").strip()
        title, _, body = raw.partition("\n")
        docs.append(Document(entry.name[:-3], title.lstrip("# ").strip(), body.strip()))
    return tuple(docs)


def search_documents(query: str, *, limit: int = 2) -> list[Document]:
    """The pages that share the most words with ``query`` (title words count double).

    Example:
        >>> [d.slug for d in search_documents("locker size weight", limit=1)]
        ['locker-sizes']
    """
    wanted = words(query)
    scored = []
    for doc in load_documents():
        score = 2 * len(wanted & words(doc.title)) + len(wanted & words(doc.text))
        if score:
            scored.append((score, doc.slug, doc))
    scored.sort(key=lambda entry: (-entry[0], entry[1]))
    return [doc for _, _, doc in scored[:limit]]


def split_sentences(text: str) -> list[str]:
    """``text`` split into sentences.

    Example:
        >>> split_sentences("Size S is small. The maximum weight is 25 kg.")
        ['Size S is small.', 'The maximum weight is 25 kg.']
    """
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


ORDERS: dict[str, dict[str, Any]] = {
    "PX-1042": {
        "order_id": "PX-1042",
        "status": "ready_for_pickup",
        "locker": "Berlin Hauptbahnhof, locker bank 12",
        "size": "M",
        "pickup_deadline": "Friday 18:00",
        "plan": "Plus",
    },
    "PX-2077": {
        "order_id": "PX-2077",
        "status": "in_transit",
        "locker": "Vienna Westbahnhof, locker bank 3",
        "size": "S",
        "expected_delivery": "Thursday",
        "plan": "Basic",
    },
}
"""The demo's order database."""
