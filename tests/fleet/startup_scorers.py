"""Scorer factories that fail at ``livescore worker`` start-up, one way each."""

from __future__ import annotations

import threading
from typing import Any

from livescore.scorers import create_keyword_coverage_scorer


def raising() -> list[Any]:
    raise RuntimeError("the scorers' config file is missing")


def needs_arguments(judge_url: str) -> list[Any]:
    return [create_keyword_coverage_scorer()]


def hanging() -> list[Any]:
    threading.Event().wait()  # a factory waiting on a service that never answers
    return []


def exiting() -> list[Any]:
    raise SystemExit(4)
