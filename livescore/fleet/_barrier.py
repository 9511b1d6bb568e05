"""The export barrier: a job is acknowledged only after its scores left the process.

An OpenTelemetry SDK buffers spans and metric points for seconds. A worker killed with
SIGKILL loses that buffer; if the job had been acknowledged, its scores would be lost for
good. So a worker's scores are *committed* (exported, then marked done in the ledger) by
one thread, in batches: a pair that ends asks for a commit, and the job is acknowledged
once every pair of it was committed. One commit serves every pair that ended meanwhile, so
under load commits are batched, at most one every ``min_interval`` seconds. A commit that
fails (Redis or the collector away) is retried by the barrier itself, with backoff, until
one succeeds: nothing else may ever ask again (every engine thread can be waiting for it).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

__all__ = ("ExportBarrier",)

_log = logging.getLogger("livescore.fleet")


class ExportBarrier:
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
        self._cond = threading.Condition()
        self._started = 0  # flushes started
        self._finished = 0  # flushes finished
        self._wanted = 0  # the flush number the latest waiter needs
        self._stopped = False
        self.flushes = 0
        self.failures = 0
        self._thread = threading.Thread(
            target=self._run, name="livescore-fleet-export", daemon=True
        )
        self._thread.start()

    def request(self) -> None:
        """Ask for a flush that starts after this call, without waiting for it."""
        with self._cond:
            self._wanted = max(self._wanted, self._started + 1)
            self._cond.notify_all()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for a flush that starts after this call; ``False`` when none ended in time."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            target = self._started + 1
            self._wanted = max(self._wanted, target)
            self._cond.notify_all()
            while self._finished < target and not self._stopped:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cond.wait(left)
            return self._finished >= target

    def _run(self) -> None:
        last_start = 0.0
        backoff = self.retry_first
        while True:
            with self._cond:
                while self._wanted <= self._started and not self._stopped:
                    self._cond.wait()
                if self._stopped:
                    return
            pause = last_start + self.min_interval - time.monotonic()
            if pause > 0:
                time.sleep(pause)  # let more jobs join this flush
            with self._cond:
                self._started += 1
                number = self._started
            last_start = time.monotonic()
            try:
                ok = bool(self._flush(self.timeout))
            except Exception:
                _log.exception("livescore: flushing the worker's telemetry failed")
                ok = False
            self.flushes += 1
            with self._cond:
                self._finished = number
                self._cond.notify_all()
            if ok:
                backoff = self.retry_first
                continue
            self.failures += 1
            # The flush's own code says why (once per outage); here: try again by itself.
            with self._cond:
                self._cond.wait_for(lambda: self._stopped, backoff)
                self._wanted = max(self._wanted, self._started + 1)
            backoff = min(backoff * 2, self.retry_max)

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
        self._thread.join(timeout=self.timeout + 1)
