"""``--redact``, shared by ``eval``, ``worker`` and ``collect``: one redactor per process."""

from __future__ import annotations

import argparse

from livescore.cli._common import UsageError
from livescore.pii import PersonalDataRedactor


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
