"""The completeness scorer: keywords, names and numbers of the input found in the answer."""

from __future__ import annotations

from typing import Any

import pytest

from livescore.scorers import create_completeness_scorer
from livescore.scorers._completeness import COMPLETENESS_LABELS, extract_elements


def score(run: dict[str, Any], **options: Any) -> Any:
    return create_completeness_scorer(**options).run_sync(run)


def test_seed_style_example_lists_what_is_missing() -> None:
    result = score(
        {
            "input": "Compare the 2023 and 2024 revenue of Acme Corp in New Zealand.",
            "output": "Acme Corp earned more in New Zealand in 2024 than before.",
        }
    )
    assert result.preprocess_step_result["reference_elements"] == [
        "acme corp",
        "new zealand",
        "compare",
        "revenue",
        "2023",
        "2024",
    ]
    assert result.analyze_step_result == {
        "total_elements": 6,
        "covered_elements": 3,
        "missing_elements": ["compare", "revenue", "2023"],
    }
    assert result.score == 0.5
    assert result.label == "partial"
    assert result.reason == "Covered 3 of 6 elements of the input; missing: compare, revenue, 2023."


def test_word_forms_are_matched_by_stem() -> None:
    result = score(
        {
            "input": "Which shipping options include tracking?",
            "output": "Every option we ship includes tracked delivery.",
        }
    )
    assert result.score == 1.0
    assert result.label == "complete"
    assert result.reason == "Covered all 4 elements of the input."


def test_names_are_matched_whole() -> None:
    question = {"input": "What did Steve Jobs announce?"}
    assert score({**question, "output": "Steve Jobs announced the iPhone."}).score == 1.0
    split = score({**question, "output": "Steve announced that Jobs would follow."})
    assert split.analyze_step_result["missing_elements"] == ["steve jobs"]
    assert split.score == 0.5
    possessive = score({**question, "output": "Steve Jobs's keynote announced it."})
    assert possessive.score == 1.0


def test_numbers_are_matched_exactly_after_normalising() -> None:
    question = {"input": "Is the 1,250 EUR fee refunded within 30 days?"}
    assert score({**question, "output": "Yes: the 1250 EUR fee is refunded in 30 days."}).score == 1
    wrong = score({**question, "output": "Yes: the 1250 EUR fee is refunded in 3 days."})
    assert wrong.analyze_step_result["missing_elements"] == ["30"]


def test_elements_rules() -> None:
    elements = extract_elements(
        "Ask Steve Jobs about GPT-4 and x86_64 in 3.50 USD, 1,250 units, 2024-01-15, 3-5 days."
    )
    assert elements.names == ("steve jobs",)
    assert elements.numbers == ("3.5", "1250", "2024-01-15", "3-5")
    assert "gpt-4" in elements.forms
    assert "x86_64" in elements.forms
    # Titles say nothing through their capitals.
    assert extract_elements("How Do I Reset My Password").names == ()
    # A sentence's first word is not part of a name when it is a stopword.
    assert extract_elements("The Hague is in Holland. I met The Hague envoy.").names == (
        "the hague",
    )


def test_ground_truth_reference() -> None:
    run = {
        "input": "Tell me about the first iPhone.",
        "output": "Steve Jobs presented it in 2007.",
        "ground_truth": "Steve Jobs presented the iPhone in January 2007.",
    }
    result = score(run, reference="ground_truth")
    assert result.analyze_step_result["missing_elements"] == ["iphone", "january"]
    assert "of the ground truth" in (result.reason or "")
    skipped = score({"input": "a question", "output": "x"}, reference="ground_truth")
    assert skipped.status == "skipped"


def test_nothing_to_cover_is_not_scorable() -> None:
    for question in ("", "Hi!", "What is it about?"):
        result = score({"input": question, "output": "Hello! How can I help you today?"})
        assert result.status == "skipped", question
        assert "nothing to cover" in (result.reason or "")


def test_empty_answer_covers_nothing() -> None:
    result = score({"input": "Where is my parcel?", "output": ""})
    assert result.score == 0.0
    assert result.label == "none"


def test_labels_and_bad_options() -> None:
    assert COMPLETENESS_LABELS == ("none", "low", "partial", "high", "complete")
    with pytest.raises(ValueError, match="reference must be"):
        create_completeness_scorer(reference="auto")  # type: ignore[arg-type]
