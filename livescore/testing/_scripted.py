"""A judge test double that replays scripted answers without any network."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel

# The same parsing, validation and corrective retry as OpenAIJudge: scripted tests run the
# judges' rules.
from livescore.judges import (
    Answer,
    Classification,
    JudgeReply,
    JudgeResponseError,
    JudgeUsage,
    Message,
    ask_for_object,
    classify_with_object,
)

__all__ = ("ScriptedJudge",)

ModelT = TypeVar("ModelT", bound=BaseModel)

ScriptedAnswer = dict[str, Any] | str | Exception | Callable[[str], Any]


@dataclass
class ScriptedJudge:
    """A :class:`~livescore.judges.Judge` test double: answers prompts from a script, in order.

    Each answer is a dict (validated against the requested schema), a string (free text, or
    JSON for a structured request), an exception to raise, or a function of the prompt that
    returns one of those. A one-word classification (:meth:`classify`) takes a dict of
    word → probability (``{"supported": 0.8, "unsupported": 0.2}``: as if read from
    logprobs), or a structured answer (``{"verdict": "supported"}``, validated like one).
    Every prompt it received is kept in ``prompts``; a corrective retry's prompt is the
    original prompt followed by the correction. Structured answers go through the same
    parsing, validation and single corrective retry as
    :class:`~livescore.judges.OpenAIJudge`. Use it to unit-test your own scorers; use
    :class:`~livescore.testing.OpenAITestServer` to test over HTTP.

    Example:
        >>> judge = ScriptedJudge([{"claims": []}])
        >>> judge.model_name
        'scripted'
    """

    answers: Iterable[ScriptedAnswer] = ()
    model_name: str = "scripted"
    tokens_per_call: int = 10
    prompts: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._queue = list(self.answers)

    def _next(self, prompt: str) -> Any:
        self.prompts.append(prompt)
        if not self._queue:
            raise JudgeResponseError(
                f"ScriptedJudge ran out of answers at call {len(self.prompts)}",
                usage=self._usage(),
            )
        answer = self._queue.pop(0)
        if callable(answer) and not isinstance(answer, Exception):
            answer = answer(prompt)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def _usage(self) -> JudgeUsage:
        return JudgeUsage(calls=1, input_tokens=self.tokens_per_call, output_tokens=1)

    async def generate_object(
        self,
        *,
        system: str,
        prompt: str,
        schema: type[ModelT],
        validate: Callable[[ModelT], None] | None = None,
    ) -> JudgeReply[ModelT]:
        usage = JudgeUsage()

        async def ask(messages: list[Message]) -> Answer:
            # What a server would read: the user turns (the prompt, then any correction).
            asked = "\n\n".join(m["content"] for m in messages if m["role"] == "user")
            answer = self._next(asked)
            usage.add(self._usage())
            return Answer(_as_text(answer))

        messages: list[Message] = [
            {"role": "system", "content": system},
            {"role": "user", "content": prompt},
        ]
        value = await ask_for_object(
            ask, messages, schema, validate=validate, model_name=self.model_name, usage=usage
        )
        return JudgeReply(value, usage)

    async def generate_text(self, *, system: str, prompt: str) -> JudgeReply[str]:
        answer = self._next(prompt)
        return JudgeReply(str(answer), self._usage())

    async def classify(
        self, *, system: str, prompt: str, choices: Sequence[str]
    ) -> JudgeReply[Classification]:
        answer = self._next(prompt)
        words = tuple(choices)
        if _is_probabilities(answer, words):
            weights = {word: float(answer.get(word, 0.0)) for word in words}
            return JudgeReply(Classification.from_probabilities(weights), self._usage())
        # A structured answer: put it back and ask as a judge without logprobs would.
        self.prompts.pop()
        self._queue.insert(0, answer)
        return await classify_with_object(self, system=system, prompt=prompt, choices=words)


def _is_probabilities(answer: Any, words: Sequence[str]) -> bool:
    return (
        isinstance(answer, Mapping)
        and bool(answer)
        and all(key in words for key in answer)
        and all(isinstance(v, int | float) and not isinstance(v, bool) for v in answer.values())
    )


def _as_text(answer: Any) -> str:
    """A scripted structured answer as the text a server would send."""
    if isinstance(answer, str):
        return answer
    if isinstance(answer, BaseModel):
        return answer.model_dump_json()
    return json.dumps(answer, default=str)
