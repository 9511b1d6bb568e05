"""The ``livescore`` command line (``eval``, ``demo``, ``worker``, ``collect``, ``traces``): the
top layer, which parses options, builds scorers from the catalog and calls the library (which
never imports it).

Example:
    >>> from livescore.cli import main
    >>> main(["eval", "--help"])  # doctest: +SKIP
"""

from livescore.cli._common import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from livescore.cli._main import main

__all__ = ("EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE", "main")
