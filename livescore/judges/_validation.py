"""Validation plus one corrective retry: the one way every judge turns answers into objects.

Shared by :class:`~livescore.judges.OpenAIJudge` and :class:`~livescore.testing.ScriptedJudge`,
so a scripted test exercises the same rules as production: parse (code fences, thinking,
prose around the object), validate against the schema, run the caller's check, and on a bad
answer ask once more with the problem spelled out.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from livescore._errors import JudgeResponseError
from livescore._usage import JudgeUsage
from livescore.judges._protocol import ModelT
from livescore.judges._structured import Answer, Message, describe_problem, parse_object

__all__ = ("MAX_QUOTED_ANSWER", "ask_for_object", "correction_messages")

MAX_QUOTED_ANSWER = 2_000
"""The most characters of an invalid answer quoted back in the corrective retry.

The model needs to see what it said to fix it, not all of it: a runaway answer must not
become an equally large second request (the CPU to build it is taken from the agent that
shares the process)."""


def correction_messages(messages: list[Message], answer: Answer, problem: str) -> list[Message]:
    """``messages`` plus the invalid answer (a bounded excerpt) and the request to fix it.

    Example:
        >>> sent = correction_messages(
        ...     [{"role": "user", "content": "Extract."}], Answer("x" * 5000), "not JSON"
        ... )
        >>> len(sent[1]["content"]) < 2100, sent[2]["content"].startswith("Your previous")
        (True, True)
    """
    quoted = answer.text
    if len(quoted) > MAX_QUOTED_ANSWER:
        omitted = len(quoted) - MAX_QUOTED_ANSWER
        quoted = f"{quoted[:MAX_QUOTED_ANSWER]}\n[… {omitted:,} more characters not shown]"
    correction = (
        f"Your previous answer was invalid: {problem}\n"
        "Answer again with only the corrected JSON object, following the instructions and "
        "the schema exactly."
    )
    return [
        *messages,
        {"role": "assistant", "content": quoted},
        {"role": "user", "content": correction},
    ]


async def ask_for_object(
    ask: Callable[[list[Message]], Awaitable[Answer]],
    messages: list[Message],
    schema: type[ModelT],
    *,
    validate: Callable[[ModelT], None] | None,
    model_name: str,
    usage: JudgeUsage,
) -> ModelT:
    """Ask for an object; on an invalid answer, ask once more with the problem spelled out.

    Args:
        ask: Sends the messages, returns the answer (and adds its cost to ``usage``).
        messages: The system and user messages.
        schema: The pydantic model the answer must fit.
        validate: The caller's own check; raises ``ValueError`` to reject an answer.
        model_name: The judge's model name, for the error message.
        usage: What the calls cost; the error carries it too.

    Raises:
        JudgeResponseError: The answer was invalid twice.
    """
    problem = ""
    for attempt in range(2):
        answer = await ask(messages)
        try:
            value = parse_object(answer, schema)
            if validate is not None:
                validate(value)
        except ValueError as exc:
            problem = describe_problem(exc)
        else:
            return value
        if attempt == 0:
            messages = correction_messages(messages, answer, problem)
    # Raised outside the ``except``: the invalid answer's exception stays out of the chain.
    raise JudgeResponseError(
        f"{model_name} gave an invalid answer twice (after a corrective retry): {problem}",
        usage=usage,
    )
