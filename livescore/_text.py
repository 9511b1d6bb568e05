"""Text helpers shared by the code scorers (``livescore.scorers``) and quick checks
(``livescore.checks``); nothing here reads a run.

- :func:`dice_similarity`: the Dice coefficient of character bigrams exactly as the
  ``string-similarity`` npm package (and so Mastra) computes it;
- :func:`utf16_units`: a text as JavaScript sees it (one character per UTF-16 code unit), for
  values identical to Mastra's on text with emoji;
- :func:`collapse_whitespace`: runs of whitespace as one space, trimmed;
- :func:`replace_lone_surrogates` and :func:`escape_lone_surrogates`: text that UTF-8 can
  encode (a JSON ``\\ud800`` escape decodes to a lone surrogate, which it cannot).
"""

from __future__ import annotations

import re
from collections import Counter

__all__ = (
    "DEFAULT_MAX_TEXT_CHARS",
    "DROP_WHITESPACE",
    "JS_WHITESPACE",
    "collapse_whitespace",
    "dice_similarity",
    "escape_lone_surrogates",
    "excerpt",
    "replace_lone_surrogates",
    "utf16_units",
)

DEFAULT_MAX_TEXT_CHARS = 50_000
"""Longest input, output or context text (in characters) a scorer reads before truncating.

Megabyte outputs are cut, not sent whole to a judge; the cut is recorded in ``flags``."""

# JavaScript's \s (ECMAScript WhiteSpace and LineTerminator): string-similarity removes these
# before comparing. Python's \s differs (it has \x1c-\x1f and \x85, lacks \ufeff), so the set is
# spelled out for identical values.
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
DROP_WHITESPACE: dict[int, None] = dict.fromkeys(map(ord, JS_WHITESPACE))
"""A ``str.translate`` table that removes JavaScript's whitespace characters."""
_JS_WHITESPACE_RUN = re.compile(f"[{JS_WHITESPACE}]+")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def utf16_units(text: str) -> str:
    """``text`` with each character outside the BMP split into its two UTF-16 surrogates.

    JavaScript strings are sequences of UTF-16 code units, so Mastra counts an emoji as two
    characters; a Python ``str`` counts it as one. Comparing the split form gives the same
    numbers as JavaScript.

    Example:
        >>> len("ok 👍"), len(utf16_units("ok 👍"))
        (4, 5)
    """
    if text.isascii() or _ASTRAL.search(text) is None:
        return text
    return _ASTRAL.sub(_split_astral, text)


def _split_astral(match: re.Match[str]) -> str:
    point = ord(match.group()) - 0x10000
    return chr(0xD800 + (point >> 10)) + chr(0xDC00 + (point & 0x3FF))


def collapse_whitespace(text: str) -> str:
    """Runs of whitespace as one space, leading and trailing whitespace removed.

    Example:
        >>> collapse_whitespace("  two\\n\\n words ")
        'two words'
    """
    return _JS_WHITESPACE_RUN.sub(" ", text).strip(JS_WHITESPACE)


def dice_similarity(first: str, second: str, *, ignore_whitespace: bool = True) -> float:
    """The Dice coefficient of the two texts' character bigrams (multisets), from 0 to 1.

    ``2 × shared bigrams / (bigrams of first + bigrams of second)``. With
    ``ignore_whitespace`` (the default) every whitespace character is removed first, which is
    exactly what the ``string-similarity`` npm package's ``compareTwoStrings`` does (so
    Mastra's content similarity and ``checks.similarity`` give the same values): identical
    texts (after removal) → 1, a text shorter than two characters → 0. Case is compared as
    given; lower both texts first to ignore it.

    Example:
        >>> dice_similarity("night", "nacht")
        0.25
        >>> dice_similarity("ice cream", "icecream")
        1.0
        >>> round(dice_similarity("ice cream", "icecream", ignore_whitespace=False), 3)
        0.8
    """
    if ignore_whitespace:
        first = first.translate(DROP_WHITESPACE)
        second = second.translate(DROP_WHITESPACE)
    if first == second:
        return 1.0
    first_grams, first_units = _bigrams(first)
    second_grams, second_units = _bigrams(second)
    if first_units < 2 or second_units < 2:
        return 0.0
    if len(first_grams) > len(second_grams):  # walk the smaller one
        first_grams, second_grams = second_grams, first_grams
    shared = 0
    for gram, count in first_grams.items():
        other = second_grams.get(gram)
        if other is not None:
            shared += count if count < other else other
    return 2.0 * shared / (first_units + second_units - 2)


def _bigrams(text: str) -> tuple[Counter[int], int]:
    """The multiset of UTF-16 code-unit bigrams of ``text``, and its length in code units.

    Each bigram is one int (two 16-bit units read as a 32-bit word), counted in C by
    ``Counter``: about twice as fast as counting two-character strings. Reading the UTF-16
    encoding also makes the bigrams JavaScript's, emoji included.
    """
    data = text.encode("utf-16-le", "surrogatepass")
    units = len(data) // 2
    grams: Counter[int] = Counter()
    if units < 2:
        return grams, units
    # Bigrams starting at even units, then at odd units: two aligned views of 4-byte words.
    grams.update(memoryview(data[: (units // 2) * 4]).cast("I"))
    grams.update(memoryview(data[2 : 2 + ((units - 1) // 2) * 4]).cast("I"))
    return grams, units


def excerpt(text: str, limit: int = 120) -> str:
    """``text`` on one line, cut to about ``limit`` characters with an ellipsis.

    Example:
        >>> excerpt("a\\nb" + "c" * 200, 10)
        "'a bcccccc…'"
    """
    flat = collapse_whitespace(text)
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    return repr(flat)


def replace_lone_surrogates(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, so UTF-8 can encode it.

    A broken decoder upstream (``errors="surrogateescape"``) or a JSON ``\\ud800`` escape
    leaves lone surrogates in a Python string; encoding it as UTF-8 then raises.

    Example:
        >>> replace_lone_surrogates("a" + chr(0xD800)) == "a\N{REPLACEMENT CHARACTER}"
        True
    """
    if text.isascii():
        return text
    return _LONE_SURROGATE.sub("\ufffd", text)


def escape_lone_surrogates(json_text: str) -> str:
    """JSON text with each lone surrogate written as its ``\\uXXXX`` escape.

    ``json.dumps(..., ensure_ascii=False)`` writes a lone surrogate as the character itself,
    which UTF-8 cannot encode; as an escape it is valid JSON that reads back to the same
    string. Only for JSON text (a surrogate can only stand inside a JSON string there).

    Example:
        >>> import json
        >>> text = "a" + chr(0xD800)
        >>> line = escape_lone_surrogates(json.dumps({"t": text}, ensure_ascii=False))
        >>> line.isascii(), json.loads(line) == {"t": text}
        (True, True)
    """
    if json_text.isascii():
        return json_text
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", json_text)
