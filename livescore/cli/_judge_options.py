"""The judge options ``livescore eval`` and ``livescore demo`` share, written once."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import livescore.judges as _judges
from livescore.cli._common import UsageError, positive_float, positive_int

if TYPE_CHECKING:
    from livescore.judges import Judge

__all__ = ("JUDGE_MODEL_ENV", "JudgeOptions", "add_judge_arguments", "judge_model_string")

JUDGE_MODEL_ENV = "LIVESCORE_JUDGE_MODEL"
"""Environment variable read when ``--model`` is not given."""

DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
# The library's default, so a judge behaves the same from the CLI and from code (importing
# livescore.judges does not import openai).
DEFAULT_JUDGE_TIMEOUT = _judges.DEFAULT_TIMEOUT
STRUCTURED_OUTPUT_CHOICES = ("auto", "json_schema", "json_object", "prompt")


def judge_model_string(model: str) -> str:
    """``"gpt-4o-mini"`` means ``"openai/gpt-4o-mini"``: the prefix is optional on the CLI.

    A name with a slash is taken as ``provider/model``, so a model id that has a slash of its
    own (``meta-llama/Llama-3.1-8B-Instruct`` on vLLM) is written with the prefix:
    ``openai/meta-llama/Llama-3.1-8B-Instruct``.

    Example:
        >>> judge_model_string("gpt-4o-mini"), judge_model_string("openai/llama3.2")
        ('openai/gpt-4o-mini', 'openai/llama3.2')
    """
    model = model.strip()
    return model if "/" in model or not model else f"openai/{model}"


def add_judge_arguments(parser: Any) -> None:
    """Add the shared judge options to ``parser`` (an ``argparse`` parser or group)."""
    parser.add_argument(
        "--model",
        help="the judge model, '[openai/]<model>', on the OpenAI-compatible endpoint of "
        f"--base-url / OPENAI_BASE_URL (default: ${JUDGE_MODEL_ENV})",
    )
    parser.add_argument(
        "--base-url",
        help="the judge's OpenAI-compatible base URL, http(s)://host[:port]/v1 (default: "
        "$OPENAI_BASE_URL); anything else is a usage error",
    )
    parser.add_argument(
        "--api-key-env",
        metavar="NAME",
        default=DEFAULT_API_KEY_ENV,
        help="the environment variable holding the judge's API key "
        f"(default: {DEFAULT_API_KEY_ENV})",
    )
    parser.add_argument(
        "--structured-output",
        choices=STRUCTURED_OUTPUT_CHOICES,
        default="auto",
        help="how the judge is asked for JSON: auto tries json_schema, then json_object, then "
        "the schema in the prompt, and remembers what the server took (default: auto)",
    )
    parser.add_argument(
        "--judge-concurrency",
        type=positive_int,
        default=8,
        metavar="N",
        help="judge calls in flight at once (default: 8)",
    )
    parser.add_argument(
        "--judge-timeout",
        type=positive_float,
        default=DEFAULT_JUDGE_TIMEOUT,
        metavar="SECONDS",
        help=f"timeout of one judge request (default: {DEFAULT_JUDGE_TIMEOUT:g}, the "
        "library's); after 5 requests in a row that find the judge unreachable (refused, "
        "dropped, timed out) later calls fail at once, and livescore eval stops",
    )
    parser.add_argument(
        "--judge-mode",
        choices=("three_step", "one_call", "logprob"),
        default="three_step",
        help="judge scorers with several steps: one judge call per step (default) or one "
        "call for all; logprob (hallucination, faithfulness): one one-token call on the "
        "whole output, scored by the judge's token probability",
    )


@dataclass(frozen=True, slots=True)
class JudgeOptions:
    """The judge options as parsed, resolved into a judge on demand.

    Attributes:
        model: The model string (``--model`` or ``$LIVESCORE_JUDGE_MODEL``), or ``None``.
        base_url: ``--base-url``; ``None`` lets the judge read ``OPENAI_BASE_URL``.
        api_key_env: Where the API key is read from.
        structured_output: ``auto``, ``json_schema``, ``json_object`` or ``prompt``.
        concurrency: Judge calls in flight at once.
        timeout: Seconds per judge call.
        judge_mode: ``three_step``, ``one_call`` or ``logprob`` (``--judge-mode``).
    """

    model: str | None = None
    base_url: str | None = None
    api_key_env: str = DEFAULT_API_KEY_ENV
    structured_output: str = "auto"
    concurrency: int = 8
    timeout: float = DEFAULT_JUDGE_TIMEOUT
    judge_mode: Literal["three_step", "one_call", "logprob"] = "three_step"

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> JudgeOptions:
        """Read the options :func:`add_judge_arguments` added (and the environment)."""
        model = args.model or os.environ.get(JUDGE_MODEL_ENV) or None
        return cls(
            model=judge_model_string(model) if model else None,
            base_url=args.base_url or None,
            api_key_env=args.api_key_env,
            structured_output=args.structured_output,
            concurrency=args.judge_concurrency,
            timeout=args.judge_timeout,
            judge_mode=args.judge_mode,
        )

    @property
    def configured(self) -> bool:
        """Whether a judge model is named."""
        return self.model is not None

    def resolve(self) -> Judge | None:
        """The judge these options name; ``None`` when no model is named.

        Raises:
            UsageError: The model string, endpoint or API key is unusable.
        """
        if self.model is None:
            return None
        from livescore.judges import JudgeConfigError, resolve_judge

        options: dict[str, Any] = {
            "timeout": self.timeout,
            "max_concurrency": self.concurrency,
            "structured_output": self.structured_output,
        }
        if self.base_url:
            options["base_url"] = self.base_url
        if self.api_key_env != DEFAULT_API_KEY_ENV:
            key = os.environ.get(self.api_key_env)
            if not key:
                raise UsageError(
                    f"--api-key-env {self.api_key_env}: that environment variable is not set"
                )
            options["api_key"] = key
        keyless = self.base_url or os.environ.get("OPENAI_BASE_URL")
        if (
            self.model.startswith("openai/")
            and not keyless
            and "api_key" not in options
            and not os.environ.get(DEFAULT_API_KEY_ENV)
        ):
            # Said in flags: the library's message names its arguments (api_key=...).
            raise UsageError(
                f"--model {self.model}: no API key: set ${DEFAULT_API_KEY_ENV} (or name another "
                "variable with --api-key-env), or point --base-url (or OPENAI_BASE_URL) at an "
                "OpenAI-compatible server that needs no key"
            )
        try:
            return resolve_judge(self.model, **options)
        except JudgeConfigError as exc:
            raise UsageError(str(exc)) from exc

    def missing_judge_message(self, scorer: str) -> str:
        """What to say when a scorer needs a judge and none is named."""
        return (
            f"the {scorer} scorer needs a judge model: pass --model openai/<model> or set "
            f"{JUDGE_MODEL_ENV} (the endpoint comes from --base-url or OPENAI_BASE_URL, the "
            f"key from ${self.api_key_env})"
        )
