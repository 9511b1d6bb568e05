"""The idempotency ledger in Redis: each (run, scorer) pair is scored and emitted once.

A job can be delivered more than once: redelivered after its worker died (perhaps after
the score's span left), published twice by an agent that did not hear the broker's answer,
handed to a second worker while the first is only slow or frozen, or delivered twice to the
same worker. Before scoring, a worker *claims* each pair of the job in one Lua call, under
a token minted for that one delivery; when it commits the pair's score it first *fences*
the claim (checks, in Redis, that the token still holds it, and holds it for the length of
an export whatever happens to the worker), then exports the span, then marks the pair
done, again only where its token still holds it. A pair already done is skipped; a pair
another delivery holds waits for it (it is done then, or its claim lapses). Every time is
Redis's own (``TIME``), never a worker's clock.

Keys (all under ``livescore:fleet:``):

- ``job:{job id}`` — a hash, one field per scorer id: ``done:{status}``,
  ``claim:{worker id}/{token}:{expiry ms}`` (lapses when it expires *or* its worker stops
  beating) or ``fence:{worker id}/{token}:{expiry ms}`` (lapses only when it expires); it
  expires ``ttl`` after its last change.
- ``alive:{worker id}`` — set by each worker every few seconds with a short expiry: a
  claim whose worker has no such key is stale and may be taken over.
- ``delivered:{message id}`` — a set of the tokens of the deliveries of a message that
  reached a worker; bounds the retries of a job that kills its worker every time.
- ``eval:{32 hex}:results`` — the only keys a job may name as its ``reply_to``.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeGuard

import redis

from livescore.scoring import ScoreResult

__all__ = ("PREFIX", "ClaimState", "Ledger", "MarkOutcome", "valid_reply_to")

PREFIX = "livescore:fleet:"

ClaimState = Literal["claimed", "done", "busy"]
MarkOutcome = Literal["marked", "done_elsewhere", "taken"]

_REPLY_TO = re.compile(rf"^{re.escape(PREFIX)}eval:[0-9a-f]{{32}}:results$")
_MAX_JOB_ID = 200

_NOW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
"""

# ARGV: claim owner, lease ms, ttl ms, alive-key prefix, scorer ids...
_CLAIM = (
    _NOW
    + """
local out = {}
for i = 5, #ARGV do
  local field = ARGV[i]
  local value = redis.call('HGET', KEYS[1], field)
  local state = 'claimed'
  if value then
    if string.sub(value, 1, 5) == 'done:' then
      state = 'done'
    else
      local kind, owner, expires = string.match(value, '^(%a+):(.+):(%d+)$')
      if owner and owner ~= ARGV[1] and tonumber(expires) > now then
        if kind == 'fence' then
          state = 'busy'
        else
          local worker = string.match(owner, '^([^/]+)/')
          if worker and redis.call('EXISTS', ARGV[4] .. worker) == 1 then
            state = 'busy'
          end
        end
      end
    end
  end
  if state == 'claimed' then
    redis.call('HSET', KEYS[1], field, 'claim:' .. ARGV[1] .. ':' .. (now + tonumber(ARGV[2])))
  end
  out[#out + 1] = state
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return out
"""
)

# KEYS: job keys. ARGV: fence ms, ttl ms, then (key index, scorer id, owner) per pair.
# Returns 1 per pair this owner holds (now fenced), 0 per pair it lost.
_FENCE = (
    _NOW
    + """
local out = {}
local fence = tonumber(ARGV[1])
for i = 3, #ARGV, 3 do
  local key = KEYS[tonumber(ARGV[i])]
  local field, owner = ARGV[i + 1], ARGV[i + 2]
  local value = redis.call('HGET', key, field)
  local mine = (not value)
    or string.sub(value, 1, 7 + #owner) == 'claim:' .. owner .. ':'
    or string.sub(value, 1, 7 + #owner) == 'fence:' .. owner .. ':'
  if mine then
    redis.call('HSET', key, field, 'fence:' .. owner .. ':' .. (now + fence))
    redis.call('PEXPIRE', key, ARGV[2])
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out
"""
)

# KEYS: job keys, then reply lists. ARGV: ttl ms, then (key index, scorer id, owner, status,
# reply index (0: none), reply payload) per pair. Marks a pair done only where this owner's
# token still holds it (or nothing does), and sends its result with the mark.
# Returns per pair: 1 marked, 2 already done by another delivery, 0 held by another.
_MARK = """
local out = {}
for i = 2, #ARGV, 6 do
  local key = KEYS[tonumber(ARGV[i])]
  local field, owner, status = ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local value = redis.call('HGET', key, field)
  local state = 0
  if not value
    or string.sub(value, 1, 7 + #owner) == 'claim:' .. owner .. ':'
    or string.sub(value, 1, 7 + #owner) == 'fence:' .. owner .. ':' then
    state = 1
  elseif string.sub(value, 1, 5) == 'done:' then
    state = 2
  end
  if state == 1 then
    redis.call('HSET', key, field, 'done:' .. status)
    redis.call('PEXPIRE', key, ARGV[1])
    local reply = tonumber(ARGV[i + 4])
    if reply > 0 then
      redis.call('RPUSH', KEYS[reply], ARGV[i + 5])
      redis.call('EXPIRE', KEYS[reply], 86400)
    end
  end
  out[#out + 1] = state
end
return out
"""

# ARGV: claim owner, scorer ids... Releases only the claims and fences this owner holds.
_RELEASE = """
local n = 0
local owner = ARGV[1]
for i = 2, #ARGV do
  local value = redis.call('HGET', KEYS[1], ARGV[i])
  if value and (string.sub(value, 1, 7 + #owner) == 'claim:' .. owner .. ':'
      or string.sub(value, 1, 7 + #owner) == 'fence:' .. owner .. ':') then
    redis.call('HDEL', KEYS[1], ARGV[i])
    n = n + 1
  end
end
return n
"""


def valid_reply_to(value: object) -> TypeGuard[str]:
    """Whether a job may send its results to ``value``: an evaluation's result list only.

    A job names its ``reply_to`` itself; anything else would let one job push to, or set
    an expiry on, any key of the Redis (or stop its worker with a key of another type).

    Example:
        >>> valid_reply_to("livescore:fleet:eval:" + "0" * 32 + ":results")
        True
        >>> valid_reply_to("session:42")
        False
    """
    return isinstance(value, str) and _REPLY_TO.match(value) is not None


def valid_job_id(value: object) -> TypeGuard[str]:
    """A job id fit for a ledger key: a non-empty string of printable characters."""
    return (
        isinstance(value, str)
        and 0 < len(value) <= _MAX_JOB_ID
        and value.isprintable()
        and not value.isspace()
    )


@dataclass(frozen=True, slots=True)
class Mark:
    """One pair's end, to mark done: ``(job id, scorer id)`` under ``owner``'s claim."""

    job_id: str
    scorer_id: str
    owner: str
    status: str
    reply_to: str | None = None
    result: ScoreResult | None = None


class Ledger:
    """The worker's view of the ledger (sync Redis calls, from the engine's threads).

    Every method raises the Redis client's error when Redis cannot be reached or refuses
    (out of memory, read-only); the worker retries them. Each is safe to repeat.

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
        self._fence = client.register_script(_FENCE)
        self._mark = client.register_script(_MARK)
        self._release = client.register_script(_RELEASE)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.beat_failures = 0

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
            # Redis is away: the worker's own calls say so in the log.
            try:
                self.beat()
            except redis.RedisError:
                self.beat_failures += 1

    def stop_heartbeat(self) -> None:
        """Stop beating and say this worker is gone (its claims become stale at once)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        with contextlib.suppress(redis.RedisError):
            self.client.delete(f"{PREFIX}alive:{self.worker_id}")

    # -- deliveries -------------------------------------------------------------------------

    def new_owner(self) -> str:
        """A claim owner for one delivery: this worker's id and a fresh token.

        Never the message's id: a message delivered twice to the same worker (its worker
        looked dead for a moment, or an agent published it twice) must not pass a claim
        its first delivery holds.
        """
        return f"{self.worker_id}/{uuid.uuid4().hex}"

    def count_delivery(self, message_id: str, owner: str) -> int:
        """Count this delivery of a message (once, however often it is retried); the count
        so far."""
        key = f"{PREFIX}delivered:{message_id}"
        pipe = self.client.pipeline()
        pipe.sadd(key, owner)
        pipe.pexpire(key, int(self.ttl * 1000))
        pipe.scard(key)
        _, _, count = pipe.execute()
        return int(count)

    def uncount_delivery(self, message_id: str, owner: str) -> None:
        """Take back a delivery that ended in an orderly requeue (not a crash)."""
        self.client.srem(f"{PREFIX}delivered:{message_id}", owner)

    # -- pairs --------------------------------------------------------------------------------

    def claim(
        self, job_id: str, scorer_ids: Sequence[str], *, owner: str, lease: float
    ) -> dict[str, ClaimState]:
        """Claim the pairs not done and not held by another live delivery; their states."""
        if not scorer_ids:
            return {}
        states = self._claim(
            keys=[f"{PREFIX}job:{job_id}"],
            args=[owner, int(lease * 1000), int(self.ttl * 1000), f"{PREFIX}alive:", *scorer_ids],
        )
        return {
            sid: (s.decode() if isinstance(s, bytes) else str(s))  # type: ignore[misc]
            for sid, s in zip(scorer_ids, states, strict=True)
        }

    def fence(self, pairs: Sequence[tuple[str, str, str]], *, seconds: float) -> list[bool]:
        """Fence ``(job id, scorer id, owner)`` pairs for ``seconds``: for each, whether its
        owner still held it (it is then held for ``seconds``, even past this worker's
        heartbeat); a pair it lost was taken over or ended by another delivery."""
        if not pairs:
            return []
        keys, index = _key_index([f"{PREFIX}job:{job_id}" for job_id, _, _ in pairs])
        args: list[Any] = [int(seconds * 1000), int(self.ttl * 1000)]
        for (_, scorer_id, owner), key_no in zip(pairs, index, strict=True):
            args += [key_no, scorer_id, owner]
        found = self._fence(keys=keys, args=args)
        return [int(x) == 1 for x in found]

    def mark(self, marks: Sequence[Mark]) -> list[MarkOutcome]:
        """Mark pairs done in one atomic call, each only where its owner still holds it,
        sending each evaluation's results with their marks."""
        if not marks:
            return []
        job_keys, job_index = _key_index([f"{PREFIX}job:{m.job_id}" for m in marks])
        reply_keys, reply_index = _key_index(
            [m.reply_to for m in marks if m.reply_to and m.result is not None]
        )
        replies = iter(reply_index)
        args: list[Any] = [int(self.ttl * 1000)]
        for mark, key_no in zip(marks, job_index, strict=True):
            if mark.reply_to and mark.result is not None:
                reply_no = len(job_keys) + next(replies)
                payload = json.dumps(
                    {"job": mark.job_id, "results": [mark.result.to_dict()]}, default=str
                )
            else:
                reply_no, payload = 0, ""
            args += [key_no, mark.scorer_id, mark.owner, mark.status, reply_no, payload]
        found = self._mark(keys=job_keys + reply_keys, args=args)
        outcome: dict[int, MarkOutcome] = {1: "marked", 2: "done_elsewhere", 0: "taken"}
        return [outcome[int(x)] for x in found]

    def mark_done(self, job_id: str, statuses: Mapping[str, str], *, owner: str = "") -> None:
        """Mark one job's pairs done (``{scorer id: status}``) under ``owner``'s claims."""
        self.mark([Mark(job_id, sid, owner, status) for sid, status in statuses.items()])

    def release(self, job_id: str, scorer_ids: Sequence[str], *, owner: str) -> None:
        """Give back this owner's claims on pairs it will not finish."""
        if scorer_ids:
            self._release(keys=[f"{PREFIX}job:{job_id}"], args=[owner, *scorer_ids])

    def complete(self, message_id: str) -> None:
        """The delivery ended: forget its message's delivery count."""
        self.client.delete(f"{PREFIX}delivered:{message_id}")


def _key_index(keys: Sequence[str]) -> tuple[list[str], list[int]]:
    """The distinct keys in order, and each key's 1-based position among them (Lua's)."""
    distinct: dict[str, int] = {}
    index = [distinct.setdefault(key, len(distinct) + 1) for key in keys]
    return list(distinct), index
