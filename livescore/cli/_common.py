"""What every ``livescore`` sub-command shares: exit codes, usage errors, the console."""

from __future__ import annotations

import argparse
import math
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

__all__ = (
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "UsageError",
    "add_command",
    "check_broker_options",
    "finite_float",
    "make_console",
    "positive_float",
    "positive_int",
)

EXIT_OK = 0
"""The command did its job (and, for ``eval``, every check passed)."""
EXIT_FAILED = 1
"""It ran but failed a check: nothing scored, ``--fail-*`` tripped, an output not written,
the demo's judge died."""
EXIT_USAGE = 2
"""A usage error: bad option, unknown scorer, no judge model, unreadable or unwritable file."""
EXIT_INTERRUPTED = 130
"""Ctrl-C (what was scored so far is written)."""


class UsageError(Exception):
    """A command-line mistake: printed, then exit code 2."""


def add_command(
    sub: Any, name: str, *, help: str, description: str, epilog: str | None = None
) -> argparse.ArgumentParser:
    """A sub-command's parser, its description and epilog printed with their own line
    breaks (they hold the exit-code tables)."""
    parser: argparse.ArgumentParser = sub.add_parser(
        name,
        help=help,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=description,
        epilog=epilog,
    )
    return parser


def check_broker_options(args: argparse.Namespace) -> None:
    """With ``--broker`` the workers score and emit: the options that say how belong to
    ``livescore worker``, and are usage errors here."""
    if not args.broker:
        return
    if args.emit is not None:
        raise UsageError(
            "--emit: with --broker the workers emit the scores: give it to livescore worker"
        )
    if args.redact:
        raise UsageError("--redact: with --broker the workers score: give it to livescore worker")
    if args.calibration:
        raise UsageError(
            "--calibration: with --broker the workers score: give it to livescore worker"
        )


def make_console(*, stderr: bool = False) -> Console:
    """A rich console; piped output (CI logs, tests) gets ``$COLUMNS`` or 160 columns."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    width = None if stream.isatty() else int(os.environ.get("COLUMNS", "160"))
    return Console(stderr=stderr, width=width, highlight=False)


def positive_int(text: str) -> int:
    """An ``argparse`` type: a whole number of at least 1 (else a usage error, exit 2)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def finite_float(text: str) -> float:
    """An ``argparse`` type: a finite number."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def positive_float(text: str) -> float:
    """An ``argparse`` type: a finite number above 0."""
    value = finite_float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, got {text}")
    return value
