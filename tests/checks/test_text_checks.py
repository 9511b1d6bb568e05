"""Checks of the answer's text: both forms (assertion helper and scorer), options, bad input."""

from __future__ import annotations

import re
from typing import Any

import pytest

from livescore import Run, checks
from livescore._text import dice_similarity
from livescore.checks import CheckResult

RUN = Run(input="Where is my refund?", output="Your REFUND was sent on Monday.\n")


def test_includes() -> None:
    result = checks.includes(RUN, "refund")
    assert isinstance(result, CheckResult)
    assert result
    assert result.reason == "the answer contains 'refund' (case ignored)"
    assert not checks.includes(RUN, "refund", ignore_case=False)
    assert not checks.includes(RUN, "parcel")


def test_excludes() -> None:
    assert checks.excludes(RUN, "error")
    result = checks.excludes(RUN, "Refund")
    assert not result
    assert repr(result) == (
        "<excludes FAILED: the answer contains 'Refund' (case ignored); "
        "answer: 'Your REFUND was sent on Monday.'>"
    )


def test_equals() -> None:
    assert checks.equals(RUN, "your refund was sent on monday.")
    assert not checks.equals(RUN, "your refund was sent on monday.", ignore_case=False)
    assert not checks.equals(RUN, "Your REFUND was sent on Monday.", ignore_whitespace=False)
    assert checks.equals(RUN, "Your   REFUND was sent on Monday.")
    assert not checks.equals(RUN, "Your REFUND was sent")
    assert checks.equals(Run(input="x", output=""), "")  # an empty answer can be expected


def test_matches() -> None:
    assert checks.matches(RUN, r"\bMonday\b")
    assert not checks.matches(RUN, r"^Monday")
    assert checks.matches(RUN, re.compile(r"refund", re.IGNORECASE))
    assert not checks.matches(RUN, r"refund")  # case counts in a plain pattern
    assert checks.matches(RUN, r"Your .* Monday\.\s*", full=True)
    assert not checks.matches(RUN, r"Your .* Monday", full=True)
    result = checks.matches(RUN, r"\d+")
    assert not result
    assert result.reason == r"the answer has no match for /\d+/"
    found = checks.matches("Order 1234 ships.", r"\d+")
    assert found.details == {"matched": True, "match": "1234"}


def test_similarity() -> None:
    result = checks.similarity(RUN, "your refund was sent monday")
    expected = dice_similarity(RUN.output.lower(), "your refund was sent monday")
    assert result.details["similarity"] == expected
    assert bool(result) == (expected >= 0.8)
    assert not checks.similarity(RUN, "the parcel is lost")
    assert checks.similarity(RUN, "the parcel is lost", threshold=0)
    assert "below the threshold 0.8" in checks.similarity(RUN, "lost").reason


def test_a_plain_string_is_the_answer() -> None:
    assert checks.includes("The parcel left.", "parcel")
    assert checks.matches("42", r"^\d+$")


def test_message_lists_and_mappings() -> None:
    run = {
        "input": [{"role": "user", "content": "hi"}],
        "output": [{"role": "assistant", "content": "Hello, refund sent."}],
    }
    assert checks.includes(run, "refund")


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda: checks.includes_scorer(""), ValueError, "empty"),
        (lambda: checks.excludes_scorer(""), ValueError, "empty"),
        (lambda: checks.includes_scorer(3), TypeError, "must be a string"),  # type: ignore[arg-type]
        (lambda: checks.equals_scorer(None), TypeError, "must be a string"),  # type: ignore[arg-type]
        (lambda: checks.matches_scorer("(unclosed"), ValueError, "invalid regular expression"),
        (lambda: checks.matches_scorer(""), ValueError, "empty"),
        (lambda: checks.matches_scorer(re.compile(b"x")), TypeError, "bytes"),
        (lambda: checks.similarity_scorer("x", threshold=1.5), ValueError, "from 0 to 1"),
        (lambda: checks.similarity_scorer("x", threshold=True), TypeError, "number"),
        (lambda: checks.similarity_scorer(""), ValueError, "empty"),
        (lambda: checks.includes(RUN, ""), ValueError, "empty"),
    ],
)
def test_bad_arguments_fail_when_built(make: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        make()


@pytest.mark.parametrize(
    ("scorer", "passing", "failing"),
    [
        (checks.includes_scorer("refund"), "Refund sent.", "Parcel sent."),
        (checks.excludes_scorer("error"), "All good.", "An ERROR occurred."),
        (checks.equals_scorer("42"), " 42 ", "43"),
        (checks.matches_scorer(r"\d{1,3}°[CF]"), "It is 21°C.", "It is warm."),
        (checks.similarity_scorer("Sunny, 72°F"), "sunny 72°F", "Rain all day"),
    ],
)
def test_scorer_form_scores_one_or_zero_with_the_reason(
    scorer: Any, passing: str, failing: str
) -> None:
    passed = scorer.run_sync({"input": "q", "output": passing})
    failed = scorer.run_sync({"input": "q", "output": failing})
    assert (passed.score, passed.label) == (1.0, "pass")
    assert (failed.score, failed.label) == (0.0, "fail")
    assert passed.reason.startswith("Passed: the answer")
    assert failed.reason.startswith("Failed: the answer")
    assert failed.preprocess_step_result["passed"] is False


def test_scorer_ids_and_custom_ids() -> None:
    ids = [
        checks.includes_scorer("a").id,
        checks.excludes_scorer("a").id,
        checks.equals_scorer("a").id,
        checks.matches_scorer("a").id,
        checks.similarity_scorer("a").id,
    ]
    assert ids == ["includes", "excludes", "equals", "matches", "similarity"]
    assert checks.includes_scorer("refund", id="mentions-refund").id == "mentions-refund"


def test_the_scorer_reads_the_whole_answer() -> None:
    # Past the scorer's text limit: a forbidden phrase at the end is still found.
    long = "ok " * 20_000 + "INTERNAL-ONLY"
    result = checks.excludes_scorer("internal-only").run_sync({"input": "q", "output": long})
    assert result.score == 0.0
