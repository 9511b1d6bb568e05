"""A real Arize Phoenix for tests, isolated in a network namespace of its own.

``phoenix serve`` binds its HTTP server where ``PHOENIX_HOST`` says (127.0.0.1 here) but its
OTLP gRPC receiver on every interface (``[::]:PHOENIX_GRPC_PORT``, with no setting to change
that in Phoenix 20). Tests may only use loopback, so Phoenix runs inside a new network
namespace (``unshare --net``: only its own loopback exists there) and a relay brings its HTTP
port out: inside the namespace a small relay forwards a Unix socket (the file system is
shared across network namespaces) to Phoenix's 127.0.0.1 port; outside, :class:`PhoenixServer`
listens on 127.0.0.1 and forwards each connection to that Unix socket. The OTLP/HTTP
exporter, the sink and a browser all talk to the outside port as if it were Phoenix.

Where is Phoenix? ``PHOENIX_BIN`` (a ``phoenix`` command), else ``.phoenix-venv/bin/phoenix``
at the repository root (``make phoenix`` installs it there, out of the project's environment),
else ``phoenix`` on ``PATH``. ``PHOENIX_URL`` points the tests at a Phoenix already running
instead (then nothing is started).

Run as a script, this module is the relay inside the namespace::

    python tests/phoenix_server.py inside SOCKET PORT -- phoenix serve
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PHOENIX_VENV = ROOT / ".phoenix-venv"
START_TIMEOUT_S = 240.0  # cold start under load; within conftest's PHOENIX_TEST_TIMEOUT_S


class PhoenixUnavailable(RuntimeError):
    """Phoenix is not installed here, or cannot be isolated; the message says why."""


def find_phoenix() -> str | None:
    """The ``phoenix`` command to run, or ``None`` when none is installed."""
    explicit = os.environ.get("PHOENIX_BIN")
    if explicit:
        return explicit
    local = PHOENIX_VENV / "bin" / "phoenix"
    if local.exists():
        return str(local)
    return shutil.which("phoenix")


def get_json(url: str, timeout: float = 5.0) -> Any:
    """GET ``url`` and decode its JSON body."""
    with urllib.request.urlopen(url, timeout=timeout) as reply:
        return json.loads(reply.read() or b"null")


CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--hide-scrollbars",
    "--no-first-run",
    "--no-default-browser-check",
    # nothing but the page itself: no updates, sync, safe browsing or metrics traffic
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--metrics-recording-only",
)


def find_chromium() -> str | None:
    """A headless-capable Chromium, or ``None``."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def render_page(
    url: str,
    *,
    profile: Path,
    screenshot: Path | None = None,
    size: tuple[int, int] = (1400, 820),
    budget_ms: int = 20_000,
) -> str:
    """Load ``url`` in headless Chromium (JavaScript given ``budget_ms`` of virtual time);
    return the rendered DOM, or write a PNG to ``screenshot``."""
    chromium = find_chromium()
    if chromium is None:
        raise PhoenixUnavailable("headless Chromium is not installed (apt-get install chromium)")
    output = [f"--screenshot={screenshot}"] if screenshot is not None else ["--dump-dom"]
    done = subprocess.run(
        [
            chromium,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile}",
            f"--window-size={size[0]},{size[1]}",
            f"--virtual-time-budget={budget_ms}",
            *output,
            url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"chromium failed ({done.returncode}): {done.stderr[-2000:]}")
    return done.stdout


# -- the relay (both sides) --------------------------------------------------------------


def _pump(source: socket.socket, target: socket.socket) -> None:
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            target.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            target.shutdown(socket.SHUT_WR)


def _serve_connection(client: socket.socket, connect: Callable[[], socket.socket]) -> None:
    try:
        upstream = connect()
    except OSError:
        client.close()
        return
    back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
    back.start()
    _pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def relay(listener: socket.socket, connect: Callable[[], socket.socket]) -> None:
    """Accept on ``listener`` until it is closed; pipe each connection to ``connect()``."""
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=_serve_connection, args=(client, connect), daemon=True).start()


def _bring_loopback_up() -> None:
    # A new network namespace has a loopback interface that is down: SIOCSIFFLAGS with
    # IFF_UP (what `ip link set lo up` does), with no dependency on iproute2.
    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH22x", b"lo", 0)
        flags = struct.unpack("16sH22x", fcntl.ioctl(sock, siocgifflags, request))[1]
        fcntl.ioctl(sock, siocsifflags, struct.pack("16sH22x", b"lo", flags | iff_up))


def _end_with_parent() -> None:
    # Linux's PR_SET_PDEATHSIG: SIGTERM when the process that started this one dies, even by
    # SIGKILL (a test killed on a timeout), so no Phoenix outlives its owner.
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _inside(socket_path: str, port: int, command: list[str]) -> int:
    """In the namespace: loopback up, Phoenix started, its port relayed to ``socket_path``."""
    _end_with_parent()
    _bring_loopback_up()
    child = subprocess.Popen(command, stdin=subprocess.DEVNULL, preexec_fn=_end_with_parent)

    def stop(signum: int, frame: Any) -> None:
        child.terminate()

    signal.signal(signal.SIGTERM, stop)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)
    listener.listen(64)
    threading.Thread(
        target=relay,
        args=(listener, lambda: socket.create_connection(("127.0.0.1", port))),
        daemon=True,
    ).start()
    code = child.wait()
    listener.close()
    return code


# -- the outside: PhoenixServer ----------------------------------------------------------


def _unshare_prefix() -> list[str]:
    unshare = shutil.which("unshare")
    if unshare is None:
        raise PhoenixUnavailable(
            "cannot isolate Phoenix, whose gRPC receiver binds every interface: no `unshare` "
            "command (util-linux)"
        )
    # Root makes a network namespace directly; anyone else through a user namespace.
    if os.geteuid() == 0:
        prefix = [unshare, "--net"]
    else:
        prefix = [unshare, "--user", "--map-root-user", "--net"]
    probe = subprocess.run([*prefix, "true"], capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        raise PhoenixUnavailable(
            "cannot isolate Phoenix, whose gRPC receiver binds every interface: "
            f"`{' '.join(prefix)}` failed ({probe.stderr.strip() or probe.returncode})"
        )
    return prefix


class PhoenixServer:
    """A real Phoenix on a fresh database, reachable at :attr:`url` (127.0.0.1 only).

    ``port`` is where :attr:`url` listens (0: a free port).

    Example::

        with PhoenixServer() as phoenix:
            print(phoenix.url)  # http://127.0.0.1:PORT (OTLP/HTTP at /v1/traces, REST, UI)
    """

    def __init__(
        self, command: str | None = None, workdir: str | Path | None = None, port: int = 0
    ) -> None:
        self.command = command or find_phoenix()
        if self.command is None:
            raise PhoenixUnavailable(
                "Phoenix is not installed: `make phoenix` installs it into .phoenix-venv "
                "(or set PHOENIX_BIN to a phoenix command)"
            )
        self._own_dir = workdir is None
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="livescore-phoenix-"))
        self.port = port  # the outside port on 127.0.0.1 (0: a free one)
        self.url = ""
        self.started_in_s = 0.0
        self._process: subprocess.Popen[bytes] | None = None
        self._listener: socket.socket | None = None
        self._log: Any = None

    @property
    def log_path(self) -> Path:
        """Phoenix's output."""
        return self.workdir / "phoenix.log"

    @property
    def running(self) -> bool:
        """Whether the Phoenix process is still up (started and not exited)."""
        return self._process is not None and self._process.poll() is None

    def log_tail(self, chars: int = 4000) -> str:
        """The end of Phoenix's output (for failure messages)."""
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def start(self) -> PhoenixServer:
        prefix = _unshare_prefix()
        socket_path = str(self.workdir / "phoenix.sock")
        inner_port = 6006  # inside the namespace nothing else listens
        env = {
            **os.environ,
            "PHOENIX_HOST": "127.0.0.1",
            "PHOENIX_PORT": str(inner_port),
            "PHOENIX_GRPC_PORT": "4317",
            "PHOENIX_WORKING_DIR": str(self.workdir),
            "PHOENIX_TELEMETRY_ENABLED": "false",
            # The UI loads nothing from the internet (fonts, scripts): loopback only.
            "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
        }
        for name in ("PHOENIX_SQL_DATABASE_URL", "PHOENIX_COLLECTOR_ENDPOINT"):
            env.pop(name, None)
        self._log = self.log_path.open("wb")
        started = time.monotonic()
        self._process = subprocess.Popen(
            [
                *prefix,
                sys.executable,
                str(Path(__file__).resolve()),
                "inside",
                socket_path,
                str(inner_port),
                "--",
                self.command,
                "serve",
            ],
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self._listener = listener

        def connect() -> socket.socket:
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                upstream.connect(socket_path)  # fails until Phoenix's relay is up
            except OSError:
                upstream.close()
                raise
            return upstream

        threading.Thread(target=relay, args=(listener, connect), daemon=True).start()
        self.url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        deadline = started + START_TIMEOUT_S
        while True:
            try:
                get_json(f"{self.url}/v1/projects", timeout=2)
                break
            except (urllib.error.URLError, OSError, ValueError):
                if self._process.poll() is not None or time.monotonic() > deadline:
                    tail = self.log_tail()
                    self.stop()
                    raise RuntimeError(f"Phoenix did not start:\n{tail}") from None
                time.sleep(0.25)
        self.started_in_s = time.monotonic() - started
        return self

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            process.terminate()
            try:
                # Phoenix's graceful shutdown waits on open connections; a Ctrl-C should
                # not: ten seconds, then it is killed (it dies with its wrapper).
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.close()
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._own_dir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> PhoenixServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextlib.contextmanager
def running_phoenix() -> Iterator[str]:
    """The URL of a Phoenix: ``PHOENIX_URL`` when set, else one started for the block."""
    given = os.environ.get("PHOENIX_URL")
    if given:
        yield given.rstrip("/")
        return
    with PhoenixServer() as server:
        yield server.url


if __name__ == "__main__":
    if len(sys.argv) < 5 or sys.argv[1] != "inside" or "--" not in sys.argv:
        sys.exit("usage: phoenix_server.py inside SOCKET PORT -- COMMAND...")
    split = sys.argv.index("--")
    sys.exit(_inside(sys.argv[2], int(sys.argv[3]), sys.argv[split + 1 :]))
