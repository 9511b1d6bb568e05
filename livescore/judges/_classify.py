"""One-word classifications: the judge's probability of each word, from its token logprobs.

A classification asks for one token and reads, from the first token's ``top_logprobs``
(OpenAI, vLLM and llama.cpp's server return them), how much probability the judge puts on
each word offered: a continuous score for a price of one short call. A first token counts
for a word when the word starts with it and no other word does (``"un"`` counts for
``"unsupported"``, not for ``"supported"``); the probabilities of the tokens that count
for each word are added and then scaled so the words' probabilities sum to 1.

Where the server gives no logprobs (or refuses the request for them), the judge asks for
the structured answer instead (``{"verdict": <one of the words>}``): the same
:class:`Classification`, with probabilities 1 and 0 and ``from_logprobs`` false.
:func:`classify_with_object` is that fallback for any judge.

Nothing here does I/O.
"""

from __future__ import annotations

import functools
import math
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, create_model, field_validator

from livescore._errors import JudgeConfigError
from livescore._usage import JudgeReply

if TYPE_CHECKING:
    from livescore.judges._protocol import Judge

__all__ = (
    "MAX_TOP_LOGPROBS",
    "Classification",
    "check_choices",
    "choice_schema",
    "classification_from_completion",
    "classify_with_object",
    "forget_logprobs",
    "logprobs_refused",
    "refuses_logprobs",
    "remember_no_logprobs",
)

MAX_TOP_LOGPROBS = 20
"""The most alternatives asked for per token (OpenAI's limit)."""

# Servers known to give no logprobs, by base URL and model (like the structured-output
# rungs): a judge does not ask them again, and the next judge of the process does not either.
_NO_LOGPROBS: set[tuple[str, str]] = set()
_NO_LOGPROBS_LOCK = threading.Lock()

_EDGE = re.compile(r"^[\W_]+|[\W_]+$")
_LOGPROBS_REFUSED = re.compile(r"logprob", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Classification:
    """A one-word verdict and the judge's probability of each word offered.

    Attributes:
        label: The most probable word (the first of the words on a tie).
        probabilities: Each word's probability; they sum to 1.
        from_logprobs: ``True`` when read from the token probabilities; ``False`` for the
            structured-answer fallback (the chosen word 1, the others 0).
        mass: The share of the first token's probability that went to the words before
            scaling (1.0 for the fallback): a low mass says the judge mostly wanted to
            answer something else.

    Example:
        >>> c = Classification.from_probabilities({"supported": 0.3, "unsupported": 0.1})
        >>> c.label, round(c.probabilities["supported"], 2), round(c.mass, 2)
        ('supported', 0.75, 0.4)
    """

    label: str
    probabilities: Mapping[str, float] = field(default_factory=dict)
    from_logprobs: bool = True
    mass: float = 1.0

    @classmethod
    def from_probabilities(
        cls, weights: Mapping[str, float], *, from_logprobs: bool = True
    ) -> Classification:
        """The classification of unnormalised ``weights`` (word → probability mass).

        Raises:
            ValueError: No word has any weight.
        """
        total = sum(max(0.0, w) for w in weights.values())
        if not total > 0:
            raise ValueError("none of the words has any probability")
        probabilities = {word: max(0.0, w) / total for word, w in weights.items()}
        label = max(probabilities, key=lambda word: probabilities[word])
        return cls(label, probabilities, from_logprobs, min(1.0, total))

    @classmethod
    def certain(cls, label: str, choices: Sequence[str]) -> Classification:
        """The structured-answer fallback: ``label`` with probability 1."""
        return cls(label, {c: float(c == label) for c in choices}, False, 1.0)

    def probability(self, word: str) -> float:
        """The probability of ``word`` (0 for a word not offered)."""
        return float(self.probabilities.get(word, 0.0))

    def to_dict(self) -> dict[str, Any]:
        """The classification as plain JSON values (``Classification(**d)`` reads it back).

        Example:
            >>> Classification.certain("no", ["yes", "no"]).to_dict()["probabilities"]
            {'yes': 0.0, 'no': 1.0}
        """
        return {
            "label": self.label,
            "probabilities": dict(self.probabilities),
            "from_logprobs": self.from_logprobs,
            "mass": self.mass,
        }


def check_choices(choices: Sequence[str]) -> tuple[str, ...]:
    """``choices`` as a tuple, checked: two or more distinct, non-empty words.

    Raises:
        JudgeConfigError: Fewer than two words, a blank one, or two that read the same.
    """
    words = tuple(choices)
    normal = [_normal(word) for word in words]
    if len(words) < 2 or not all(normal) or len(set(normal)) != len(normal):
        raise JudgeConfigError(
            f"a classification needs two or more distinct, non-empty words, not {list(words)!r}"
        )
    return words


def _normal(text: str) -> str:
    return _EDGE.sub("", text.strip().lower())


def _word_for(token: str, words: Sequence[str], normal: Sequence[str]) -> str | None:
    """The one word ``token`` starts, or ``None`` (no word, or more than one)."""
    piece = _normal(token)
    if not piece:
        return None
    matches = [word for word, n in zip(words, normal, strict=True) if n.startswith(piece)]
    return matches[0] if len(matches) == 1 else None


def classification_from_completion(
    completion: Mapping[str, Any], choices: Sequence[str]
) -> Classification | None:
    """The classification in a chat completion's first-token logprobs, or ``None``.

    ``None`` when the completion has no logprobs for its first token, or when none of the
    alternatives there starts one of the words.

    Example:
        >>> completion = {"choices": [{"logprobs": {"content": [{
        ...     "token": "unsupported", "logprob": -0.2,
        ...     "top_logprobs": [{"token": "unsupported", "logprob": -0.2},
        ...                      {"token": "Supported", "logprob": -1.8},
        ...                      {"token": "un", "logprob": -4.0}]}]}}]}
        >>> c = classification_from_completion(completion, ["supported", "unsupported"])
        >>> c.label, round(c.probabilities["unsupported"], 3)
        ('unsupported', 0.835)
    """
    first = _first_token(completion)
    if first is None:
        return None
    alternatives = first.get("top_logprobs")
    entries: list[Any] = list(alternatives) if isinstance(alternatives, list) else []
    if not entries:
        entries = [first]
    words = tuple(choices)
    normal = [_normal(word) for word in words]
    weights = dict.fromkeys(words, 0.0)
    seen: set[str] = set()
    for entry in entries:
        if not isinstance(entry, Mapping):
            continue
        token, logprob = entry.get("token"), entry.get("logprob")
        if not isinstance(token, str) or token in seen:
            continue
        if not isinstance(logprob, int | float) or isinstance(logprob, bool):
            continue
        seen.add(token)
        word = _word_for(token, words, normal)
        if word is not None and math.isfinite(logprob):
            weights[word] += math.exp(min(0.0, float(logprob)))
    try:
        return Classification.from_probabilities(weights)
    except ValueError:
        return None


def _first_token(completion: Mapping[str, Any]) -> Mapping[str, Any] | None:
    choices = completion.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        return None
    logprobs = choices[0].get("logprobs")
    if not isinstance(logprobs, Mapping):
        return None
    content = logprobs.get("content")
    if not isinstance(content, list) or not content or not isinstance(content[0], Mapping):
        return None
    first: Mapping[str, Any] = content[0]
    return first


def refuses_logprobs(status: int, detail: str) -> bool:
    """Whether an HTTP error means "this server does not give logprobs".

    llama-cpp-python's server answers 500 ("logprobs is not supported for models created
    with logits_all=False"); others 400 or 422 naming the parameter.
    """
    return status in (400, 422, 500) and bool(_LOGPROBS_REFUSED.search(detail))


class _ChoiceAnswer(BaseModel):
    """The fallback's answer; ``verdict`` is read case-insensitively, edge punctuation aside."""

    words: ClassVar[tuple[str, ...]] = ()

    verdict: str

    @field_validator("verdict", mode="before")
    @classmethod
    def _one_of_the_words(cls, value: object) -> object:
        if isinstance(value, str):
            for word in cls.words:
                if _normal(value) == _normal(word):
                    return word
        return value


def logprobs_refused(base_url: str, model: str) -> bool:
    """Whether the server at ``base_url`` gave no logprobs for ``model`` before."""
    with _NO_LOGPROBS_LOCK:
        return (base_url, model) in _NO_LOGPROBS


def remember_no_logprobs(base_url: str, model: str) -> bool:
    """Remember that this server gives no logprobs; ``True`` the first time (to say so once)."""
    with _NO_LOGPROBS_LOCK:
        new = (base_url, model) not in _NO_LOGPROBS
        _NO_LOGPROBS.add((base_url, model))
        return new


def forget_logprobs(base_url: str) -> None:
    """Forget what the server at ``base_url`` said about logprobs (``forget_server``)."""
    with _NO_LOGPROBS_LOCK:
        for key in [k for k in _NO_LOGPROBS if k[0] == base_url]:
            _NO_LOGPROBS.discard(key)


@functools.lru_cache(maxsize=64)
def choice_schema(choices: tuple[str, ...]) -> type[BaseModel]:
    """The structured answer of the fallback: ``{"verdict": <one of choices>}``.

    Example:
        >>> schema = choice_schema(("supported", "unsupported"))
        >>> schema(verdict="supported").verdict
        'supported'
    """
    verdict_type: Any = Literal[choices]
    model: type[_ChoiceAnswer] = create_model(
        "Verdict",
        __base__=_ChoiceAnswer,
        __doc__=f"The verdict: one word, {' or '.join(repr(c) for c in choices)}.",
        verdict=(verdict_type, ...),
    )
    model.words = choices
    return model


async def classify_with_object(
    judge: Judge, *, system: str, prompt: str, choices: Sequence[str]
) -> JudgeReply[Classification]:
    """A classification from ``judge``'s structured answer: the fallback without logprobs.

    A judge of your own can implement :meth:`~livescore.judges.Judge.classify` with it
    (``return await classify_with_object(self, system=..., prompt=..., choices=...)``).
    The answer is validated like any other (one corrective retry).

    Raises:
        livescore.judges.JudgeError: The judge's own errors.
    """
    words = check_choices(choices)
    schema = choice_schema(words)
    reply = await judge.generate_object(system=system, prompt=prompt, schema=schema)
    label = str(getattr(reply.value, "verdict"))  # noqa: B009 - a field of a dynamic model
    return JudgeReply(Classification.certain(label, words), reply.usage)
