"""The ``livescore`` command line: ``livescore eval`` and ``livescore demo``.

The top layer: it parses options, resolves the judge once for every sub-command
(``--model``, ``--base-url``, ``--api-key-env``, ``--structured-output``,
``--judge-concurrency``, ``--judge-timeout``, ``--judge-mode``), builds scorers from the catalog
(:mod:`livescore.scorers`), and calls :mod:`livescore.evals` and :mod:`livescore.demo`,
which never import it.

Example:
    >>> from livescore.cli import main
    >>> main(["eval", "--help"])  # doctest: +SKIP
"""

from livescore.cli._common import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from livescore.cli._main import main

__all__ = ("EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE", "main")
