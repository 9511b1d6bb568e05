"""The agent side: :class:`BrokerExecutor` publishes sampled runs to the fleet's queue."""

from __future__ import annotations

import functools
import logging
import threading
import uuid
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import anyio.to_thread

from livescore._errors import BrokerUnavailableError
from livescore.fleet._engine import Publisher
from livescore.live import JobHandle

__all__ = ("BROKER_UNAVAILABLE", "DEFAULT_QUEUE", "BrokerExecutor", "job_record")

_log = logging.getLogger("livescore.fleet")

DEFAULT_QUEUE = "livescore"
"""The queue jobs go to and ``livescore worker`` consumes, unless told otherwise."""

BROKER_UNAVAILABLE = "broker_unavailable"
"""The drop reason of a pair the local buffer could not hold while the broker was away."""

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

    While the broker is away (down, unreachable, not answering), jobs wait in the buffer
    and publishing is retried with backoff (50 ms doubling to 2 s); once the buffer holds
    ``max_buffer`` jobs, each new job is dropped with reason ``"broker_unavailable"``,
    counted, never raised. Publishing resumes by itself when the broker answers again.
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

    def __init__(
        self,
        url: str,
        *,
        queue: str = DEFAULT_QUEUE,
        max_buffer: int = 10_000,
        linger: float = 0.02,
        publisher_factory: Callable[[str, str], Publisher] | None = None,
    ) -> None:
        if not isinstance(url, str) or not url.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError(
                f"broker must be a Redis URL such as 'redis://host:6379/0', not {url!r}"
            )
        if isinstance(max_buffer, bool) or not isinstance(max_buffer, int) or max_buffer < 1:
            raise ValueError(f"max_buffer must be a positive int, not {max_buffer!r}")
        if not isinstance(queue, str) or not queue:
            raise ValueError("queue must be a non-empty string")
        if publisher_factory is None:
            import importlib.util

            if importlib.util.find_spec("dramatiq") is None:
                raise ImportError(
                    "broker= needs the fleet extra: pip install 'livescore-ai[fleet]'"
                )
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

        return DramatiqPublisher(self.url, self.queue)

    async def run(self, jobs: AsyncIterator[JobHandle]) -> None:
        """Buffer the jobs and publish them on a thread of their own until ``jobs`` ends."""
        state = _PublishState(self.max_buffer, self.linger)
        publisher = await anyio.to_thread.run_sync(self._publisher)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(
                    functools.partial(
                        anyio.to_thread.run_sync,
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
                            await anyio.to_thread.run_sync(
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
            await anyio.to_thread.run_sync(publisher.close, abandon_on_cancel=True)

    def _publish_loop(self, state: _PublishState, publisher: Publisher) -> None:
        backoff = _BACKOFF_FIRST
        while True:
            batch = state.next_batch(_BATCH)
            if not batch:
                return
            try:
                published = self._publish_batch(publisher, batch)
            except BrokerUnavailableError as exc:
                if state.set_down(True):
                    _log.warning(
                        "livescore: the broker is unavailable (%s); buffering up to %d jobs",
                        exc,
                        self.max_buffer,
                    )
                state.wait(backoff)
                backoff = min(backoff * 2, _BACKOFF_MAX)
                continue
            backoff = _BACKOFF_FIRST
            if state.set_down(False):
                _log.warning("livescore: the broker is back; publishing resumed")
            state.done([handle for handle, _ in batch])
            self.published += len(published)
            for handle in published:
                handle.hand_off()

    def _publish_batch(
        self, publisher: Publisher, batch: list[tuple[JobHandle, dict[str, Any]]]
    ) -> list[JobHandle]:
        """Publish a batch in one exchange; the jobs published. A record the engine cannot
        encode is dropped (counted) and the rest published one by one."""
        try:
            publisher.publish_many([record for _, record in batch])
            return [handle for handle, _ in batch]
        except BrokerUnavailableError:
            raise
        except Exception:
            pass  # find the culprit below
        kept: list[JobHandle] = []
        for handle, record in batch:
            try:
                publisher.publish(record)
            except BrokerUnavailableError:
                raise
            except Exception:
                _log.exception("livescore: a job could not be published; it is dropped")
                handle.drop("invalid_job")
                continue
            kept.append(handle)
        return kept


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

    def next_batch(self, limit: int) -> list[tuple[JobHandle, dict[str, Any]]]:
        """The oldest buffered jobs and their records (kept until :meth:`done`); ``[]``:
        stop."""
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
                return []
            batch = []
            for i in range(min(limit, len(self._buffer))):
                handle, record = self._buffer[i]
                if record is None:
                    # Built once: a retried publish sends the same id.
                    record = job_record(handle)
                    self._buffer[i] = (handle, record)
                batch.append((handle, record))
            return batch

    def done(self, handles: list[JobHandle]) -> None:
        """Forget the published (or dropped) jobs at the head of the buffer."""
        gone = {id(h) for h in handles}
        with self._cond:
            while self._buffer and id(self._buffer[0][0]) in gone:
                self._buffer.popleft()
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
