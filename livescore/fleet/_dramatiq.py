"""Dramatiq over Redis: the engine behind ``broker="redis://..."``.

Why Dramatiq (see docs/fleet.md, "Why Dramatiq"): its Redis broker acknowledges a
message only after the actor returns, puts a dead worker's unacknowledged messages back on
the queue once its heartbeat is older than ``heartbeat_timeout``, and adds about 7 MB
installed (dramatiq + redis-py) where Celery adds about 28 MB.

Everything Dramatiq-specific is in this module: the message format (one actor,
``livescore.score_job``, whose one argument is the job record), the broker settings and
the worker threads, and where livescore departs from Dramatiq's defaults:

- **Redis's clock, not the worker's.** Dramatiq stamps each worker's heartbeat with the
  worker's own clock, so a worker whose clock runs ahead sees every other worker as dead
  and puts their jobs in flight back on the queue. Its dispatch script is loaded here with
  the timestamp taken from Redis (``TIME``) instead; a worker also beats from a thread of
  its own, so a worker busy with long jobs (or holding them while its collector is down)
  does not look dead.
- **An outage is not an error.** Out of memory, read-only (a failover) and unreachable
  all mean "wait": the consumer and its acknowledgements retry quietly with backoff and
  say so once, instead of restarting the consumer (and dropping its prefetched jobs) with
  a traceback a second.
- **Dead letters, bounded and counted.** A message that cannot be decoded, is not a job
  of livescore's actor, has the wrong arguments, or whose handler failed ``max_failures``
  times goes to Dramatiq's dead-letter set (``livescore:{queue}.XQ``, kept 7 days) at
  once, and the worker is told (it counts it); the jobs fetched with it are untouched.
  Dramatiq's ``Retries`` middleware is not used: its re-enqueue of a failed message can
  itself fail in an outage, after which the message is acknowledged and lost.
- **A requeue is one atomic move.** A job handed back (shutdown, export deadline) moves
  from the worker's in-flight set to the queue in one script call, in place of the
  acknowledgement; nothing re-encodes it.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import dramatiq
import redis
from dramatiq.broker import MessageProxy
from dramatiq.brokers.redis import RedisBroker, _RedisConsumer
from dramatiq.common import compute_backoff
from dramatiq.errors import ConnectionClosed
from dramatiq.middleware import CurrentMessage, Middleware

from livescore._errors import BrokerUnavailableError, JobTooLargeError
from livescore.fleet._engine import (
    DEFAULT_MAX_JOB_BYTES,
    DeadLetter,
    DeadLetterHandler,
    Delivery,
    JobHandler,
    Requeue,
)
from livescore.fleet._redis import OutageLog, check_eviction_policy, outage_reason, redis_client

__all__ = (
    "ACTOR_NAME",
    "DEFAULT_MAX_JOB_BYTES",
    "NAMESPACE",
    "DramatiqConsumer",
    "DramatiqPublisher",
    "redis_client",
)

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

_REQUEUE = "livescore_requeue"  # set on a message by the actor: requeue instead of acking
_BACKOFF_FIRST = 0.05
_BACKOFF_MAX = 2.0

# The one line of Dramatiq's dispatch script that reads the caller's clock.
_TIMESTAMP_LINE = b"local timestamp = ARGV[2]"
_REDIS_TIMESTAMP = (
    b"local redis_time = redis.call('TIME')\n"
    b"local timestamp = tostring(tonumber(redis_time[1]) * 1000 + "
    b"math.floor(tonumber(redis_time[2]) / 1000))"
)
_HEARTBEAT = """
local t = redis.call('TIME')
redis.call('ZADD', KEYS[1], tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), ARGV[1])
return 1
"""


@functools.cache
def _dispatch_script() -> bytes | None:
    """Dramatiq's dispatch script with Redis's clock; ``None`` if this Dramatiq's differs."""
    from dramatiq.brokers import redis as dramatiq_redis

    source = getattr(dramatiq_redis, "_scripts", {}).get("dispatch")
    if not isinstance(source, bytes) or source.count(_TIMESTAMP_LINE) != 1:
        _log.warning(
            "livescore: this Dramatiq's dispatch script is not the one livescore knows; "
            "heartbeats use each worker's clock (keep the workers' clocks in sync)"
        )
        return None
    return source.replace(_TIMESTAMP_LINE, _REDIS_TIMESTAMP)


class _Broker(RedisBroker):
    """Dramatiq's Redis broker with Redis's clock and livescore's consumer."""

    def __init__(self, *, outages: OutageLog | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)  # type: ignore[no-untyped-call]
        self.outages = outages or OutageLog("livescore")
        self.on_dead_letter: Callable[[str, bytes | None], None] | None = None
        patched = _dispatch_script()
        if patched is not None:
            self.scripts["dispatch"] = self.client.register_script(patched)

    @property
    def consumer_class(self) -> Any:
        return _Consumer


class _Consumer(_RedisConsumer):  # type: ignore[misc]
    """Dramatiq's Redis consumer, quiet through outages, dead-lettering what it cannot
    decode without dropping the messages fetched with it."""

    broker: _Broker

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[no-untyped-call]
        self._backoff = _BACKOFF_FIRST

    def _outage(self, exc: BaseException) -> bool:
        """Wait a little (more each time) if ``exc`` is an outage; ``False`` if it is not."""
        reason = outage_reason(exc)
        if reason is None:
            return False
        self.broker.outages.down(reason, "the worker waits and retries")
        time.sleep(self._backoff)
        self._backoff = min(self._backoff * 2, _BACKOFF_MAX)
        return True

    def _answered(self) -> None:
        self._backoff = _BACKOFF_FIRST
        self.broker.outages.up()

    def __next__(self) -> Any:
        while True:
            if self.message_cache:
                data = self.message_cache.pop(0)
                if data is None:  # an id whose message is gone (acked by a duplicate's worker)
                    continue
                self.misses = 0
                message = self._decode(data)
                if message is None:
                    continue
                self.queued_message_ids.add(message.message_id)
                return MessageProxy(message)
            messages: list[Any] = []
            if self.outstanding_message_count < self.prefetch:
                try:
                    messages = self.broker.do_fetch(
                        self.queue_name, self.prefetch - self.outstanding_message_count
                    )
                except redis.RedisError as exc:
                    if self._outage(exc):
                        return None
                    raise
                self._answered()
                self.message_cache = list(messages)
            if not messages:
                self.misses, backoff_ms = compute_backoff(self.misses, max_backoff=self.timeout)
                time.sleep(backoff_ms / 1000)
                return None

    def _decode(self, data: bytes) -> dramatiq.Message[Any] | None:
        try:
            message: dramatiq.Message[Any] = dramatiq.Message.decode(data)
            if not isinstance(message.options.get("redis_message_id"), str):
                raise ValueError("no redis_message_id")
            return message
        except Exception:
            self._dead_letter_raw(data)
            return None

    def _dead_letter_raw(self, data: bytes) -> None:
        """Move an undecodable message to the dead-letter set. Its Redis id is not in what
        was fetched: it is the member of this consumer's in-flight set holding ``data``."""
        acks = f"{self.broker.namespace}:__acks__.{self.broker.broker_id}.{self.queue_name}"
        messages = f"{self.broker.namespace}:{self.queue_name}.msgs"
        client = self.broker.client
        try:
            ids = sorted(client.smembers(acks))  # type: ignore[arg-type]
            found = client.hmget(messages, ids) if ids else []
            for redis_id, stored in zip(ids, found, strict=True):  # type: ignore[arg-type]
                if stored == data:
                    self._retry(functools.partial(self.broker.do_nack, self.queue_name, redis_id))
                    break
        except redis.RedisError:
            _log.warning("livescore worker: an undecodable message could not be moved aside")
        if self.broker.on_dead_letter is not None:
            self.broker.on_dead_letter("undecodable_message", data)

    def _retry(self, call: Callable[[], Any]) -> Any:
        """Run a dispatch ``call`` until Redis takes it (an acknowledgement must not be
        lost to an outage: the job would be scored again)."""
        while True:
            try:
                result = call()
            except redis.RedisError as exc:
                if self._outage(exc):
                    continue
                raise ConnectionClosed(exc) from None  # type: ignore[no-untyped-call]
            self._answered()
            return result

    def ack(self, message: Any) -> None:
        redis_id = message.options["redis_message_id"]
        command = "requeue" if message.options.pop(_REQUEUE, False) else "ack"
        try:
            dispatch = self.broker._dispatch(command)  # type: ignore[no-untyped-call]
            self._retry(lambda: dispatch(self.queue_name, redis_id))
        finally:
            self.queued_message_ids.discard(message.message_id)

    def nack(self, message: Any) -> None:
        redis_id = message.options["redis_message_id"]
        try:
            self._retry(lambda: self.broker.do_nack(self.queue_name, redis_id))
        finally:
            self.queued_message_ids.discard(message.message_id)

    def requeue(self, messages: Any) -> None:
        ids = [m.options["redis_message_id"] for m in messages]
        if ids:
            try:
                self.broker.do_requeue(self.queue_name, *ids)
            except redis.RedisError as exc:
                # At shutdown, with Redis away: the heartbeat stops, and the next worker's
                # maintenance puts them back on the queue.
                raise ConnectionClosed(exc) from None  # type: ignore[no-untyped-call]


class _DeadLetters(Middleware):  # type: ignore[misc]
    """Tells the worker of every message Dramatiq rejects (moves to the dead-letter set)."""

    def __init__(self, report: Callable[[str, Any], None]) -> None:
        self._report = report

    def after_nack(self, broker: Any, message: Any) -> None:
        self._report(message.options.get("livescore_dead_letter") or "unknown_actor", message)


class DramatiqPublisher:
    """Enqueue job records as messages to the ``livescore.score_job`` actor (agent side).

    Args:
        url: The Redis URL.
        queue: The queue the workers consume.
        max_job_bytes: The largest encoded message to send; a larger record raises
            ``JobTooLargeError`` and is not sent. Keep it under
            the server's ``proto-max-bulk-len`` (512 MB by default) and well under its
            ``maxmemory``.
    """

    def __init__(self, url: str, queue: str, *, max_job_bytes: int = DEFAULT_MAX_JOB_BYTES) -> None:
        self.queue = queue
        self.max_job_bytes = max_job_bytes
        self._client = redis_client(url)
        self._checked = False
        # No middleware: the agent only enqueues.
        self._broker = _Broker(
            client=self._client,
            namespace=NAMESPACE,
            middleware=[],
            outages=OutageLog("livescore"),
        )

    def _encode(self, record: Mapping[str, Any]) -> tuple[str, bytes]:
        redis_id = str(uuid.uuid4())
        message: dramatiq.Message[Any] = dramatiq.Message(
            queue_name=self.queue,
            actor_name=ACTOR_NAME,
            args=(dict(record),),
            kwargs={},
            # What RedisBroker.enqueue adds: a Redis-side id per enqueued copy.
            options={"redis_message_id": redis_id},
        )
        data = message.encode()
        if len(data) > self.max_job_bytes:
            raise JobTooLargeError(len(data), self.max_job_bytes)
        return redis_id, data

    def publish(self, record: Mapping[str, Any]) -> None:
        self.publish_many([record])

    def publish_many(self, records: Sequence[Mapping[str, Any]]) -> None:
        """Enqueue ``records`` through one Redis pipeline: one round trip for the lot.

        Dramatiq has no batch enqueue; this sends the same ``dispatch`` script call its
        ``RedisBroker.enqueue`` sends, per message, in a pipeline (each round trip a
        publishing thread makes costs a CPU-bound agent GIL hand-overs). When Redis
        refuses some of them (out of memory, read-only), the error names those it took.
        """
        encoded = [self._encode(record) for record in records]  # all or nothing sent
        broker = self._broker
        script = broker.scripts["dispatch"]
        fixed = [broker.broker_id, broker.heartbeat_timeout, broker.dead_message_ttl]
        pipe = self._client.pipeline(transaction=False)
        now = int(time.time() * 1000)  # unused: the script reads Redis's clock
        for redis_id, data in encoded:
            # dispatch.lua's arguments: command, timestamp, queue, broker id, heartbeat
            # timeout, dead-message TTL, run maintenance (never from an agent), the Lua
            # unpack size (unused by enqueue), then the message id and its data.
            script(
                keys=[NAMESPACE],
                args=["enqueue", now, self.queue, *fixed, 0, 1, redis_id, data],
                client=pipe,
            )
        try:
            results = pipe.execute(raise_on_error=False)
        except redis.RedisError as exc:
            reason = outage_reason(exc)
            raise BrokerUnavailableError(f"the broker is {reason or f'failing ({exc})'}") from None
        errors = [r for r in results if isinstance(r, Exception)]
        if errors:
            published = tuple(i for i, r in enumerate(results) if not isinstance(r, Exception))
            reason = outage_reason(errors[0])
            if reason is not None or published:
                # Some were taken: the rest wait in the buffer and are published again.
                raise BrokerUnavailableError(
                    f"the broker is {reason or f'refusing jobs ({errors[0]})'}",
                    published=published,
                )
            raise errors[0]
        if not self._checked:
            self._checked = True
            with contextlib.suppress(redis.RedisError):
                check_eviction_policy(self._client, "livescore")

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
        max_failures: Times a message's handler may fail with an unexpected error (in
            this process) before the message goes to the dead-letter set.
        outages: Where Redis outages are logged, once each.
    """

    def __init__(
        self,
        url: str,
        queue: str,
        *,
        concurrency: int,
        heartbeat_timeout: float,
        max_failures: int = 3,
        outages: OutageLog | None = None,
    ) -> None:
        self.url = url
        self.queue = queue
        self.concurrency = concurrency
        self.heartbeat_timeout = heartbeat_timeout
        self.max_failures = max_failures
        self.outages = outages or OutageLog("livescore worker")
        self.dead_letters = 0

    def run(
        self,
        handler: JobHandler,
        *,
        stop: threading.Event,
        drain_timeout: float,
        on_dead_letter: DeadLetterHandler | None = None,
    ) -> None:
        client = redis_client(self.url)
        broker = _Broker(
            client=client,
            namespace=NAMESPACE,
            heartbeat_timeout=int(self.heartbeat_timeout * 1000),
            maintenance_chance=_MAINTENANCE_CHANCE,
            middleware=[CurrentMessage()],
            outages=self.outages,
        )

        def report(reason: str, record: Mapping[str, Any] | None) -> None:
            self.dead_letters += 1
            _log.warning(
                "livescore worker: a message went to the dead-letter set %s.XQ (%s)",
                f"{NAMESPACE}:{self.queue}",
                reason,
            )
            if on_dead_letter is not None:
                try:
                    on_dead_letter(reason, record)
                except Exception:
                    _log.exception("livescore worker: counting a dead letter failed")

        def raw_dead_letter(reason: str, data: bytes | None) -> None:
            report(reason, _record_in(data))

        broker.on_dead_letter = raw_dead_letter
        broker.add_middleware(
            _DeadLetters(lambda reason, message: report(reason, _record_of(message)))
        )

        dramatiq.Actor(
            self._actor_function(handler),
            broker=broker,
            actor_name=ACTOR_NAME,
            queue_name=self.queue,
            priority=0,
            options={},
        )
        beating = threading.Event()
        beat = threading.Thread(
            target=_beat,
            args=(client, broker.broker_id, self.heartbeat_timeout / 4, beating),
            name="livescore-dramatiq-heartbeat",
            daemon=True,
        )
        worker = dramatiq.Worker(broker, worker_threads=self.concurrency)
        worker.start()
        beat.start()
        try:
            # Never an untimed wait: a signal handled by another thread (after a SIGSTOP
            # the kernel may hand SIGTERM to any of them) would not wake this one.
            while not stop.wait(0.5):
                pass
        finally:
            _stop_worker(worker, drain_timeout)
            beating.set()
            beat.join(5.0)
            broker.close()
            client.close()  # Dramatiq's broker leaves its Redis connections open

    def _actor_function(self, handler: JobHandler) -> Callable[..., None]:
        """The actor's function: each job message to ``handler``, which may requeue it or
        send it to the dead-letter set; one that fails ``max_failures`` times goes there too."""
        failures: dict[str, int] = {}
        failures_lock = threading.Lock()

        def score_job(*args: Any, **kwargs: Any) -> None:
            message = CurrentMessage.get_current_message()
            if message is None:  # pragma: no cover - CurrentMessage is installed in run()
                return
            if len(args) != 1 or kwargs or not isinstance(args[0], Mapping):
                _dead_letter(message, "malformed_message")
                return
            try:
                handler(args[0], Delivery(message_id=message.message_id))
            except Requeue:
                message.options[_REQUEUE] = True
            except DeadLetter as exc:
                _dead_letter(message, exc.reason)
            except Exception:
                with failures_lock:
                    count = failures[message.message_id] = failures.get(message.message_id, 0) + 1
                    if len(failures) > 10_000:
                        failures.clear()
                # The traceback once; its repeats in one line each.
                log = _log.exception if count == 1 else _log.error
                log(
                    "livescore worker: handling job message %s failed (%d of %d)",
                    message.message_id,
                    count,
                    self.max_failures,
                )
                if count >= self.max_failures:
                    _dead_letter(message, "handler_error")
                else:
                    time.sleep(min(0.5 * count, 5.0))  # not a hot loop
                    message.options[_REQUEUE] = True

        return score_job


def _dead_letter(message: Any, reason: str) -> None:
    message.options["livescore_dead_letter"] = reason
    message.fail()  # Dramatiq moves it to the dead-letter set; _DeadLetters reports


def _stop_worker(worker: dramatiq.Worker, drain_timeout: float) -> None:
    # Worker threads finish the message in hand (handlers give up at the drain deadline and
    # raise Requeue); prefetched messages go back to the queue.
    try:
        worker.stop(timeout=int((drain_timeout + 10.0) * 1000))
    except (redis.RedisError, ConnectionClosed) as exc:
        _log.warning(
            "livescore worker: could not hand prefetched jobs back (%s); they are "
            "delivered again once this worker's heartbeat lapses",
            exc,
        )


def _beat(client: redis.Redis, broker_id: str, interval: float, stop: threading.Event) -> None:
    """Keep this worker's Dramatiq heartbeat fresh, in Redis's time, whatever its threads do."""
    script = client.register_script(_HEARTBEAT)
    while not stop.wait(interval):
        with contextlib.suppress(redis.RedisError):
            script(keys=[f"{NAMESPACE}:__heartbeats__"], args=[broker_id])


def _record_of(message: Any) -> Mapping[str, Any] | None:
    args = getattr(message, "args", ())
    for arg in args if isinstance(args, tuple | list) else ():
        if isinstance(arg, Mapping):
            return arg
    return None


def _record_in(data: bytes | None) -> Mapping[str, Any] | None:
    """The job record in a message Dramatiq could not decode, when there is a readable one."""
    try:
        fields = json.loads(data or b"")
    except (ValueError, UnicodeDecodeError):
        return None
    args = fields.get("args") if isinstance(fields, dict) else None
    for arg in args if isinstance(args, list) else ():
        if isinstance(arg, dict):
            return arg
    return None
