"""The completeness scorer: how much of what the input asks about the answer covers (no
judge)."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from livescore._catalog import ScorerOptions, catalog_entry, one_of
from livescore._text import DEFAULT_MAX_TEXT_CHARS
from livescore.pii import RedactSpec
from livescore.scorers._keyword_coverage import (
    KEYWORD_COVERAGE_LABELS,
    CoverageSteps,
    coverage_reason,
    keyword_coverage_label,
)
from livescore.scorers._keywords import KeywordExtractor, smart_stopwords
from livescore.scorers._text import check_reference, code_scorer, reference_text
from livescore.scoring import CalibrationSpec, NotScorable, Scorer, StepContext

__all__ = (
    "COMPLETENESS_LABELS",
    "CompletenessReference",
    "Elements",
    "create_completeness_scorer",
    "extract_elements",
)

CompletenessReference: TypeAlias = Literal["input", "ground_truth"]
"""What the answer must cover: the user's ``"input"`` or the run's ``"ground_truth"``."""

COMPLETENESS_LABELS = KEYWORD_COVERAGE_LABELS
"""Every label of a completeness score, from worst to best (the keyword coverage bands)."""

# A standalone number: 1,250.50 / 3.12 / 2024-01-15 / 3-5 / 10:30, not part of a word
# ("GPT-4", "x86_64", "v2" are terms, kept whole by the keyword extractor).
_NUMBER = re.compile(
    r"(?<![\w.\-/:])(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:[.:/\-]\d+)*)(?![\w]|[.,:/\-]\d)"
)
# Words (letters first) and clause breaks, for finding names.
_NAME_TOKEN = re.compile(r"[^\W\d_][\w'’&.\-]*[\w]|[^\W\d_]|[.!?;:,()\[\]{}\"“”|]|\n")
_SENTENCE_BREAKS = frozenset(".!?\n")
_WORD = re.compile(r"\w[\w'’&.\-]*\w|\w")


@dataclass(frozen=True, slots=True)
class Elements:
    """The elements of a text that an answer should cover.

    Attributes:
        keywords: The text's keywords (see ``KeywordExtractor``) but the words of its names:
            each keyword's key mapped to its display form.
        names: Multi-word names ("Steve Jobs", "New Zealand", "Acme Corp"), lower case.
        numbers: Standalone numbers, normalised ("1,250.50" → "1250.5").

    Example:
        >>> elements = extract_elements("Did Acme Corp refund the 1,250.50 EUR?")
        >>> elements.names, elements.numbers, len(elements)
        (('acme corp',), ('1250.5',), 4)
    """

    keywords: Mapping[str, str]
    names: tuple[str, ...]
    numbers: tuple[str, ...]

    @property
    def forms(self) -> list[str]:
        """Every element's display form: names, then keywords, then numbers."""
        return [*self.names, *self.keywords.values(), *self.numbers]

    def __len__(self) -> int:
        return len(self.names) + len(self.keywords) + len(self.numbers)


_extractor = functools.cache(KeywordExtractor)


def extract_elements(text: str) -> Elements:
    """The elements of ``text`` an answer should cover: keywords, names and numbers.

    - **Keywords**: the keyword extractor's rules (stopwords dropped; word forms matched by
      stem, so "shipping" covers "shipped"; technical terms like "React.js" and compound
      terms like "machine learning" kept whole).
    - **Names**: two or more adjacent capitalised words within a clause ("Steve Jobs", "New
      Zealand", "AWS Lambda") form one element, matched only as those words side by side.
      The first word of a sentence is left out when it is a stopword ("The", "What") or when
      the name would still have two words without it ("Ask Steve Jobs" → "steve jobs").
      Lines of four words or more, 80 % capitalised (titles), have no names.
    - **Numbers**: kept whole and compared exactly after normalising ("1,250" = "1250",
      "3.50" = "3.5"); "3" does not cover "30".

    Example:
        >>> elements = extract_elements("When did Steve Jobs present the first iPhone in 2007?")
        >>> elements.forms
        ['steve jobs', 'present', 'iphone', '2007']
    """
    extractor = _extractor()
    names = _names(text)
    name_keys = {key for name in names for key in extractor.extract(name).terms}
    terms = extractor.extract(text).terms.items()
    keywords = {key: form for key, form in terms if key not in name_keys}
    numbers = tuple(dict.fromkeys(_normalise_number(m) for m in _NUMBER.findall(text)))
    return Elements(keywords, tuple(names), numbers)


def _normalise_number(raw: str) -> str:
    raw = raw.replace(",", "")  # only "1,250"-style numbers have commas
    return raw.rstrip("0").rstrip(".") if re.fullmatch(r"\d+\.\d+", raw) else raw


def _names(text: str) -> list[str]:
    stop = smart_stopwords()
    names: dict[str, None] = {}
    for line in text.splitlines():
        tokens = _NAME_TOKEN.findall(line)
        words = [t for t in tokens if t[0].isalpha()]
        if len(words) >= 4 and sum(w[0].isupper() for w in words) >= 0.8 * len(words):
            continue  # a title or a heading: capitals say nothing there
        run: list[str] = []  # capitalised words in a row: a name when two or more
        run_starts_sentence = sentence_start = True
        for token in [*tokens, "."]:  # the "." ends the last run
            if token[0].isalpha() and token[0].isupper():
                if not run:
                    run_starts_sentence = sentence_start
                run.append(token)
            elif run:
                if name := _name_from_run(run, run_starts_sentence, stop):
                    names.setdefault(name)
                run = []
            if token[0].isalpha() or token in _SENTENCE_BREAKS:
                sentence_start = token in _SENTENCE_BREAKS
    return list(names)


def _name_from_run(run: list[str], starts_sentence: bool, stop: frozenset[str]) -> str | None:
    words = [w.lower() for w in run]
    if starts_sentence and (words[0] in stop or len(words) > 2):
        words = words[1:]
    while words and words[-1] in stop:  # "... Lyon I" → "... lyon"
        words = words[:-1]
    return " ".join(words) if len(words) >= 2 else None


def _missing(elements: Elements, answer: str) -> list[str]:
    keywords = _extractor().extract(answer)
    words = " " + " ".join(w.lower() for w in _WORD.findall(answer)) + " "
    numbers = {_normalise_number(m) for m in _NUMBER.findall(answer)}
    missing = [n for n in elements.names if f" {n} " not in words and f" {n}'s " not in words]
    missing += [form for key, form in elements.keywords.items() if not keywords.covers(key)]
    return missing + [number for number in elements.numbers if number not in numbers]


def create_completeness_scorer(
    *,
    reference: CompletenessReference = "input",
    id: str = "completeness",
    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
    redact: RedactSpec | None = None,
    calibration: CalibrationSpec | None = None,
) -> Scorer:
    """Score how much of what the input asks about the answer covers (no judge, no cost).

    The input's elements (keywords, multi-word names and numbers: see
    :func:`extract_elements`) are looked up in the answer: a keyword by its word form, a name
    only as the same words side by side, a number only as the same number. The score is
    covered / total elements, unrounded. An input with no elements (a greeting, only
    stopwords) is skipped as not scorable, where Mastra scores 1 or 0.

    Args:
        reference: ``"input"`` (the user's message) or ``"ground_truth"`` (what the expected
            answer mentions).
        max_text_chars: Input, output and ground truth beyond this are cut (and flagged).

    The other arguments are those of :func:`~livescore.scoring.create_scorer`.

    Returns:
        A scorer whose results carry ``preprocess_step_result = {"reference_elements",
        "response_elements"}`` and ``analyze_step_result = {"total_elements",
        "covered_elements", "missing_elements"}``; labels are the keyword coverage bands.

    Example:
        >>> scorer = create_completeness_scorer()
        >>> result = scorer.run_sync({
        ...     "input": "Compare the 2023 and 2024 revenue of Acme Corp in New Zealand.",
        ...     "output": "Acme Corp earned more in New Zealand in 2024 than before.",
        ... })
        >>> result.score, result.label
        (0.5, 'partial')
        >>> result.reason
        'Covered 3 of 6 elements of the input; missing: compare, revenue, 2023.'
    """
    check_reference(reference, ("input", "ground_truth"))
    steps = _Completeness(reference, max_text_chars)
    return code_scorer(
        steps, id=id, max_text_chars=max_text_chars, redact=redact, calibration=calibration
    )


@dataclass(frozen=True, slots=True)
class _Completeness(CoverageSteps):
    @property
    def description(self) -> str:
        return (
            f"Share of the {self.source}'s keywords, names and numbers the answer covers "
            "(word forms matched; names and numbers whole)"
        )

    def preprocess(self, ctx: StepContext) -> dict[str, list[str]]:
        text, _ = reference_text(ctx, self.reference, scorer="completeness", limit=self.limit)
        elements = ctx.state["elements"] = extract_elements(text)
        if not len(elements):
            raise NotScorable(
                f"the {self.source} has nothing to cover (no keywords, names or numbers: empty, "
                "a greeting, or only stopwords)"
            )
        response = extract_elements(ctx.output_text).forms
        return {"reference_elements": elements.forms, "response_elements": response}

    def analyze(self, ctx: StepContext) -> dict[str, Any]:
        elements = ctx.state["elements"]
        missing = _missing(elements, ctx.output_text)
        total = len(elements)
        covered = total - len(missing)
        return {"total_elements": total, "covered_elements": covered, "missing_elements": missing}

    def generate_score(self, ctx: StepContext) -> float:
        analysis = ctx.analyze_step_result
        return float(analysis["covered_elements"] / analysis["total_elements"])

    def generate_reason(self, ctx: StepContext) -> str:
        analysis = ctx.analyze_step_result
        covered, total = analysis["covered_elements"], analysis["total_elements"]
        return coverage_reason(covered, total, analysis["missing_elements"], "element", self.source)

    def label(self, score: float) -> str:
        return keyword_coverage_label(score)


# -- in the catalog ---------------------------------------------------------------------------


@catalog_entry(
    "completeness",
    family="text",
    summary="share of what the reference asks about (keywords, names, numbers) the answer covers",
    argument="REFERENCE: input (default) or ground_truth",
    factory="livescore.scorers.create_completeness_scorer",
    examples=("completeness", "completeness:ground_truth"),
)
def _build(argument: str | None, options: ScorerOptions) -> Scorer:
    reference = one_of(argument, "input", ("input", "ground_truth"), "completeness")
    return create_completeness_scorer(reference=reference)  # type: ignore[arg-type]
