"""The export barrier: a job is acknowledged only after its scores left the process.

An OpenTelemetry SDK buffers spans and metric points for seconds. A worker killed with
SIGKILL loses that buffer; if the job had been acknowledged, its scores would be lost for
good. So a worker's scores are *committed* (exported, then marked done in the ledger) by
one thread, in batches: a pair that ends asks for a commit, and the job is acknowledged
once every pair of it was committed. One commit serves every pair that ended meanwhile, so
under load commits are batched, at most one every ``min_interval`` seconds. A commit that
fails (Redis or the collector away) is retried by the barrier itself, with backoff, until
one succeeds: nothing else may ever ask again (every engine thread can be waiting for it).

The barrier is a consumer of livescore's one background worker (``livescore._background``):
a request is a queued item, one commit handles every request queued so far.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable

from livescore._background import BackgroundWorker, Consumer

__all__ = ("ExportBarrier",)

_log = logging.getLogger("livescore.fleet")


class _Request:
    """A wish for a flush that starts after it was made; ``done`` once one has ended."""

    __slots__ = ("done", "seq")

    def __init__(self) -> None:
        self.seq = 0  # numbered by the worker
        self.done = False


class ExportBarrier(Consumer[_Request]):
    """Runs ``flush`` on a thread of its own whenever someone asks for one.

    Args:
        flush: Commits what is buffered within a timeout (seconds); ``False`` if it could not.
        min_interval: The least time between the starts of two flushes.
        timeout: What one flush may take.
        retry_first: Seconds before retrying a failed flush; doubled after each failure
            in a row, up to ``retry_max``.
        retry_max: The longest wait between retries.
    """

    def __init__(
        self,
        flush: Callable[[float], bool],
        *,
        min_interval: float = 0.1,
        timeout: float = 10.0,
        retry_first: float = 0.1,
        retry_max: float = 5.0,
    ) -> None:
        self._flush = flush
        self.min_interval = min_interval
        self.timeout = timeout
        self.retry_first = retry_first
        self.retry_max = retry_max
        self.flushes = 0
        self.failures = 0
        self._last_start = -float("inf")
        self._retry_at: float | None = None  # a failed flush is tried again then
        self._backoff = retry_first
        # Requests are control items, never refused: one queued request serves every caller
        # until a flush takes it, so the queue holds one at most.
        self._worker: BackgroundWorker[_Request] = BackgroundWorker(
            "livescore-fleet-export", self, max_items=1
        )

    def request(self) -> None:
        """Ask for a flush that starts after this call, without waiting for it."""
        self._ask()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for a flush that starts after this call; ``False`` when none ended in time."""
        request = self._ask()
        if request is None:
            return False
        self._worker.flush(timeout)
        return request.done

    def _ask(self) -> _Request | None:
        worker = self._worker
        with worker.lock:
            if worker.closed:
                return None
            if worker.queue:
                request = worker.queue[-1]  # not taken yet: its flush starts after this call
            else:
                request = _Request()
                worker.put_locked(request, bounded=False)
        worker.start_pending()
        return request

    def stop(self) -> None:
        """Stop the thread once a flush in progress ended; requests left are not served."""
        self._worker.shutdown(0.0, grace=self.timeout + 1)

    # -- the worker's consumer ----------------------------------------------------------------

    def take_locked(self, queue: deque[_Request], now: float, urgent: bool) -> list[_Request]:
        due = self._due_locked()
        if due is None or now < due:
            return []  # nothing asked, or too soon: more requests join the next flush
        self._retry_at = None
        if queue:
            batch = list(queue)
            queue.clear()
            return batch
        retry = _Request()
        self._worker.track_locked(retry)  # a flush that waits does not wait for it
        return [retry]

    def wait_locked(self, now: float) -> float | None:
        due = self._due_locked()
        return None if due is None else max(due - now, 0.0)

    def _due_locked(self) -> float | None:
        """When the next flush may start (``None``: nobody asked, nothing to retry)."""
        due = self._retry_at  # after a failure: not before its backoff ends
        if self._worker.queue:
            due = max(self._last_start + self.min_interval, due or 0.0)
        return due

    def handle(self, batch: list[_Request]) -> None:
        self._last_start = time.monotonic()
        try:
            ok = bool(self._flush(self.timeout))
        except Exception:
            _log.exception("livescore: flushing the worker's telemetry failed")
            ok = False
        self.flushes += 1
        worker = self._worker
        with worker.lock:
            for request in batch:
                request.done = True
                worker.finish_locked(request)
            if ok:
                self._backoff = self.retry_first
            else:
                # The flush's own code says why (once per outage); here: try again by itself.
                self.failures += 1
                self._retry_at = time.monotonic() + self._backoff
                self._backoff = min(self._backoff * 2, self.retry_max)
