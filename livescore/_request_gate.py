"""The request gate: a hook called around every HTTP request a judge sends on one event loop.

A judge's own limits (``max_concurrency``, retries with ``retry-after``) are per process. A
fleet of worker processes shares one judge quota, so the fleet worker installs a gate on its
scoring loop that every judge request passes through: it waits for a fleet-wide slot (a
requests-per-minute budget, a concurrency limit, a pause after a 429) before the request
and is told about each 429 after it. Nothing else in livescore installs one, so in-process
scoring pays nothing for it.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Protocol, runtime_checkable

import anyio.lowlevel

__all__ = ("RequestGate", "current_request_gate", "use_request_gate")


@runtime_checkable
class RequestGate(Protocol):
    """What a judge asks before each HTTP request, and tells after a 429.

    Both methods must never raise for reasons of their own (a gate whose store is
    unreachable lets requests through): a judge request is never failed by its gate.
    """

    def request(self) -> AbstractAsyncContextManager[None]:
        """Held for the duration of one HTTP request; entering it waits for a slot."""
        ...

    async def rate_limited(self, retry_after: float | None) -> None:
        """The judge answered 429 (``retry_after``: the seconds it asked for, if any)."""
        ...


# Scoped to the running event loop: a gate installed on the fleet worker's scoring loop is
# invisible to every other loop of the process.
_GATE: anyio.lowlevel.RunVar[RequestGate | None] = anyio.lowlevel.RunVar(
    "livescore_judge_request_gate", default=None
)


def use_request_gate(gate: RequestGate | None) -> None:
    """Install ``gate`` for every judge request sent on the running event loop.

    Call it from inside the loop (``None`` removes it).

    Example:
        >>> import anyio
        >>> async def main():
        ...     use_request_gate(None)
        ...     return current_request_gate()
        >>> anyio.run(main) is None
        True
    """
    _GATE.set(gate)


def current_request_gate() -> RequestGate | None:
    """The gate installed on the running event loop, if any."""
    return _GATE.get()
