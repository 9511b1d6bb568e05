"""Dashboard score sinks: scores where users look, beside the OpenTelemetry evaluation span.

The evaluation span stays the primary output of every score; a sink adds the score to a
dashboard's own score API, off the agent's path: :class:`PhoenixSink` (span annotations,
Phoenix's score badges) and :class:`LangfuseSink` (Langfuse scores). Pass them as
``sinks=[...]`` to :class:`~livescore.live.LiveDispatcher`,
``livescore_langchain.LiveScoringHandler`` or :func:`~livescore.run_evals`; every entry point
attaches them through :func:`with_sinks`. :class:`CallbackSink` hands each score to a
function of yours, in process (to print it, keep it, test on it). :class:`BatchingSink` is
the base to write your own.

Example:
    >>> from livescore.live import LiveDispatcher
    >>> from livescore.scorers import create_keyword_coverage_scorer
    >>> from livescore.sinks import PhoenixSink
    >>> sink = PhoenixSink("http://127.0.0.1:6006")
    >>> dispatcher = LiveDispatcher([create_keyword_coverage_scorer()], sinks=[sink],
    ...                             register_atexit=False)
    >>> dispatcher.shutdown(); sink.shutdown()
"""

from livescore._errors import RetryLater, SkipRecord
from livescore.sinks._base import ScoreRecord, ScoreSink, with_sinks
from livescore.sinks._batching import BatchingSink, DeliveryResult, SinkStats, deliver_one_by_one
from livescore.sinks._callback import CallbackSink
from livescore.sinks._langfuse import LangfuseSink
from livescore.sinks._phoenix import PhoenixSink

__all__ = (
    "BatchingSink",
    "CallbackSink",
    "DeliveryResult",
    "LangfuseSink",
    "PhoenixSink",
    "RetryLater",
    "ScoreRecord",
    "ScoreSink",
    "SinkStats",
    "SkipRecord",
    "deliver_one_by_one",
    "with_sinks",
)
