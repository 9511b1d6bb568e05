"""What every runtime integration shares: the dispatcher's hot-path face and how to make one.

An integration (the LangChain handler, the OpenAI Agents SDK processor, the plain-code
recorder) only captures: it turns its runtime's events into a :class:`~livescore.Run` and
hands it to a :class:`Dispatcher`. :func:`dispatcher_for` builds one from the keywords
every integration takes (``scorers``, ``dispatcher``, ``broker``, ``sinks``, the
OpenTelemetry providers, ``capture_content``, ``emit``), so the rules for combining them are
written once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

from livescore.live._conversations import DEFAULT_CONVERSATION_IDLE_TIMEOUT
from livescore.live._sampling import SamplingDecision, ScorerConfig
from livescore.live._stats import DispatchStats
from livescore.runs import Run

if TYPE_CHECKING:
    from opentelemetry._logs import LoggerProvider
    from opentelemetry.trace import TracerProvider

    from livescore._emit import EmitSignal
    from livescore.otel import ContentCapture
    from livescore.scoring import Scorer
    from livescore.sinks import ScoreSink

__all__ = ("Dispatcher", "EmitRunSpans", "conversation_id_of", "dispatcher_for", "sample_turn")

CONVERSATION_KEYS = ("conversation_id", "thread_id", "session_id")
"""The metadata keys an integration reads a run's conversation id from, in this order."""

EmitRunSpans = Literal["auto", "always", "never"]
"""When an integration opens its own ``invoke_agent`` span for a run: ``"auto"`` only when
no other span represents it (no instrumentation's span, no span current at the run's
start), ``"always"``, or ``"never"``."""


class Dispatcher(Protocol):
    """Where an integration hands finished runs (its ``dispatcher=``): what a
    :class:`~livescore.live.LiveDispatcher` offers the hot path. Dashboards' score sinks
    are another thing (:class:`livescore.sinks.ScoreSink`).

    Example:
        >>> from livescore.live import LiveDispatcher
        >>> from livescore.scorers import create_keyword_coverage_scorer
        >>> dispatcher: Dispatcher = LiveDispatcher([create_keyword_coverage_scorer()])
        >>> dispatcher.shutdown()
    """

    def sample(self, key: str | None, conversation_id: str | None = None) -> SamplingDecision:
        """Decide once, at the run's start, whether it is scored (``.sampled``); with the
        run's conversation id, whether its conversation is too."""
        ...

    def end_conversation(self, conversation_id: str) -> bool:
        """Score a conversation now, without waiting for it to go quiet."""
        ...

    def submit(self, run: Run, decision: SamplingDecision | None = None) -> bool:
        """Hand a finished, sampled run over (O(1), never raises)."""
        ...

    def drop(self, decision: SamplingDecision, reason: str) -> None:
        """Account for a sampled run that will never be submitted."""
        ...

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every accepted run is scored."""
        ...

    def shutdown(self, timeout: float | None = None) -> None:
        """Flush, then stop."""
        ...

    def stats(self) -> DispatchStats:
        """Counters of sampled, scored, failed, skipped and dropped runs."""
        ...


def dispatcher_for(
    owner: str,
    scorers: Sequence[Scorer | ScorerConfig] | None,
    dispatcher: Dispatcher | None,
    *,
    name: str,
    broker: str | None = None,
    sinks: Sequence[ScoreSink] | None = None,
    tracer_provider: TracerProvider | None = None,
    meter_provider: Any = None,
    capture_content: ContentCapture = "full",
    logger_provider: LoggerProvider | None = None,
    emit: str | Sequence[EmitSignal] | None = None,
    conversation_idle_timeout: float | None = DEFAULT_CONVERSATION_IDLE_TIMEOUT,
) -> tuple[Dispatcher, bool]:
    """The dispatcher an integration hands its runs to, and whether the integration owns it.

    Either ``scorers`` (a :class:`~livescore.live.LiveDispatcher` is made for them, with the
    options below) or ``dispatcher`` (used as it is, with its own broker, sinks and emitter).

    Args:
        owner: The integration's class name, for error messages.
        scorers: The scorers, when the integration makes its own dispatcher.
        dispatcher: A dispatcher the application made (and owns).
        name: Names the dispatcher's worker thread and queue gauge.
        broker: Score on a worker fleet (``"redis://host:6379/0"``).
        sinks: Dashboards each score also goes to.
        tracer_provider: Where the score spans go (the global provider by default).
        meter_provider: Where the metrics go (the global provider by default).
        capture_content: What user text the score spans and events carry.
        logger_provider: Where the ``gen_ai.evaluation.result`` events go (the global one).
        emit: What each score becomes: ``"spans"``, ``"events"`` or both (the default).
        conversation_idle_timeout: As ``LiveDispatcher(conversation_idle_timeout=)``.

    Raises:
        ValueError: Neither or both of ``scorers`` and ``dispatcher``; an option of the
            dispatcher it makes with ``dispatcher``; ``emit`` with ``broker``.

    Example:
        >>> from livescore.scorers import create_keyword_coverage_scorer
        >>> dispatcher, owned = dispatcher_for(
        ...     "MyIntegration", [create_keyword_coverage_scorer()], None, name="my-agent"
        ... )
        >>> owned
        True
        >>> dispatcher.shutdown()
    """
    if (scorers is None) == (dispatcher is None):
        raise ValueError(f"give {owner} either scorers=[...] or dispatcher=...")
    if dispatcher is not None:
        _refuse_dispatcher_options(owner, broker, sinks, emit, conversation_idle_timeout)
        return dispatcher, False
    from livescore._emit import DEFAULT_EMIT
    from livescore.live._dispatcher import LiveDispatcher
    from livescore.otel import OTelEmitter

    assert scorers is not None
    if broker is not None and emit is not None:
        raise ValueError(
            f"{owner}: with broker=, scores are emitted on the workers: choose what they "
            "emit there (livescore worker --emit)"
        )
    emitter = OTelEmitter(
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        capture_content=capture_content,
        logger_provider=logger_provider,
        emit=DEFAULT_EMIT if emit is None else emit,
    )
    made = LiveDispatcher(
        scorers,
        emitter=emitter,
        broker=broker,
        sinks=sinks,
        name=name,
        conversation_idle_timeout=conversation_idle_timeout,
    )
    return made, True


def _refuse_dispatcher_options(
    owner: str,
    broker: str | None,
    sinks: Sequence[ScoreSink] | None,
    emit: str | Sequence[EmitSignal] | None,
    conversation_idle_timeout: float | None,
) -> None:
    """With ``dispatcher=``, the options of the dispatcher an integration makes are errors."""
    timeout_given = conversation_idle_timeout != DEFAULT_CONVERSATION_IDLE_TIMEOUT
    for keyword, what, example, value in (
        ("broker", "broker", "broker=...", broker),
        ("sinks", "sinks", "sinks=[...]", sinks),
        ("emit", "emitter", "emitter=OTelEmitter(emit=...)", emit),
        ("conversation_idle_timeout", "timeout", "conversation_idle_timeout=...", timeout_given),
    ):
        if value:
            raise ValueError(
                f"{keyword}= configures the dispatcher {owner} creates: with "
                f"dispatcher=..., pass the {what} to that dispatcher "
                f"(LiveDispatcher(..., {example}))"
            )


def conversation_id_of(metadata: Any) -> str | None:
    """The conversation id in a runtime's metadata: ``conversation_id``, ``thread_id``
    (LangGraph's) or ``session_id``, the first one set.

    Example:
        >>> conversation_id_of({"thread_id": "t-42", "user": "ann"})
        't-42'
        >>> conversation_id_of({}) is None
        True
    """
    if not isinstance(metadata, dict):
        return None
    for key in CONVERSATION_KEYS:
        value = metadata.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
            return str(value)
    return None


def sample_turn(sink: Dispatcher, key: str | None, conversation_id: str | None) -> SamplingDecision:
    """``sink.sample(key)``, asking for the conversation's scorers too when the run is a turn.

    Example:
        >>> from livescore.live import LiveDispatcher
        >>> from livescore.scorers import create_keyword_coverage_scorer
        >>> d = LiveDispatcher([create_keyword_coverage_scorer()], register_atexit=False)
        >>> sample_turn(d, "run-1", "thread-1").sampled
        True
        >>> d.shutdown()
    """
    if conversation_id is None:
        return sink.sample(key)
    return sink.sample(key, conversation_id=conversation_id)
