"""Conversations on the fleet: their turns and their quiet timers in Redis.

The turns of one conversation may come from different agent processes and be scored by any
worker, so nothing of a conversation lives in a process. An agent's
:class:`~livescore.fleet.BrokerExecutor` publishes each turn as a job (``"turn"`` in the
record, beside the run's own scorers, if any); the worker that takes it appends the turn to
the conversation in Redis and sets the conversation's timer, in one Lua call
(:meth:`ConversationStore.add_turn`). A timer thread in every worker
(:class:`ConversationTimer`) takes the conversations that are due, publishes one
evaluation job for each, ``conversation:{id}:{turns}``, and settles them. The evaluation job
is an ordinary job: any worker scores it, through the idempotency ledger, so each
(conversation, turn count) is scored and emitted exactly once across the fleet, even when
a worker dies mid-score (the engine redelivers the job, the ledger hands the lapsed claim
over). A timer that dies between taking a conversation and settling it lets its lease
lapse, and another worker's timer publishes the same job again: the ledger recognises it.

A conversation that never goes quiet (a turn more often than its idle timeout) is due
anyway once its first turn no evaluation covers is ``max_age`` old (``why`` is
``"max_age"``), and again when it goes quiet or ends, as in process.

A conversation with no idle timeout is scored when its ``ttl`` has passed since its last
turn (``scored_because`` is ``"ttl"``), so that none expires from Redis unscored; without
an ``end_conversation`` it would otherwise never be. Keys (all under
``livescore:fleet:conv:``), each expiring ``ttl`` after the conversation is due:

- ``{id}`` — a hash: ``count`` (turns so far), ``first`` (the first turn held),
  ``chars`` (the held turns' JSON size), ``scored`` (the turn count of the last evaluation
  published), ``scorers`` (the scorers that sampled it), ``why`` (``idle``,
  ``turn_limit``, ``max_age``…), ``max_turns``, ``max_chars`` and ``max_age`` (the agent's
  bounds; ``max_age`` in ms, -1 for none), ``since`` (when the first turn no evaluation
  covers came) and ``quiet_at`` (when it goes quiet; only with an idle timeout);
- ``{id}:turns`` — a list: the held turns, oldest first, each ``{"run", "parent"}`` JSON;
- ``{id}:runs`` — a set of the turns' run ids: a turn delivered twice is appended once;
- ``due`` — a sorted set: conversation id → when it is due (Redis clock, ms).

Bounds: past ``max_turns`` held turns or ``max_chars`` characters a conversation is due at
once, and once its evaluation is published its oldest half is let go (as in process).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

import redis

from livescore.runs import Conversation, Run

__all__ = ("CONVERSATION_PREFIX", "ConversationStore", "ConversationTimer", "evaluation_id")

_log = logging.getLogger("livescore.fleet")

CONVERSATION_PREFIX = "livescore:fleet:conv:"
_DUE = f"{CONVERSATION_PREFIX}due"

# KEYS: turns, runs, meta, due. ARGV: run id, turn json, idle ms (-1: none), scorers json,
# max turns, max chars, ttl ms, conversation id, max age ms (-1: none). Returns the turn
# count (0: a duplicate).
_ADD_TURN = """
if redis.call('SADD', KEYS[2], ARGV[1]) == 0 then return 0 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('RPUSH', KEYS[1], ARGV[2])
local count = redis.call('HINCRBY', KEYS[3], 'count', 1)
if count - 1 <= tonumber(redis.call('HGET', KEYS[3], 'scored') or '0') then
  redis.call('HSET', KEYS[3], 'since', now)  -- the first turn no evaluation covers
end
redis.call('HSETNX', KEYS[3], 'first', 1)
local chars = redis.call('HINCRBY', KEYS[3], 'chars', string.len(ARGV[2]))
redis.call('HSET', KEYS[3], 'scorers', ARGV[4], 'max_turns', ARGV[5], 'max_chars', ARGV[6],
  'max_age', ARGV[9])
redis.call('HDEL', KEYS[3], 'quiet_at')
local held = redis.call('LLEN', KEYS[1])
local idle = tonumber(ARGV[3])
local ttl = tonumber(ARGV[7])
local why = 'idle'
local due
if held > tonumber(ARGV[5]) then
  why = 'turn_limit'
  due = now
elseif chars > tonumber(ARGV[6]) and held > 1 then
  why = 'char_limit'
  due = now
elseif idle >= 0 then
  due = now + idle
  redis.call('HSET', KEYS[3], 'quiet_at', due)
  local max_age = tonumber(ARGV[9])
  local aged = tonumber(redis.call('HGET', KEYS[3], 'since') or now) + max_age
  if max_age >= 0 and aged < due then
    why = 'max_age'  -- never quiet: due anyway, and again once quiet or ended
    due = math.max(aged, now)
  end
else
  why = 'ttl'
  due = now + ttl
end
redis.call('HSET', KEYS[3], 'why', why)
redis.call('ZADD', KEYS[4], due, ARGV[8])
for i = 1, 3 do
  redis.call('PEXPIRE', KEYS[i], due - now + ttl)
end
return count
"""

# KEYS: meta, due. ARGV: conversation id. Due now, if it has a turn no evaluation covers.
_END = """
local count = tonumber(redis.call('HGET', KEYS[1], 'count') or '0')
local scored = tonumber(redis.call('HGET', KEYS[1], 'scored') or '0')
if count <= scored then return 0 end
local t = redis.call('TIME')
redis.call('HSET', KEYS[1], 'why', 'ended')
redis.call('ZADD', KEYS[2], tonumber(t[1]) * 1000, ARGV[1])
return 1
"""

# KEYS: due. ARGV: lease ms, limit, meta key prefix. The conversations due: each with a turn
# no evaluation covers is leased (due again after the lease, in case this taker dies);
# one with none is taken off the timer. Returns id, count, id, count...
_TAKE_DUE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))
local out = {}
for _, id in ipairs(ids) do
  local meta = ARGV[3] .. id
  local count = tonumber(redis.call('HGET', meta, 'count') or '0')
  local scored = tonumber(redis.call('HGET', meta, 'scored') or '0')
  if count > scored then
    redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), id)
    out[#out + 1] = id
    out[#out + 1] = tostring(count)
  else
    redis.call('ZREM', KEYS[1], id)
  end
end
return out
"""

# KEYS: turns, runs, meta, due. ARGV: count published, conversation id. The evaluation of
# ``count`` turns is published: record it, take the conversation off the timer unless a
# turn came since (then its max age counts from now), and past a bound (the agent's, kept
# in meta) let the oldest half go.
_SETTLE = """
local published = tonumber(ARGV[1])
local scored = tonumber(redis.call('HGET', KEYS[3], 'scored') or '0')
if published > scored then redis.call('HSET', KEYS[3], 'scored', published) end
local count = tonumber(redis.call('HGET', KEYS[3], 'count') or '0')
if count <= published then
  redis.call('ZREM', KEYS[4], ARGV[2])
else
  -- The turns that came since are due when quiet, or max_age from now (the first of them
  -- came after the conversation was taken: now is at most that much later).
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('HSET', KEYS[3], 'since', now)
  local quiet = tonumber(redis.call('HGET', KEYS[3], 'quiet_at') or '-1')
  local max_age = tonumber(redis.call('HGET', KEYS[3], 'max_age') or '-1')
  if quiet >= 0 and max_age >= 0 then
    local why, due = 'idle', quiet
    if now + max_age < quiet then why, due = 'max_age', now + max_age end
    redis.call('HSET', KEYS[3], 'why', why)
    redis.call('ZADD', KEYS[4], due, ARGV[2])
  end
end
local held = redis.call('LLEN', KEYS[1])
local chars = tonumber(redis.call('HGET', KEYS[3], 'chars') or '0')
local max_turns = tonumber(redis.call('HGET', KEYS[3], 'max_turns') or '100')
local max_chars = tonumber(redis.call('HGET', KEYS[3], 'max_chars') or '100000')
if held > max_turns or chars > max_chars then
  local keep = math.max(1, math.floor(held / 2))
  local dropped = 0
  while held > 1 and (held > keep or chars > max_chars / 2) do
    local turn = redis.call('LPOP', KEYS[1])
    chars = chars - string.len(turn)
    held = held - 1
    dropped = dropped + 1
  end
  redis.call('HSET', KEYS[3], 'chars', chars)
  redis.call('HINCRBY', KEYS[3], 'first', dropped)
end
return count
"""


def evaluation_id(conversation_id: str, turns: int) -> str:
    """The job id of a conversation's evaluation over its first ``turns`` turns: the key
    the ledger scores once, however often the job is published or delivered.

    Example:
        >>> evaluation_id("thread-7", 4)
        'conversation:thread-7:4'
    """
    return f"conversation:{conversation_id}:{turns}"


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class ConversationStore:
    """The fleet's conversations in Redis (sync calls, from the worker's threads).

    Args:
        client: A Redis client.
    """

    def __init__(self, client: redis.Redis) -> None:
        self.client = client
        self._add = client.register_script(_ADD_TURN)
        self._end = client.register_script(_END)
        self._take = client.register_script(_TAKE_DUE)
        self._settle = client.register_script(_SETTLE)

    @staticmethod
    def _keys(conversation_id: str) -> tuple[str, str, str]:
        meta = f"{CONVERSATION_PREFIX}{conversation_id}"
        return f"{meta}:turns", f"{meta}:runs", meta

    def add_turn(self, turn: Mapping[str, Any], run: Mapping[str, Any], parent: Any) -> int:
        """Append one turn (a job record's ``turn``, its ``run`` and ``parent``) to its
        conversation and set its timer; the conversation's turn count (0: a duplicate)."""
        conversation_id = str(turn["id"])
        turns, runs, meta = self._keys(conversation_id)
        idle = turn.get("idle_timeout")
        limits = turn.get("limits") or {}
        # An agent older than max_age sends none: its conversations are due when quiet only.
        max_age = limits.get("max_age")
        record = json.dumps({"run": run, "parent": parent}, default=str)
        count = self._add(
            keys=[turns, runs, meta, _DUE],
            args=[
                str(run.get("run_id") or ""),
                record,
                -1 if idle is None else int(float(idle) * 1000),
                json.dumps(turn.get("scorers") or []),
                int(limits.get("max_turns", 100)),
                int(limits.get("max_chars", 100_000)),
                int(float(limits.get("ttl", 3600.0)) * 1000),
                conversation_id,
                -1 if max_age is None else int(float(max_age) * 1000),
            ],
        )
        return int(count)  # type: ignore[arg-type]

    def end(self, conversation_id: str) -> bool:
        """Make a conversation due now (when a turn of it is not covered yet)."""
        _, _, meta = self._keys(conversation_id)
        return bool(self._end(keys=[meta, _DUE], args=[conversation_id]))

    def take_due(self, lease: float, limit: int = 100) -> list[tuple[str, int]]:
        """The conversations due now, each leased for ``lease`` seconds."""
        found = self._take(keys=[_DUE], args=[int(lease * 1000), limit, CONVERSATION_PREFIX])
        values = [_text(v) for v in found]  # type: ignore[union-attr]
        return [(values[i], int(values[i + 1])) for i in range(0, len(values), 2)]

    def evaluation(self, conversation_id: str, count: int) -> dict[str, Any] | None:
        """The evaluation job record of ``conversation_id`` over its first ``count`` turns
        (``None`` when the conversation expired meanwhile)."""
        turns_key, _, meta_key = self._keys(conversation_id)
        pipe = self.client.pipeline(transaction=True)
        pipe.lrange(turns_key, 0, -1)
        pipe.hgetall(meta_key)
        raw_turns, raw_meta = pipe.execute()
        meta = {_text(k): _text(v) for k, v in raw_meta.items()}
        if not raw_turns or not meta:
            return None
        first = int(meta.get("first", "1"))
        held = [json.loads(t) for t in raw_turns][: max(count - first + 1, 0)]
        if not held:
            return None
        runs = [Run.from_dict(t["run"]) for t in held]
        conversation = Conversation(
            conversation_id,
            runs,
            first_turn=first,
            metadata={"scored_because": meta.get("why", "idle")}
            | ({"turns_forgotten": first - 1} if first > 1 else {}),
        )
        return {
            "format": 2,
            "id": evaluation_id(conversation_id, first + len(runs) - 1),
            "source": "live",
            "run": held[-1]["run"],
            "parent": held[-1]["parent"],
            "scorers": json.loads(meta.get("scorers") or "[]"),
            "conversation": conversation.to_dict(),
        }

    def settle(self, conversation_id: str, count: int) -> None:
        """The evaluation of ``count`` turns is published (see the module docstring)."""
        turns, runs, meta = self._keys(conversation_id)
        self._settle(keys=[turns, runs, meta, _DUE], args=[count, conversation_id])


class ConversationTimer:
    """The thread of a worker that publishes the evaluations of the conversations due.

    Every worker runs one; they share the due set in Redis, each conversation leased to one
    taker at a time.

    Args:
        store: The conversations.
        publish: Publishes one job record (the worker's engine's publisher).
        poll: Seconds between looks at the due set.
        lease: Seconds a taken conversation waits before another worker may take it again
            (its taker died between taking and settling).
    """

    def __init__(
        self,
        store: ConversationStore,
        publish: Callable[[Mapping[str, Any]], None],
        *,
        poll: float = 0.2,
        lease: float = 30.0,
    ) -> None:
        self.store = store
        self.publish = publish
        self.poll = poll
        self.lease = lease
        self.published = 0
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self._loop, name="livescore-fleet-conversations", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _loop(self) -> None:
        while not self._stop.wait(self.poll):
            try:
                self.tick()
            except redis.RedisError:
                # The broker is away: the engine's consumers say so in the log.
                _log.debug("livescore worker: the conversation timer could not reach Redis")
            except Exception:
                _log.exception("livescore worker: the conversation timer failed")

    def tick(self) -> int:
        """Publish the evaluations of the conversations due now; how many."""
        published = 0
        for conversation_id, count in self.store.take_due(self.lease):
            record = self.store.evaluation(conversation_id, count)
            if record is None:
                continue
            self.publish(record)
            published += 1
            self.store.settle(conversation_id, count)
        self.published += published
        return published
