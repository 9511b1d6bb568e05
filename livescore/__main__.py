"""``python -m livescore`` runs the ``livescore`` command (as ``python -m livescore.cli`` does)."""

import sys

from livescore.cli import main

if __name__ == "__main__":
    sys.exit(main())
