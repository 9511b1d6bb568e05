"""The root of livescore's exceptions, so users can ``except LivescoreError`` in one place."""

from __future__ import annotations

__all__ = ("LivescoreError", "exception_message")


class LivescoreError(Exception):
    """Base class of every exception livescore raises on purpose.

    Judge failures (:class:`~livescore.judges.JudgeError` and its kinds) and scorer failures
    (:class:`~livescore.ScorerRunError`) derive from it; programming errors in arguments
    stay plain ``TypeError`` / ``ValueError``.

    Example:
        >>> from livescore import LivescoreError, ScorerRunError
        >>> issubclass(ScorerRunError, LivescoreError)
        True
    """


def exception_message(exc: BaseException) -> str:
    """``str(exc)``, or a stand-in when even that raises (a broken ``__str__``).

    Whatever reads an exception that is not its own (the agent's, a tool's, a scorer's)
    reads it through this: one raising ``__str__`` must not lose the run it ended.

    Example:
        >>> class Broken(Exception):
        ...     def __str__(self):
        ...         raise RuntimeError("no message")
        >>> exception_message(ValueError("bad")), exception_message(Broken())
        ('bad', 'Broken (its message could not be read)')
    """
    try:
        text = str(exc)
    except BaseException:  # anything at all: the message is not worth the run
        return f"{type(exc).__name__} (its message could not be read)"
    return text if isinstance(text, str) else type(exc).__name__
