"""Live scoring for LangChain and LangGraph agents.

Pass a :class:`LiveScoringHandler` in ``config={"callbacks": [...]}`` (or attach it to every
run with :func:`instrument`); each sampled run is recorded and scored off the hot path,
and every score becomes an OpenTelemetry span beside the run it scored.

Example:
    >>> from livescore.scorers import create_keyword_coverage_scorer
    >>> from livescore_langchain import LiveScoringHandler
    >>> handler = LiveScoringHandler(scorers=[create_keyword_coverage_scorer()])
    >>> # agent.invoke({"messages": [...]}, config={"callbacks": [handler]})
    >>> handler.shutdown()
"""

from livescore_langchain._capture import acapture_run, capture_run
from livescore_langchain._handler import LiveScoringHandler, step_run
from livescore_langchain._instrument import instrument, instrumented_handler, uninstrument
from livescore_langchain._version import __version__

__all__ = (
    "LiveScoringHandler",
    "__version__",
    "acapture_run",
    "capture_run",
    "instrument",
    "instrumented_handler",
    "step_run",
    "uninstrument",
)
