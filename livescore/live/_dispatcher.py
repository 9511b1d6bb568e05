"""The live dispatcher: sample on the hot path, hand jobs to an executor, count everything."""

from __future__ import annotations

import dataclasses
import logging
import math
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from livescore._background import BackgroundWorker, Consumer, Overflow, fit_to_deadline
from livescore._emit import EmitSignal
from livescore._threads import run_in_thread
from livescore._trace_ids import normalize_span_id, normalize_trace_id
from livescore.live._conversations import (
    DEFAULT_CONVERSATION_IDLE_TIMEOUT,
    ConversationDue,
    ConversationLimits,
    ConversationStats,
    ConversationTracker,
)
from livescore.live._executor import (
    ConversationTurn,
    Executor,
    InProcessExecutor,
    JobHandle,
    ScoringJob,
    broker_executor,
)
from livescore.live._exit import track
from livescore.live._guard import add_worker_thread, is_scoring, remove_worker_thread
from livescore.live._sampling import SamplingDecision, ScorerConfig, decide, decide_conversation
from livescore.live._stats import DispatchStats
from livescore.live._tally import Tally
from livescore.otel import Emitter, current_trace_parent
from livescore.otel import attributes as A
from livescore.pii import RedactSpec
from livescore.runs import Run, RunLike, TraceParent, coerce_run
from livescore.scoring import RunMemo, Scorer, ScoreResult

if TYPE_CHECKING:
    from livescore.sinks import ScoreSink

__all__ = ("LiveDispatcher", "OverflowPolicy")

_log = logging.getLogger("livescore.live")

OverflowPolicy = Overflow
"""What a full queue does: refuse the new run, or evict the oldest queued run for it."""

# How long shutdown waits, past its deadline, for cancelled scoring tasks to unwind (at
# exit, only what the exit deadline leaves).
_CANCEL_GRACE_S = 2.0

_EMITTER_METHODS = (
    "emit",
    "record_sampled",
    "record_dropped",
    "record_handed_off",
    "observe_queue_depth",
    "flush",
)

# How an executor ends pairs it does not score.
_DROPPED, _HANDED_OFF = "dropped", "handed_off"


# How long a worker woken by a submit waits for more runs before it starts on them. Scores
# take judge calls of seconds; a few milliseconds more are invisible there, while one
# wake-up per batch instead of per run takes a GIL hand-off off the agent's busy thread.
_LINGER_S = 0.02


class _TurnInfo:
    """What a job carries of a conversation: a turn to record, or a request to end it."""

    __slots__ = ("at", "configs", "conversation_id", "end")

    def __init__(
        self,
        conversation_id: str | None,
        configs: tuple[ScorerConfig, ...],
        at: float,
        end: str | None = None,
    ) -> None:
        self.conversation_id = conversation_id  # None: every conversation (at shutdown)
        self.configs = configs
        self.at = at  # when it was submitted (monotonic): the conversation's last activity
        self.end = end  # for an end request, why ("ended", "shutdown")


class _Job:
    """One accepted job on its way through the executor: the :class:`JobHandle` it gets.

    Its state is guarded by the dispatcher's lock; the methods may be called from any
    thread. A job that carries a conversation turn (or an end request) has one pair more
    than it has scorers, at index ``len(job.scorers)``: the turn, which ends when the
    worker records it (or an executor that keeps conversations hands it off). An end
    request's pair ends once the evaluations it started (``waiting``) have.
    """

    __slots__ = (
        "_dispatcher",
        "at",
        "done",
        "job",
        "memo",
        "owner",
        "remaining",
        "seq",
        "taken",
        "turn",
        "waiting",
    )

    def __init__(
        self,
        dispatcher: LiveDispatcher,
        job: ScoringJob,
        turn: _TurnInfo | None = None,
        at: float = math.inf,
    ) -> None:
        self._dispatcher = dispatcher
        self.job = job
        self.turn = turn
        # When it was queued (the conversations' clock), with conversation scorers: no turn
        # queued behind it is older, so a deadline before it is one no unrecorded turn beat.
        self.at = turn.at if turn is not None else at
        self.seq = 0  # numbered by the queue
        self.taken = False  # False: its pairs are queued; True: the executor has it
        pairs = len(job.scorers) + (1 if turn is not None else 0)
        self.done = [False] * pairs  # each pair is counted as finished once
        self.remaining = pairs  # pairs not yet finished *and* emitted
        self.owner: _Job | None = None  # the end request this evaluation was made for
        self.waiting = 0  # for an end request: its evaluations not yet finished
        self.memo: RunMemo | None = None  # judge answers shared beyond the job (a conversation)

    def finish(self, index: int, result: ScoreResult, *, start_time_ns: int | None = None) -> None:
        self._dispatcher._finish(self, index, result, start_time_ns)

    def drop(self, reason: str, index: int | None = None) -> None:
        self._dispatcher._end_pairs(self, _indices(self, index), _DROPPED, str(reason))

    def hand_off(self, index: int | None = None) -> None:
        self._dispatcher._end_pairs(self, _indices(self, index), _HANDED_OFF, None)


def _applied_rates(
    configs: list[ScorerConfig], rates: list[float | None]
) -> tuple[float | None, ...] | None:
    """The rates a job carries: only when one differs from its scorer's fixed rate."""
    if all(rate == config.rate for config, rate in zip(configs, rates, strict=True)):
        return None
    return tuple(rates)


def _indices(job: _Job, index: int | None) -> Iterable[int]:
    if index is None:
        return range(len(job.done))
    return (index,) if 0 <= index < len(job.done) else ()


class _Ledger:
    """Every accepted (run, scorer) pair ends exactly once: scored, failed or skipped (its
    result), dropped, or handed off. Each job has a flag per pair; the first end counts and
    later reports of the same pair are ignored (a scorer that reports after a shutdown gave
    it up). A job is finished on the worker once every pair ended *and* was emitted, and a
    conversation turn (the pair at index ``len(job.scorers)``) once the evaluations it
    started have. Called under the dispatcher's lock.
    """

    def __init__(
        self, worker: BackgroundWorker[_Job], tally: Tally, conversations: ConversationTracker
    ) -> None:
        self._worker = worker
        self._tally = tally
        self._conversations = conversations

    def result_locked(self, job: _Job, index: int, result: ScoreResult) -> ScorerConfig | None:
        """Count the result of pair ``index``; its scorer, or ``None`` if it ended already.

        The job is completed after the emission (:meth:`complete_locked`).
        """
        if not 0 <= index < len(job.done) or job.done[index]:
            return None
        job.done[index] = True
        config = job.job.scorers[index]
        config.record_score(result)  # a budget-following rate learns the cost
        counts = self._tally.of(config.scorer_id)
        counts.in_flight -= 1
        if result.status == "scored":
            counts.scored += 1
        elif result.status == "skipped":
            counts.skipped += 1
        else:
            counts.failed += 1
            error_type = result.error_type or "error"
            counts.failed_by_type[error_type] = counts.failed_by_type.get(error_type, 0) + 1
        return config

    def drop_locked(self, job: _Job, reason: str) -> None:
        """Drop every unfinished pair of ``job``."""
        self.end_locked(job, range(len(job.done)), _DROPPED, reason)

    def end_locked(self, job: _Job, indices: Iterable[int], kind: str, reason: str | None) -> None:
        """End pairs without a result: dropped (with ``reason``) or handed off."""
        scorers = job.job.scorers
        for i in indices:
            if job.done[i]:
                continue
            job.done[i] = True
            if i >= len(scorers):  # the conversation turn the job carries
                turn = job.turn
                if turn is not None and turn.end is None:
                    if kind == _HANDED_OFF:
                        self._conversations.count_handed_off()
                    else:
                        self._conversations.count_dropped(reason or "dropped")
                self.complete_locked(job)
                continue
            scorer_id = scorers[i].scorer_id
            counts = self._tally.of(scorer_id)
            if job.taken:
                counts.in_flight -= 1
            else:
                counts.queued -= 1
            if kind == _HANDED_OFF:
                self._tally.handed_off_locked(scorer_id)
            else:
                self._tally.dropped_locked(scorer_id, reason or "dropped")
            self.complete_locked(job)

    def complete_locked(self, job: _Job) -> None:
        """One more pair of ``job`` ended and was emitted."""
        job.remaining -= 1
        if job.remaining == 0:
            self._worker.finish_locked(job)
            owner = job.owner
            if owner is not None:
                owner.waiting -= 1
                if owner.waiting == 0:
                    self.end_turn_locked(owner)

    def end_turn_locked(self, job: _Job) -> None:
        """The turn (or end request) of ``job`` is done with."""
        index = len(job.job.scorers)
        if index < len(job.done) and not job.done[index]:
            job.done[index] = True
            self.complete_locked(job)


class _Scheduling:
    """A dispatcher's conversations in process: the worker records each turn as it takes
    it, and a conversation due (quiet, ended, or past a bound) becomes an evaluation job
    that the executor takes before the queued ones. Called under the dispatcher's lock.
    """

    def __init__(self, dispatcher: LiveDispatcher) -> None:
        self._dispatcher = dispatcher
        self.tracker = ConversationTracker(
            dispatcher.conversation_idle_timeout, dispatcher.conversation_limits
        )
        self.ready: deque[_Job] = deque()
        """Evaluations made and not yet taken by the executor."""

    def record_locked(self, job: _Job) -> None:
        """Record the turn (or the end request) ``job`` carries: the worker, at take."""
        turn = job.turn
        assert turn is not None
        tracker = self.tracker
        if turn.end is not None:
            self._schedule(tracker.end(turn.conversation_id, turn.end), job)
        else:
            assert turn.conversation_id is not None
            run, parent = job.job.run, job.job.parent
            due = tracker.add(turn.conversation_id, run, parent, turn.configs, turn.at)
            # A bound reached by this turn scores conversations now: the turn is done with
            # once they are (a flush that waits for the turn waits for them).
            self._schedule(due, job)
            # The turn's run scores share judge answers with the conversation's evaluations.
            job.memo = tracker.memo_of(turn.conversation_id)
        if job.waiting == 0:
            self._dispatcher._ledger.end_turn_locked(job)

    def pop_due_locked(self, oldest_queued: float | None) -> bool:
        """Make the evaluations of the conversations due now; ``True`` if there are any.

        A conversation is quiet only if no turn of it is still queued: the deadlines count
        up to ``oldest_queued`` (a worker that lags behind a burst must not score a
        conversation its next turn awaits).
        """
        if self.tracker.next_wake() is None:
            return False
        now = self._dispatcher._clock()
        if oldest_queued is not None:
            now = min(now, oldest_queued)
        self._schedule(self.tracker.pop_due(now), None)
        return bool(self.ready)

    def wait_locked(self) -> float | None:
        """Seconds until the next conversation timer (one heap, not one timer each)."""
        wake = self.tracker.next_wake()
        return None if wake is None else max(wake - self._dispatcher._clock(), 0.0)

    def _schedule(self, due: list[ConversationDue], owner: _Job | None) -> None:
        """Make an evaluation job for each conversation due, for the executor to take next."""
        d = self._dispatcher
        for item in due:
            run = item.conversation.last_run
            if not item.scorers or run is None:
                continue
            job = _Job(
                d, ScoringJob(run, item.scorers, item.parent, conversation=item.conversation)
            )
            job.taken = True
            job.memo = item.memo
            d._q.track_locked(job)  # shutdown and flush see it like any other job
            for config in item.scorers:
                d._tally.sampled_locked(config.scorer_id)
                d._tally.of(config.scorer_id).in_flight += 1
            if owner is not None:
                job.owner = owner
                owner.waiting += 1
            self.ready.append(job)


class _Serving(Consumer[_Job]):
    """What the dispatcher's background worker serves, on its event loop: the executor
    takes the accepted jobs one at a time (conversations due first)."""

    event_loop = True
    role = "scoring worker"

    def __init__(self, dispatcher: LiveDispatcher) -> None:
        self._dispatcher = dispatcher
        self._ident = 0

    def take_locked(self, queue: deque[_Job], now: float, urgent: bool) -> list[_Job]:
        job = self._dispatcher._take_locked()
        return [] if job is None else [job]

    def wait_locked(self, now: float) -> float | None:
        # Until the next conversation timer at the latest (one heap, not one timer each).
        return self._dispatcher._scheduling.wait_locked()

    async def serve(self, batches: AsyncIterator[list[_Job]]) -> None:
        await self._dispatcher.executor.run(_Jobs(batches))

    def dropped_locked(self, items: list[_Job], reason: str) -> None:
        dispatcher = self._dispatcher
        if reason != "queue_full":  # the worker's thread is gone: so are the ready jobs
            dispatcher._scheduling.ready.clear()
        for job in items:
            dispatcher._ledger.drop_locked(job, reason)

    def report(self) -> None:
        self._dispatcher._report_metrics()

    def thread_started(self) -> None:
        self._ident = threading.get_ident()
        add_worker_thread(self._ident)

    def thread_stopped(self) -> None:
        remove_worker_thread(self._ident)

    def after_fork(self) -> None:
        self._dispatcher._reset_state()


class _Jobs:
    """The worker's batches (one job each) as the jobs an executor takes."""

    def __init__(self, batches: AsyncIterator[list[_Job]]) -> None:
        self._batches = batches
        self._taken: deque[_Job] = deque()

    def __aiter__(self) -> _Jobs:
        return self

    async def __anext__(self) -> JobHandle:
        while not self._taken:
            self._taken.extend(await self._batches.__anext__())
        return self._taken.popleft()


class LiveDispatcher:
    """Score sampled runs in the background without ever slowing the agent.

    :meth:`submit` is O(1) and never blocks or raises: it decides sampling, puts the run on
    a bounded queue and returns. One daemon worker thread, started on the first submit,
    runs an anyio event loop (asyncio) on which the executor takes the queued jobs; the
    default :class:`~livescore.live.InProcessExecutor` scores them there (judge calls never
    touch the agent's thread or loop), within per-scorer concurrency limits and timeouts
    and a global limit on scores in flight. Every score, failure and skip goes to the
    emitter (OpenTelemetry by default); every sampled (run, scorer) pair ends as exactly one
    of scored, failed, skipped, dropped or handed off (to another process, by a broker
    executor), and :meth:`stats` counts them. The sampled and dropped counts reach the
    emitter from the worker too, batched, so that the agent's thread never pays for a meter
    call; :meth:`flush` hands over what is still pending.

    Scores nest under the run's span (``run.trace_id`` / ``run.span_id``), or, for a run
    that carries no span, under the span current when :meth:`submit` was called. A run
    whose trace is not sampled (its trace flags lack the sampled bit) is dropped with
    reason ``"trace_not_sampled"`` without any judge call, unless
    ``score_unsampled_traces=True``.

    Conversations: a conversation scorer (``create_scorer(..., level="conversation")`` or
    a prebuilt one) in ``scorers`` judges whole conversations, the runs that share a
    ``Run.conversation_id``. It samples a conversation once, from its id, and runs when the
    conversation has been quiet for ``conversation_idle_timeout`` seconds, or at once on
    :meth:`end_conversation`; a conversation that resumes after being scored is scored
    again when it next goes quiet, covering every turn held (each score is kept:
    ``result.turns`` says which turns it covers). Memory is bounded by
    ``conversation_limits``; what the bounds let go is counted in
    :meth:`conversation_stats`, and a conversation is scored before its turns are let go.
    :meth:`shutdown` scores the turns no score covers yet, within its deadline. For a
    conversation scorer the unit of :meth:`stats` is one evaluation (a conversation and the
    turns it covers).

    Args:
        scorers: Scorers, or :class:`ScorerConfig` for sampling, timeout and concurrency.
            Run scorers and conversation scorers may be mixed.
        emitter: Where scores and counts go; an :class:`~livescore.otel.OTelEmitter` on the
            global providers by default.
        emit: What the default emitter makes of each score besides its metrics:
            ``("spans", "events")`` (the default, also written ``"spans,events"``), an
            evaluation span under the run's span and a ``gen_ai.evaluation.result`` event
            parented to it; ``"spans"`` or ``"events"`` alone. With ``emitter=``, set it on
            that emitter (``OTelEmitter(emit=...)``); with ``broker=``, on the workers
            (``livescore worker --emit``).
        sinks: Dashboards each finished score also goes to
            (:class:`~livescore.sinks.PhoenixSink`, :class:`~livescore.sinks.LangfuseSink`),
            after the emitter and off the agent's path (each sink queues and delivers on
            its own thread). The emitter is wrapped
            with :func:`~livescore.sinks.with_sinks`: :meth:`shutdown` and
            :meth:`flush_emitter` flush the sinks after the emitter but never shut them
            down (share one sink between dispatchers; it shuts down at exit or when you
            call its ``shutdown``).
        executor: What runs the accepted jobs: :class:`~livescore.live.InProcessExecutor`
            (the default) scores them on the worker thread; a
            :class:`~livescore.fleet.BrokerExecutor` publishes them to a worker fleet.
        broker: Score on a worker fleet instead of in this process: the URL of its broker
            (``"redis://host:6379/0"``), shorthand for
            ``executor=livescore.fleet.BrokerExecutor(broker)``. Sampled runs are published
            from the worker thread and counted as ``handed_off``; ``livescore worker``
            processes score them (``pip install 'livescore-ai[fleet]'``).
        max_queue: Runs that may wait for the executor; beyond that, ``overflow`` applies.
        overflow: ``"drop_new"`` refuses new runs while the queue is full;
            ``"drop_oldest"`` evicts the oldest waiting run instead (fresher runs win).
            Either way the dropped pairs count as dropped with reason ``"queue_full"``.
        max_judge_concurrency: Scores in flight at once, over all scorers, for the default
            executor (16). A score makes its judge calls one after another, so this also
            caps concurrent judge calls. A scorer that cannot keep up holds its share of
            these slots and, through the shared FIFO queue, slows the others: give it a
            lower rate or more concurrency. With ``executor=``, set it on the executor.
        name: Names the worker thread and the ``livescore.queue.depth`` gauge.
        register_atexit: Shut down when the interpreter exits, finishing queued work
            within the process's exit deadline (``LIVESCORE_EXIT_TIMEOUT``, 5 s, shared
            with the sinks, which deliver after the dispatchers; see
            :mod:`livescore.live`) or ``shutdown_timeout``, whichever ends first. The exit
            hook is registered again whenever a worker starts (the first submit), so it
            runs before the exit hooks of OpenTelemetry SDK providers created before that:
            the last scores still reach them. It holds the dispatcher weakly. A dispatcher
            whose worker started stays alive until :meth:`shutdown` (or the ``with`` block)
            ends it.
        shutdown_timeout: The deadline of the shutdown at the end of a ``with`` block, in
            seconds; at exit, the exit deadline cuts it shorter.
        score_unsampled_traces: Score runs whose trace is not sampled too. Their score
            spans cannot join the run's trace (the SDK's ``ParentBased`` samplers drop the
            children of an unsampled span), so each becomes the root of a new trace, linked
            to the run's span and carrying ``livescore.run.trace_id``; your sampler decides
            for that new trace afresh. The scores' metrics are recorded either way.
        conversation_idle_timeout: Seconds a conversation must be quiet (no new turn)
            before its conversation scorers run (300 by default); ``None``: only
            :meth:`end_conversation`, the bounds and shutdown make them run.
        conversation_limits: How much the dispatcher holds of open conversations
            (:class:`~livescore.live.ConversationLimits`: conversations, turns and
            characters per conversation, characters in all, how long a scored conversation
            is kept in case it resumes).
        redact: Keep personal data from the judge and from every score this dispatcher
            records (spans, events, sinks): each scorer runs as
            :meth:`~livescore.Scorer.with_redaction` ``(redact)``. A
            :class:`~livescore.pii.PersonalDataRedactor`, a function
            ``detect(text) -> [(start, end, entity), ...]`` or a Presidio
            ``AnalyzerEngine``. With ``broker=``, redaction runs on the workers
            (``livescore worker --redact``).

    Example:
        >>> from livescore import Run
        >>> from livescore.scorers import create_keyword_coverage_scorer
        >>> from livescore.live import LiveDispatcher, ScorerConfig
        >>> dispatcher = LiveDispatcher(
        ...     [ScorerConfig(create_keyword_coverage_scorer(), sampling=1.0)],
        ...     register_atexit=False,
        ... )
        >>> dispatcher.submit(Run(input="Python generators", output="Generators in Python"))
        True
        >>> dispatcher.flush(timeout=10)
        True
        >>> dispatcher.stats().scored
        1
        >>> dispatcher.shutdown()

    Fork safety: a child process gets a fresh, empty dispatcher state (queue, counts,
    worker) and starts its own worker on its first submit; the parent's queued runs stay
    the parent's. A dispatcher shut down before the fork stays shut down in the child.
    """

    def __init__(
        self,
        scorers: Sequence[Scorer | ScorerConfig],
        *,
        emitter: Emitter | None = None,
        emit: str | Iterable[EmitSignal] | None = None,
        sinks: Sequence[ScoreSink] | None = None,
        executor: Executor | None = None,
        broker: str | None = None,
        max_queue: int = 1000,
        overflow: OverflowPolicy = "drop_new",
        max_judge_concurrency: int | None = None,
        name: str = "livescore",
        register_atexit: bool = True,
        shutdown_timeout: float = 10.0,
        score_unsampled_traces: bool = False,
        conversation_idle_timeout: float | None = DEFAULT_CONVERSATION_IDLE_TIMEOUT,
        conversation_limits: ConversationLimits | None = None,
        redact: RedactSpec | None = None,
    ) -> None:
        configs = _scorer_configs(scorers, redact, broker)
        _check_int("max_queue", max_queue)
        executor = _chosen_executor(executor, broker, emitter, emit, sinks, max_judge_concurrency)
        _check_settings(overflow, shutdown_timeout, conversation_idle_timeout)
        if conversation_limits is None:
            conversation_limits = ConversationLimits()
        elif not isinstance(conversation_limits, ConversationLimits):
            raise TypeError(
                f"conversation_limits must be a ConversationLimits, not {conversation_limits!r}"
            )
        for config in configs:
            if config.scorer.level == "conversation" and config.rate is None:
                raise ValueError(
                    f"scorer {config.scorer_id!r} scores conversations: its sampling must be "
                    "a rate (decided once per conversation, from its id), not a predicate"
                )
        if executor is None:
            executor = InProcessExecutor(max_concurrency=max_judge_concurrency or 16)
        elif not isinstance(executor, Executor):
            raise TypeError(f"executor must have an async run(jobs) method, not {executor!r}")
        emitter = _chosen_emitter(emitter, emit, sinks)
        self.name = name
        self.scorers: tuple[ScorerConfig, ...] = tuple(configs)
        self.emitter: Emitter = emitter
        self.executor: Executor = executor
        self.max_queue = max_queue
        self.overflow: OverflowPolicy = overflow
        self.max_judge_concurrency = max_judge_concurrency
        self.shutdown_timeout = float(shutdown_timeout)
        self.score_unsampled_traces = bool(score_unsampled_traces)
        self.conversation_idle_timeout = (
            None if conversation_idle_timeout is None else float(conversation_idle_timeout)
        )
        self.conversation_limits = conversation_limits
        self._run_configs = tuple(c for c in configs if c.scorer.level != "conversation")
        self._conversation_configs = tuple(c for c in configs if c.scorer.level == "conversation")
        # The conversations' clock (monotonic seconds); tests replace it with a double.
        self._clock: Callable[[], float] = time.monotonic
        # An executor that keeps conversations itself (a fleet: in Redis) gets the turns.
        self._remote_conversations = bool(getattr(executor, "tracks_conversations", False))
        self._serving = _Serving(self)
        self._q: BackgroundWorker[_Job] = BackgroundWorker(
            f"{name}-worker",
            self._serving,
            max_items=max_queue,
            overflow=overflow,
            linger=_LINGER_S,
            grace=_CANCEL_GRACE_S,
        )
        self._reset_state()
        track(self, at_exit=register_atexit)
        try:
            emitter.observe_queue_depth(self._queue_depth)
        except Exception:
            _log.exception("livescore: the emitter refused the queue-depth gauge")

    def _reset_state(self) -> None:
        # Called at construction and in a forked child, after the queue was emptied there
        # (the parent's locks may be held by threads that do not exist in the child).
        self._lock = self._q.lock  # guards the counts below and the queue
        # Counts per scorer, and the metric deltas the worker reports (so the agent's
        # thread never pays for a meter call).
        self._tally = Tally((c.scorer_id for c in self.scorers), self.emitter, self._lock)
        # The conversations held (in process), and the evaluations made and not yet
        # taken by the executor.
        self._scheduling = _Scheduling(self)
        self._conversations = self._scheduling.tracker
        self._ledger = _Ledger(self._q, self._tally, self._conversations)

    def __repr__(self) -> str:
        ids = ", ".join(c.scorer_id for c in self.scorers)
        return f"LiveDispatcher({self.name!r}, scorers=[{ids}])"

    def __enter__(self) -> LiveDispatcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown(self.shutdown_timeout)

    # -- hot path ------------------------------------------------------------------------

    def sample(self, key: str | None, conversation_id: str | None = None) -> SamplingDecision:
        """Decide which scorers will score the run with this key (pure: counts nothing).

        Call it when the run starts, with its trace id (or run id), to skip capturing runs
        no scorer wants; pass the decision to :meth:`submit`. Scorers whose sampling is a
        predicate are in ``decision.deferred`` and decide at submit. A key that is a trace
        id (32 hex digits, or ``0x``-prefixed) is normalised first (lowercase, no ``0x``,
        zero-padded), so its spelling never changes the decision; :meth:`submit` keys a
        run's ``trace_id`` the same way. With ``conversation_id``, the conversation scorers
        that sample that conversation are in ``decision.conversation_scorers`` (decided
        from the id alone: every turn of a conversation gets the same answer). A scorer
        with a :class:`~livescore.live.BudgetSampling` counts the run toward its target here.

        Example:
            >>> from livescore.scorers import create_keyword_coverage_scorer
            >>> d = LiveDispatcher([create_keyword_coverage_scorer()], register_atexit=False)
            >>> d.sample("4bf92f3577b34da6a3ce929d0e0e4736").sampled
            True
        """
        if key is not None and (len(key) == 32 or key[:2] in ("0x", "0X")):
            # What looks like a trace id (not a run id) is keyed by its canonical form.
            key = normalize_trace_id(key) or key
        decision = decide(self._run_configs, key)
        if conversation_id and self._conversation_configs:
            picked = decide_conversation(self._conversation_configs, str(conversation_id))
            if picked:
                decision = dataclasses.replace(decision, conversation_scorers=picked)
        return decision

    def submit(self, run: RunLike, decision: SamplingDecision | None = None) -> bool:
        """Hand a finished run to the worker. O(1); never blocks, never raises.

        Args:
            run: The finished run: a :class:`~livescore.Run` or its mapping form.
            decision: From :meth:`sample`; decided now from the run's trace id (or the
                trace of the span current now, or ``run.run_id``) when omitted.

        Returns:
            Whether the run was queued for at least one scorer. ``False`` when no scorer
            sampled it, its trace is not sampled, the queue was full (``drop_new``), or the
            dispatcher is shut down; all but the first count as dropped.
        """
        try:
            return self._submit(run, decision)
        except Exception:
            # A bug here must not reach the agent; the pairs already counted stay counted.
            _log.exception("livescore: submit failed; the run is not scored")
            return False

    def _submit(self, run: RunLike, decision: SamplingDecision | None) -> bool:
        if not isinstance(run, Run):
            run = coerce_run(run)
        # Cheap checks only, on every submit: the full parent is built for accepted runs.
        trace_id = normalize_trace_id(run.trace_id) if run.trace_id is not None else None
        current: TraceParent | None = None
        if trace_id is None or run.span_id is None:
            # A run with no span of its own nests under the span the agent ran in.
            current = current_trace_parent()
            if current is not None and run.trace_id is not None and trace_id != current.trace_id:
                current = None
            if current is not None:
                trace_id = current.trace_id
        if decision is None:
            # trace_id is normalised already; anything else goes through sample() as a key.
            if trace_id is not None:
                decision = decide(self._run_configs, trace_id)
            else:
                decision = self.sample(run.trace_id or run.run_id)
        # Conversation scorers decide from the conversation id alone, whatever the decision.
        conversation_id = run.conversation_id
        turn_configs: tuple[ScorerConfig, ...] = ()
        if conversation_id and self._conversation_configs:
            turn_configs = decide_conversation(self._conversation_configs, conversation_id)
        configs: list[ScorerConfig] = []
        rates: list[float | None] = []
        for i, config in enumerate(decision.scorers):
            if config.scorer.level != "conversation":
                configs.append(config)
                rates.append(decision.rate_of(i))
        # Predicates run only for the scorers that have one (their failures are rare).
        broken = (
            self._sample_deferred(run, decision.deferred, configs, rates)
            if decision.deferred
            else ()
        )
        if not configs and not broken and not turn_configs:
            return False
        if current is not None:
            trace_sampled = current.sampled
        else:
            trace_sampled = trace_id is None or bool(run.trace_flags & 1)
        accepted = False
        q = self._q
        with self._lock:
            for config in configs:
                self._tally.sampled_locked(config.scorer_id)
            if broken:
                self._count_broken_locked(broken)
            turn: _TurnInfo | None = None
            remote_turn: ConversationTurn | None = None
            if turn_configs and conversation_id:
                turn = _TurnInfo(conversation_id, turn_configs, self._clock())
                if self._remote_conversations:
                    remote_turn = ConversationTurn(
                        conversation_id,
                        turn_configs,
                        self.conversation_idle_timeout,
                        limits=self.conversation_limits,
                    )
            if q.closed or not trace_sampled or not q.admits_locked():
                configs, rates, turn = self._refuse_locked(configs, rates, turn, trace_sampled)
            if configs or turn is not None:
                parent = current if current is not None else _parent_of(run, trace_id)
                job_rates = _applied_rates(configs, rates)
                scoring = ScoringJob(run, tuple(configs), parent, turn=remote_turn, rates=job_rates)
                queued_at = (
                    self._clock() if turn is None and self._conversation_configs else math.inf
                )
                job = _Job(self, scoring, turn, queued_at)
                q.put_locked(job)  # drop_oldest: the evicted job is dropped (queue_full)
                for config in configs:
                    self._tally.of(config.scorer_id).queued += 1
                accepted = True
            report_here = self._hand_over_metrics()
        q.start_pending()  # none could start: what it would take is dropped (no_worker)
        if report_here:
            self._report_metrics()
        return accepted

    def end_conversation(self, conversation_id: str) -> bool:
        """Score a conversation now, without waiting for it to go quiet. Never raises.

        Its conversation scorers run on the turns submitted so far (the turns still queued
        are recorded first); :meth:`flush` waits for those scores. A turn submitted later
        reopens it: it is scored again when it next goes quiet (or ends). Call it when the
        application knows a conversation is over (the user closed the chat).

        Returns:
            Whether the request was queued (``False`` once shut down, or with no
            conversation scorer). A conversation with no turn that a score does not cover
            yet scores nothing.

        Example:
            >>> from livescore import Run, create_scorer
            >>> turns = create_scorer(id="turns", description="Turns", level="conversation",
            ...                       generate_score=lambda ctx: len(ctx.conversation.runs))
            >>> d = LiveDispatcher([turns], register_atexit=False)
            >>> for text in ("Hi", "Where is my parcel?"):
            ...     _ = d.submit(Run(input=text, output="...", conversation_id="c1"))
            >>> d.end_conversation("c1"), d.flush(timeout=10)
            (True, True)
            >>> d.stats().scored
            1
            >>> d.shutdown()
        """
        try:
            return self._request_end(str(conversation_id), "ended")
        except Exception:
            _log.exception("livescore: end_conversation failed")
            return False

    def _request_end(self, conversation_id: str | None, reason: str) -> bool:
        if not self._conversation_configs:
            return False
        q = self._q
        with self._lock:
            if q.closed and reason != "shutdown":
                return False
            if conversation_id is None and self._remote_conversations:
                return False  # a fleet keeps its conversations (and their timers) in Redis
            placeholder = Run(
                run_id=f"end:{conversation_id or '*'}", conversation_id=conversation_id
            )
            remote = None
            if self._remote_conversations and conversation_id is not None:
                remote = ConversationTurn(
                    conversation_id,
                    self._conversation_configs,
                    self.conversation_idle_timeout,
                    end=True,
                )
            job = _Job(
                self,
                ScoringJob(placeholder, (), None, turn=remote),
                _TurnInfo(conversation_id, (), self._clock(), end=reason),
            )
            # Behind the turns already queued (they are recorded first), even when full.
            q.put_locked(job, bounded=False)
        q.start_pending()
        return True

    def conversation_stats(self) -> ConversationStats:
        """What the dispatcher holds of conversations, and what it let go (a snapshot).

        Example:
            >>> from livescore.scorers import create_keyword_coverage_scorer
            >>> d = LiveDispatcher([create_keyword_coverage_scorer()], register_atexit=False)
            >>> d.conversation_stats().open
            0
        """
        with self._lock:
            return self._conversations.stats()

    def drop(self, decision: SamplingDecision, reason: str) -> None:
        """Count a sampled run that will never be submitted (evicted, abandoned…).

        Each of ``decision.scorers`` counts as sampled and dropped with ``reason``; scorers
        with a predicate never decided, so they count nothing. Never raises.

        Example:
            >>> from livescore.scorers import create_keyword_coverage_scorer
            >>> d = LiveDispatcher([create_keyword_coverage_scorer()], register_atexit=False)
            >>> d.drop(d.sample("some-trace-id"), "evicted")
            >>> d.stats().dropped_by_reason
            {'evicted': 1}
        """
        try:
            with self._lock:
                for config in decision.scorers:
                    self._tally.sampled_locked(config.scorer_id)
                    self._tally.dropped_locked(config.scorer_id, str(reason))
                if decision.conversation_scorers:
                    self._conversations.count_dropped(str(reason))
                report_here = self._hand_over_metrics()
            if report_here:
                self._report_metrics()
        except Exception:
            _log.exception("livescore: drop() failed")

    # -- accounting (callers hold self._lock) --------------------------------------------

    def _sample_deferred(
        self,
        run: Run,
        deferred: Iterable[ScorerConfig],
        configs: list[ScorerConfig],
        rates: list[float | None],
    ) -> tuple[ScorerConfig, ...]:
        """Run the sampling predicates: the scorers that take the run join ``configs``;
        those whose predicate raised are returned (they count as dropped)."""
        broken: list[ScorerConfig] = []
        for config in deferred:
            try:
                if config.sampling(run):  # type: ignore[operator]
                    configs.append(config)
                    rates.append(None)
            except Exception:
                _log.exception("livescore: sampling predicate of %r raised", config.scorer_id)
                broken.append(config)
        return tuple(broken)

    def _count_broken_locked(self, broken: Iterable[ScorerConfig]) -> None:
        # Sampled, then dropped: the predicate that decides could not.
        for config in broken:
            self._tally.sampled_locked(config.scorer_id)
        for config in broken:
            self._tally.dropped_locked(config.scorer_id, "sampling_error")

    def _refuse_locked(
        self,
        configs: list[ScorerConfig],
        rates: list[float | None],
        turn: _TurnInfo | None,
        trace_sampled: bool,
    ) -> tuple[list[ScorerConfig], list[float | None], _TurnInfo | None]:
        """Drop what a submit may not queue (shut down, trace not sampled, queue full);
        returns what it still queues."""
        if self._q.closed:
            self._drop_locked(configs, turn, "shutdown")
            return [], [], None
        if configs and not (trace_sampled or self.score_unsampled_traces):
            # Its spans would vanish in the SDK: no judge is paid for them. (A turn is still
            # kept: its conversation's score nests under the conversation's last turn.)
            self._drop_locked(configs, None, "trace_not_sampled")
            configs, rates = [], []
        if (configs or turn is not None) and not self._q.admits_locked():
            self._drop_locked(configs, turn, "queue_full")
            return [], [], None
        return configs, rates, turn

    def _drop_locked(
        self, configs: Iterable[ScorerConfig], turn: _TurnInfo | None, reason: str
    ) -> None:
        """Drop a submitted run's pairs (and its turn, if given) for ``reason``."""
        for config in configs:
            self._tally.dropped_locked(config.scorer_id, reason)
        self._drop_turn(turn, reason)

    def _drop_turn(self, turn: _TurnInfo | None, reason: str) -> None:
        if turn is not None and turn.end is None:
            self._conversations.count_dropped(reason)

    def _end_pairs(self, job: _Job, indices: Iterable[int], kind: str, reason: str | None) -> None:
        # An executor's report, from any thread; its deltas reach the emitter at the
        # worker's next look at its queue (or a flush).
        try:
            with self._lock:
                self._ledger.end_locked(job, indices, kind, reason)
        except Exception:
            _log.exception("livescore: an executor's report failed")

    def _hand_over_metrics(self) -> bool:
        """Make sure someone reports the deltas just counted; ``True``: the caller must.

        The worker reports them when it next looks at its queue (waking it if it is
        parked: a notify, no wait). With no worker, or once shut down (when the agent's
        speed no longer matters and the worker may be gone for good), the caller does.
        """
        if not self._q.running or self._q.closed:
            return True
        self._q.wake_locked()
        return False

    def _report_metrics(self, timeout: float | None = None) -> bool:
        """Hand the pending metric deltas to the emitter (outside ``self._lock``)."""
        return self._tally.report(timeout)

    def _emit_failed(self) -> None:
        self._tally.emit_failed()

    # -- worker --------------------------------------------------------------------------

    def _take_locked(self) -> _Job | None:
        """The next job for the executor (``None``: none now); turns are recorded here."""
        q = self._q
        scheduling = self._scheduling
        while True:
            if scheduling.ready:  # conversations due: their evaluations go first
                return scheduling.ready.popleft()
            if scheduling.pop_due_locked(q.queue[0].at if q.queue else None):
                continue
            if not q.queue:
                return None
            job = q.queue.popleft()
            job.taken = True
            for i, config in enumerate(job.job.scorers):
                if not job.done[i]:
                    counts = self._tally.of(config.scorer_id)
                    counts.queued -= 1
                    counts.in_flight += 1
            if job.turn is None or self._remote_conversations:
                return job
            scheduling.record_locked(job)
            if job.job.scorers and job.remaining:
                return job
            # A turn (or end request) alone: recorded here, nothing for the executor.

    def _finish(
        self, job: _Job, index: int, result: ScoreResult, start_time_ns: int | None
    ) -> None:
        try:
            with self._lock:
                config = self._ledger.result_locked(job, index, result)
            if config is None:
                return  # shutdown gave up on it and counted it as dropped, or a second report
        except Exception:
            _log.exception("livescore: an executor's report failed")
            return
        try:
            self.emitter.emit(
                job.job.run,
                result,
                sample_rate=job.job.rate_of(index),
                source="live",
                scorer_version=config.scorer.version,
                start_time_ns=start_time_ns,
                parent=job.job.parent,
            )
        except Exception:
            self._emit_failed()
        finally:
            # Completion (what flush waits for) comes after the emission.
            with self._lock:
                self._ledger.complete_locked(job)

    # -- lifecycle -----------------------------------------------------------------------

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every run accepted so far is scored (or handed off) and emitted.

        Runs submitted while waiting are not waited for. The counts still waiting for the
        worker to report them reach the emitter before it returns, so its metrics then
        agree with :meth:`stats`. Called from inside a scorer (a step, ``get_context``, or
        a thread a scorer started), it returns ``False`` at once: the scorer's own work is
        part of what it would wait for.

        Args:
            timeout: Seconds to wait at most; ``None`` waits as long as it takes.

        Returns:
            ``True`` when all that work is done, ``False`` on timeout (or from a scorer).
        """
        if is_scoring():
            return False  # the worker cannot wait for itself
        deadline = None if timeout is None else time.monotonic() + max(timeout, 0.0)
        done = self._q.flush(timeout)
        # Report here: the worker may be parked, busy for a while, or gone.
        return self._report_metrics(_left(deadline)) and done

    async def aflush(self, timeout: float | None = None) -> bool:
        """:meth:`flush` for async code: waits in a thread, not on the event loop.

        Like :meth:`flush`, it returns ``False`` at once when awaited inside a scorer.
        """
        if is_scoring():
            return False
        return await run_in_thread(self.flush, timeout)

    def flush_emitter(self, timeout: float | None = None) -> bool:
        """Report pending counts and flush the emitter (export buffered spans). Never raises.

        Returns:
            ``False`` when that did not finish within ``timeout``, or the emitter raised.
        """
        deadline = None if timeout is None else time.monotonic() + max(timeout, 0.0)
        reported = self._report_metrics(_left(deadline))
        try:
            return bool(self.emitter.flush(_left(deadline))) and reported
        except Exception:
            self._emit_failed()
            return False

    def shutdown(self, timeout: float | None = None) -> None:
        """Stop accepting runs, finish what was accepted within ``timeout``, stop the worker.

        Work still unfinished at the deadline is cancelled and counted as dropped with
        reason ``"shutdown"``; later submissions are counted the same way and do nothing.
        Then the emitter is flushed (:meth:`Emitter.flush`; an OpenTelemetry emitter
        force-flushes its providers but never shuts them down: they belong to the
        application). Safe to call more than once.

        Args:
            timeout: Seconds to wait for queued and running scores; ``None`` waits.
        """
        try:
            self._shutdown(timeout, _CANCEL_GRACE_S)
        except Exception:
            _log.exception("livescore: shutdown failed")

    def _exit_shutdown(self, deadline: float) -> None:
        """The exit-time shutdown: within ``shutdown_timeout`` and the exit ``deadline``."""
        try:
            self._shutdown(*fit_to_deadline(deadline, self.shutdown_timeout, _CANCEL_GRACE_S))
        except Exception:
            _log.exception("livescore: shutdown failed")

    def _shutdown(self, timeout: float | None, grace: float) -> None:
        deadline = None if timeout is None else time.monotonic() + max(timeout, 0.0)
        self._q.close()
        if is_scoring():
            return  # called from a scorer: stop accepting, the rest is up to the app
        if self._conversation_configs and self._q.running:
            # The turns no score covers yet are scored now, within the same deadline.
            self._request_end(None, "shutdown")
        # Past the deadline the worker is told to cancel what it runs; it gets the grace to
        # unwind. Its own last act drops whatever it left; what is left beyond that, a
        # scorer blocking the worker's loop in synchronous code holds.
        left = self._q.shutdown(timeout, flush=self.flush, grace=grace)
        if left:  # dropped ("shutdown") by the worker
            _log.warning("livescore: the scoring worker did not stop; dropping its work")
        # The last counts reach the emitter before its own flush sends them on.
        self.flush_emitter(_left(deadline))

    @property
    def scores_conversations(self) -> bool:
        """Whether a conversation scorer is among the scorers (so every run with a
        conversation id may be a turn worth capturing)."""
        return bool(self._conversation_configs)

    @property
    def closed(self) -> bool:
        """Whether :meth:`shutdown` was called (submissions are then counted no-ops)."""
        return self._q.closed

    def stats(self) -> DispatchStats:
        """A consistent snapshot of the counts (per scorer and in total).

        Example:
            >>> from livescore.scorers import create_keyword_coverage_scorer
            >>> d = LiveDispatcher([create_keyword_coverage_scorer()], register_atexit=False)
            >>> d.stats().sampled
            0
        """
        with self._lock:
            return self._tally.snapshot_locked()

    def _queue_depth(self) -> list[tuple[int, dict[str, str]]]:
        return [(len(self._q.queue), {A.LIVESCORE_DISPATCHER: self.name})]


def _parent_of(run: Run, trace_id: str | None) -> TraceParent | None:
    """The run's own span as a parent (``trace_id`` is already normalised)."""
    if trace_id is None:
        return None
    span_id = normalize_span_id(run.span_id)
    if span_id is None:
        return None
    return TraceParent(trace_id, span_id, run.trace_flags & 0xFF)


def _scorer_configs(
    scorers: Sequence[Scorer | ScorerConfig], redact: RedactSpec | None, broker: str | None
) -> list[ScorerConfig]:
    """The dispatcher's scorers as configs, redacting when asked; ids must be unique."""
    if isinstance(scorers, Scorer | ScorerConfig) or not isinstance(scorers, Sequence):
        raise TypeError("scorers must be a list of Scorer or ScorerConfig")
    configs: list[ScorerConfig] = []
    for item in scorers:
        if isinstance(item, ScorerConfig):
            configs.append(item)
        elif isinstance(item, Scorer):
            configs.append(ScorerConfig(item))
        else:
            raise TypeError(f"scorers must be Scorer or ScorerConfig objects, not {item!r}")
    if not configs:
        raise ValueError("a LiveDispatcher needs at least one scorer")
    if redact is not None:
        if broker is not None:
            raise ValueError(
                "with broker=, runs are scored on the workers: redact there "
                "(livescore worker --redact, or FleetWorker(redact=...))"
            )
        configs = [dataclasses.replace(c, scorer=c.scorer.with_redaction(redact)) for c in configs]
    ids = [c.scorer_id for c in configs]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"scorer ids must be unique; repeated: {duplicates}")
    return configs


def _chosen_executor(
    executor: Executor | None,
    broker: str | None,
    emitter: Emitter | None,
    emit: str | Iterable[EmitSignal] | None,
    sinks: Sequence[ScoreSink] | None,
    max_judge_concurrency: int | None,
) -> Executor | None:
    """The executor given or the broker's; ``None`` leaves the default to the caller.

    Refuses the options that configure what another part owns (the default emitter, the
    default executor, the workers of a fleet).
    """
    if emit is not None and emitter is not None:
        raise ValueError(
            "emit= configures the default emitter: with emitter=..., set it there "
            "(OTelEmitter(emit=...))"
        )
    if broker is not None:
        if emit is not None:
            raise ValueError(
                "with broker=, scores are emitted on the workers: choose what they emit "
                "there (livescore worker --emit, or FleetWorker(emit=...))"
            )
        if executor is not None:
            raise ValueError("give executor= or broker=, not both")
        if sinks:
            raise ValueError(
                "with broker=, scores are emitted on the workers: attach the sinks there "
                "(a `sinks` list beside the scorers, or livescore worker --sinks MODULE:ATTR)"
            )
        executor = broker_executor(broker)
        if max_judge_concurrency is not None:
            raise ValueError(
                "max_judge_concurrency limits in-process scoring; with broker=, the "
                "workers' --scorer-concurrency and --fleet-judge-concurrency apply"
            )
    if max_judge_concurrency is not None:
        _check_int("max_judge_concurrency", max_judge_concurrency)
        if executor is not None:
            raise ValueError(
                "max_judge_concurrency configures the default executor: with executor=..., "
                "set the concurrency on the executor"
            )
    return executor


def _check_settings(
    overflow: object, shutdown_timeout: object, conversation_idle_timeout: object
) -> None:
    if overflow not in ("drop_new", "drop_oldest"):
        raise ValueError(f"overflow must be 'drop_new' or 'drop_oldest', not {overflow!r}")
    if not (isinstance(shutdown_timeout, int | float) and shutdown_timeout >= 0):
        raise ValueError(f"shutdown_timeout must be >= 0 seconds, not {shutdown_timeout!r}")
    if conversation_idle_timeout is not None and not (
        isinstance(conversation_idle_timeout, int | float)
        and not isinstance(conversation_idle_timeout, bool)
        and math.isfinite(conversation_idle_timeout)
        and conversation_idle_timeout > 0
    ):
        raise ValueError(
            "conversation_idle_timeout must be a positive number of seconds (or None), "
            f"not {conversation_idle_timeout!r}"
        )


def _chosen_emitter(
    emitter: Emitter | None,
    emit: str | Iterable[EmitSignal] | None,
    sinks: Sequence[ScoreSink] | None,
) -> Emitter:
    """The emitter given (or an :class:`~livescore.otel.OTelEmitter`), wrapped with the sinks."""
    if emitter is None:
        from livescore.otel import OTelEmitter

        emitter = OTelEmitter() if emit is None else OTelEmitter(emit=emit)
    elif not isinstance(emitter, Emitter):
        missing = [m for m in _EMITTER_METHODS if not callable(getattr(emitter, m, None))]
        raise TypeError(
            f"emitter {emitter!r} lacks {', '.join(missing)}: an emitter implements "
            "livescore.otel.Emitter (or subclass OTelEmitter)"
        )
    if sinks:
        from livescore.sinks import with_sinks

        if not isinstance(sinks, Sequence):
            raise TypeError(f"sinks must be a list of sinks, not {sinks!r}")
        emitter = with_sinks(emitter, sinks)
    return emitter


def _left(deadline: float | None) -> float | None:
    return None if deadline is None else max(deadline - time.monotonic(), 0.0)


def _check_int(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, not {value}")
