"""Consistent placeholders for one score: :class:`Pseudonyms`.

Blanking personal data ("[REDACTED] lives in [REDACTED]") leaves a judge nothing to check
a claim against. A placeholder per distinct value, the same in the input, the output, every
context item and every turn, keeps the relations: "<PERSON_1> lives in <LOCATION_1>" is
still checked against the context's "<PERSON_1>'s address is in <LOCATION_1>".
"""

from __future__ import annotations

import dataclasses
import re
import threading
from collections.abc import Callable, Mapping
from typing import Any

from livescore._messages import message_text
from livescore.pii._detect import DEFAULT_MAX_REDACT_CHARS, Detect
from livescore.runs import CONTEXT_METADATA_KEY, Conversation, Run, Step, ToolCall

__all__ = ("Pseudonyms", "RedactionError")


class RedactionError(Exception):
    """The detector failed: the score fails with ``error.type = "redaction"``.

    The message names the detector's exception type only, never its message, which may
    quote the text it was reading.
    """

    error_type = "redaction"


# Shorter names for Presidio's entity types, as the placeholders show them.
_SHORT = {
    "EMAIL_ADDRESS": "EMAIL",
    "PHONE_NUMBER": "PHONE",
    "IBAN_CODE": "IBAN",
    "IP_ADDRESS": "IP",
}


class Pseudonyms:
    """The placeholders of one score: the same value, the same placeholder, everywhere.

    Placeholders are numbered per entity type in order of first appearance:
    ``<PERSON_1>``, ``<PERSON_2>``, ``<EMAIL_1>``. A value found in one text is replaced in
    every text of the score, also where the detector missed it there (NER finds a name in
    one sentence and not in the next); :meth:`redact_run` detects in every text of the run
    first, then replaces. A name that contains another as whole words ("Dr. Ann Lee",
    "Ann Lee") gets the other's placeholder. The mapping back stays in this object (never on
    a result, a span or a sink): :meth:`restore` is for your own disk.

    Args:
        detect: The detector (see :func:`~livescore.pii.as_detector`).
        max_chars: Longer texts are cut here before detection; :attr:`truncated` says so.

    Example:
        >>> names = {"Ann Lee": "PERSON", "ann@example.com": "EMAIL_ADDRESS"}
        >>> def detect(text):
        ...     found = [(text.find(v), v, e) for v, e in names.items() if v in text]
        ...     return [(at, at + len(v), e) for at, v, e in found]
        >>> p = Pseudonyms(detect)
        >>> p.redact("Ann Lee (ann@example.com) called.")
        '<PERSON_1> (<EMAIL_1>) called.'
        >>> p.redact("Write to ANN LEE.")
        'Write to <PERSON_1>.'
        >>> p.restore("<PERSON_1> called")
        'Ann Lee called'
    """

    def __init__(self, detect: Detect, *, max_chars: int | None = None) -> None:
        self._detect = detect
        limit = max_chars if max_chars is not None else getattr(detect, "max_chars", None)
        self.max_chars: int = limit if isinstance(limit, int) else DEFAULT_MAX_REDACT_CHARS
        self._placeholders: dict[str, str] = {}  # normalised value -> placeholder
        self._kinds: dict[str, str] = {}  # normalised value -> entity kind
        self._originals: dict[str, str] = {}  # placeholder -> the first value it stood for
        self._counts: dict[str, int] = {}
        self._learned: set[str] = set()  # texts already read by the detector
        self._pattern: re.Pattern[str] | None = None
        self.generation = 0
        """Grows with each new value: a text redacted before may hold it unreplaced."""
        self._runs: dict[int, tuple[Run, Run, int]] = {}  # id -> (original, redacted, gen)
        # The scorers of one run share one Pseudonyms (through its RunMemo) and may redact
        # in several threads at once: numbering and the caches are guarded.
        self._lock = threading.RLock()
        self.truncated = False
        """Whether a text was cut at ``max_chars`` before detection."""

    @property
    def found(self) -> int:
        """How many distinct values were replaced."""
        return len(self._placeholders)

    def learn(self, text: str) -> None:
        """Read ``text`` with the detector and number what it finds (nothing replaced)."""
        text = self._bounded(text)
        with self._lock:
            if text in self._learned:
                return
        spans = sorted((int(s), int(e), str(t)) for s, e, t in self._detect(text))
        with self._lock:
            for start, end, entity in spans:
                if 0 <= start < end <= len(text) and text[start:end].strip():
                    self._number(text[start:end].strip(), entity)
            self._learned.add(text)

    def redact(self, text: str) -> str:
        """``text`` with each piece of personal data replaced by its placeholder."""
        self.learn(text)
        return self._apply(self._bounded(text))

    def _bounded(self, text: str) -> str:
        if len(text) > self.max_chars:
            # Detection is bounded: the tail is dropped, never sent unread.
            self.truncated = True
            return text[: self.max_chars]
        return text

    def _number(self, value: str, entity: str) -> None:
        kind = _SHORT.get(entity, entity).upper()
        key = _normal(value)
        if key in self._placeholders:
            return
        placeholder = None
        if kind == "PERSON":
            # "Dr. Ann Lee" and "Ann Lee" (or "Lee"): one person, one placeholder.
            placeholder = next(
                (
                    p
                    for known, p in self._placeholders.items()
                    if self._kinds[known] == "PERSON"
                    and (_contains(known, key) or _contains(key, known))
                ),
                None,
            )
        if placeholder is None:
            number = self._counts[kind] = self._counts.get(kind, 0) + 1
            placeholder = f"<{kind}_{number}>"
            self._originals[placeholder] = value
        self._placeholders[key] = placeholder
        self._kinds[key] = kind
        self._pattern = None
        self.generation += 1

    def _apply(self, text: str) -> str:
        with self._lock:
            if not self._placeholders:
                return text
            if self._pattern is None:
                # Longest first, so a value that contains another is replaced whole.
                values = sorted(self._placeholders, key=len, reverse=True)
                self._pattern = re.compile("|".join(_as_pattern(v) for v in values), re.IGNORECASE)
            pattern, placeholders = self._pattern, dict(self._placeholders)
        return pattern.sub(lambda m: placeholders.get(_normal(m.group(0)), m.group(0)), text)

    def restore(self, text: str) -> str:
        """``text`` with the placeholders put back to the values they stand for."""
        for placeholder, value in self._originals.items():
            text = text.replace(placeholder, value)
        return text

    def restore_value(self, value: Any) -> Any:
        """A copy of ``value`` with :meth:`restore` applied to every string in it."""
        return _walk(value, self.restore)

    def redact_value(self, value: Any) -> Any:
        """A copy of ``value`` with every string in it redacted (mapping keys kept)."""
        _walk(value, self._learn_text)
        return _walk(value, self._apply_bounded)

    def _learn_text(self, text: str) -> str:
        self.learn(text)
        return text

    def _apply_bounded(self, text: str) -> str:
        return self._apply(self._bounded(text))

    def redact_run(self, run: Run) -> Run:
        """A copy of ``run`` whose input, output, ground truth, steps, tool calls, errors
        and item context (``metadata["context"]``) are redacted (ids and the rest of the
        metadata kept); the same run is redacted once (again only once new values are
        known)."""
        with self._lock:
            cached = self._runs.get(id(run))
        if cached is not None and cached[0] is run and cached[2] == self.generation:
            return cached[1]
        _map_run(run, self._learn_text)
        with self._lock:
            generation = self.generation
        redacted = _map_run(run, self._apply_bounded)
        with self._lock:
            self._runs[id(run)] = (run, redacted, generation)
        return redacted

    def redact_conversation(self, conversation: Conversation) -> Conversation:
        """A copy of ``conversation`` with every turn redacted (one mapping for all)."""
        for run in conversation.runs:
            _map_run(run, self._learn_text)
        return dataclasses.replace(
            conversation, runs=[self.redact_run(run) for run in conversation.runs]
        )


def _normal(value: str) -> str:
    return " ".join(value.split()).casefold()


def _contains(outer: str, inner: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(inner)}(?!\w)", outer) is not None


def _as_pattern(value: str) -> str:
    words = [re.escape(w) for w in value.split()]
    body = r"\s+".join(words)
    # Whole words only where the value starts or ends with one ("Ann" not in "Anna").
    head = r"(?<!\w)" if value[:1].isalnum() else ""
    tail = r"(?!\w)" if value[-1:].isalnum() else ""
    return f"{head}{body}{tail}"


def _walk(value: Any, text: Callable[[str], str]) -> Any:
    """``value`` with ``text`` applied to every string in it (mapping keys kept)."""
    if isinstance(value, str):
        return text(value)
    if isinstance(value, Mapping):
        return {k: _walk(v, text) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_walk(v, text) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {
            f.name: _walk(getattr(value, f.name), text) for f in dataclasses.fields(value) if f.init
        }
        return dataclasses.replace(value, **changes)
    if value is None or isinstance(value, bool | int | float):
        return value
    # Anything else (a framework's message object): its text, redacted; an object is never
    # passed on whole, since nothing here can say what else it holds.
    return text(message_text(value))


def _map_run(run: Run, text: Callable[[str], str]) -> Run:
    def call(tool: ToolCall | None) -> ToolCall | None:
        if tool is None:
            return None
        return dataclasses.replace(
            tool,
            args=_walk(tool.args, text),
            result=_walk(tool.result, text),
            error=_walk(tool.error, text),
        )

    def step(s: Step) -> Step:
        return dataclasses.replace(
            s,
            input=_walk(s.input, text),
            output=_walk(s.output, text),
            tool_call=call(s.tool_call),
            tool_calls_requested=[c for c in map(call, s.tool_calls_requested) if c],
            documents=[text(d) for d in s.documents],
            error=_walk(s.error, text),
        )

    mapped = dataclasses.replace(
        run,
        input=_walk(run.input, text),
        output=_walk(run.output, text),
        ground_truth=_walk(run.ground_truth, text),
        error=_walk(run.error, text),
        steps=[step(s) for s in run.steps],
    )
    if CONTEXT_METADATA_KEY in run.metadata:
        mapped.metadata = dict(run.metadata)
        mapped.metadata[CONTEXT_METADATA_KEY] = _walk(run.metadata[CONTEXT_METADATA_KEY], text)
    return mapped
