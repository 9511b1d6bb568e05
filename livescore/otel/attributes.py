"""Every OpenTelemetry name livescore emits, in one place.

The GenAI semantic conventions are still in development and their Python constants in
``opentelemetry-semantic-conventions`` are deprecated, so livescore keeps plain strings.
Search your tracing backend for these names (for example ``gen_ai.evaluation.name``).

Scorers put their own facts on the score span through ``ScoreResult.attributes`` (set as
``ctx.attributes[name] = value`` in a step); the names they use live here too. This module
imports nothing but its definitions (``livescore._attributes``, at the bottom of the
layers, where the scorer pipeline can use them too), so a scorer can use it without loading
OpenTelemetry.

Example:
    >>> from livescore.otel import attributes as A
    >>> A.GEN_AI_EVALUATION_SCORE_VALUE
    'gen_ai.evaluation.score.value'
"""

from livescore._attributes import *  # noqa: F403  (the public face of the definitions)
