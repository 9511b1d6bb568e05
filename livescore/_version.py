"""The installed version, read once from the distribution's metadata, on first use.

Reading distribution metadata scans the installed packages (tens of milliseconds in a big
environment), so it happens when ``livescore.__version__`` is first read, not at import.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING

__all__ = ("DISTRIBUTION", "__version__")

DISTRIBUTION = "livescore-ai"
"""The distribution name on the package index (the import name is always ``livescore``)."""

if TYPE_CHECKING:
    __version__: str


def __getattr__(name: str) -> str:
    if name != "__version__":
        raise AttributeError(f"module 'livescore._version' has no attribute {name!r}")
    try:
        found = version(DISTRIBUTION)
    except PackageNotFoundError:  # running from a source tree that was never installed
        found = "0.0.0+unknown"
    globals()["__version__"] = found  # read once
    return found
