"""Keyword extraction for the keyword coverage scorer: tokenizer, stopwords, stems, compounds
(the rules are in :class:`KeywordExtractor`'s docstring)."""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Iterable, Mapping
from importlib import resources
from typing import NamedTuple

import snowballstemmer

__all__ = ("KeywordExtractor", "Keywords", "builtin_compound_terms", "smart_stopwords")

# A token inside a whitespace-separated chunk: a word with inner . ' - and an optional ++ or
# # suffix, a leading-dot name (.NET), or a clause break (one punctuation character).
_TOKEN_RE = re.compile(
    r"\w+(?:[.'\-]\w+)*(?:\+\+|#)?|(?<![\w.])\.[^\W\d_]\w*"
    r"|[.,;:!?()\[\]{}\"“”…|]|(?<!\S)-(?!\S)|[–—]"
)
_NUMBER_RE = re.compile(r"[\d.\-_']+")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})

# Latin abbreviations the SMART list lacks in their dotted form.
_ABBREVIATIONS = frozenset({"e.g", "i.e", "a.k.a", "eg", "ie", "aka", "etc", "cf", "vs"})
# A hyphenated word starting with one of these is one word, not a compound.
_PREFIXES = frozenset(
    {"anti", "co", "de", "inter", "intra", "micro", "mid", "multi", "non", "post", "pre", "re"}
    | {"semi", "sub", "un"}
)

_CHUNK_CACHE_SIZE = 1 << 16  # distinct chunks of text kept per extractor
_CACHED_CHUNK_CHARS = 48  # longer chunks (URLs, blobs) are read each time: ~10 MB cache at most

_local = threading.local()


# Stemming one word costs ~30 µs in pure Python; a cached one costs ~0.1 µs, and production
# text repeats its vocabulary, so nearly every lookup hits.
@functools.lru_cache(maxsize=1 << 15)
def _stem(word: str) -> str:
    # Snowball stemmer objects keep state between calls: one per thread.
    if not hasattr(_local, "stemmer"):
        _local.stemmer = snowballstemmer.stemmer("english")
    return str(_local.stemmer.stemWord(word))


def _data_lines(name: str) -> list[str]:
    path = resources.files("livescore.scorers") / "data" / name
    return path.read_text(encoding="utf-8").splitlines()


@functools.cache
def smart_stopwords() -> frozenset[str]:
    """The SMART English stopword list the scorer ignores (570 words), loaded once.

    Example:
        >>> "the" in smart_stopwords(), "react" in smart_stopwords()
        (True, False)
    """
    words = (line.strip().lower() for line in _data_lines("smart_english.txt"))
    return frozenset(word for word in words if word)


@functools.cache
def builtin_compound_terms() -> tuple[str, ...]:
    """The built-in compound terms ("machine learning", "type inference"…), loaded once.

    Example:
        >>> "machine learning" in builtin_compound_terms()
        True
    """
    terms = (line.split("#", 1)[0].strip() for line in _data_lines("compound_terms.txt"))
    return tuple(term for term in terms if term)


class _Token(NamedTuple):
    """What one token contributes to a text's keywords (cached per extractor)."""

    seq: tuple[str, ...]  # keys it adds to the word sequence (compound matching)
    key: str | None  # its keyword key; None for stopwords and numbers
    display: str  # lower-case surface form
    content: tuple[str, ...]  # keys of its content words (one-word matching)
    unit: str | None  # the key compound-term detection sees; None for hyphen compounds
    flag: int  # _STARTS_TERM: may start a known compound term; _HYPHENATED: a-b compound


_PLAIN, _STARTS_TERM, _HYPHENATED = 0, 1, 2
_BREAK = _Token((), None, "", (), None, _PLAIN)  # a clause break (compared by identity)
_NOTHING = _Token((), None, "", (), None, _PLAIN)  # a token of underscores only
_BREAKS = frozenset('.,;:!?()[]{}"“”…|\n-–—')


class Keywords:
    """The keywords of one text, as :meth:`KeywordExtractor.extract` found them.

    Attributes:
        terms: Each keyword's comparison key (a stem, a normalised technical term, or the
            space-joined keys of a compound) mapped to its display form (the lower-case
            surface form of its first occurrence), in order of appearance.
        words: The keys of every content word in the text, compounds' words included.

    Example:
        >>> kw = KeywordExtractor().extract("Dogs love machine-learning!")
        >>> sorted(kw.forms)
        ['dogs', 'love', 'machine-learning']
        >>> kw.covers("dog"), kw.covers("machin learn")
        (True, True)
    """

    def __init__(
        self, terms: dict[str, str], words: frozenset[str], tokens: list[_Token | None]
    ) -> None:
        self.terms: Mapping[str, str] = terms
        self.words = words
        self._tokens = tokens

    def __len__(self) -> int:
        return len(self.terms)

    def __repr__(self) -> str:
        return f"Keywords({sorted(self.terms.values())!r})"

    @property
    def forms(self) -> set[str]:
        """The display forms of the keywords."""
        return set(self.terms.values())

    @functools.cached_property
    def sequence(self) -> tuple[str | None, ...]:
        """The key of every word in order (stopwords included), ``None`` at clause breaks:
        compound keywords of another text are matched against it. Built on first use."""
        return tuple(
            key for token in self._tokens for key in (token.seq if token is not None else (None,))
        )

    def covers(self, key: str) -> bool:
        """Whether this text covers a keyword key of another text (rule 7 of
        :class:`KeywordExtractor`)."""
        if " " not in key:
            return key in self.words
        parts = tuple(key.split(" "))
        seq = self.sequence
        at = -1
        try:
            while True:  # each place of the first word, found in C
                at = seq.index(parts[0], at + 1)
                if seq[at : at + len(parts)] == parts:
                    return True
        except ValueError:
            return False


class KeywordExtractor:
    """Turns text into :class:`Keywords`; reusable and thread-safe.

    Rules, in the order they apply (all compared in lower case; a keyword shows the surface
    form of its first occurrence):

    1. **Tokens**: letters, digits and ``_`` with inner ``.``, ``'`` or ``-`` (``React.js``,
       ``don't``, ``GPT-4``), an optional ``++`` / ``#`` end (``C++``), or a leading-dot name
       (``.NET``). Sentence punctuation, a line break or a lone dash is a *clause break*;
       anything else (markdown, slashes, edge quotes) only separates tokens.
    2. **Not keywords**: SMART stopwords (570, single letters among them, plus ``e.g.``,
       ``i.e.``, ``a.k.a.`` and ``extra_stopwords``), with or without a possessive ``'s``,
       and numbers (digits with ``. - _``: "Python 3.12" has the keyword ``python``).
    3. **Plain words** compare by Snowball stem ("dogs" = "dog"); a possessive ``'s`` and an
       acronym's plural ``s`` ("GPUs", which the stemmer keeps) are dropped.
    4. **Technical terms** (any other token: ``C#``, ``x86_64``, ``k8s``) stay whole and
       unstemmed, inner dots and hyphens ignored (``GPT-4`` = ``GPT4``; a leading dot kept);
       a trailing ``js`` / ``.js`` names the bare library (``ReactJS`` = ``React``).
    5. **Hyphenated words** of letters are compounds (``machine-learning`` matches "machine
       learning"), except after a prefix (``pre-``, ``non-``…) or with a one-letter part
       (``e-mail``): those are glued into one word.
    6. **Compound terms**: adjacent words in one clause that form a known term (the built-in
       list, plus ``compound_terms``) are ONE keyword; the longest term wins.
    7. **Matching**: a one-word keyword is covered by the same key anywhere in the response;
       a compound only by the same words adjacent and in order ("learning about machines"
       does not cover "machine learning").

    Args:
        stemming: Compare plain words by their Snowball English stem ("dogs" = "dog").
            With ``False`` only case and the rules for technical terms apply.
        extra_stopwords: Single words to ignore besides the SMART list (any case).
        compound_terms: Multi-word terms to treat as one keyword, besides the built-in ones.
        builtin_compound_terms: Use the built-in compound terms ("machine learning"…).

    Raises:
        ValueError: A compound term has fewer than two words, or only stopwords; an extra
            stopword is not one word.
        TypeError: ``extra_stopwords`` or ``compound_terms`` is a string, not a list.

    Example:
        >>> extractor = KeywordExtractor(compound_terms=["vector clock"])
        >>> sorted(extractor.extract("Vector clocks order events in React.js apps").forms)
        ['apps', 'events', 'order', 'react.js', 'vector clocks']
    """

    def __init__(
        self,
        *,
        stemming: bool = True,
        extra_stopwords: Iterable[str] = (),
        compound_terms: Iterable[str] = (),
        builtin_compound_terms: bool = True,
    ) -> None:
        words = _words("extra_stopwords", extra_stopwords)
        extra = {word.strip().lower().translate(_APOSTROPHES) for word in words} - {""}
        for word in extra:
            if len(word.split()) > 1:
                raise ValueError(
                    f"extra stopword {word!r} is not one word (for phrases, list each word)"
                )
        self.stemming = stemming
        self.stopwords = smart_stopwords() | _ABBREVIATIONS | extra
        terms = _words("compound_terms", compound_terms)
        if builtin_compound_terms:
            terms = [*_load_builtin_terms(), *terms]
        self.compound_terms = tuple(dict.fromkeys(t.strip() for t in terms))
        # Indexed by the first two words; the longest term first ("large language model"
        # before "large language").
        index: dict[tuple[str | None, ...], set[tuple[str, ...]]] = {}
        for keys in map(self._term_keys, self.compound_terms):
            index.setdefault(keys[:2], set()).add(keys)
        self._compounds = {
            pair: sorted(terms, key=len, reverse=True) for pair, terms in index.items()
        }
        self._term_starts = frozenset(pair[0] for pair in index)
        # Each distinct chunk's tokens. A plain dict, cleared when full: threads may share it
        # (dict reads and writes are atomic).
        self._cache: dict[str, tuple[_Token, ...]] = {}

    def __repr__(self) -> str:
        terms = len(self.compound_terms)
        return f"KeywordExtractor(stemming={self.stemming}, compound_terms={terms})"

    def extract(self, text: str) -> Keywords:
        """The keywords of ``text`` (a ``TypeError`` if it is not a string)."""
        if not isinstance(text, str):
            raise TypeError(f"keyword extraction needs text, not {type(text).__name__}")
        if "\u2019" in text or "\u2018" in text or "\u02bc" in text:
            text = text.translate(_APOSTROPHES)
        cached = self._cache.get
        read = self._read
        tokens: list[_Token | None] = []
        append = tokens.append
        terms: dict[str, str] = {}
        flagged: list[int] = []
        after_break = True
        # The hot loop: a chunk ("data.", "(cleaning,", "React.js") seen before costs one lookup.
        for line in text.splitlines():
            for chunk in line.split():
                for token in cached(chunk) or read(chunk):
                    if token is _BREAK:
                        if not after_break:  # runs of breaks count once
                            append(None)
                            after_break = True
                        continue
                    after_break = False
                    if token[5]:
                        flagged.append(len(tokens))
                    append(token)
                    key = token[1]
                    if key is not None and key not in terms:
                        terms[key] = token[2]
            if not after_break:  # a line break is a clause break
                append(None)
                after_break = True
        words = {key for key in terms if " " not in key}
        matches: dict[int, tuple[str, ...]] = {}
        for at in flagged:
            start = tokens[at]
            if start is not None and start.flag == _HYPHENATED:
                words.update(start.content)
            elif (term := self._term_at(tokens, at)) is not None:
                matches[at] = term
        if matches:
            terms = self._merge(tokens, matches)
        return Keywords(terms, frozenset(words), tokens)

    def _term_at(self, tokens: list[_Token | None], at: int) -> tuple[str, ...] | None:
        # The longest known compound term starting at tokens[at], if any.
        if at + 1 >= len(tokens):
            return None
        first, second = tokens[at], tokens[at + 1]
        if first is None or second is None:
            return None
        for term in self._compounds.get((first.unit, second.unit), ()):
            window = tokens[at : at + len(term)]
            if tuple([token.unit if token is not None else None for token in window]) == term:
                return term
        return None

    @staticmethod
    def _merge(tokens: list[_Token | None], matches: dict[int, tuple[str, ...]]) -> dict[str, str]:
        # Only for texts with a known compound term: rebuild the keywords, each compound's
        # words merged into one keyword (leftmost match first, as the text reads).
        terms: dict[str, str] = {}
        skip_to = 0
        for at, token in enumerate(tokens):
            if at < skip_to or token is None:
                continue
            term = matches.get(at)
            if term is not None:
                skip_to = at + len(term)
                key = " ".join(term)
                if key not in terms:
                    parts = tokens[at:skip_to]
                    terms[key] = " ".join(t.display for t in parts if t is not None)
            elif token.key is not None and token.key not in terms:
                terms[token.key] = token.display
        return terms

    def _term_keys(self, term: str) -> tuple[str, ...]:
        tokens = [self._parse(word) for word in _TOKEN_RE.findall(term.translate(_APOSTROPHES))]
        keys = tuple(key for token in tokens for key in token.seq)
        if len(keys) < 2 or not any(token.content for token in tokens):
            raise ValueError(
                f"compound term {term!r} needs at least two words, one of them not a stopword"
            )
        return keys

    def _read(self, chunk: str) -> tuple[_Token, ...]:
        read = tuple(
            token._replace(flag=_STARTS_TERM) if token.unit in self._term_starts else token
            for token in map(self._parse, _TOKEN_RE.findall(chunk))
        )
        if len(chunk) <= _CACHED_CHUNK_CHARS:
            if len(self._cache) >= _CHUNK_CACHE_SIZE:
                self._cache.clear()
            self._cache[chunk] = read
        return read

    def _word_key(self, word: str) -> str:
        if len(word) > 3 and word.endswith("js"):
            # "reactjs" names the same library as "react" (no English word ends in "js").
            word = word[:-2]
        return _stem(word) if self.stemming else word

    def _parse(self, raw: str) -> _Token:
        if raw in _BREAKS:
            return _BREAK
        raw = raw.strip("_")  # markdown _emphasis_, __dunder__
        if not raw:
            return _NOTHING
        low = raw.lower()
        stop = self.stopwords
        if low.endswith("'s") and low not in stop:
            low = low[:-2]
        if not low or low in stop or _NUMBER_RE.fullmatch(low):
            return _Token((low,), None, low, (), low, _PLAIN)
        bare = low.replace("'", "")
        if bare.isalpha():
            if self.stemming and len(raw) > 3 and raw[-1] == "s" and raw[:-1].isupper():
                bare = bare[:-1]  # GPUs, LLMs, APIs: the stemmer keeps their "s"
            key = self._word_key(bare)
            return _Token((key,), key, low, (key,), key, _PLAIN)
        if "-" in low and "." not in low:
            parts = low.split("-")
            if all(p.isalpha() for p in parts):
                if parts[0] in _PREFIXES or any(len(p) == 1 for p in parts):
                    key = self._word_key("".join(parts))
                    return _Token((key,), key, low, (key,), key, _PLAIN)
                keys = tuple(p if p in stop else self._word_key(p) for p in parts)
                content = tuple(k for k, p in zip(keys, parts, strict=True) if p not in stop)
                if not content:
                    return _Token(keys, None, low, (), None, _PLAIN)
                return _Token(keys, " ".join(keys), low, content, None, _HYPHENATED)
        # A technical term: kept whole, unstemmed; inner dots and hyphens ignored.
        lead = "." if low.startswith(".") else ""
        key = lead + low.replace(".", "").replace("-", "")
        if len(key) > 3 and key.endswith("js") and not lead:
            base = key[:-2]
            key = self._word_key(base) if base.isalpha() else base
        return _Token((key,), key, low, (key,), key, _PLAIN)


def _words(name: str, words: object) -> list[str]:
    if isinstance(words, str | bytes):
        raise TypeError(f"{name} must be a list of strings, not one string ({words!r})")
    if not isinstance(words, Iterable):
        raise TypeError(f"{name} must be a list of strings, not {type(words).__name__}")
    items = list(words)
    for item in items:
        if not isinstance(item, str):
            raise TypeError(f"{name} must hold strings, not {type(item).__name__} ({item!r})")
    return items


# The constructor's flag shadows the public function's name inside it.
_load_builtin_terms = builtin_compound_terms
