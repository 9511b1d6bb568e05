"""Checks of the answer's text: includes, excludes, equals, matches, similarity."""

from __future__ import annotations

import math
import re

from livescore._catalog import ScorerOptions, catalog_entry
from livescore._text import collapse_whitespace, dice_similarity, excerpt
from livescore.checks._check import Check, CheckResult
from livescore.runs import Run, RunLike, get_assistant_message
from livescore.scoring import Scorer

__all__ = (
    "equals",
    "equals_scorer",
    "excludes",
    "excludes_scorer",
    "includes",
    "includes_scorer",
    "matches",
    "matches_scorer",
    "similarity",
    "similarity_scorer",
)


def _text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a string, not {type(value).__name__}")
    if not value:
        raise ValueError(f"{what} is empty: every answer would match it")
    return value


def _answer(run: Run) -> str:
    return get_assistant_message(run) or ""


def _case(ignore_case: bool) -> str:
    return " (case ignored)" if ignore_case else ""


# -- includes / excludes ----------------------------------------------------------------------


def _contains_check(text: str, *, ignore_case: bool, wanted: bool) -> Check:
    needle = _text(text, "the text to look for")
    target = needle.lower() if ignore_case else needle
    check_id = "includes" if wanted else "excludes"
    shown = f"{needle!r}{_case(ignore_case)}"

    def evaluate(run: Run) -> CheckResult:
        answer = _answer(run)
        found = target in (answer.lower() if ignore_case else answer)
        verb = "contains" if found else "does not contain"
        return CheckResult(
            check_id,
            passed=found == wanted,
            reason=f"the answer {verb} {shown}",
            details={"found": found},
            evidence=f"answer: {excerpt(answer)}",
        )

    description = f"The answer {'contains' if wanted else 'does not contain'} {shown}"
    return Check(check_id, description, evaluate, text_input=True)


def includes(run: RunLike | str, text: str, *, ignore_case: bool = True) -> CheckResult:
    """Check that the answer contains ``text``.

    Args:
        run: A :class:`~livescore.Run`, a run mapping, or the answer itself.
        text: What the answer must contain.
        ignore_case: Compare in lower case (the default, as Mastra's ``checks.includes``).

    Raises:
        ValueError: ``text`` is empty.

    Example:
        >>> bool(includes({"input": "Refund?", "output": "Your REFUND was sent."}, "refund"))
        True
    """
    return _contains_check(text, ignore_case=ignore_case, wanted=True)(run)


def includes_scorer(text: str, *, ignore_case: bool = True, id: str = "includes") -> Scorer:
    """:func:`includes` as a scorer: 1 when the answer contains ``text``, else 0.

    Example:
        >>> includes_scorer("refund").run_sync({"input": "?", "output": "No refund."}).score
        1.0
    """
    return _contains_check(text, ignore_case=ignore_case, wanted=True).scorer(id=id)


def excludes(run: RunLike | str, text: str, *, ignore_case: bool = True) -> CheckResult:
    """Check that the answer does not contain ``text`` (an internal name, a banned phrase).

    Example:
        >>> bool(excludes("The parcel left Lyon.", "error"))
        True
    """
    return _contains_check(text, ignore_case=ignore_case, wanted=False)(run)


def excludes_scorer(text: str, *, ignore_case: bool = True, id: str = "excludes") -> Scorer:
    """:func:`excludes` as a scorer: 1 when the answer does not contain ``text``, else 0.

    Example:
        >>> excludes_scorer("error").run_sync({"input": "?", "output": "An error."}).score
        0.0
    """
    return _contains_check(text, ignore_case=ignore_case, wanted=False).scorer(id=id)


# -- equals -----------------------------------------------------------------------------------


def _equals_check(expected: str, *, ignore_case: bool, ignore_whitespace: bool) -> Check:
    if not isinstance(expected, str):
        raise TypeError(f"the expected answer must be a string, not {type(expected).__name__}")

    def normalise(text: str) -> str:
        if ignore_whitespace:
            text = collapse_whitespace(text)
        return text.lower() if ignore_case else text

    target = normalise(expected)
    ignored = [n for n, on in (("case", ignore_case), ("whitespace", ignore_whitespace)) if on]
    how = f" ({' and '.join(ignored)} ignored)" if ignored else ""

    def evaluate(run: Run) -> CheckResult:
        answer = _answer(run)
        equal = normalise(answer) == target
        verb = "equals" if equal else "does not equal"
        return CheckResult(
            "equals",
            passed=equal,
            reason=f"the answer {verb} {excerpt(expected, 60)}{how}",
            details={"equal": equal},
            evidence=f"answer: {excerpt(answer)}",
        )

    return Check(
        "equals", f"The answer equals {excerpt(expected, 60)}{how}", evaluate, text_input=True
    )


def equals(
    run: RunLike | str,
    expected: str,
    *,
    ignore_case: bool = True,
    ignore_whitespace: bool = True,
) -> CheckResult:
    """Check that the answer is exactly ``expected``.

    Args:
        run: A run, a run mapping, or the answer itself.
        expected: The expected answer.
        ignore_case: Compare in lower case (the default, as Mastra's ``checks.equals``).
        ignore_whitespace: Treat runs of whitespace as one space and ignore leading and
            trailing whitespace (the default: "42\\n" equals "42").

    Example:
        >>> bool(equals("Paris\\n", "paris")), bool(equals("Paris.", "Paris"))
        (True, False)
    """
    check = _equals_check(expected, ignore_case=ignore_case, ignore_whitespace=ignore_whitespace)
    return check(run)


def equals_scorer(
    expected: str,
    *,
    ignore_case: bool = True,
    ignore_whitespace: bool = True,
    id: str = "equals",
) -> Scorer:
    """:func:`equals` as a scorer: 1 when the answer is exactly ``expected``, else 0."""
    check = _equals_check(expected, ignore_case=ignore_case, ignore_whitespace=ignore_whitespace)
    return check.scorer(id=id)


# -- matches ----------------------------------------------------------------------------------


def _compile(pattern: object) -> re.Pattern[str]:
    if isinstance(pattern, re.Pattern):
        if not isinstance(pattern.pattern, str):
            raise TypeError("the pattern must match text (a str pattern), not bytes")
        return pattern
    if not isinstance(pattern, str):
        raise TypeError(f"the pattern must be a string or re.Pattern, not {type(pattern).__name__}")
    if not pattern:
        raise ValueError("the pattern is empty: every answer would match it")
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"invalid regular expression {pattern!r}: {exc}") from None


def _matches_check(pattern: str | re.Pattern[str], *, full: bool) -> Check:
    compiled = _compile(pattern)
    find = compiled.fullmatch if full else compiled.search
    how = "matches all of" if full else "has a match for"

    def evaluate(run: Run) -> CheckResult:
        answer = _answer(run)
        found = find(answer)
        details: dict[str, object] = {"matched": found is not None}
        if found is not None:
            details["match"] = found.group()[:200]
            reason = f"the answer {how} /{compiled.pattern}/ ({excerpt(found.group(), 60)})"
        else:
            negated = "does not match all of" if full else "has no match for"
            reason = f"the answer {negated} /{compiled.pattern}/"
        return CheckResult(
            "matches",
            passed=found is not None,
            reason=reason,
            details=details,
            evidence=f"answer: {excerpt(answer)}",
        )

    return Check("matches", f"The answer {how} /{compiled.pattern}/", evaluate, text_input=True)


def matches(
    run: RunLike | str, pattern: str | re.Pattern[str], *, full: bool = False
) -> CheckResult:
    """Check that the answer matches a regular expression (``re.search``, or
    ``re.fullmatch`` with ``full=True``).

    Pass a compiled pattern for flags: ``re.compile("refund", re.IGNORECASE)``.

    Raises:
        ValueError: The pattern is empty or not a valid regular expression.

    Example:
        >>> bool(matches("It is 21°C in Paris.", r"\\d+°[CF]"))
        True
        >>> bool(matches("It is 21°C in Paris.", r"\\d+°[CF]", full=True))
        False
    """
    return _matches_check(pattern, full=full)(run)


def matches_scorer(
    pattern: str | re.Pattern[str], *, full: bool = False, id: str = "matches"
) -> Scorer:
    """:func:`matches` as a scorer: 1 when the answer matches ``pattern``, else 0.

    The pattern is compiled here: an invalid one raises now, not at the first live run.
    """
    return _matches_check(pattern, full=full).scorer(id=id)


# -- similarity -------------------------------------------------------------------------------

DEFAULT_SIMILARITY_THRESHOLD = 0.8


def _similarity_check(expected: str, *, threshold: float, ignore_case: bool) -> Check:
    target = _text(expected, "the expected text")
    if isinstance(threshold, bool) or not isinstance(threshold, int | float):
        raise TypeError(f"threshold must be a number from 0 to 1, not {threshold!r}")
    if not math.isfinite(threshold) or not 0 <= threshold <= 1:
        raise ValueError(f"threshold must be from 0 to 1, not {threshold!r}")
    compared = target.lower() if ignore_case else target

    def evaluate(run: Run) -> CheckResult:
        answer = _answer(run)
        value = dice_similarity(answer.lower() if ignore_case else answer, compared)
        passed = value >= threshold
        relation = "at least" if passed else "below"
        return CheckResult(
            "similarity",
            passed=passed,
            reason=(
                f"the answer's similarity to {excerpt(target, 60)} is {value:.2f}, {relation} "
                f"the threshold {threshold:g}"
            ),
            details={"similarity": value, "threshold": threshold},
            evidence=f"answer: {excerpt(answer)}",
        )

    return Check(
        "similarity",
        f"The answer's bigram similarity to {excerpt(target, 60)} is at least {threshold:g}",
        evaluate,
        text_input=True,
    )


def similarity(
    run: RunLike | str,
    expected: str,
    *,
    threshold: float = DEFAULT_SIMILARITY_THRESHOLD,
    ignore_case: bool = True,
) -> CheckResult:
    """Check that the answer is close to ``expected``: character bigram (Dice) similarity at
    least ``threshold`` (default 0.8).

    The similarity is Mastra's ``checks.similarity`` value (``string-similarity``'s
    ``compareTwoStrings``: whitespace ignored); ``details["similarity"]`` has it. Mastra's
    check returns the raw similarity when no threshold is given; for that, use
    :func:`livescore.scorers.create_content_similarity_scorer`.

    Raises:
        ValueError: ``expected`` is empty or ``threshold`` is outside 0 to 1.

    Example:
        >>> result = similarity("Sunny, 72°F", "sunny 72 °F")
        >>> bool(result), round(result.details["similarity"], 2)
        (True, 0.82)
    """
    return _similarity_check(expected, threshold=threshold, ignore_case=ignore_case)(run)


def similarity_scorer(
    expected: str,
    *,
    threshold: float = DEFAULT_SIMILARITY_THRESHOLD,
    ignore_case: bool = True,
    id: str = "similarity",
) -> Scorer:
    """:func:`similarity` as a scorer: 1 when the similarity reaches ``threshold``, else 0."""
    return _similarity_check(expected, threshold=threshold, ignore_case=ignore_case).scorer(id=id)


# -- in the scorer catalog (`livescore eval --scorer includes:refund`) -------------------------
# The argument is part of the id: `--scorer includes:refund --scorer includes:sorry` are two
# scorers, with two names on their spans and in the summary.


def _text_argument(name: str, argument: str | None) -> tuple[str, str]:
    assert argument is not None  # argument_required
    return argument, f"{name}:{argument}"


@catalog_entry(
    "includes",
    family="checks",
    summary="check: 1 when the answer contains TEXT (case ignored)",
    argument="TEXT: what to look for",
    argument_required=True,
    factory="livescore.checks.includes_scorer",
    examples=("includes:refund",),
)
def _build_includes(argument: str | None, options: ScorerOptions) -> Scorer:
    text, id = _text_argument("includes", argument)
    return includes_scorer(text, id=id)


@catalog_entry(
    "excludes",
    family="checks",
    summary="check: 1 when the answer does not contain TEXT (case ignored)",
    argument="TEXT: what to avoid",
    argument_required=True,
    factory="livescore.checks.excludes_scorer",
    examples=("excludes:sorry",),
)
def _build_excludes(argument: str | None, options: ScorerOptions) -> Scorer:
    text, id = _text_argument("excludes", argument)
    return excludes_scorer(text, id=id)


@catalog_entry(
    "equals",
    family="checks",
    summary="check: 1 when the answer equals TEXT (case and spacing ignored)",
    argument="TEXT: the answer",
    argument_required=True,
    factory="livescore.checks.equals_scorer",
    examples=("equals:30 days",),
)
def _build_equals(argument: str | None, options: ScorerOptions) -> Scorer:
    text, id = _text_argument("equals", argument)
    return equals_scorer(text, id=id)


@catalog_entry(
    "matches",
    family="checks",
    summary="check: 1 when the answer matches REGEX",
    argument="REGEX: all after the first ':'",
    argument_required=True,
    factory="livescore.checks.matches_scorer",
    examples=("matches:\\d+ days",),
)
def _build_matches(argument: str | None, options: ScorerOptions) -> Scorer:
    text, id = _text_argument("matches", argument)
    return matches_scorer(text, id=id)


@catalog_entry(
    "similarity",
    family="checks",
    summary="check: 1 when the answer is at least 0.8 similar to TEXT",
    argument="TEXT: the reference",
    argument_required=True,
    factory="livescore.checks.similarity_scorer",
    examples=("similarity:refund in 30 days",),
)
def _build_similarity(argument: str | None, options: ScorerOptions) -> Scorer:
    text, id = _text_argument("similarity", argument)
    return similarity_scorer(text, id=id)
