"""``MODULE:ATTR`` on the command line: the scorers, sinks and ``--target`` a command imports,
with every failure a one-line usage error."""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from collections.abc import Sequence
from typing import Any

from livescore.cli._common import UsageError

__all__ = ("add_scorers_argument", "add_sinks_argument", "as_items", "load_attribute", "load_sinks")


def add_scorers_argument(parser: Any) -> None:
    """Add the ``MODULE:ATTR`` of the scorers (``worker``, ``collect``)."""
    parser.add_argument("scorers", metavar="MODULE:ATTR", help="where the scorers are")


def add_sinks_argument(parser: Any) -> None:
    """Add ``--sinks MODULE:ATTR`` (``worker``, ``collect``)."""
    parser.add_argument(
        "--sinks",
        metavar="MODULE:ATTR",
        help="score sinks besides OpenTelemetry (default: a 'sinks' attribute of the "
        "scorers' module, if it has one)",
    )


def load_attribute(spec: str, option: str) -> tuple[Any, Any]:
    """Import ``module:attr`` (the current directory importable); ``(module, value)``."""
    module_name, sep, attr_path = spec.partition(":")
    if not sep or not module_name or not attr_path:
        raise UsageError(f"{option} must look like 'module:attribute', not {spec!r}")
    # Like `python -m`, the current directory is importable, so `my_agent:agent` works from
    # a project folder.
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except SystemExit as exc:
        raise UsageError(
            f"{option}: importing {module_name!r} called sys.exit({exc.code!r})"
        ) from None
    except Exception as exc:
        raise UsageError(
            f"{option}: cannot import {module_name!r}: {type(exc).__name__}: {exc}"
        ) from exc
    value: Any = module
    for part in attr_path.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            raise UsageError(f"{option}: {module_name!r} has no attribute {attr_path!r}") from None
    return module, value


def as_items(value: Any, what: str, option: str, spec: str = "") -> list[Any]:
    """``value`` as a list of scorers (``what="scorers"``) or sinks: a list as it is, one
    item as a list of one, a function that returns them called (``spec`` names it)."""
    if callable(value) and not isinstance(value, Sequence):
        from livescore.live import ScorerConfig
        from livescore.scoring import Scorer

        if not isinstance(value, Scorer | ScorerConfig):
            value = _call_factory(value, option, spec)
    if not isinstance(value, Sequence) or isinstance(value, str):
        value = [value]
    items = list(value)
    if not items and what == "scorers":
        raise UsageError(f"{option}: the list of scorers is empty")
    return items


def load_sinks(spec: str | None, module: Any) -> list[Any]:
    """The sinks ``--sinks MODULE:ATTR`` names, else the ``sinks`` attribute of the scorers'
    ``module`` (none when it has none)."""
    if spec:
        _, value = load_attribute(spec, "--sinks")
        return as_items(value, "sinks", "--sinks", spec)
    return as_items(getattr(module, "sinks", None) or [], "sinks", "sinks")


def _call_factory(factory: Any, option: str, spec: str) -> Any:
    """Call a function that returns the scorers (or sinks), turning its failures into
    one-line usage errors."""
    name = spec or getattr(factory, "__name__", repr(factory))
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        signature = None
    if signature is not None:
        needed = [
            p.name
            for p in signature.parameters.values()
            if p.default is p.empty
            and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        ]
        if needed:
            raise UsageError(
                f"{option}: {name} needs arguments ({', '.join(needed)}); point at a list of "
                "scorers or a function that takes none"
            )
    try:
        return factory()
    except SystemExit as exc:
        raise UsageError(f"{option}: {name}() called sys.exit({exc.code!r})") from None
    except Exception as exc:
        raise UsageError(f"{option}: {name}() raised {type(exc).__name__}: {exc}") from exc
