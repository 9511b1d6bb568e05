"""``python -m skewed_clock worker ...``: the ``livescore`` command on a machine whose wall
clock is ``FLEET_TEST_CLOCK_SKEW`` seconds off (negative: behind).

The clock is set before anything else is imported, so every library in the process reads
the skewed time (Dramatiq's heartbeats included); the monotonic clock is untouched, as a
drifted wall clock leaves it.
"""

import os
import sys
import time

_SKEW = float(os.environ.get("FLEET_TEST_CLOCK_SKEW", "0"))
_wall = time.time
time.time = lambda: _wall() + _SKEW

from livescore.cli import main  # noqa: E402  (after the clock is set)

if __name__ == "__main__":
    sys.exit(main())
