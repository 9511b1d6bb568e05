"""The seam between scorers and the model that judges: the :class:`Judge` protocol."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel

from livescore._usage import JudgeReply

__all__ = ("Judge", "ModelT")

ModelT = TypeVar("ModelT", bound=BaseModel)


@runtime_checkable
class Judge(Protocol):
    """A model that answers scorer prompts.

    Implement it to judge with anything: :class:`livescore.judges.OpenAIJudge` speaks the
    OpenAI-compatible API; :class:`livescore.testing.ScriptedJudge` replays fixed answers.
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
