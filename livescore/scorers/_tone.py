"""The tone scorer: does the answer keep one tone, or match a reference one (VADER, no judge)."""

from __future__ import annotations

import functools
import math
import re
import string
from dataclasses import dataclass
from itertools import repeat
from typing import Any

from livescore._catalog import ScorerOptions, catalog_entry
from livescore._text import DEFAULT_MAX_TEXT_CHARS
from livescore.pii import RedactSpec
from livescore.scorers._text import code_scorer
from livescore.scoring import CalibrationSpec, NotScorable, Scorer, StepContext

__all__ = (
    "TONE_CONSISTENCY_LABELS",
    "TONE_MATCH_LABELS",
    "create_tone_scorer",
    "sentence_tones",
    "text_tone",
)

TONE_CONSISTENCY_LABELS = ("inconsistent", "mixed", "consistent")
"""Labels without a reference tone, from worst to best: spread ≥ 0.5, ≥ 0.2, below 0.2."""

TONE_MATCH_LABELS = ("different", "close", "match")
"""Labels with a reference tone, from worst to best: tones differ by more than 0.5, by more
than 0.2, by at most 0.2."""

# Sentences end at . ! ? followed by whitespace, and at line breaks ("3.5 days" stays whole).
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\s*\n\s*")
_MAX_SENTENCE_WORDS = 100


@functools.cache
def _analyzer() -> Any:
    # Built on first use, once per process (about 10 ms: it reads VADER's lexicon).
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    return SentimentIntensityAnalyzer()


@functools.lru_cache(maxsize=4096)
def _sentence_tone(sentence: str) -> float:
    # Production answers repeat their stock sentences ("Let me know if you need anything
    # else."): a cached sentence costs one lookup.
    analyzer = _analyzer()
    lexicon = analyzer.lexicon
    words = sentence.lower().split()
    # VADER scores only words of its lexicon (a word as written, or stripped of punctuation)
    # and emoji (never ASCII): a sentence with neither is 0.0 exactly, without VADER's rules.
    if (
        sentence.isascii()
        and lexicon.keys().isdisjoint(words)
        and lexicon.keys().isdisjoint(map(str.strip, words, repeat(string.punctuation)))
    ):
        return 0.0
    return float(analyzer.polarity_scores(sentence)["compound"])


def sentence_tones(text: str) -> list[float]:
    """The VADER compound tone of each sentence of ``text``, from -1 (very negative) to 1.

    Sentences end at ``.``, ``!`` or ``?`` followed by whitespace, and at line breaks. A
    sentence longer than 100 words is read in 100-word pieces: VADER's rules look a few words
    back, and its cost grows with the square of a sentence's length.

    Example:
        >>> sentence_tones("Thanks, this is great! The parcel left Lyon today.")
        [0.807, 0.0]
    """
    tones: list[float] = []
    for sentence in _SENTENCE_END.split(text):
        words = sentence.split()
        if len(words) > _MAX_SENTENCE_WORDS:
            for start in range(0, len(words), _MAX_SENTENCE_WORDS):
                tones.append(_sentence_tone(" ".join(words[start : start + _MAX_SENTENCE_WORDS])))
        elif words:
            tones.append(_sentence_tone(sentence.strip()))
    return tones


def text_tone(text: str) -> float:
    """The tone of a text: the mean VADER compound tone of its sentences (0.0 for no text).

    Averaging per sentence is how VADER's authors recommend reading paragraphs.

    Example:
        >>> round(text_tone("I am so sorry about the delay. We will fix it today."), 4)
        -0.2331
    """
    tones = sentence_tones(text)
    return sum(tones) / len(tones) if tones else 0.0


def _polarity(tone: float) -> str:
    # VADER's own thresholds for a text's overall polarity.
    return "positive" if tone >= 0.05 else "negative" if tone <= -0.05 else "neutral"


def create_tone_scorer(
    reference_tone: str | float | None = None,
    *,
    id: str = "tone",
    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
    redact: RedactSpec | None = None,
    calibration: CalibrationSpec | None = None,
) -> Scorer:
    """Score the tone of the answer: steady across its sentences, or close to a reference.

    Tone is VADER's compound sentiment, from -1 (very negative) to 1 (very positive), read
    sentence by sentence (:func:`sentence_tones`). Without a reference the score is 1 − the
    standard deviation of the sentences' tones; with one, 1 − |answer tone − reference tone|
    / 2, a text's tone being the mean of its sentences'. An empty answer is not scorable.

    Args:
        reference_tone: ``None`` (consistency), a text whose tone is the target, or a number
            from -1 to 1.

    The other arguments are those of :func:`~livescore.scoring.create_scorer`.

    Returns:
        A scorer whose ``preprocess_step_result`` holds the sentences' tones (the first 50) and
        the answer's tone and polarity, and ``analyze_step_result`` the ``"spread"`` or the
        ``"difference"`` from the reference.

    Example:
        >>> steady = create_tone_scorer()
        >>> result = steady.run_sync({"input": "Status?", "output": "Your order shipped. "
        ...                           "It arrives on Monday."})
        >>> result.score, result.label
        (1.0, 'consistent')
        >>> friendly = create_tone_scorer("Happy to help, thanks for your patience!")
        >>> result = friendly.run_sync({"input": "Status?", "output": "Figure it out."})
        >>> round(result.score, 2), result.label
        (0.57, 'different')
    """
    steps = _Tone(_reference(reference_tone))
    return code_scorer(
        steps, id=id, max_text_chars=max_text_chars, redact=redact, calibration=calibration
    )


@dataclass(frozen=True, slots=True)
class _Tone:
    target: float | None  # the reference tone; None scores consistency

    @property
    def description(self) -> str:
        if self.target is not None:
            return "Tone (VADER sentiment) consistency against a reference tone"
        return "Tone (VADER sentiment) consistency across the answer's sentences"

    def preprocess(self, ctx: StepContext) -> dict[str, Any]:
        tones = sentence_tones(ctx.output_text)
        if not tones:
            raise NotScorable("the answer is empty: it has no tone to score")
        ctx.state["tones"] = tones
        tone = sum(tones) / len(tones)
        result: dict[str, Any] = {
            "sentence_tones": tones[:50],  # the first 50
            "sentences": len(tones),
            "response_tone": tone,
            "response_polarity": _polarity(tone),
        }
        if self.target is not None:
            result["reference_tone"] = self.target
        return result

    def analyze(self, ctx: StepContext) -> dict[str, Any]:
        mean: float = ctx.preprocess_step_result["response_tone"]
        if self.target is not None:
            return {"mode": "reference", "difference": abs(mean - self.target)}
        values: list[float] = ctx.state["tones"]
        spread = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
        return {"mode": "consistency", "spread": spread}

    def generate_score(self, ctx: StepContext) -> float:
        analysis = ctx.analyze_step_result
        if self.target is not None:
            return max(0.0, 1.0 - float(analysis["difference"]) / 2)
        return max(0.0, 1.0 - float(analysis["spread"]))

    def generate_reason(self, ctx: StepContext) -> str:
        pre, analysis = ctx.preprocess_step_result, ctx.analyze_step_result
        tone = f"{pre['response_polarity']} ({pre['response_tone']:+.2f})"
        if self.target is not None:
            return (
                f"The answer's tone is {tone}; the reference tone is {_polarity(self.target)} "
                f"({self.target:+.2f}): they differ by {analysis['difference']:.2f} on VADER's "
                "-1 to 1 scale."
            )
        count = pre["sentences"]
        if count == 1:
            return f"One sentence, so one tone: {tone}."
        tones: list[float] = ctx.state["tones"]
        return (
            f"{count} sentences, tones from {min(tones):+.2f} to {max(tones):+.2f} (overall "
            f"{tone}); their spread (standard deviation) is {analysis['spread']:.2f}."
        )

    def label(self, score: float) -> str:
        if self.target is not None:
            return "match" if score >= 0.9 else "close" if score >= 0.75 else "different"
        return "consistent" if score >= 0.8 else "mixed" if score >= 0.5 else "inconsistent"


def _reference(reference_tone: object) -> float | None:
    if reference_tone is None:
        return None
    if isinstance(reference_tone, bool) or not isinstance(reference_tone, str | int | float):
        raise TypeError(
            "reference_tone must be a text, a number from -1 to 1 or None, "
            f"not {type(reference_tone).__name__}"
        )
    if isinstance(reference_tone, str):
        if not reference_tone.strip():
            raise ValueError("reference_tone is empty: give a text whose tone is the target")
        return text_tone(reference_tone)
    value = float(reference_tone)
    if not math.isfinite(value) or not -1 <= value <= 1:
        raise ValueError(f"a numeric reference_tone must be from -1 to 1, not {reference_tone!r}")
    return value


# -- in the catalog ---------------------------------------------------------------------------


@catalog_entry(
    "tone",
    family="text",
    summary="tone consistency across the answer's sentences, or against a reference tone (VADER)",
    argument="TONE: a reference text, or a number from -1 to 1",
    factory="livescore.scorers.create_tone_scorer",
    examples=("tone", "tone:0.5", "tone:What a lovely day."),
)
def _build(argument: str | None, options: ScorerOptions) -> Scorer:
    reference: str | float | None = argument
    if argument is not None:
        try:
            reference = float(argument)
        except ValueError:
            reference = argument  # a reference text
    return create_tone_scorer(reference)
