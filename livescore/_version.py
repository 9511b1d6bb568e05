"""The installed version, read once from the distribution's metadata, on first use.

Reading distribution metadata scans the installed packages (tens of milliseconds in a big
environment), so it happens when ``livescore.__version__`` is first read, not at import.
"""

from __future__ import annotations

import functools
import json
from importlib.metadata import PackageNotFoundError, distribution, version
from typing import TYPE_CHECKING

__all__ = ("DISTRIBUTION", "ON_PACKAGE_INDEX", "__version__", "install_hint")

DISTRIBUTION = "livescore-ai"
"""The distribution name on the package index (the import name is always ``livescore``)."""

ON_PACKAGE_INDEX = False
"""Whether :data:`DISTRIBUTION` is published on the package index. Set to ``True`` in the
release that first publishes it: a hint then tells an installed user ``pip install
'livescore-ai[extra]'``. Written here, not asked of the index, since a hint is shown where
there may be no network, and it must never wait on one."""

# The extras whose integration is a distribution of its own, in integrations/ of a checkout
# (not on the package index either while livescore-ai is not).
_INTEGRATIONS = {
    "langchain": "integrations/langchain",
    "openai-agents": "integrations/openai-agents",
}


@functools.lru_cache(maxsize=1)
def _installed_from_checkout() -> bool:
    """Whether livescore was installed from a source folder (``pip install -e .`` or ``pip
    install .``): pip records that in the distribution's ``direct_url.json`` (PEP 610) as a
    ``file:`` URL with ``dir_info``. Not installed at all (a source tree on ``sys.path``)
    counts as a checkout too."""
    try:
        recorded = distribution(DISTRIBUTION).read_text("direct_url.json")
    except PackageNotFoundError:
        return True
    if not recorded:
        return False  # installed from an index (or a wheel file): pip records no folder
    try:
        origin = json.loads(recorded)
    except ValueError:
        return False
    return isinstance(origin, dict) and "dir_info" in origin


def install_hint(*extras: str) -> str:
    """The command that installs ``extras``, in the form that works where livescore came from.

    From a checkout (an editable or folder install), or while the distribution is not on the
    package index (:data:`ON_PACKAGE_INDEX`): ``pip install -e ".[extra]"``, run in the
    checkout, with ``-e integrations/NAME`` for an integration's extra. Otherwise the index
    form, ``pip install 'livescore-ai[extra]'``.

    Example:
        >>> print(install_hint("langchain"))  # while not on the package index
        pip install -e ".[langchain]" -e integrations/langchain
    """
    joined = ",".join(extras)
    if ON_PACKAGE_INDEX and not _installed_from_checkout():
        return f"pip install '{DISTRIBUTION}[{joined}]'"
    folders = "".join(f" -e {_INTEGRATIONS[e]}" for e in extras if e in _INTEGRATIONS)
    return f'pip install -e ".[{joined}]"{folders}'


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
