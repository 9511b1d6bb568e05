"""A scorers module that calls ``sys.exit`` while it is imported (a script's guard gone wrong)."""

import sys

sys.exit(3)
