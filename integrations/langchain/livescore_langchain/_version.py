"""The installed version of the integration, read once from its distribution's metadata."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

__all__ = ("DISTRIBUTION", "__version__")

DISTRIBUTION = "livescore-langchain"
"""The distribution name on the package index (the import name is ``livescore_langchain``)."""

try:
    __version__ = version(DISTRIBUTION)
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"
