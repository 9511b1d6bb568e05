"""The hand-off seam between the dispatcher and what runs a job (DESIGN decision 8).

The dispatcher keeps sampling, the bounded queue, the accounting and the worker thread.
An :class:`Executor` runs on that worker thread's event loop and takes the accepted jobs
one by one from ``jobs`` (an async iterator of :class:`JobHandle`); it reports how each
(run, scorer) pair of a job ends through the handle:

- :meth:`JobHandle.finish` with a :class:`~livescore.ScoreResult` (scored, failed or
  skipped): the dispatcher emits the score and counts it. The in-process executor
  (:class:`InProcessExecutor`, the default) does this.
- :meth:`JobHandle.hand_off`: the pair went to another process (a broker executor that
  publishes :meth:`ScoringJob.to_dict` to Celery or Dramatiq over Redis). The agent's
  process counts it as ``handed_off``; the worker that rebuilds the job with
  :meth:`ScoringJob.from_dict` scores it with :meth:`~livescore.Scorer.score`, emits it
  with :meth:`livescore.otel.OTelEmitter.emit` (``parent=job.parent``, so the score span
  still nests under the run's span) and counts its end (scored, failed, skipped, or dropped
  with a reason) on the same ``livescore.runs`` metric. Across the fleet,
  ``sampled = scored + failed + skipped + dropped``; ``handed_off`` is work in transit.
- :meth:`JobHandle.drop` with a reason: the pair will never be scored (a full local
  buffer while the broker is down: ``"broker_unavailable"``).

A pair the executor never reports by the time the worker stops (cancelled at the shutdown
deadline, or the executor crashed) is dropped by the dispatcher with reason
``"shutdown"`` or ``"worker_error"``, so every sampled pair ends exactly once. Reporting a
pair twice is ignored (the first report wins).

Back-pressure: while an executor does not ask for the next job, jobs wait in the
dispatcher's bounded queue, where its overflow policy applies. The in-process executor asks
once it has room for more scores (``max_concurrency``); a broker executor asks at once and
keeps its own bounded buffer.

``broker=URL`` (on the dispatcher and everything built on it) is shorthand for the executor
that the entry point ``broker`` of group ``livescore.executors`` names: livescore-ai
declares ``livescore.fleet:BrokerExecutor`` there. The live layer sits below the fleet and
never imports it; the entry point is how it finds the fleet's executor (as ``run_evals``
finds an integration's target adapter).
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, ClassVar, Protocol, runtime_checkable

import anyio

from livescore.live._conversations import ConversationLimits
from livescore.live._guard import scoring_context
from livescore.live._sampling import ScorerConfig
from livescore.runs import Conversation, Run, TraceParent
from livescore.scoring import RunMemo, ScoreResult

__all__ = (
    "EXECUTORS_GROUP",
    "ConversationTurn",
    "Executor",
    "InProcessExecutor",
    "JobHandle",
    "ScoringJob",
    "broker_executor",
)

_log = logging.getLogger("livescore.live")

EXECUTORS_GROUP = "livescore.executors"
"""The entry point group whose ``broker`` entry builds the executor of ``broker=URL``."""


@dataclass(frozen=True, slots=True)
class ConversationTurn:
    """A turn of a conversation, for an executor that keeps conversations itself.

    An executor with ``tracks_conversations = True`` (the fleet's
    :class:`~livescore.fleet.BrokerExecutor`, which keeps them in Redis) gets each turn a
    conversation scorer sampled as :attr:`ScoringJob.turn`, and each
    :meth:`~livescore.live.LiveDispatcher.end_conversation` as a job whose turn has
    ``end=True``; the in-process dispatcher keeps them otherwise.

    Attributes:
        conversation_id: The conversation's id.
        scorers: The conversation scorers that sample it.
        idle_timeout: Seconds of quiet after which it is scored (``None``: never by
            itself).
        end: An end request: score the conversation now (the job's run is a placeholder).
        limits: The agent's bounds on what a conversation holds (the keeper applies them).
    """

    conversation_id: str
    scorers: tuple[ScorerConfig, ...]
    idle_timeout: float | None
    end: bool = False
    limits: ConversationLimits | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe record (scorers by id, with their rates)."""
        record: dict[str, Any] = {
            "id": self.conversation_id,
            "idle_timeout": self.idle_timeout,
            "end": self.end,
            "scorers": _scorer_records(self.scorers),
        }
        if self.limits is not None:
            record["limits"] = {
                "max_turns": self.limits.max_turns,
                "max_chars": self.limits.max_chars,
                "ttl": self.limits.ttl,
                "max_age": self.limits.max_age,
            }
        return record


def _scorer_records(
    configs: tuple[ScorerConfig, ...], rate_of: Callable[[int], float | None] | None = None
) -> list[dict[str, Any]]:
    return [
        {
            "id": c.scorer_id,
            "version": c.scorer.version,
            "sample_rate": rate_of(i) if rate_of is not None else c.rate,
            "timeout": c.timeout,
        }
        for i, c in enumerate(configs)
    ]


@dataclass(frozen=True, slots=True)
class ScoringJob:
    """One sampled run and the scorers that picked it: the unit an executor runs.

    Attributes:
        run: The captured run (JSON-safe through :meth:`~livescore.Run.to_dict`).
        scorers: The scorers to run on it, with their rates, timeouts and limits.
        parent: The span its scores nest under: the run's own span, else the span that
            was current when the run was submitted; ``None`` for a root span in a new
            trace. Its ids are normalised (lowercase hex).
        conversation: For a conversation's evaluation: the conversation its scorers judge
            (``run`` is its last turn, ``parent`` that turn's span); ``None`` for a run.
        turn: A conversation turn to keep, for an executor that keeps conversations
            itself (see :class:`ConversationTurn`); ``None`` otherwise.

    Example:
        >>> from livescore import Run
        >>> from livescore.runs import TraceParent
        >>> from livescore.scorers import create_keyword_coverage_scorer
        >>> job = ScoringJob(Run(input="hi", output="hello", run_id="r1"),
        ...                  (ScorerConfig(create_keyword_coverage_scorer()),),
        ...                  TraceParent("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"))
        >>> record = job.to_dict()
        >>> record["run"]["run_id"], record["parent"]["span_id"]
        ('r1', '00f067aa0ba902b7')
    """

    FORMAT: ClassVar[int] = 2
    """The newest version of :meth:`to_dict`'s record; a worker refuses newer ones. A job of
    one run keeps format 1 (so older workers still score it); a conversation's evaluation
    or turn is format 2."""

    run: Run
    scorers: tuple[ScorerConfig, ...]
    parent: TraceParent | None = field(default=None)
    rates: tuple[float | None, ...] | None = field(default=None)
    """The rate that sampled each scorer's pair, when it is not the scorer's fixed rate (a
    :class:`~livescore.live.BudgetSampling` adjusts its rate); ``None``: the fixed rates."""
    conversation: Conversation | None = field(default=None)
    turn: ConversationTurn | None = field(default=None)

    def rate_of(self, index: int) -> float | None:
        """The sampling rate of the pair at ``index``, as its score span carries it."""
        if self.rates is not None and index < len(self.rates):
            return self.rates[index]
        return self.scorers[index].rate

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe record: the run, its parent span, and each scorer by id with its rate
        and timeout (a worker knows the scorers themselves by id); a conversation's
        evaluation carries the conversation, a turn the conversation's id."""
        record: dict[str, Any] = {
            "format": 1,
            "run": self.run.to_dict(),
            "parent": self.parent.to_dict() if self.parent is not None else None,
            "scorers": _scorer_records(self.scorers, self.rate_of),
        }
        if self.conversation is not None:
            record["format"] = 2
            record["conversation"] = self.conversation.to_dict()
        if self.turn is not None:
            record["format"] = 2
            record["turn"] = self.turn.to_dict()
        return record

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], scorers: Mapping[str, ScorerConfig]) -> ScoringJob:
        """Rebuild a job on a remote worker from :meth:`to_dict` and its scorers by id.

        The parent comes back marked remote (``parent.is_remote``).

        Raises:
            KeyError: A scorer id in the record is not in ``scorers``.
            ValueError: The record comes from a newer livescore (its ``format``).
        """
        version = data.get("format", 1)
        if not isinstance(version, int) or version > cls.FORMAT:
            raise ValueError(
                f"this job record has format {version!r}; this livescore reads up to "
                f"{cls.FORMAT} (upgrade the worker)"
            )
        configs = []
        for entry in data.get("scorers") or ():
            sid = entry["id"]
            if sid not in scorers:
                raise KeyError(f"scorer {sid!r} is not known to this worker")
            configs.append(scorers[sid])
        conversation = data.get("conversation")
        return cls(
            Run.from_dict(data["run"]),
            tuple(configs),
            TraceParent.from_dict(data.get("parent")),
            conversation=(
                Conversation.from_dict(conversation) if isinstance(conversation, Mapping) else None
            ),
        )


class JobHandle(Protocol):
    """An accepted job as an executor holds it, and how it reports each pair's end.

    The pair at ``index`` is (``job.run``, ``job.scorers[index]``). Every method is
    thread-safe and never raises; a pair reported twice keeps its first report.
    """

    @property
    def job(self) -> ScoringJob:
        """The job."""
        ...

    def finish(self, index: int, result: ScoreResult, *, start_time_ns: int | None = None) -> None:
        """The pair ended here with ``result``: the dispatcher emits it and counts it.

        ``start_time_ns`` (epoch ns) is when scoring started, for the span's start.
        """
        ...

    def drop(self, reason: str, index: int | None = None) -> None:
        """The pair (every unreported pair when ``index`` is ``None``) will never be scored."""
        ...

    def hand_off(self, index: int | None = None) -> None:
        """The pair (every unreported pair when ``index`` is ``None``) went to another
        process, which scores it and counts how it ends."""
        ...


@runtime_checkable
class Executor(Protocol):
    """Runs the jobs a :class:`~livescore.live.LiveDispatcher` accepted.

    ``run`` is awaited once per worker, on the dispatcher's worker thread's event loop (an
    anyio loop, asyncio backend). It takes jobs from ``jobs`` until the iterator ends (the
    dispatcher is shutting down and its queue is empty), must report every pair of every
    job it took (see :class:`JobHandle`), and returns once the work it started is done.
    At the shutdown deadline the dispatcher cancels it; pairs not reported by then are
    counted as dropped (``"shutdown"``). It must not block the loop: blocking calls go to
    ``anyio.to_thread.run_sync``. If it raises, the dispatcher logs it, drops what it left
    unreported (``"worker_error"``) and starts a fresh worker on the next submit.
    """

    async def run(self, jobs: AsyncIterator[JobHandle]) -> None:
        """Run jobs until ``jobs`` ends."""
        ...


class InProcessExecutor:
    """Score jobs on the dispatcher's own worker loop: the default executor.

    Each (run, scorer) pair is scored with :meth:`~livescore.Scorer.score` (which never
    raises and enforces the scorer's ``timeout``), within the scorer's ``max_concurrency``
    and this executor's ``max_concurrency`` over all scorers, then handed back to the
    dispatcher with :meth:`JobHandle.finish`, which emits it.

    The scorers of one job share a :class:`~livescore.scoring.RunMemo`: when two of them
    send the judge the same request (the hallucination and faithfulness scorers both
    extract the answer's claims), it is sent once. A handle with a ``memo`` attribute of
    its own brings a longer-lived one: the dispatcher's jobs of one conversation (its
    turns' run scores and its evaluations) share the conversation's. Fleet workers score
    through this executor, so they share the same way.

    Args:
        max_concurrency: Scores in flight at once, over all scorers. A score makes its
            judge calls one after another, so this also caps concurrent judge calls.
        share_judge_calls: Give each job a :class:`~livescore.scoring.RunMemo` (the
            default); ``False`` sends every scorer's requests as they are (to measure what
            sharing saves).

    Example:
        >>> from livescore.live import LiveDispatcher
        >>> from livescore.scorers import create_keyword_coverage_scorer
        >>> dispatcher = LiveDispatcher([create_keyword_coverage_scorer()],
        ...                             executor=InProcessExecutor(max_concurrency=32),
        ...                             register_atexit=False)
        >>> dispatcher.shutdown()
    """

    def __init__(self, *, max_concurrency: int = 16, share_judge_calls: bool = True) -> None:
        if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int):
            raise TypeError(f"max_concurrency must be an int, not {max_concurrency!r}")
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be at least 1, not {max_concurrency}")
        self.max_concurrency = max_concurrency
        self.share_judge_calls = bool(share_judge_calls)

    def __repr__(self) -> str:
        sharing = "" if self.share_judge_calls else ", share_judge_calls=False"
        return f"InProcessExecutor(max_concurrency={self.max_concurrency}{sharing})"

    async def run(self, jobs: AsyncIterator[JobHandle]) -> None:
        """Score every pair of every job, ``max_concurrency`` at a time."""
        admission = anyio.Semaphore(self.max_concurrency)
        limiters: dict[str, anyio.CapacityLimiter] = {}
        async with anyio.create_task_group() as tg:
            async for handle in jobs:
                # One memo per job: its scorers score the same run, concurrently. A job may
                # bring a longer-lived one (a conversation's: its turns and evaluations).
                memo = None
                if self.share_judge_calls:
                    memo = getattr(handle, "memo", None) or RunMemo()
                for index, config in enumerate(handle.job.scorers):
                    # Waiting here is the back-pressure: the next job stays in the queue.
                    await admission.acquire()
                    limiter = limiters.get(config.scorer_id)
                    if limiter is None:
                        limiter = limiters[config.scorer_id] = anyio.CapacityLimiter(
                            config.max_concurrency
                        )
                    tg.start_soon(_score_pair, handle, index, limiter, admission, memo)


async def _score_pair(
    handle: JobHandle,
    index: int,
    limiter: anyio.CapacityLimiter,
    admission: anyio.Semaphore,
    memo: RunMemo | None,
) -> None:
    job = handle.job
    config = job.scorers[index]
    token = scoring_context().set(True)  # this task, and the threads it starts, are scoring
    try:
        async with limiter:
            start_ns = time.time_ns()
            # The timeout covers the score, not the wait for a concurrency slot.
            # A conversation's evaluation: its conversation scorers judge it whole; a run
            # scorer in the same job (an offline conversation item) judges its last turn.
            subject = (
                job.conversation
                if job.conversation is not None and config.scorer.level == "conversation"
                else job.run
            )
            result = await config.scorer.score(subject, timeout=config.timeout, memo=memo)
    except Exception:
        # Scorer.score never raises; a subclass that overrides it might. One pair is lost,
        # not the worker and every other score in flight.
        _log.exception("livescore: scorer %r raised from score()", config.scorer_id)
        handle.drop("scorer_error", index)
        return
    finally:
        admission.release()
        scoring_context().reset(token)
    handle.finish(index, result, start_time_ns=start_ns)


def broker_executor(url: str) -> Executor:
    """The executor ``broker=url`` stands for: the ``broker`` entry point's, built with ``url``.

    Raises:
        ImportError: No installed distribution declares the entry point (a broken install).
        ValueError: The executor refuses ``url`` (the fleet's wants a Redis URL).
    """
    return _broker_factory()(url)


_factory: Callable[[str], Executor] | None = None


def _broker_factory() -> Callable[[str], Executor]:
    global _factory
    if _factory is None:
        found = entry_points(group=EXECUTORS_GROUP, name="broker")
        if not found:
            raise ImportError(
                f"broker= needs the executor declared as entry point 'broker' of group "
                f"{EXECUTORS_GROUP!r}; reinstall livescore-ai"
            )
        _factory = next(iter(found)).load()
    assert _factory is not None
    return _factory
