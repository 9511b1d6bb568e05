"""The installed version, read once from the distribution's metadata."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

__all__ = ("DISTRIBUTION", "__version__")

DISTRIBUTION = "livescore"
"""The distribution name on the package index (the import name is always ``livescore``)."""

try:
    __version__ = version(DISTRIBUTION)
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"
