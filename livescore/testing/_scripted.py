"""A judge test double that replays scripted answers without any network."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from livescore.judges._protocol import JudgeReply, JudgeResponseError, JudgeUsage, ModelT

__all__ = ("ScriptedJudge",)

Answer = dict[str, Any] | str | Exception | Callable[[str], Any]


@dataclass
class ScriptedJudge:
    """A :class:`~livescore.judges.Judge` test double: answers prompts from a script, in order.

    Each answer is a dict (validated against the requested schema), a string (free text, or
    JSON for a structured request), an exception to raise, or a function of the prompt that
    returns one of those. Every prompt it received is kept in ``prompts``. Use it to unit-test
    your own scorers; use :class:`~livescore.testing.OpenAITestServer` to test over HTTP.

    Example:
        >>> judge = ScriptedJudge([{"claims": []}])
        >>> judge.model
        'scripted'
    """

    answers: Iterable[Answer] = ()
    model: str = "scripted"
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
        for attempt in range(2):  # one corrective retry, like the real judge
            answer = self._next(prompt)
            usage.add(self._usage())
            try:
                data = json.loads(answer) if isinstance(answer, str) else answer
                value = schema.model_validate(data)
                if validate is not None:
                    validate(value)
            except (ValueError, ValidationError) as exc:
                if attempt == 0:
                    prompt = f"{prompt}\n\nYour previous answer was invalid: {exc}"
                    continue
                raise JudgeResponseError(
                    f"invalid answer after a corrective retry: {exc}", usage=usage
                ) from exc
            return JudgeReply(value, usage)
        raise AssertionError("unreachable")

    async def generate_text(self, *, system: str, prompt: str) -> JudgeReply[str]:
        answer = self._next(prompt)
        return JudgeReply(str(answer), self._usage())
