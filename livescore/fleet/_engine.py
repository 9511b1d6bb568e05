"""What livescore needs of a distributed task engine, so that a second engine is one module.

The fleet's own logic (the agent's bounded buffer, the worker's idempotency ledger, the
export barrier, the shared judge limits) is engine-neutral. An engine provides two things:

- a :class:`Publisher` for the agent side: put one JSON-safe job record on the queue;
- a :class:`Consumer` for the worker side: call a handler for each job, ``concurrency`` at
  a time, acknowledge the job only when the handler returns, hand it back to the queue when
  the handler raises :class:`Requeue`, and redeliver the jobs of a worker that died.

Dramatiq over Redis (:mod:`livescore.fleet._dramatiq`) is the one shipped.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = (
    "Consumer",
    "Delivery",
    "JobHandler",
    "Publisher",
    "Requeue",
)


class Requeue(Exception):
    """Raised by a job handler: put this job back on the queue for another worker, unacked
    work done so far (the worker is shutting down)."""


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


class Publisher(Protocol):
    """Puts job records on the broker's queue (agent side)."""

    def publish(self, record: Mapping[str, Any]) -> None:
        """Enqueue one job record.

        Raises:
            BrokerUnavailableError: The broker could not be reached or did not confirm.
        """
        ...

    def publish_many(self, records: Sequence[Mapping[str, Any]]) -> None:
        """Enqueue several job records in one exchange with the broker.

        Raises:
            BrokerUnavailableError: As :meth:`publish`; some of the records may have been
                enqueued (a worker recognises a record published twice by its ``id``).
        """
        ...

    def close(self) -> None:
        """Release the connections."""
        ...


class Consumer(Protocol):
    """Runs a job handler over the queue (worker side)."""

    def run(self, handler: JobHandler, *, stop: threading.Event, drain_timeout: float) -> None:
        """Consume until ``stop`` is set, then stop taking jobs, let the handlers in flight
        return (within ``drain_timeout`` seconds plus a grace), put the jobs it holds but
        did not start back on the queue, and return."""
        ...
