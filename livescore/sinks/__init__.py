"""Dashboard score sinks: scores where users look, beside the OpenTelemetry evaluation span.

Example:
    >>> from livescore.sinks import ScoreSink, with_sinks
"""

from livescore.sinks._base import ScoreRecord, ScoreSink, SinkEmitter, with_sinks

__all__ = ("ScoreRecord", "ScoreSink", "SinkEmitter", "with_sinks")
