"""Dramatiq over Redis: the engine behind ``broker="redis://..."``.

Why Dramatiq (see docs/fleet.md, "Why Dramatiq"): its Redis broker acknowledges a
message only after the actor returns, puts a dead worker's unacknowledged messages back on
the queue once its heartbeat is older than ``heartbeat_timeout``, retries with backoff, and
adds about 7 MB installed (dramatiq + redis-py) where Celery adds about 28 MB.

Everything Dramatiq-specific is in this module: the message format (one actor,
``livescore.score_job``, whose one argument is the job record), the broker settings and
the worker threads.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import dramatiq
import redis
from dramatiq.brokers.redis import RedisBroker
from dramatiq.middleware import CurrentMessage, Retries
from redis.backoff import NoBackoff
from redis.retry import Retry

from livescore._errors import BrokerUnavailableError
from livescore.fleet._engine import Delivery, JobHandler, Requeue

__all__ = ("ACTOR_NAME", "NAMESPACE", "DramatiqConsumer", "DramatiqPublisher")

_log = logging.getLogger("livescore.fleet")

ACTOR_NAME = "livescore.score_job"
"""The Dramatiq actor every job message is addressed to."""
NAMESPACE = "livescore"
"""The prefix of Dramatiq's Redis keys for livescore's queues (apart from other apps')."""

# Dramatiq runs its queue maintenance (moving a dead worker's unacknowledged messages back to
# the queue) on a random share of its Redis commands: 1 in 1,000 by default, and only for
# the queue the command is about. An idle worker polls each queue about once a second, so
# redelivery could wait minutes past the heartbeat timeout; at 1 in 2 it waits about two
# seconds. Its cost with no dead worker: two ZRANGEBYSCOREs on small sets; a dead one costs a
# KEYS scan or two (per queue) until its entries are gone.
_MAINTENANCE_CHANCE = 500_000  # per million commands


def redis_client(url: str, *, timeout: float = 5.0) -> redis.Redis:
    """A Redis client that fails fast: no retries of its own, bounded connect and reply."""
    return redis.Redis.from_url(
        url,
        socket_connect_timeout=min(timeout, 2.0),
        socket_timeout=timeout,
        retry=Retry(NoBackoff(), 0),
        health_check_interval=30,
    )


class DramatiqPublisher:
    """Enqueue job records as messages to the ``livescore.score_job`` actor (agent side).

    Args:
        url: The Redis URL.
        queue: The queue the workers consume.
    """

    def __init__(self, url: str, queue: str) -> None:
        self.queue = queue
        self._client = redis_client(url)
        # No middleware: the agent only enqueues (Retries and the rest act in workers).
        self._broker = RedisBroker(  # type: ignore[no-untyped-call]
            client=self._client, namespace=NAMESPACE, middleware=[]
        )

    def publish(self, record: Mapping[str, Any]) -> None:
        message: dramatiq.Message[Any] = dramatiq.Message(
            queue_name=self.queue,
            actor_name=ACTOR_NAME,
            args=(dict(record),),
            kwargs={},
            options={},
        )
        try:
            self._broker.enqueue(message)
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            raise BrokerUnavailableError(f"cannot reach the broker: {exc}") from None

    def publish_many(self, records: Sequence[Mapping[str, Any]]) -> None:
        """Enqueue ``records`` through one Redis pipeline: one round trip for the lot.

        Dramatiq has no batch enqueue; this sends the same ``dispatch`` script call its
        ``RedisBroker.enqueue`` sends, per message, in a pipeline (each round trip a
        publishing thread makes costs a CPU-bound agent GIL hand-overs). If this Dramatiq's
        broker differs from the one this was written against, it falls back to
        ``enqueue`` per message.
        """
        broker = self._broker
        try:
            script = broker.scripts["dispatch"]
            fixed = [broker.broker_id, broker.heartbeat_timeout, broker.dead_message_ttl]
        except (AttributeError, KeyError):
            for record in records:
                self.publish(record)
            return
        pipe = self._client.pipeline(transaction=False)
        now = int(time.time() * 1000)
        for record in records:
            redis_id = str(uuid.uuid4())
            message: dramatiq.Message[Any] = dramatiq.Message(
                queue_name=self.queue,
                actor_name=ACTOR_NAME,
                args=(dict(record),),
                kwargs={},
                # What RedisBroker.enqueue adds: a Redis-side id per enqueued copy.
                options={"redis_message_id": redis_id},
            )
            # dispatch.lua's arguments: command, timestamp, queue, broker id, heartbeat
            # timeout, dead-message TTL, run maintenance (never from an agent), the Lua
            # unpack size (unused by enqueue), then the message id and its data.
            script(
                keys=[NAMESPACE],
                args=["enqueue", now, self.queue, *fixed, 0, 1, redis_id, message.encode()],
                client=pipe,
            )
        try:
            pipe.execute()
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            raise BrokerUnavailableError(f"cannot reach the broker: {exc}") from None

    def close(self) -> None:
        try:
            self._client.close()
        except Exception:  # a socket already gone: nothing left to release
            _log.debug("closing the broker connection failed", exc_info=True)


class DramatiqConsumer:
    """A Dramatiq worker for the ``livescore.score_job`` actor (worker side).

    Args:
        url: The Redis URL.
        queue: The queue to consume.
        concurrency: Jobs handled at once (Dramatiq worker threads).
        heartbeat_timeout: Seconds without a heartbeat after which a worker counts as dead
            and its unacknowledged jobs go back to the queue.
    """

    def __init__(self, url: str, queue: str, *, concurrency: int, heartbeat_timeout: float) -> None:
        self.url = url
        self.queue = queue
        self.concurrency = concurrency
        self.heartbeat_timeout = heartbeat_timeout

    def run(self, handler: JobHandler, *, stop: threading.Event, drain_timeout: float) -> None:
        client = redis_client(self.url)
        broker = RedisBroker(  # type: ignore[no-untyped-call]
            client=client,
            namespace=NAMESPACE,
            heartbeat_timeout=int(self.heartbeat_timeout * 1000),
            maintenance_chance=_MAINTENANCE_CHANCE,
            middleware=[
                CurrentMessage(),
                # Unlimited by count: livescore bounds deliveries itself (a job that kills
                # its worker is redelivered by the heartbeat, which Retries never sees), and
                # a message Dramatiq gave up on would go to its dead-letter set uncounted.
                Retries(max_retries=None, min_backoff=1_000, max_backoff=60_000),  # type: ignore[arg-type]
            ],
        )

        def score_job(record: Mapping[str, Any]) -> None:
            message = CurrentMessage.get_current_message()
            message_id = message.message_id if message is not None else ""
            try:
                handler(record, Delivery(message_id=message_id))
            except Requeue:
                # Back to the queue at once (through Dramatiq's delay queue), not counted
                # against anything; the original delivery is acknowledged.
                raise dramatiq.Retry(delay=0) from None

        dramatiq.Actor(
            score_job,
            broker=broker,
            actor_name=ACTOR_NAME,
            queue_name=self.queue,
            priority=0,
            options={},
        )
        worker = dramatiq.Worker(broker, worker_threads=self.concurrency)
        worker.start()
        try:
            stop.wait()
        finally:
            # Worker threads finish the message in hand (handlers give up at the drain
            # deadline and raise Requeue); prefetched messages go back to the queue.
            worker.stop(timeout=int((drain_timeout + 10.0) * 1000))
            broker.close()
