"""Fleet-wide judge limits: one Redis-backed gate that every worker's judge requests pass,
and the Redis ledger of judge budgets the fleet shares (:class:`RedisBudgetLedger`).

Three limits, all shared by every worker through Redis and checked in one Lua call per
judge request:

- a pause: after a 429 any worker sets ``pause`` for the ``retry-after`` the judge asked for
  (1 s when it named none), and every worker waits it out before its next request: the
  whole fleet backs off, not the one worker that was told;
- requests per minute (``--fleet-judge-rpm``): a fixed-window counter over windows of at least
  one second, sized so each window allows a whole number of requests (bursts stay within a
  second's share, as providers enforce per-minute limits in sub-minute slices);
- concurrent requests (``--fleet-judge-concurrency``): leases in a sorted set, each expiring
  after the request timeout, so a worker killed mid-request holds its slot only that long.

Why not Dramatiq's rate limiters: they are synchronous (a thread hop per request from the
scoring loop) and retry WATCH transactions under contention, and its concurrent limiter's
counter is refreshed by every acquire, so slots held by a killed worker never come back on
a busy fleet. The gate fails open: with Redis unreachable, requests go through and the
judge's own retries and ``max_concurrency`` still apply.
"""

from __future__ import annotations

import contextlib
import logging
import math
import random
import uuid
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any

import anyio

from livescore.fleet._ledger import PREFIX

if TYPE_CHECKING:
    from livescore.judges import Admission, Reservation

__all__ = ("RedisBudgetLedger", "RedisJudgeGate")

_log = logging.getLogger("livescore.fleet")

# KEYS: pause, window prefix, leases. ARGV: rpm per window (0: none), window ms,
# concurrency (0: none), lease ms, lease id. Returns {0, 0} when admitted, else {1, wait ms}.
_ADMIT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local paused = redis.call('PTTL', KEYS[1])
if paused > 0 then return {1, paused} end
local limit = tonumber(ARGV[3])
if limit > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
  if redis.call('ZCARD', KEYS[3]) >= limit then
    local first = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
    return {1, math.min(50, tonumber(first[2]) - now)}
  end
end
local per_window = tonumber(ARGV[1])
if per_window > 0 then
  local window = tonumber(ARGV[2])
  local start = now - (now % window)
  local key = KEYS[2] .. start
  local used = redis.call('INCR', key)
  if used == 1 then redis.call('PEXPIRE', key, window * 2) end
  if used > per_window then return {1, start + window - now} end
end
if limit > 0 then
  redis.call('ZADD', KEYS[3], now + tonumber(ARGV[4]), ARGV[5])
  redis.call('PEXPIRE', KEYS[3], tonumber(ARGV[4]) * 2)
end
return {0, 0}
"""

# KEYS: pause. ARGV: pause ms. Extends the pause, never shortens it.
_PAUSE = """
local left = redis.call('PTTL', KEYS[1])
if left < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
end
return 1
"""


def rpm_window(rpm: float) -> tuple[int, int]:
    """``(requests per window, window ms)`` for a requests-per-minute budget.

    The window is the shortest of at least 1 s in which a whole request fits.

    Example:
        >>> rpm_window(600), rpm_window(30)
        ((10, 1000), (1, 2000))
    """
    window_ms = max(1000, math.ceil(60_000 / rpm))
    return max(1, int(rpm * window_ms / 60_000)), window_ms


class RedisJudgeGate:
    """The judge's request gate, shared by every worker through Redis.

    Args:
        url: The Redis URL.
        rpm: Judge requests per minute across the fleet (``None``: no budget).
        concurrency: Judge requests in flight across the fleet (``None``: no limit).
        lease: Seconds a concurrency slot is held at most (the judge's request timeout).
        pause: Seconds the fleet pauses after a 429 that names no ``retry-after``.
        max_pause: The longest pause a ``retry-after`` may ask for.
        name: Separates the limits of different judges sharing one Redis.
    """

    def __init__(
        self,
        url: str,
        *,
        rpm: float | None = None,
        concurrency: int | None = None,
        lease: float = 120.0,
        pause: float = 1.0,
        max_pause: float = 60.0,
        name: str = "judge",
    ) -> None:
        import redis.asyncio

        self.rpm = rpm
        self.concurrency = concurrency
        self.lease = lease
        self.pause = pause
        self.max_pause = max_pause
        self.per_window, self.window_ms = rpm_window(rpm) if rpm else (0, 1000)
        self._keys = [
            f"{PREFIX}gate:{name}:pause",
            f"{PREFIX}gate:{name}:rpm:",
            f"{PREFIX}gate:{name}:leases",
        ]
        self._client: Any = redis.asyncio.Redis.from_url(
            url, socket_connect_timeout=2.0, socket_timeout=5.0
        )
        self._admit = self._client.register_script(_ADMIT)
        self._pause = self._client.register_script(_PAUSE)
        self._failing = False
        self.waits = 0
        """Requests that had to wait for the fleet's limits (for tests and figures)."""
        self.pauses_seen = 0
        """429s this worker reported to the fleet."""

    def __repr__(self) -> str:
        return f"RedisJudgeGate(rpm={self.rpm}, concurrency={self.concurrency})"

    def request(self) -> AbstractAsyncContextManager[None]:
        return self._request()

    @contextlib.asynccontextmanager
    async def _request(self) -> AsyncIterator[None]:
        lease_id = uuid.uuid4().hex if self.concurrency else ""
        admitted = await self._wait_for_slot(lease_id)
        try:
            yield
        finally:
            if admitted and self.concurrency:
                with anyio.CancelScope(shield=True):
                    await self._call(self._client.zrem(self._keys[2], lease_id))

    async def _wait_for_slot(self, lease_id: str) -> bool:
        waited = False
        while True:
            answer = await self._call(
                self._admit(
                    keys=self._keys,
                    args=[
                        self.per_window,
                        self.window_ms,
                        self.concurrency or 0,
                        int(self.lease * 1000),
                        lease_id,
                    ],
                )
            )
            if answer is None:
                return False  # Redis is away: fail open
            if int(answer[0]) == 0:
                return True
            if not waited:
                waited = True
                self.waits += 1
            # Jitter, so a fleet released by one window does not ask in step.
            await anyio.sleep(max(int(answer[1]), 5) / 1000 * (1 + random.random() / 4))

    async def rate_limited(self, retry_after: float | None) -> None:
        self.pauses_seen += 1
        seconds = self.pause if retry_after is None else min(max(retry_after, 0.0), self.max_pause)
        if seconds > 0:
            await self._call(self._pause(keys=self._keys[:1], args=[int(seconds * 1000)]))

    async def _call(self, awaitable: Any) -> Any:
        import redis

        try:
            result = await awaitable
        except (redis.RedisError, OSError) as exc:
            if not self._failing:
                self._failing = True
                _log.warning("livescore: the judge gate cannot reach Redis (%s); failing open", exc)
            return None
        self._failing = False
        return result

    async def aclose(self) -> None:
        await self._client.aclose()


# -- the fleet's judge budget ----------------------------------------------------------------

# KEYS: the budget's key prefix. ARGV: window s (0: none), limit usd, limit tokens (negative:
# none), usd, tokens, alone (1/0), lease ms, lease id, the epoch this process saw ("" if
# none yet), a new epoch. The window comes from Redis' clock, so every worker agrees on it.
# Returns {admitted (-1: held), window start, spent usd, spent tokens, reserved usd, reserved
# tokens, epoch} (figures as strings: Redis would truncate Lua numbers).
#
# The epoch key is written once and never expires: when it is gone (or another), the
# ledger was reset under this process (a Redis restart without persistence, a flush) and
# what was spent is unknown. The window is then held (every admission refused) until it
# ends; without windows, until an operator deletes the :held key.
_RESERVE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local start = 0
if window > 0 then start = tonumber(t[1]) - (tonumber(t[1]) % window) end
local base = KEYS[1] .. start
local epoch = redis.call('GET', KEYS[1] .. 'epoch')
local reset = false
if not epoch then
  redis.call('SET', KEYS[1] .. 'epoch', ARGV[10])
  epoch = ARGV[10]
  reset = ARGV[9] ~= ''
elseif ARGV[9] ~= '' and epoch ~= ARGV[9] then
  reset = true
end
if reset then
  if window > 0 then
    redis.call('SET', base .. ':held', '1', 'EX', window * 2)
  else
    redis.call('SET', base .. ':held', '1')
  end
end
if redis.call('EXISTS', base .. ':held') == 1 then
  return {-1, start, '0', '0', '0', '0', epoch}
end
local leases, amounts, spent_key = base .. ':leases', base .. ':amounts', base .. ':spent'
local expired = redis.call('ZRANGEBYSCORE', leases, '-inf', now)
for _, id in ipairs(expired) do redis.call('HDEL', amounts, id) end
if #expired > 0 then redis.call('ZREMRANGEBYSCORE', leases, '-inf', now) end
local reserved_usd, reserved_tokens = 0, 0
for _, v in ipairs(redis.call('HVALS', amounts)) do
  local gap = string.find(v, ' ')
  reserved_usd = reserved_usd + tonumber(string.sub(v, 1, gap - 1))
  reserved_tokens = reserved_tokens + tonumber(string.sub(v, gap + 1))
end
local spent_usd = tonumber(redis.call('HGET', spent_key, 'usd') or '0')
local spent_tokens = tonumber(redis.call('HGET', spent_key, 'tokens') or '0')
local alone = ARGV[6] == '1'
local function fits(spent, reserved, amount, limit)
  if limit < 0 then return true end
  if spent + reserved + amount <= limit * (1 + 1e-9) then return true end
  return alone and spent + reserved < limit
end
local ok = fits(spent_usd, reserved_usd, tonumber(ARGV[4]), tonumber(ARGV[2]))
  and fits(spent_tokens, reserved_tokens, tonumber(ARGV[5]), tonumber(ARGV[3]))
if ok then
  local lease = tonumber(ARGV[7])
  redis.call('ZADD', leases, now + lease, ARGV[8])
  redis.call('HSET', amounts, ARGV[8], ARGV[4] .. ' ' .. ARGV[5])
  redis.call('PEXPIRE', leases, lease * 2)
  redis.call('PEXPIRE', amounts, lease * 2)
end
return {ok and 1 or 0, start, tostring(spent_usd), tostring(spent_tokens),
        tostring(reserved_usd), tostring(reserved_tokens), epoch}
"""

# KEYS: the budget's key prefix. ARGV: window start, lease id, usd, tokens, ttl ms (0: none).
_SETTLE = """
local base = KEYS[1] .. ARGV[1]
redis.call('HDEL', base .. ':amounts', ARGV[2])
redis.call('ZREM', base .. ':leases', ARGV[2])
redis.call('HINCRBYFLOAT', base .. ':spent', 'usd', ARGV[3])
redis.call('HINCRBY', base .. ':spent', 'tokens', ARGV[4])
if tonumber(ARGV[5]) > 0 then redis.call('PEXPIRE', base .. ':spent', ARGV[5]) end
return 1
"""

# KEYS: the budget's key prefix. ARGV: window s. Returns {spent usd, spent tokens}.
_SPENT = """
local t = redis.call('TIME')
local window = tonumber(ARGV[1])
local start = 0
if window > 0 then start = tonumber(t[1]) - (tonumber(t[1]) % window) end
local spent = redis.call('HMGET', KEYS[1] .. start .. ':spent', 'usd', 'tokens')
return {spent[1] or '0', spent[2] or '0'}
"""


class RedisBudgetLedger:
    """A :class:`~livescore.judges.BudgetLedger` in Redis: one judge budget for the fleet.

    What ``JudgeBudget(..., broker=URL)`` and ``livescore worker --judge-budget`` use. Each
    reservation is one Lua call that drops expired reservations, sums the open ones, applies
    the admission rule of :mod:`livescore.judges._budget` and records the new one; each
    settlement is one more. A reservation is a lease: a worker killed mid-score holds its
    share only until it expires. Windows follow Redis' clock, so every worker agrees on
    them. With Redis unreachable the budget fails closed (scores are skipped).

    Args:
        url: The Redis URL.
        name: The budget's name (its keys are ``livescore:fleet:budget:NAME:...``).
    """

    def __init__(self, url: str, *, name: str = "judge") -> None:
        import redis.asyncio

        self.url = url
        self.name = name
        self._prefix = f"{PREFIX}budget:{name}:"
        self._redis = redis.asyncio
        # One client per event loop: an asyncio Redis client belongs to its loop.
        self._clients: anyio.lowlevel.RunVar[Any] = anyio.lowlevel.RunVar(
            f"livescore_budget_{id(self)}", default=None
        )
        self._epoch = ""  # the ledger's epoch as first seen: another one means a reset
        self._checked = False  # whether the Redis' persistence was looked at

    def __repr__(self) -> str:
        return f"RedisBudgetLedger(name={self.name!r})"

    def _client(self) -> Any:
        client: Any = self._clients.get()
        if client is None:
            client = self._redis.Redis.from_url(
                self.url, socket_connect_timeout=2.0, socket_timeout=5.0
            )
            client.livescore_scripts = (
                client.register_script(_RESERVE),
                client.register_script(_SETTLE),
                client.register_script(_SPENT),
            )
            self._clients.set(client)
        return client

    async def _run(self, which: int, args: list[Any]) -> Any:
        import redis

        from livescore.judges import BudgetLedgerError

        client = self._client()
        try:
            return await client.livescore_scripts[which](keys=[self._prefix], args=args)
        except (redis.RedisError, OSError) as exc:
            raise BudgetLedgerError(f"Redis at {_display(self.url)}: {exc}") from None

    async def _check_persistence(self) -> None:
        """Warn, once, when the ledger's Redis keeps nothing across a restart."""
        import redis

        self._checked = True
        client = self._client()
        try:
            save = (await client.config_get("save")).get("save", b"")
            aof = (await client.config_get("appendonly")).get("appendonly", b"no")
        except (redis.RedisError, OSError):
            return  # CONFIG is off (managed Redis): nothing to tell from here
        if not _text(save).strip() and _text(aof).strip() == "no":
            _log.warning(
                'judge budget %r: its ledger\'s Redis at %s has no persistence (save "", '
                "appendonly no): a restart forgets what was spent. The workers then hold "
                "spending until the budget's window ends; turn persistence on (appendonly "
                "yes) to keep the ledger",
                self.name,
                _display(self.url),
            )

    async def admit(self, request: Reservation) -> Admission:
        from livescore.judges import Admission, BudgetLedgerError

        if not self._checked:
            await self._check_persistence()
        lease = uuid.uuid4().hex
        r = request
        answer = await self._run(
            0,
            [
                r.window_s,
                repr(-1.0 if r.limit_usd is None else float(r.limit_usd)),
                -1 if r.limit_tokens is None else int(r.limit_tokens),
                repr(float(r.usd)),
                int(r.tokens),
                1 if r.alone else 0,
                int(r.lease_s * 1000),
                lease,
                self._epoch,
                uuid.uuid4().hex,
            ],
        )
        epoch = _text(answer[6])
        if self._epoch and epoch != self._epoch:
            _log.warning(
                "judge budget %r: its ledger in Redis at %s was reset (a restart without "
                "persistence, or a flush): what was spent is unknown, so spending is held "
                "until the window ends",
                self.name,
                _display(self.url),
            )
        self._epoch = epoch
        if int(answer[0]) == -1:
            held = f"{self._prefix}{int(answer[1])}:held"
            raise BudgetLedgerError(
                f"its ledger in Redis at {_display(self.url)} was reset, so what was spent is "
                "unknown: spending is held "
                + ("until the window ends" if r.window_s else f"until {held} is deleted")
            )
        return Admission(
            admitted=int(answer[0]) == 1,
            window=int(answer[1]),
            window_s=r.window_s,
            lease=lease,
            spent_usd=float(answer[2]),
            spent_tokens=int(float(answer[3])),
            reserved_usd=float(answer[4]),
            reserved_tokens=int(float(answer[5])),
        )

    async def settle(self, admission: Admission, *, usd: float, tokens: int) -> None:
        # The spend is kept two windows (a score settling late still counts in its own).
        await self._run(
            1,
            [
                admission.window,
                admission.lease,
                repr(float(usd)),
                int(tokens),
                admission.window_s * 2000,
            ],
        )

    async def spent(self, *, window_s: int) -> tuple[float, int]:
        answer = await self._run(2, [window_s])
        return float(answer[0]), int(float(answer[1]))

    async def aclose(self) -> None:
        client = self._clients.get()
        if client is not None:
            self._clients.set(None)
            await client.aclose()


def _text(value: Any) -> str:
    """A Redis reply as text (bytes without decode_responses)."""
    return value.decode() if isinstance(value, bytes) else str(value)


def _display(url: str) -> str:
    from livescore._redaction import redact_url

    return redact_url(url)
