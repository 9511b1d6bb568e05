"""Live scoring: sample runs on the hot path, score them in the background.

The :class:`LiveDispatcher` samples, queues and counts; an :class:`Executor` runs the
accepted :class:`ScoringJob` records (the :class:`InProcessExecutor` by default, on the
dispatcher's worker thread). :func:`install_sigterm_handler` keeps scores through a
container's SIGTERM.

What each way out of a process does to scores still queued or in flight:

- ``main`` returns, ``sys.exit()``, an uncaught exception: the exit hook finishes them,
  flushes the emitter and lets the sinks deliver, all within one deadline:
  ``LIVESCORE_EXIT_TIMEOUT`` seconds (5 by default; read at exit), or a dispatcher's or a
  sink's ``shutdown_timeout`` for its own part if that is shorter. The rest is counted as
  dropped (``shutdown``): a stalled judge or dashboard holds the exit no longer than that.
- SIGTERM with :func:`install_sigterm_handler`: finished within its ``timeout``, the rest
  counted as dropped, the emitter flushed; then the previous handler runs.
- SIGTERM with Python's default handling (how containers stop processes): lost,
  uncounted, and so are spans the OpenTelemetry SDK still buffers.
- SIGKILL, ``os._exit()``, a crash of the interpreter: lost, uncounted.
- With ``broker=`` (:mod:`livescore.fleet`): jobs already published wait in Redis and are
  scored by ``livescore worker`` processes whatever happens to this process; only those not
  yet published follow the rules above.

Example:
    >>> from livescore import Run
    >>> from livescore.live import LiveDispatcher, ScorerConfig
    >>> from livescore.scorers import create_keyword_coverage_scorer
    >>> with LiveDispatcher(
    ...     [ScorerConfig(create_keyword_coverage_scorer(), sampling=1.0)],
    ...     register_atexit=False,
    ... ) as dispatcher:
    ...     dispatcher.submit(Run(input="Rust ownership", output="Ownership in Rust"))
    ...     dispatcher.flush(timeout=10)
    True
    True
"""

from livescore.live._dispatcher import LiveDispatcher
from livescore.live._executor import Executor, InProcessExecutor, JobHandle, ScoringJob
from livescore.live._exit import install_sigterm_handler
from livescore.live._guard import is_scoring
from livescore.live._integration import Dispatcher, EmitRunSpans, dispatcher_for
from livescore.live._recorder import RunRecorder, record_run
from livescore.live._sampling import BudgetSampling, SamplingDecision, ScorerConfig
from livescore.live._stats import DispatchStats, ScorerStats

__all__ = (
    "BudgetSampling",
    "DispatchStats",
    "Dispatcher",
    "EmitRunSpans",
    "Executor",
    "InProcessExecutor",
    "JobHandle",
    "LiveDispatcher",
    "RunRecorder",
    "SamplingDecision",
    "ScorerConfig",
    "ScorerStats",
    "ScoringJob",
    "dispatcher_for",
    "install_sigterm_handler",
    "is_scoring",
    "record_run",
)
