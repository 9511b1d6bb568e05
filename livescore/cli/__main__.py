"""``python -m livescore.cli`` runs the ``livescore`` command."""

import sys

from livescore.cli import main

if __name__ == "__main__":
    sys.exit(main())
