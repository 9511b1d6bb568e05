"""The content similarity scorer and dice_similarity: Mastra's values, options, references."""

from __future__ import annotations

from typing import Any

import pytest

from livescore import Run
from livescore._text import dice_similarity
from livescore.scorers import create_content_similarity_scorer
from livescore.scorers._content_similarity import SIMILARITY_LABELS, similarity_label

# Values computed by string-similarity 4.0.4's compareTwoStrings under Node.js (the package
# Mastra's content similarity scorer calls), for the same strings.
STRING_SIMILARITY_VALUES = [
    ("the parcel is at the lyon depot.", "your parcel is in the lyon depot.", 0.7450980392156863),
    ("night", "nacht", 0.25),
    ("ok 👍 great 😀", "ok 👍 grand 😃", 0.5),  # emoji are two UTF-16 units in JavaScript
    ("a\u00a0b\ufeffc", "abc x", 0.8),  # JavaScript's \s: no-break space and BOM removed
    ("x\x1cy", "xy", 0.0),  # \x1c is whitespace to Python, not to JavaScript
    ("", "a", 0.0),
    ("aa", "aaa", 0.6666666666666666),
]


def score(run: dict[str, Any], **options: Any) -> Any:
    return create_content_similarity_scorer(**options).run_sync(run)


@pytest.mark.parametrize(("first", "second", "expected"), STRING_SIMILARITY_VALUES)
def test_dice_similarity_gives_string_similarity_values(
    first: str, second: str, expected: float
) -> None:
    assert dice_similarity(first, second) == expected


def test_dice_similarity_edge_cases() -> None:
    assert dice_similarity("", "") == 1.0  # identical, even when empty
    assert dice_similarity("a", "a") == 1.0
    assert dice_similarity("a", "b") == 0.0  # one character has no bigram
    assert dice_similarity("  ", "\n") == 1.0  # both empty once whitespace is gone
    # Bigrams are a multiset: "aaaa" has three "aa", "aa" has one.
    assert dice_similarity("aaaa", "aa") == pytest.approx(2 * 1 / (4 + 2 - 2))
    assert dice_similarity("ice cream", "icecream", ignore_whitespace=False) < 1


def test_reference_is_the_ground_truth_when_the_run_has_one() -> None:
    result = score(
        {
            "input": "Where is my parcel?",
            "output": "Your parcel is in the Lyon depot.",
            "ground_truth": "The parcel is at the Lyon depot.",
        }
    )
    assert result.score == STRING_SIMILARITY_VALUES[0][2]
    assert result.preprocess_step_result["reference"] == "ground truth"
    assert result.reason == (
        "Character bigram similarity to the ground truth: 0.75 (case and whitespace ignored)."
    )
    assert result.label == "moderate"


def test_without_ground_truth_the_input_is_the_reference() -> None:
    result = score({"input": "Night", "output": "nacht"})
    assert result.score == 0.25
    assert result.preprocess_step_result["reference"] == "input"


def test_reference_input_ignores_the_ground_truth() -> None:
    run = {"input": "night", "output": "nacht", "ground_truth": "nacht"}
    assert score(run, reference="input").score == 0.25
    assert score(run).score == 1.0


def test_reference_ground_truth_skips_a_run_without_one() -> None:
    result = score({"input": "a", "output": "b"}, reference="ground_truth")
    assert result.status == "skipped"
    assert "no ground truth" in (result.reason or "")


def test_case_option() -> None:
    run = {"input": "HELLO WORLD", "output": "hello world"}
    assert score(run).score == 1.0
    assert score(run, ignore_case=False).score == 0.0


def test_whitespace_option_is_honoured() -> None:
    run = {"input": "ice cream", "output": "icecream"}
    assert score(run).score == 1.0  # Mastra's value: whitespace never counts there
    kept = score(run, ignore_whitespace=False)
    assert kept.score == pytest.approx(2 * 6 / (9 + 8 - 2))
    assert "(case ignored)" in (kept.reason or "")


def test_identical_and_empty_texts() -> None:
    assert score({"input": "Same text.", "output": "same   text."}).label == "identical"
    assert score({"input": "", "output": ""}).score == 1.0
    empty_answer = score({"input": "Where is it?", "output": ""})
    assert empty_answer.score == 0.0
    assert empty_answer.label == "none"


def test_message_lists_and_runs() -> None:
    run = Run(
        input=[{"role": "user", "content": "night"}],
        output=[{"role": "assistant", "content": "nacht"}],
    )
    assert score(run.to_dict()).score == 0.25


def test_labels() -> None:
    assert [similarity_label(s) for s in (0, 0.3, 0.5, 0.79, 0.8, 1)] == [
        "none",
        "low",
        "moderate",
        "moderate",
        "high",
        "identical",
    ]
    assert set(SIMILARITY_LABELS) == {"none", "low", "moderate", "high", "identical"}


def test_bad_options_fail_at_construction() -> None:
    with pytest.raises(ValueError, match="reference must be"):
        create_content_similarity_scorer(reference="output")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_text_chars"):
        create_content_similarity_scorer(max_text_chars=0)


def test_long_texts_are_truncated_and_flagged() -> None:
    result = score({"input": "a" * 30, "output": "a" * 100}, max_text_chars=40)
    assert result.flags["output_truncated"] is True
    assert result.preprocess_step_result["response_chars"] == 40
