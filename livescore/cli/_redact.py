"""``--redact``, shared by ``eval``, ``worker`` and ``collect``: one redactor per process."""

from __future__ import annotations

import argparse
from typing import Any

from livescore.cli._common import UsageError
from livescore.pii import PersonalDataRedactor


def add_redact_argument(group: Any, *, placeholders_in: str) -> None:
    """Add ``--redact``; ``placeholders_in`` says which of the command's outputs hold the
    placeholders (and what else the command's users need to know)."""
    group.add_argument(
        "--redact",
        action="store_true",
        help="replace personal data (names, e-mails, phone numbers, cards, IBANs…) with "
        f"placeholders before the judge sees it; {placeholders_in}",
    )


def redactor_from_args(args: argparse.Namespace) -> PersonalDataRedactor | None:
    """The redactor ``--redact`` asks for, loaded now (so a missing extra is a usage error
    before any work, and the first score does not pay for loading the model)."""
    if not getattr(args, "redact", False):
        return None
    redactor = PersonalDataRedactor()
    try:
        redactor.ready()
    except ImportError as exc:
        raise UsageError(f"--redact: {exc}") from None
    return redactor
