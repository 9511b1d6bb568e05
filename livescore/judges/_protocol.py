"""The seam between scorers and the model that judges: the :class:`Judge` protocol."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeGuard, TypeVar, runtime_checkable

from pydantic import BaseModel

from livescore._usage import JudgeReply

if TYPE_CHECKING:
    from livescore.judges._classify import Classification

__all__ = ("Judge", "ModelT", "is_judge")

ModelT = TypeVar("ModelT", bound=BaseModel)


@runtime_checkable
class Judge(Protocol):
    """A model that answers scorer prompts.

    Implement it to judge with anything: :class:`livescore.judges.OpenAIJudge` speaks the
    OpenAI-compatible API; :class:`livescore.testing.ScriptedJudge` replays fixed answers.
    A judge without :meth:`classify` (written before it existed) still works: one-word
    verdicts then come from :func:`~livescore.judges.classify_with_object`.
    """

    @property
    def model_name(self) -> str:
        """The model's name, as it appears on score spans (``gen_ai.request.model``)."""
        ...

    async def generate_object(
        self,
        *,
        system: str,
        prompt: str,
        schema: type[ModelT],
        validate: Callable[[ModelT], None] | None = None,
    ) -> JudgeReply[ModelT]:
        """Ask for an answer that fits ``schema``; validate it locally.

        ``validate`` may raise ``ValueError`` to reject a well-formed but wrong answer (a
        verdict count that does not match the claims); the judge then asks once more with
        the problem spelled out, and raises :class:`~livescore.judges.JudgeResponseError`
        if that fails too.
        """
        ...

    async def generate_text(self, *, system: str, prompt: str) -> JudgeReply[str]:
        """Ask for free text."""
        ...

    async def classify(
        self, *, system: str, prompt: str, choices: Sequence[str]
    ) -> JudgeReply[Classification]:
        """Ask for one of ``choices`` (one word) and the probability of each.

        A judge that reads token probabilities (:class:`~livescore.judges.OpenAIJudge`:
        one call, one token, ``logprobs``) gives continuous probabilities; one that cannot
        may answer with :func:`~livescore.judges.classify_with_object` (the structured
        answer: probability 1 for the chosen word).
        """
        ...


def is_judge(value: object) -> TypeGuard[Judge]:
    """Whether ``value`` is a judge: a :class:`Judge`, or one written before ``classify``.

    Example:
        >>> from livescore.testing import ScriptedJudge
        >>> is_judge(ScriptedJudge()), is_judge("openai/gpt-4o-mini")
        (True, False)
    """
    if isinstance(value, Judge):
        return True
    return not isinstance(value, str) and all(
        hasattr(value, name) for name in ("model_name", "generate_object", "generate_text")
    )
