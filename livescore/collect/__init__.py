"""Score any agent from its OpenTelemetry spans: in its process, or beside it over OTLP.

- :class:`LiveScoringSpanProcessor` (also ``livescore.LiveScoringSpanProcessor``):
  add it to the application's tracer provider; every agent run its spans describe is
  assembled into a :class:`~livescore.Run` and scored in the background.
- :class:`OTLPReceiver` (what ``livescore collect`` serves): an OTLP/HTTP trace receiver
  that any process, in any language, exports to (or an OpenTelemetry Collector forwards
  to); it assembles and scores runs the same way.

Both hand their spans to one :class:`SpanPipeline` (a bounded queue and a thread of its
own) and assemble them with :mod:`livescore.traces`. Neither imports the OpenTelemetry
SDK: the processor reads the SDK's spans by duck typing.

Example:
    >>> from livescore.collect import LiveScoringSpanProcessor
    >>> from livescore.scorers import create_keyword_coverage_scorer
    >>> processor = LiveScoringSpanProcessor(scorers=[create_keyword_coverage_scorer()])
    >>> processor.trace_stats().spans_refused
    0
    >>> processor.shutdown()
"""

from livescore.collect._pipeline import PipelineStats, SpanPipeline
from livescore.collect._processor import LiveScoringSpanProcessor
from livescore.collect._receiver import OTLPReceiver, ReceiverStats

__all__ = (
    "LiveScoringSpanProcessor",
    "OTLPReceiver",
    "PipelineStats",
    "ReceiverStats",
    "SpanPipeline",
)
