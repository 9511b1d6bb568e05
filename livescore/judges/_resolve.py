"""Turning ``"openai/<model>"`` strings into judges, configured from the environment."""

from __future__ import annotations

from typing import Any

from livescore._errors import JudgeConfigError
from livescore.judges._openai import OpenAIJudge
from livescore.judges._protocol import Judge, is_judge

__all__ = ("resolve_judge",)

_ACCEPTED = (
    "accepted: 'openai/<model>' (any OpenAI-compatible server, set OPENAI_API_KEY and/or "
    "OPENAI_BASE_URL), or a Judge object such as OpenAIJudge(...)"
)


def resolve_judge(model: str | Judge, **kwargs: Any) -> Judge:
    """Turn a model string into a judge; a :class:`~livescore.judges.Judge` passes through.

    Accepted strings: ``"openai/<model>"`` for any OpenAI-compatible server, configured by
    ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL`` or by keyword arguments, which go to
    :class:`OpenAIJudge` (``base_url=``, ``api_key=``, ``timeout=``…).

    Raises:
        JudgeConfigError: For an empty string, a string without a provider, an unknown
            provider, or a missing API key.

    Example:
        >>> judge = resolve_judge("openai/llama3.2", base_url="http://127.0.0.1:8080/v1")
        >>> judge.model_name
        'llama3.2'
    """
    if is_judge(model):
        if kwargs:
            raise JudgeConfigError(
                f"resolve_judge got a ready judge ({model!r}) and judge options "
                f"({', '.join(sorted(kwargs))}): configure the judge object itself"
            )
        return model
    if not isinstance(model, str):
        raise JudgeConfigError(
            f"a judge must be a model string or a Judge, not {type(model)!r}; {_ACCEPTED}"
        )
    text = model.strip()
    if not text:
        raise JudgeConfigError(f"the judge model string is empty; {_ACCEPTED}")
    provider, sep, name = text.partition("/")
    if not sep:
        raise JudgeConfigError(f"judge {model!r} has no provider prefix; {_ACCEPTED}")
    if provider.lower() != "openai":
        raise JudgeConfigError(f"judge {model!r}: unknown provider {provider!r}; {_ACCEPTED}")
    if not name.strip():
        raise JudgeConfigError(f"judge {model!r} names no model after 'openai/'; {_ACCEPTED}")
    return OpenAIJudge(name.strip(), **kwargs)
