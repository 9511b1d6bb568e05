"""A judge response cache on disk: the same request is paid for once.

It sits in the judge's transport (:class:`~livescore.judges.OpenAIJudge`), below the
structured-output ladder and the parameter adaptations, where the exact request is known:
the key is a SHA-256 of the base URL and the request body as sent (model, messages with the
prompt and instructions, ``response_format`` with the schema, temperature, token limit,
logprob settings), so anything that could change the answer changes the key. Only answers
that are chat completions are stored; errors and refusals are asked again next time. An
answer serves the *next* run (the next :class:`ResponseCache` opened on the directory), not
the one that stored it: a run's judge calls never depend on the order its items finish in.

The store is SQLite from the standard library (no new dependency) in WAL mode with a busy
timeout, so several ``livescore eval`` processes can share one cache at once: readers never
block, writers wait their turn. It is bounded: past ``max_bytes`` the least recently used
answers go. A cache that cannot be opened or read (corrupt, locked too long, a full disk) is
a warning, once, and a miss: the judge is asked, and the run goes on.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sqlite3

__all__ = ("DEFAULT_CACHE_BYTES", "CacheStats", "ResponseCache", "default_cache_dir")

_log = logging.getLogger("livescore.judges")

DEFAULT_CACHE_BYTES = 512 * 1024 * 1024
"""The default bound of a cache's answers (512 MiB; a judge answer is a few KB)."""

_BUSY_TIMEOUT_S = 30.0  # another process writing: wait this long before calling it a miss
_FILE_NAME = "judge-responses.sqlite3"


def default_cache_dir() -> Path:
    """``$LIVESCORE_CACHE``, else ``~/.cache/livescore`` (the project's one cache folder;
    the judge's answers are the file ``judge-responses.sqlite3`` in it).

    Example:
        >>> import os
        >>> before = os.environ.get("LIVESCORE_CACHE")
        >>> os.environ["LIVESCORE_CACHE"] = "/tmp/livescore-cache"
        >>> str(default_cache_dir())
        '/tmp/livescore-cache'
        >>> _ = os.environ.pop("LIVESCORE_CACHE") if before is None else None
        >>> os.environ.update({} if before is None else {"LIVESCORE_CACHE": before})
    """
    return Path(os.environ.get("LIVESCORE_CACHE") or Path.home() / ".cache" / "livescore")


@dataclass(slots=True)
class CacheStats:
    """What a cache saved in this process.

    Attributes:
        hits: Requests answered from the cache (no call, no tokens, no cost).
        misses: Requests sent to the server (their answers are stored).
        saved_input_tokens: Prompt tokens the hits would have cost.
        saved_output_tokens: Completion tokens the hits would have cost.
        saved_cached_input_tokens: The part of ``saved_input_tokens`` the server had
            served from its prompt cache.
        errors: Reads or writes that failed (each one a miss).
    """

    hits: int = 0
    misses: int = 0
    saved_input_tokens: int = 0
    saved_output_tokens: int = 0
    saved_cached_input_tokens: int = 0
    errors: int = 0

    @property
    def hit_rate(self) -> float | None:
        """Hits over lookups; ``None`` before any lookup."""
        lookups = self.hits + self.misses
        return self.hits / lookups if lookups else None


class ResponseCache:
    """Judge answers stored on disk, shared by processes; see the module docstring.

    Args:
        directory: Where the SQLite file lives (created if missing); default
            :func:`default_cache_dir`.
        max_bytes: The most bytes of answers kept; the least recently used go first.

    Example:
        >>> import tempfile
        >>> folder = tempfile.mkdtemp()
        >>> cache = ResponseCache(folder)
        >>> key = cache.key("http://127.0.0.1:8000/v1", {"model": "m", "messages": []})
        >>> cache.get(key) is None
        True
        >>> cache.put(key, {"choices": [], "usage": {"prompt_tokens": 10}})
        >>> rerun = ResponseCache(folder)  # the next run
        >>> rerun.get(key)["usage"]["prompt_tokens"], rerun.stats.hits
        (10, 1)
    """

    def __init__(
        self, directory: str | Path | None = None, *, max_bytes: int = DEFAULT_CACHE_BYTES
    ) -> None:
        if isinstance(max_bytes, bool) or max_bytes < 1:
            raise ValueError(f"max_bytes must be 1 or more, got {max_bytes!r}")
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self.path = self.directory / _FILE_NAME
        self.max_bytes = int(max_bytes)
        self.stats = CacheStats()
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._broken: str | None = None  # why the cache is off for this process
        self._written: set[str] = set()

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.directory)!r})"

    @property
    def problem(self) -> str | None:
        """Why the cache is off for the rest of this run (corrupt, unreadable), or ``None``."""
        return self._broken

    @staticmethod
    def key(scope: str, body: Mapping[str, Any]) -> str:
        """The key of a request: its server (``scope``) and its exact body."""
        text = json.dumps([scope, body], sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored answer for ``key`` (a hit, counted with its tokens), else ``None``."""
        with self._lock:
            if key in self._written:
                # Stored by this run: served from the next run on, so that a run's calls
                # never depend on the order its items happen to finish in.
                self.stats.misses += 1
                return None
            row = self._run(
                "read",
                lambda db: db.execute(
                    "SELECT value FROM responses WHERE key = ?", (key,)
                ).fetchone(),
            )
            value = _decode(row[0]) if row else None
            if value is None:
                self.stats.misses += 1
                return None
            self.stats.hits += 1
            usage = value.get("usage")
            if isinstance(usage, Mapping):
                self.stats.saved_input_tokens += _count(usage.get("prompt_tokens"))
                self.stats.saved_output_tokens += _count(usage.get("completion_tokens"))
                details = usage.get("prompt_tokens_details")
                if isinstance(details, Mapping):
                    self.stats.saved_cached_input_tokens += _count(details.get("cached_tokens"))
            # Recently used answers are kept longest.
            self._run(
                "update",
                lambda db: db.execute(
                    "UPDATE responses SET used = ? WHERE key = ?", (time.time(), key)
                ),
                commit=True,
            )
            return value

    def put(self, key: str, completion: Mapping[str, Any]) -> None:
        """Store ``completion`` under ``key``; then trim the cache to ``max_bytes``."""
        text = json.dumps(completion, ensure_ascii=False, default=str)
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > self.max_bytes:
            return
        with self._lock:
            self._written.add(key)

            def write(db: sqlite3.Connection) -> None:
                db.execute(
                    "INSERT OR REPLACE INTO responses (key, value, size, used) VALUES (?, ?, ?, ?)",
                    (key, text, size, time.time()),
                )
                total = db.execute("SELECT COALESCE(SUM(size), 0) FROM responses").fetchone()[0]
                if total > self.max_bytes:
                    self._trim(db, total)

            self._run("write", write, commit=True)

    def clear(self) -> None:
        """Remove every stored answer."""
        with self._lock:
            self._run("clear", lambda db: db.execute("DELETE FROM responses"), commit=True)

    def close(self) -> None:
        """Close the database (a later call opens it again)."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    # -- internals -------------------------------------------------------------------------

    def _trim(self, db: sqlite3.Connection, total: int) -> None:
        """Drop the least recently used answers until 90 % of the bound is left."""
        target = int(self.max_bytes * 0.9)
        rows = db.execute("SELECT key, size FROM responses ORDER BY used").fetchall()
        doomed = []
        for key, size in rows:
            if total <= target:
                break
            doomed.append((key,))
            total -= size
        db.executemany("DELETE FROM responses WHERE key = ?", doomed)

    def _open(self) -> sqlite3.Connection:
        if self._db is not None:
            return self._db
        import sqlite3  # here: importing livescore stays light

        self.directory.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(
            self.path, timeout=_BUSY_TIMEOUT_S, check_same_thread=False, isolation_level=None
        )
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS responses ("
                "key TEXT PRIMARY KEY, value TEXT NOT NULL, size INTEGER NOT NULL, "
                "used REAL NOT NULL)"
            )
            db.execute("CREATE INDEX IF NOT EXISTS responses_used ON responses (used)")
        except BaseException:
            db.close()
            raise
        self._db = db
        return db

    def _run(self, what: str, action: Any, *, commit: bool = False) -> Any:
        """Run ``action(db)``; a failure is a warning (the first) and ``None``."""
        if self._broken is not None:
            return None
        import sqlite3

        try:
            db = self._open()
            if commit:
                db.execute("BEGIN IMMEDIATE")
                try:
                    value = action(db)
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
                db.execute("COMMIT")
                return value
            return action(db)
        except (sqlite3.Error, OSError) as exc:
            self.stats.errors += 1
            if isinstance(exc, sqlite3.DatabaseError) and not isinstance(
                exc, sqlite3.OperationalError
            ):
                # Corrupt (not a database, malformed): off for this process.
                self._broken = str(exc)
            elif isinstance(exc, OSError) or "unable to open" in str(exc):
                self._broken = str(exc)
            if self.stats.errors == 1:
                _log.warning(
                    "judge response cache %s: cannot %s (%s): %s",
                    self.path,
                    what,
                    exc,
                    "the judge is asked instead"
                    if self._broken is None
                    else "not used for the rest of this run; the judge is asked instead",
                )
            return None


def _decode(text: Any) -> dict[str, Any] | None:
    if not isinstance(text, str):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
