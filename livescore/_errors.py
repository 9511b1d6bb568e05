"""The root of livescore's exceptions, so users can ``except LivescoreError`` in one place."""

from __future__ import annotations

__all__ = ("LivescoreError",)


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
