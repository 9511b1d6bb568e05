"""A sink that hands each finished score to a function of yours, in this process."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from livescore.sinks._base import ScoreRecord

__all__ = ("CallbackSink",)

_log = logging.getLogger("livescore.sinks")


class CallbackSink:
    """A :class:`~livescore.sinks.ScoreSink` that calls ``on_score(record)`` for each
    finished score: to print it, keep it, or pass it on.

    ``on_score`` runs on the thread that finished the score (a live dispatcher's worker, an
    eval loop), never on the agent's, as each score is made, so a ``flush`` of the dispatcher
    or handler returns after it has seen every score flushed. Keep it quick (print, append,
    put on a queue): a slow one delays the scores behind it. An exception from it costs a
    log line (the first one a warning, with its traceback; later ones at debug level) and
    counts in ``errors``, never the score. Failed and skipped scores are passed too
    (``record.result.status``; ``record.result.error`` says why a score failed).

    Args:
        on_score: Called with each :class:`~livescore.sinks.ScoreRecord` (the run, its
            :class:`~livescore.ScoreResult`, the sample rate…).
        name: The sink's name in logs.

    Example:
        >>> from livescore import LiveDispatcher, Run
        >>> from livescore.scorers import create_keyword_coverage_scorer
        >>> def show(record):
        ...     r = record.result
        ...     print(f"{r.scorer_id}: score={r.score} label={r.label}")
        >>> with LiveDispatcher([create_keyword_coverage_scorer()], sinks=[CallbackSink(show)],
        ...                     register_atexit=False) as dispatcher:
        ...     _ = dispatcher.submit(Run(input="Weather in Paris?", output="Sunny in Paris."))
        ...     _ = dispatcher.flush(timeout=30)
        keyword-coverage: score=0.5 label=partial
    """

    def __init__(self, on_score: Callable[[ScoreRecord], object], *, name: str = "callback"):
        if not callable(on_score):
            raise TypeError(f"on_score must be callable, not {type(on_score).__name__}")
        if not isinstance(name, str) or not name:
            raise ValueError("name must be a non-empty string")
        self.on_score = on_score
        self._name = name
        self._lock = threading.Lock()
        self._closed = False
        self.calls = 0
        """Scores handed to ``on_score``."""
        self.errors = 0
        """Calls of ``on_score`` that raised."""
        self.dropped = 0
        """Scores sent after :meth:`shutdown`, not passed on."""

    def __repr__(self) -> str:
        return f"CallbackSink({self.on_score!r}, name={self._name!r})"

    @property
    def name(self) -> str:
        """The sink's name in logs (``"callback"`` by default)."""
        return self._name

    def send(self, record: ScoreRecord) -> None:
        """Call ``on_score(record)`` now; never raises."""
        with self._lock:
            if self._closed:
                self.dropped += 1
                return
            self.calls += 1
        try:
            self.on_score(record)
        except Exception:
            with self._lock:
                self.errors += 1
                first = self.errors == 1
            if first:
                _log.warning("livescore: sink %r: on_score raised", self._name, exc_info=True)
            else:
                _log.debug("livescore: sink %r: on_score raised", self._name, exc_info=True)

    def flush(self, timeout: float | None = None) -> bool:
        """Nothing is held: every score was passed on in :meth:`send`."""
        return True

    def shutdown(self, timeout: float | None = None) -> None:
        """Pass on no more scores (later ones count in ``dropped``)."""
        with self._lock:
            self._closed = True
