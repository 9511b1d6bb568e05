"""The idempotency ledger in Redis: each (run, scorer) pair is scored and emitted once.

A job can be delivered more than once: redelivered after its worker died (perhaps after
the score's span left), published twice by an agent that did not hear the broker's answer,
or handed to a second worker while the first is only slow. Before scoring, a worker
*claims* each pair of the job in one Lua call; after the pair's score was emitted *and
exported*, it marks the pair done. A pair already done is skipped; a pair another live
worker holds waits for that worker (it is done then, or its claim lapses).

Keys (all under ``livescore:fleet:``):

- ``job:{job id}`` — a hash, one field per scorer id: ``done:{status}`` or
  ``claim:{worker id}/{message id}:{expiry ms}``; it expires ``ttl`` after its last change.
- ``alive:{worker id}`` — set by each worker every few seconds with a short expiry: a
  claim whose worker has no such key is stale and may be taken over.
- ``deliveries:{message id}`` — how many times a message reached a worker; bounds the
  retries of a job that kills its worker every time.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import redis

from livescore.scoring import ScoreResult

__all__ = ("PREFIX", "ClaimState", "Ledger")

PREFIX = "livescore:fleet:"

ClaimState = Literal["claimed", "done", "busy"]

# ARGV: worker id, claim owner, lease ms, ttl ms, alive-key prefix, scorer ids...
_CLAIM = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
for i = 6, #ARGV do
  local field = ARGV[i]
  local value = redis.call('HGET', KEYS[1], field)
  local state = 'claimed'
  if value then
    if string.sub(value, 1, 5) == 'done:' then
      state = 'done'
    else
      local owner, expires = string.match(value, '^claim:(.+):(%d+)$')
      if owner and owner ~= ARGV[2] and tonumber(expires) > now then
        local worker = string.match(owner, '^([^/]+)/')
        if worker and redis.call('EXISTS', ARGV[5] .. worker) == 1 then
          state = 'busy'
        end
      end
    end
  end
  if state == 'claimed' then
    redis.call('HSET', KEYS[1], field, 'claim:' .. ARGV[2] .. ':' .. (now + tonumber(ARGV[3])))
  end
  out[#out + 1] = state
end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return out
"""

# ARGV: claim owner, scorer ids... Releases only the claims this owner holds.
_RELEASE = """
local n = 0
for i = 2, #ARGV do
  local value = redis.call('HGET', KEYS[1], ARGV[i])
  if value and string.sub(value, 1, 6 + #ARGV[1]) == 'claim:' .. ARGV[1] then
    redis.call('HDEL', KEYS[1], ARGV[i])
    n = n + 1
  end
end
return n
"""


class Ledger:
    """The worker's view of the ledger (sync Redis calls, from the engine's threads).

    Args:
        client: A Redis client.
        worker_id: This worker process's id.
        alive_ttl: Seconds a worker's ``alive`` key lives without a refresh: the time after
            which its claims may be taken over (the engine's heartbeat timeout).
        ttl: Seconds a job's ledger entry lives after its last change (how long a duplicate
            delivery is still recognised).
    """

    def __init__(
        self, client: redis.Redis, worker_id: str, *, alive_ttl: float, ttl: float
    ) -> None:
        self.client = client
        self.worker_id = worker_id
        self.alive_ttl = alive_ttl
        self.ttl = ttl
        self._claim = client.register_script(_CLAIM)
        self._release = client.register_script(_RELEASE)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- liveness ---------------------------------------------------------------------------

    def start_heartbeat(self) -> None:
        """Mark this worker alive now and every third of ``alive_ttl`` from a thread."""
        self.beat()
        self._thread = threading.Thread(
            target=self._beat_loop, name="livescore-fleet-heartbeat", daemon=True
        )
        self._thread.start()

    def beat(self) -> None:
        self.client.set(f"{PREFIX}alive:{self.worker_id}", "1", px=int(self.alive_ttl * 1000))

    def _beat_loop(self) -> None:
        while not self._stop.wait(self.alive_ttl / 3):
            # The broker is away: the engine's own consumers say so in the log.
            with contextlib.suppress(redis.RedisError):
                self.beat()

    def stop_heartbeat(self) -> None:
        """Stop beating and say this worker is gone (its claims become stale at once)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        with contextlib.suppress(redis.RedisError):
            self.client.delete(f"{PREFIX}alive:{self.worker_id}")

    # -- deliveries -------------------------------------------------------------------------

    def count_delivery(self, message_id: str) -> int:
        """Count one more delivery of a message; the count so far."""
        key = f"{PREFIX}deliveries:{message_id}"
        pipe = self.client.pipeline()
        pipe.incr(key)
        pipe.pexpire(key, int(self.ttl * 1000))
        count, _ = pipe.execute()
        return int(count)

    def uncount_delivery(self, message_id: str) -> None:
        """Take back a delivery that ended in an orderly requeue (not a crash)."""
        self.client.decr(f"{PREFIX}deliveries:{message_id}")

    # -- pairs --------------------------------------------------------------------------------

    def owner(self, message_id: str) -> str:
        return f"{self.worker_id}/{message_id}"

    def claim(
        self, job_id: str, scorer_ids: Sequence[str], *, owner: str, lease: float
    ) -> dict[str, ClaimState]:
        """Claim the pairs not done and not held by another live worker; their states."""
        if not scorer_ids:
            return {}
        states = self._claim(
            keys=[f"{PREFIX}job:{job_id}"],
            args=[
                self.worker_id,
                owner,
                int(lease * 1000),
                int(self.ttl * 1000),
                f"{PREFIX}alive:",
                *scorer_ids,
            ],
        )
        return {
            sid: (s.decode() if isinstance(s, bytes) else str(s))  # type: ignore[misc]
            for sid, s in zip(scorer_ids, states, strict=True)
        }

    def release(self, job_id: str, scorer_ids: Sequence[str], *, owner: str) -> None:
        """Give back this owner's claims on pairs it will not finish (best effort)."""
        if scorer_ids:
            self._release(keys=[f"{PREFIX}job:{job_id}"], args=[owner, *scorer_ids])

    def mark_done(self, job_id: str, statuses: Mapping[str, str]) -> None:
        """Mark one job's pairs done (``{scorer id: status}``)."""
        self.mark_many([(job_id, sid, status, None, None) for sid, status in statuses.items()])

    def mark_many(
        self, marks: Sequence[tuple[str, str, str, str | None, ScoreResult | None]]
    ) -> None:
        """Mark pairs done — ``(job id, scorer id, status, reply_to, result)`` each — in one
        transaction, sending each evaluation's results with their marks."""
        pipe = self.client.pipeline(transaction=True)
        replies: dict[tuple[str, str], list[dict[str, Any]]] = {}
        touched: set[str] = set()
        for job_id, scorer_id, status, reply_to, result in marks:
            key = f"{PREFIX}job:{job_id}"
            pipe.hset(key, scorer_id, f"done:{status}")
            touched.add(key)
            if reply_to and result is not None:
                replies.setdefault((reply_to, job_id), []).append(result.to_dict())
        for key in touched:
            pipe.pexpire(key, int(self.ttl * 1000))
        for (reply_to, job_id), results in replies.items():
            pipe.rpush(reply_to, json.dumps({"job": job_id, "results": results}, default=str))
            pipe.expire(reply_to, 86_400)
        pipe.execute()

    def complete(self, job_id: str, statuses: Mapping[str, str], *, message_id: str) -> None:
        """The delivery ended: mark what is left done and forget its delivery count."""
        pipe = self.client.pipeline(transaction=True)
        if statuses:
            key = f"{PREFIX}job:{job_id}"
            pipe.hset(key, mapping={sid: f"done:{status}" for sid, status in statuses.items()})
            pipe.pexpire(key, int(self.ttl * 1000))
        pipe.delete(f"{PREFIX}deliveries:{message_id}")
        pipe.execute()
