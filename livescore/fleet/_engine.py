"""What livescore needs of a distributed task engine, so that a second engine is one module.

The fleet's own logic (the agent's bounded buffer, the worker's idempotency ledger, the
export barrier, the shared judge limits) is engine-neutral. An engine provides two things:

- a :class:`Publisher` for the agent side: put one JSON-safe job record on the queue;
- a :class:`Consumer` for the worker side: call a handler for each job, ``concurrency`` at
  a time, acknowledge the job only when the handler returns, hand it back to the queue when
  the handler raises :class:`Requeue`, move it to a dead-letter set when it raises
  :class:`DeadLetter` (or cannot even be decoded), and redeliver the jobs of a worker that
  died.

Dramatiq over Redis (:mod:`livescore.fleet._dramatiq`) is the one shipped.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = (
    "DEFAULT_MAX_JOB_BYTES",
    "Consumer",
    "DeadLetter",
    "DeadLetterHandler",
    "Delivery",
    "JobHandler",
    "Publisher",
    "Requeue",
)


DEFAULT_MAX_JOB_BYTES = 1_048_576
"""The largest job message published by default (1 MiB encoded): a larger run is dropped,
counted as ``job_too_large``, rather than sent to a Redis that may close the connection on
it (and so block every job behind it)."""


class Requeue(Exception):
    """Raised by a job handler: put this job back on the queue for another worker, unacked
    work done so far (the worker is shutting down)."""


class DeadLetter(Exception):
    """Raised by a job handler: this message can never be handled; the engine moves it to
    its dead-letter set (kept for inspection) instead of delivering it again.

    Args:
        reason: A short ``snake_case`` reason, counted.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Delivery:
    """One delivery of a job to a worker.

    Attributes:
        message_id: The engine's id of the job's message: the same on every delivery of
            that message (a redelivery after a worker's death, a requeue at shutdown).
    """

    message_id: str


JobHandler = Callable[[Mapping[str, Any], Delivery], None]
"""Called by a consumer for each job, on one of its threads; returns when the job is done."""

DeadLetterHandler = Callable[[str, Mapping[str, Any] | None], None]
"""Told of each message a consumer moved to its dead-letter set: the reason, and the job
record when the message still carried a readable one (so its pairs can be counted)."""


class Publisher(Protocol):
    """Puts job records on the broker's queue (agent side)."""

    def publish(self, record: Mapping[str, Any]) -> None:
        """Enqueue one job record.

        Raises:
            BrokerUnavailableError: The broker could not be reached or did not confirm.
            JobTooLargeError: The record is over the publisher's size cap.
        """
        ...

    def publish_many(self, records: Sequence[Mapping[str, Any]]) -> None:
        """Enqueue several job records in one exchange with the broker.

        Raises:
            BrokerUnavailableError: As :meth:`publish`; its ``published`` names the records
                known to be enqueued. Others may have been too when the connection broke
                (a worker recognises a record published twice by its ``id``).
            JobTooLargeError: A record is over the publisher's size cap; none was sent.
        """
        ...

    def close(self) -> None:
        """Release the connections."""
        ...


class Consumer(Protocol):
    """Runs a job handler over the queue (worker side)."""

    def run(
        self,
        handler: JobHandler,
        *,
        stop: threading.Event,
        drain_timeout: float,
        on_dead_letter: DeadLetterHandler | None = None,
    ) -> None:
        """Consume until ``stop`` is set, then stop taking jobs, let the handlers in flight
        return (within ``drain_timeout`` seconds plus a grace), put the jobs it holds but
        did not start back on the queue, and return.

        A message that cannot be decoded, is not a job (another actor, other arguments),
        or whose handler raised :class:`DeadLetter` or failed ``max_failures`` times goes
        to the dead-letter set, and ``on_dead_letter`` is told; the messages fetched with
        it are handled as usual. While the broker is away the consumer waits and retries.
        """
        ...
