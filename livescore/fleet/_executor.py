"""The agent side: :class:`BrokerExecutor` publishes sampled runs to the fleet's queue."""

from __future__ import annotations

import functools
import logging
import threading
import uuid
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from livescore._errors import BrokerUnavailableError, JobTooLargeError
from livescore._threads import run_in_thread
from livescore.fleet._engine import DEFAULT_MAX_JOB_BYTES, Publisher
from livescore.live import JobHandle

__all__ = ("BROKER_UNAVAILABLE", "DEFAULT_QUEUE", "JOB_TOO_LARGE", "BrokerExecutor", "job_record")

_log = logging.getLogger("livescore.fleet")

DEFAULT_QUEUE = "livescore"
"""The queue jobs go to and ``livescore worker`` consumes, unless told otherwise."""

BROKER_UNAVAILABLE = "broker_unavailable"
"""The drop reason of a pair the local buffer could not hold while the broker was away."""

JOB_TOO_LARGE = "job_too_large"
"""The drop reason of a pair whose job is over the size cap (``max_job_bytes``)."""

INVALID_JOB = "invalid_job"
"""The drop reason of a pair whose run cannot become a job record (a value nested deeper
than Python can walk, a structure that contains itself)."""

_BATCH = 64  # jobs published in one exchange with the broker, at most
_BACKOFF_FIRST = 0.05
_BACKOFF_MAX = 2.0


def job_record(handle: JobHandle, **extra: Any) -> dict[str, Any]:
    """The record published for one job: :meth:`~livescore.live.ScoringJob.to_dict` plus an ``id``.

    The id is minted once per job (a republished record keeps it): with the scorer's id it
    is the key a worker uses to score each (run, scorer) pair once, however many times the
    job is delivered.
    """
    record = handle.job.to_dict()
    record["id"] = uuid.uuid4().hex
    record["source"] = "live"
    record.update(extra)
    return record


class BrokerExecutor:
    """Hand sampled runs to a worker fleet through a broker instead of scoring them here.

    A :class:`~livescore.live.LiveDispatcher` built with ``broker="redis://..."`` uses one.
    The dispatcher still samples on the agent's thread; this executor runs on its worker
    thread, moves each accepted job to a bounded local buffer, and one publishing thread
    sends the buffered jobs to the queue (the job's run, scorer ids, sample rates and
    parent span, as JSON), where ``livescore worker`` processes score and emit them. A
    published (run, scorer) pair counts as ``handed_off`` here; the worker counts how it
    ends. The agent's threads never touch the network.

    While the broker is away (down, unreachable, not answering, out of memory, read-only
    during a failover), jobs wait in the buffer and publishing is retried with backoff (50
    ms doubling to 2 s), logged once; once the buffer holds ``max_buffer`` jobs, each new job
    is dropped with reason ``"broker_unavailable"``, counted, never raised. Publishing
    resumes by itself when the broker answers again; jobs Redis took before it refused the
    rest of a batch are not published twice. A run that cannot become a job record is
    dropped as ``"invalid_job"``, and one over ``max_job_bytes`` as ``"job_too_large"``
    (each counted, one log line per reason); the jobs around it go on.
    While the broker answers but a burst outruns publishing, a full buffer holds the next
    jobs back in the dispatcher's queue instead (whose overflow policy then applies).
    At shutdown the buffer is published within the dispatcher's deadline; what is left is
    dropped (``"broker_unavailable"`` when the broker is away, else ``"shutdown"``).

    Args:
        url: The broker's URL (``redis://host:6379/0``; ``rediss://`` for TLS).
        queue: The queue to publish to (``livescore worker --queue``).
        max_buffer: Jobs held locally while the broker is slow or away.
        linger: Seconds the publishing thread waits, once woken by a job, for more jobs to
            publish in the same wake-up (20 ms). Each wake-up of a thread costs a CPU-bound
            agent a GIL hand-over; scores are seconds away anyway.
        publisher_factory: Builds the engine's publisher from ``(url, queue)``; Dramatiq's
            by default (tests pass a double).
        max_job_bytes: The largest job (encoded) the default publisher sends (1 MiB): a
            Redis may close the connection on a larger one, and a job that size is rarely
            meant. Keep it under the server's ``proto-max-bulk-len``.

    Raises:
        ImportError: Dramatiq is not installed (``pip install 'livescore-ai[fleet]'``).
        ValueError: ``url`` is not a Redis URL, or a bad ``max_buffer`` / ``linger``.

    Example:
        >>> from livescore.live import LiveDispatcher
        >>> from livescore.scorers import create_keyword_coverage_scorer
        >>> dispatcher = LiveDispatcher([create_keyword_coverage_scorer()],
        ...                             executor=BrokerExecutor("redis://127.0.0.1:6379/0"),
        ...                             register_atexit=False)
        >>> dispatcher.shutdown()
    """

    tracks_conversations = True
    """Conversations are kept in Redis, not by the agent's dispatcher: each turn a
    conversation scorer sampled is published (``"turn"`` in its job's record), and any
    worker keeps it and runs its quiet timer (see :mod:`livescore.fleet`)."""

    def __init__(
        self,
        url: str,
        *,
        queue: str = DEFAULT_QUEUE,
        max_buffer: int = 10_000,
        linger: float = 0.02,
        publisher_factory: Callable[[str, str], Publisher] | None = None,
        max_job_bytes: int = DEFAULT_MAX_JOB_BYTES,
    ) -> None:
        if not isinstance(url, str) or not url.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError(
                f"broker must be a Redis URL such as 'redis://host:6379/0', not {url!r}"
            )
        if (
            isinstance(max_job_bytes, bool)
            or not isinstance(max_job_bytes, int)
            or max_job_bytes < 1024
        ):
            raise ValueError(
                f"max_job_bytes must be an int of at least 1024, not {max_job_bytes!r}"
            )
        self.max_job_bytes = max_job_bytes
        if isinstance(max_buffer, bool) or not isinstance(max_buffer, int) or max_buffer < 1:
            raise ValueError(f"max_buffer must be a positive int, not {max_buffer!r}")
        if not isinstance(queue, str) or not queue:
            raise ValueError("queue must be a non-empty string")
        if publisher_factory is None:
            import importlib.util

            if importlib.util.find_spec("dramatiq") is None:
                from livescore._version import install_hint

                raise ImportError(f"broker= needs the fleet extra: {install_hint('fleet')}")
        self.url = url
        self.queue = queue
        self.max_buffer = max_buffer
        if not (isinstance(linger, int | float) and 0 <= linger < 10):
            raise ValueError(f"linger must be between 0 and 10 seconds, not {linger!r}")
        self.linger = float(linger)
        self._publisher_factory = publisher_factory
        self.published = 0
        """Jobs published so far (all workers' lifetimes of this executor)."""

    def __repr__(self) -> str:
        from livescore._redaction import redact_url

        return f"BrokerExecutor({redact_url(self.url)!r}, queue={self.queue!r})"

    def _publisher(self) -> Publisher:
        if self._publisher_factory is not None:
            return self._publisher_factory(self.url, self.queue)
        from livescore.fleet._dramatiq import DramatiqPublisher

        return DramatiqPublisher(self.url, self.queue, max_job_bytes=self.max_job_bytes)

    async def run(self, jobs: AsyncIterator[JobHandle]) -> None:
        """Buffer the jobs and publish them on a thread of their own until ``jobs`` ends."""
        state = _PublishState(self.max_buffer, self.linger)
        publisher = await run_in_thread(self._publisher)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(
                    functools.partial(
                        run_in_thread,
                        self._publish_loop,
                        state,
                        publisher,
                        abandon_on_cancel=True,
                    )
                )
                try:
                    async for handle in jobs:
                        if state.add(handle):
                            continue
                        if not state.is_down():
                            # Full while the broker answers (a burst): hold the next jobs in
                            # the dispatcher's queue (its overflow policy applies) until
                            # there is room, or the broker stops answering.
                            await run_in_thread(
                                state.wait_for_room_or_outage, abandon_on_cancel=True
                            )
                            if state.add(handle):
                                continue
                        handle.drop(BROKER_UNAVAILABLE)
                finally:
                    state.close()
        finally:
            # Cancelled at the shutdown deadline: what the thread did not publish is dropped
            # here, with the reason that kept it (the dispatcher would say "shutdown").
            for handle, reason in state.abandon():
                handle.drop(reason)
            await run_in_thread(publisher.close, abandon_on_cancel=True)

    def _publish_loop(self, state: _PublishState, publisher: Publisher) -> None:
        backoff = _BACKOFF_FIRST
        logged: set[str] = set()  # the drop reasons already logged
        while True:
            batch, unbuildable = state.next_batch(_BATCH)
            for handle, exc in unbuildable:
                self._drop(handle, INVALID_JOB, exc, logged)
            if not batch:
                if unbuildable:
                    continue
                return
            outcome = self._publish_batch(publisher, batch, logged)
            # Published or dropped: out of the buffer (never published twice).
            state.done(outcome.published + outcome.dropped)
            self.published += len(outcome.published)
            for handle in outcome.published:
                handle.hand_off()
            if outcome.unavailable is not None:
                if state.set_down(True):
                    _log.warning(
                        "livescore: the broker is unavailable (%s); buffering up to %d jobs",
                        outcome.unavailable,
                        self.max_buffer,
                    )
                state.wait(backoff)
                backoff = min(backoff * 2, _BACKOFF_MAX)
                continue
            backoff = _BACKOFF_FIRST
            if state.set_down(False):
                _log.warning("livescore: the broker is back; publishing resumed")

    def _drop(self, handle: JobHandle, reason: str, exc: BaseException, logged: set[str]) -> None:
        """Drop a job that can never be published (counted by the dispatcher), logging the
        first of each reason: one bad run must not flood the log."""
        if reason not in logged:
            logged.add(reason)
            _log.warning(
                "livescore: a run could not be published and is dropped as %s "
                "(%s: %s; later ones are only counted)",
                reason,
                type(exc).__name__,
                str(exc)[:200],
            )
        handle.drop(reason)

    def _publish_batch(
        self,
        publisher: Publisher,
        batch: list[tuple[JobHandle, dict[str, Any]]],
        logged: set[str],
    ) -> _Outcome:
        """Publish a batch in one exchange. A record the engine cannot encode (or over the
        size cap) is dropped (counted) and the rest published one by one; when the broker
        refuses, what it took before is published and the rest stays buffered."""
        outcome = _Outcome()
        try:
            publisher.publish_many([record for _, record in batch])
            outcome.published = [handle for handle, _ in batch]
            return outcome
        except BrokerUnavailableError as exc:
            outcome.published = [batch[i][0] for i in exc.published if 0 <= i < len(batch)]
            outcome.unavailable = exc
            return outcome
        except Exception:
            pass  # find the culprit below
        for handle, record in batch:
            try:
                publisher.publish(record)
            except BrokerUnavailableError as exc:
                outcome.unavailable = exc
                return outcome
            except JobTooLargeError as exc:
                self._drop(handle, JOB_TOO_LARGE, exc, logged)
                outcome.dropped.append(handle)
                continue
            except Exception as exc:
                self._drop(handle, INVALID_JOB, exc, logged)
                outcome.dropped.append(handle)
                continue
            outcome.published.append(handle)
        return outcome


@dataclass(slots=True)
class _Outcome:
    """How one batch went: published, dropped, and why the rest stays buffered."""

    published: list[JobHandle] = field(default_factory=list)
    dropped: list[JobHandle] = field(default_factory=list)
    unavailable: BrokerUnavailableError | None = None


class _PublishState:
    """The bounded buffer between the dispatcher's loop and the publishing thread."""

    def __init__(self, max_buffer: int, linger: float = 0.0) -> None:
        self.max_buffer = max_buffer
        self.linger = linger
        self._cond = threading.Condition()
        self._buffer: deque[tuple[JobHandle, dict[str, Any] | None]] = deque()
        self._closing = False
        self._abandoned = False
        self._down = False
        self._idle = False  # the publisher waits for a first job

    def add(self, handle: JobHandle) -> bool:
        with self._cond:
            if len(self._buffer) >= self.max_buffer:
                return False
            self._buffer.append((handle, None))
            # Wake the publisher only when it sleeps with nothing to do or a batch is full:
            # while it lingers, a wake-up per job would cost what the lingering saves.
            if self._idle or len(self._buffer) == _BATCH:
                self._cond.notify()
            return True

    def is_down(self) -> bool:
        with self._cond:
            return self._down

    def wait_for_room_or_outage(self) -> None:
        with self._cond:
            while len(self._buffer) >= self.max_buffer and not self._down and not self._abandoned:
                self._cond.wait()

    def next_batch(
        self, limit: int
    ) -> tuple[list[tuple[JobHandle, dict[str, Any]]], list[tuple[JobHandle, BaseException]]]:
        """The oldest buffered jobs and their records (kept until :meth:`done`), and the
        jobs whose record could not be built (out of the buffer; drop them); ``[]`` and
        ``[]``: stop."""
        with self._cond:
            woken = False
            while not self._buffer and not self._closing and not self._abandoned:
                self._idle = True
                self._cond.wait()
                self._idle = False
                woken = True
            if woken and self.linger > 0:
                # Let the jobs right behind this one join it: one wake-up for the lot.
                self._cond.wait_for(
                    lambda: self._closing or self._abandoned or len(self._buffer) >= limit,
                    self.linger,
                )
            if self._abandoned or not self._buffer:
                return [], []
            batch: list[tuple[JobHandle, dict[str, Any]]] = []
            unbuildable: list[tuple[JobHandle, BaseException]] = []
            i = 0
            while i < len(self._buffer) and len(batch) < limit:
                handle, record = self._buffer[i]
                if record is None:
                    # Built once: a retried publish sends the same id.
                    try:
                        record = job_record(handle)
                    except Exception as exc:  # RecursionError, ValueError...: this run only
                        del self._buffer[i]
                        unbuildable.append((handle, exc))
                        continue
                    self._buffer[i] = (handle, record)
                batch.append((handle, record))
                i += 1
            if unbuildable:
                self._cond.notify_all()
            return batch, unbuildable

    def done(self, handles: list[JobHandle]) -> None:
        """Forget the published (or dropped) jobs (at the head of the buffer, usually)."""
        if not handles:
            return
        gone = {id(h) for h in handles}
        with self._cond:
            while self._buffer and id(self._buffer[0][0]) in gone:
                gone.discard(id(self._buffer.popleft()[0]))
            if gone:  # a partly published batch: the rest of it stays, in order
                self._buffer = deque(item for item in self._buffer if id(item[0]) not in gone)
            self._cond.notify_all()

    def wait(self, seconds: float) -> None:
        with self._cond:
            if not self._abandoned:
                self._cond.wait(seconds)

    def set_down(self, down: bool) -> bool:
        """Record whether the broker is away; ``True`` when that changed."""
        with self._cond:
            changed = self._down != down
            self._down = down
            if changed:
                self._cond.notify_all()
            return changed

    def close(self) -> None:
        with self._cond:
            self._closing = True
            self._cond.notify_all()

    def abandon(self) -> list[tuple[JobHandle, str]]:
        with self._cond:
            self._abandoned = True
            self._cond.notify_all()
            reason = BROKER_UNAVAILABLE if self._down else "shutdown"
            left = [(handle, reason) for handle, _ in self._buffer]
            self._buffer.clear()
            return left
