"""What a score becomes besides its metrics: the ``emit=`` of the emitter and of everything
built on it (the dispatcher, the integrations, ``run_evals``, the worker, ``--emit``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

__all__ = ("DEFAULT_EMIT", "EmitSignal", "parse_emit")

EmitSignal = Literal["spans", "events"]
"""What a score becomes besides its metrics: ``"spans"``, an evaluation span under the
run's span (what Jaeger, Tempo, Phoenix and Langfuse show); ``"events"``, a
``gen_ai.evaluation.result`` log record parented to the run's span (the form the GenAI
semantic conventions define, read through an OTLP logs pipeline)."""

DEFAULT_EMIT: tuple[EmitSignal, ...] = ("spans", "events")
"""Both: every score is an evaluation span and a ``gen_ai.evaluation.result`` event."""

_SIGNALS: tuple[EmitSignal, ...] = ("spans", "events")


def parse_emit(value: str | Iterable[str]) -> tuple[EmitSignal, ...]:
    """The signals ``value`` names: ``"spans"``, ``"events"``, or both.

    Takes the CLI's comma-separated form (``"spans,events"``) or any iterable of names, and
    returns them in a fixed order without repeats.

    Raises:
        ValueError: An unknown name, or none at all.

    Example:
        >>> parse_emit("events,spans")
        ('spans', 'events')
        >>> parse_emit(["events"])
        ('events',)
    """
    names = value.split(",") if isinstance(value, str) else list(value)
    wanted = set()
    for name in names:
        text = name.strip().lower() if isinstance(name, str) else name
        if text == "":
            continue
        if text not in _SIGNALS:
            raise ValueError(f"emit: unknown signal {name!r}; use spans, events or both")
        wanted.add(text)
    if not wanted:
        raise ValueError("emit names no signal: use spans, events or both (spans,events)")
    return tuple(signal for signal in _SIGNALS if signal in wanted)
