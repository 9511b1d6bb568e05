"""The textual difference scorer: Mastra's ratio (2·LCS / total length), word changes."""

from __future__ import annotations

import difflib
import random
from typing import Any

import pytest

from livescore.scorers import create_textual_difference_scorer
from livescore.scorers._textual_difference import sequence_ratio


def lcs_table(first: str, second: str) -> int:
    """The textbook O(n·m) LCS (what Mastra computes), to check the fast one against."""
    previous = [0] * (len(second) + 1)
    for a in first:
        current = [0]
        for j, b in enumerate(second):
            current.append(previous[j] + 1 if a == b else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


def score(run: dict[str, Any], **options: Any) -> Any:
    return create_textual_difference_scorer(**options).run_sync(run)


def test_ratio_matches_the_lcs_definition_on_random_texts() -> None:
    rng = random.Random(7)
    for _ in range(200):
        first = "".join(rng.choice("abc d") for _ in range(rng.randrange(1, 40)))
        second = "".join(rng.choice("abc d") for _ in range(rng.randrange(1, 40)))
        expected = (
            1.0 if first == second else 2 * lcs_table(first, second) / (len(first) + len(second))
        )
        assert sequence_ratio(first, second) == expected


def test_ratio_edge_cases() -> None:
    assert sequence_ratio("", "") == 1.0
    assert sequence_ratio("abc", "") == 0.0
    assert sequence_ratio("", "abc") == 0.0
    assert sequence_ratio("abc", "abc") == 1.0
    assert sequence_ratio("abc", "xyz") == 0.0
    # difflib's ratio is the same formula on its own (approximate) matching blocks.
    assert sequence_ratio("kitten", "sitting") == pytest.approx(
        difflib.SequenceMatcher(None, "kitten", "sitting").ratio()
    )


def test_emoji_count_as_two_units_like_javascript() -> None:
    # "😀" and "😃" share their high surrogate: JavaScript's LCS is 1 of 2 + 2 units.
    assert sequence_ratio("😀", "😃") == 0.5
    assert sequence_ratio("a😀", "a😀") == 1.0


def test_seed_style_example_with_word_changes() -> None:
    result = score(
        {
            "input": "Summarise the policy.",
            "output": "Returns are free within 30 days.",
            "ground_truth": "Returns are free within 14 days.",
        }
    )
    assert result.score == pytest.approx(2 * 30 / 64)
    assert result.label == "high"
    assert result.preprocess_step_result["reference"] == "ground truth"
    analysis = result.analyze_step_result
    assert analysis["changes"] == 1
    assert analysis["words_added"] == ["30"]
    assert analysis["words_removed"] == ["14"]
    assert analysis["length_difference"] == 0.0
    assert result.reason == (
        "The answer keeps 94% of the ground truth's text in order (ratio 0.94); words "
        "differ in 1 place (1 added, 1 removed); lengths differ by 0%."
    )


def test_identical_texts() -> None:
    result = score({"input": "Hello there", "output": "Hello there"})
    assert result.score == 1.0
    assert result.label == "identical"
    assert result.reason == "The answer is the same text as the input."


def test_whitespace_only_change_is_not_identical() -> None:
    result = score({"input": "Hello  there", "output": "Hello there"})
    assert 0.9 < result.score < 1
    assert result.analyze_step_result["changes"] == 0  # the same words


def test_completely_different_and_empty() -> None:
    different = score({"input": "abc", "output": "xyz"})
    assert different.score == 0.0
    assert different.label == "none"
    empty = score({"input": "Something", "output": ""})
    assert empty.score == 0.0
    assert empty.analyze_step_result["words_removed"] == ["Something"]
    assert empty.analyze_step_result["length_difference"] == 1.0


def test_length_difference_and_several_changes() -> None:
    result = score({"input": "one two three four", "output": "one 2 three four five six"})
    analysis = result.analyze_step_result
    assert analysis["changes"] == 2
    assert analysis["words_added"] == ["2", "five", "six"]
    assert analysis["words_removed"] == ["two"]
    assert analysis["length_difference"] == pytest.approx((25 - 18) / 25)


def test_long_texts_stay_fast_and_exact() -> None:
    # 20,000 characters each: a table would hold 400 million cells.
    rng = random.Random(3)
    words = ["parcel", "depot", "Lyon", "Monday", "refund", "locker", "the", "is", "in"]
    first = " ".join(rng.choice(words) for _ in range(3300))[:20_000]
    second = " ".join(rng.choice(words) for _ in range(3300))[:20_000]
    result = score({"input": first, "output": second})
    assert 0.5 < result.score < 1
    # Same value as the exact ratio on a prefix-sized check of the definition.
    assert (
        sequence_ratio(first[:300], second[:300]) == 2 * lcs_table(first[:300], second[:300]) / 600
    )


def test_bad_options_fail_at_construction() -> None:
    with pytest.raises(ValueError, match="reference must be"):
        create_textual_difference_scorer(reference="both")  # type: ignore[arg-type]
