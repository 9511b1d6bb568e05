"""What the fleet needs of its Redis client: fail-fast clients, which errors are an outage,
and the checks a process makes when it first connects.

An *outage* is anything that says "try again later" rather than "this request is wrong":
the server unreachable or not answering, loading its data, out of memory under
``maxmemory-policy noeviction`` (``OOM command not allowed``), read-only (a replica, during
a failover), or without its primary (``MASTERDOWN``). Redis reports the last ones as
``ResponseError``s, like a bad command; treating them as a bad job would drop good jobs.
A wrong password or a missing permission is not an outage: retrying will not fix it.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

__all__ = (
    "OutageLog",
    "check_eviction_policy",
    "outage_reason",
    "redis_client",
    "validate_url",
)

_log = logging.getLogger("livescore.fleet")

# Replies that mean "the server cannot take writes now", whatever the command was.
_OUTAGE_PREFIXES = (
    "OOM",
    "READONLY",
    "MASTERDOWN",
    "LOADING",
    "NOREPLICAS",
    "TRYAGAIN",
    "CLUSTERDOWN",
    "BUSY ",
)
_OUTAGE_PHRASES = (
    ("used memory > 'maxmemory'", "out of memory (maxmemory reached, maxmemory-policy noeviction)"),
    ("read only replica", "read-only (a replica: a failover in progress?)"),
)


def redis_client(url: str, *, timeout: float = 5.0) -> redis.Redis:
    """A Redis client that fails fast: no retries of its own, bounded connect and reply."""
    return redis.Redis.from_url(
        url,
        socket_connect_timeout=min(timeout, 2.0),
        socket_timeout=timeout,
        retry=Retry(NoBackoff(), 0),
        health_check_interval=30,
    )


def validate_url(url: object) -> str:
    """``url`` if it is a Redis URL, else a ``ValueError`` that says what one looks like.

    Example:
        >>> validate_url("redis://127.0.0.1:6379/0")
        'redis://127.0.0.1:6379/0'
    """
    if not isinstance(url, str) or not url.startswith(("redis://", "rediss://", "unix://")):
        raise ValueError(f"broker must be a Redis URL such as 'redis://host:6379/0', not {url!r}")
    return url


def outage_reason(exc: BaseException) -> str | None:
    """Why Redis cannot serve now, when ``exc`` is an outage; ``None`` when it is not.

    Example:
        >>> import redis
        >>> outage_reason(redis.ConnectionError("Connection refused"))
        'unreachable (Connection refused)'
        >>> outage_reason(redis.ResponseError("WRONGTYPE Operation against a key")) is None
        True
    """
    if isinstance(exc, redis.AuthenticationError):
        return None  # a wrong password: retrying does not help
    if isinstance(exc, redis.TimeoutError):
        return f"not answering ({exc})"
    if isinstance(exc, redis.ConnectionError):
        return f"unreachable ({exc})"
    if isinstance(exc, redis.ResponseError):
        text = str(exc)
        for phrase, reason in _OUTAGE_PHRASES:
            if phrase in text:
                return reason
        if isinstance(exc, redis.exceptions.OutOfMemoryError):
            return _OUTAGE_PHRASES[0][1]
        if isinstance(exc, redis.exceptions.ReadOnlyError):
            return _OUTAGE_PHRASES[1][1]
        if text.upper().startswith(_OUTAGE_PREFIXES):
            return text.split(". ")[0]
    if isinstance(exc, OSError):
        return f"unreachable ({exc})"
    return None


class OutageLog:
    """Says once that Redis is away (and why), and once that it is back.

    Many threads hit the same outage; one line each way is what an operator needs.

    Example:
        >>> log = OutageLog("livescore worker")
        >>> log.down("unreachable (Connection refused)")
        True
        >>> log.down("unreachable (Connection refused)")
        False
        >>> log.up()
        True
    """

    def __init__(self, who: str, logger: logging.Logger | None = None) -> None:
        self.who = who
        self._logger = logger or _log
        self._lock = threading.Lock()
        self._reason: str | None = None
        self.outages = 0
        """Outages seen so far."""

    @property
    def reason(self) -> str | None:
        """Why Redis is away now; ``None`` while it answers."""
        return self._reason

    def down(self, reason: str, what: str = "waiting for it") -> bool:
        """Note an outage; ``True`` (and one warning) when it is a new one."""
        with self._lock:
            if self._reason is not None:
                return False
            self._reason = reason
            self.outages += 1
        self._logger.warning("%s: Redis is %s; %s", self.who, reason, what)
        return True

    def up(self) -> bool:
        """Note that Redis answered; ``True`` (and one line) when that ends an outage."""
        if self._reason is None:  # the common case, without the lock
            return False
        with self._lock:
            if self._reason is None:
                return False
            self._reason = None
        self._logger.warning("%s: Redis answers again", self.who)
        return True


def eviction_policy(client: redis.Redis) -> str | None:
    """The server's ``maxmemory-policy``; ``None`` when it cannot be read (``CONFIG`` is
    often disabled on managed Redis; ``INFO memory`` says the same)."""
    try:
        found: Any = client.config_get("maxmemory-policy")
        value = found.get("maxmemory-policy") if isinstance(found, dict) else None
        if value:
            return value.decode() if isinstance(value, bytes) else str(value)
    except redis.RedisError:
        pass
    try:
        info: Any = client.info("memory")
    except redis.RedisError:
        return None
    value = info.get("maxmemory_policy") if isinstance(info, dict) else None
    return str(value) if value else None


def check_eviction_policy(client: redis.Redis, who: str) -> str | None:
    """Warn, loudly, unless the server never evicts keys; the policy found.

    Under any other policy a full Redis deletes keys to make room: queued jobs vanish
    without a trace (no worker ever sees them, nobody counts them) and ledger entries go,
    so jobs already scored are scored again.
    """
    policy = eviction_policy(client)
    if policy is None:
        _log.warning(
            "%s: could not read Redis's maxmemory-policy; make sure it is noeviction, or "
            "a full Redis deletes queued jobs without counting them",
            who,
        )
    elif policy != "noeviction":
        _log.warning(
            "%s: WARNING: Redis's maxmemory-policy is %s: when it is full it deletes keys, "
            "and queued jobs vanish uncounted. Set maxmemory-policy noeviction (a full "
            "Redis then refuses new jobs, which the agents buffer and count).",
            who,
            policy,
        )
    return policy
