"""Fleet-wide judge limits: one Redis-backed gate that every worker's judge requests pass.

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
from typing import Any

import anyio

from livescore.fleet._ledger import PREFIX

__all__ = ("RedisJudgeGate",)

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
    """A :class:`~livescore.judges.RequestGate` shared by every worker through Redis.

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
