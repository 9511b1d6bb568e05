"""The tone scorer: VADER per sentence, consistency and reference modes, bad input."""

from __future__ import annotations

import math
from typing import Any

import pytest
from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

from livescore.scorers import create_tone_scorer
from livescore.scorers._tone import (
    TONE_CONSISTENCY_LABELS,
    TONE_MATCH_LABELS,
    sentence_tones,
    text_tone,
)

VADER = SentimentIntensityAnalyzer()


def vader(sentence: str) -> float:
    return float(VADER.polarity_scores(sentence)["compound"])


def score(output: str, reference_tone: Any = None) -> Any:
    return create_tone_scorer(reference_tone).run_sync({"input": "Status?", "output": output})


@pytest.mark.parametrize(
    "sentence",
    [
        "The parcel left Lyon today.",  # no lexicon word: the fast path
        "Thanks, this is GREAT!!",
        "This is not good at all.",
        "The service was okay, but the staff were rude.",
        "I love it :)",
        "Kind of meh 😕",
        "The   parcel  left.",
    ],
)
def test_each_sentence_gets_vaders_own_compound(sentence: str) -> None:
    assert sentence_tones(sentence) == [vader(sentence.strip())]


def test_sentences_split_at_end_marks_and_line_breaks() -> None:
    text = "Thanks, this is great! The parcel ships in 3.5 days.\nSorry for the wait"
    assert sentence_tones(text) == [
        vader("Thanks, this is great!"),
        vader("The parcel ships in 3.5 days."),
        vader("Sorry for the wait"),
    ]


def test_very_long_sentences_are_read_in_pieces() -> None:
    words = ["good"] * 250
    tones = sentence_tones(" ".join(words))
    assert len(tones) == 3  # 100 + 100 + 50 words


def test_consistent_answer() -> None:
    result = score("Your order shipped. It arrives on Monday.")
    assert result.score == 1.0
    assert result.label == "consistent"
    assert result.preprocess_step_result["sentences"] == 2
    assert result.preprocess_step_result["response_polarity"] == "neutral"


def test_mixed_tone_lowers_the_score_by_the_spread() -> None:
    output = "Great news! Sadly your refund was refused."
    tones = [vader("Great news!"), vader("Sadly your refund was refused.")]
    mean = sum(tones) / 2
    spread = math.sqrt(sum((t - mean) ** 2 for t in tones) / 2)
    result = score(output)
    assert result.score == pytest.approx(1 - spread)
    assert result.label == "inconsistent"
    assert result.analyze_step_result == {"mode": "consistency", "spread": pytest.approx(spread)}
    assert "2 sentences, tones from -0.61 to +0.66" in (result.reason or "")


def test_one_sentence_is_consistent() -> None:
    result = score("I am furious about this!")
    assert result.score == 1.0
    assert result.reason is not None
    assert result.reason.startswith("One sentence")


def test_empty_answer_is_not_scorable() -> None:
    result = score("   ")
    assert result.status == "skipped"
    assert "no tone" in (result.reason or "")


def test_reference_text_mode() -> None:
    reference = "Happy to help, thanks for your patience!"
    result = score("Figure it out.", reference)
    target = text_tone(reference)
    answer = text_tone("Figure it out.")
    assert result.score == pytest.approx(1 - abs(answer - target) / 2)
    assert result.preprocess_step_result["reference_tone"] == pytest.approx(target)
    assert result.analyze_step_result["mode"] == "reference"
    assert result.label == "different"
    friendly = score("Glad to help! Thanks for waiting.", reference)
    assert friendly.score > result.score
    assert friendly.label in ("match", "close")


def test_numeric_reference_tone() -> None:
    assert score("The parcel left Lyon.", 0.0).score == 1.0
    assert score("The parcel left Lyon.", 1).score == 0.5
    assert score("The parcel left Lyon.", 0.1).label == "match"


def test_labels_are_the_documented_ones() -> None:
    assert TONE_CONSISTENCY_LABELS == ("inconsistent", "mixed", "consistent")
    assert TONE_MATCH_LABELS == ("different", "close", "match")


@pytest.mark.parametrize(
    ("reference", "error", "message"),
    [
        ("", ValueError, "empty"),
        ("   ", ValueError, "empty"),
        (1.5, ValueError, "from -1 to 1"),
        (float("nan"), ValueError, "from -1 to 1"),
        (True, TypeError, "must be a text"),
        (["happy"], TypeError, "must be a text"),
    ],
)
def test_bad_reference_fails_at_construction(reference: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        create_tone_scorer(reference)
