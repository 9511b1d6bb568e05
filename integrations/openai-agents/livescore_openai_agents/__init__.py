"""Live scoring for the OpenAI Agents SDK.

Register a :class:`LiveScoringProcessor` with the SDK's tracing
(``agents.add_trace_processor``); each sampled run is recorded from its trace and scored
off the hot path, and every score becomes an OpenTelemetry span beside the run it scored.

Example:
    >>> from livescore.scorers import create_keyword_coverage_scorer
    >>> from livescore_openai_agents import LiveScoringProcessor
    >>> processor = LiveScoringProcessor(scorers=[create_keyword_coverage_scorer()])
    >>> # from agents import add_trace_processor; add_trace_processor(processor)
    >>> processor.shutdown()
"""

from livescore_openai_agents._processor import NO_CONTENT_REASON, LiveScoringProcessor

__all__ = ("NO_CONTENT_REASON", "LiveScoringProcessor")
