"""Run a function in a forked child of the test process and bring its report back."""

from __future__ import annotations

import json
import os
import traceback
import warnings
from collections.abc import Callable
from typing import Any


def in_forked_child(child: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Fork; the child calls ``child`` and sends back its (JSON) report, then ends at once.

    The child never returns into pytest (``os._exit``); its failure fails the caller, with
    the child's traceback on stderr.
    """
    read_fd, write_fd = os.pipe()
    with warnings.catch_warnings():
        # Python 3.12+ warns about forking a multi-threaded process; that is the point here.
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(read_fd)
            os.write(write_fd, json.dumps(child()).encode())
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    os.close(write_fd)
    with os.fdopen(read_fd) as pipe:
        report: dict[str, Any] = json.loads(pipe.read() or "{}")
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the forked child failed (see stderr)"
    return report
