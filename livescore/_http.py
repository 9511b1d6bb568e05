"""Reading HTTP responses bounded: a cap on the bytes read, and a deadline for the whole body.

A broken or hostile server can answer with a body of any size, compressed or not, or trickle
it a byte a second (each read then returns well within the client's per-read timeout, so
the request never times out). Whatever talks to such servers from the process the agent
runs in, the judge and the dashboard sinks, reads responses through these hooks: an
``httpx`` (or ``httpx2``) response event hook replaces the body stream by one that counts
the bytes it yields (after decoding gzip or deflate, itself bounded, so a small gzip bomb
stays small) and checks the request's deadline as the bytes arrive.

Past the cap the connection is dropped unread and, as chosen per hook, the read either fails
(:class:`ResponseTooLarge`: the judge, whose reply must be whole) or ends there, the body cut
(the sinks, which only quote an error body). Past the deadline it fails
(:class:`ResponseDeadline`). The deadline counts from the request's start, and is checked
while the body is read; the connect and header phases are bounded by the client's per-read
timeout (and the HTTP parser's own limit on header size).
"""

from __future__ import annotations

import time
import zlib
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from livescore._errors import ResponseDeadline, ResponseTooLarge

__all__ = (
    "DEFAULT_MAX_RESPONSE_BYTES",
    "async_response_cap",
    "check_max_response_bytes",
    "sync_response_hooks",
    "was_cut",
)

DEFAULT_MAX_RESPONSE_BYTES = 1_000_000
"""The most bytes read of one response by default (1 MB): a judge's reply or a dashboard's
answer is a few KB."""

_DEADLINE = "livescore.deadline"
_CUT = "livescore.cut"


def check_max_response_bytes(value: int) -> int:
    """``value`` as a response cap, or ``ValueError`` (under 1024 bytes, or not a number).

    Example:
        >>> check_max_response_bytes(4096)
        4096
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < 1024:
        raise ValueError(f"max_response_bytes must be at least 1024, got {value!r}")
    return value


def _too_large(limit: int) -> ResponseTooLarge:
    return ResponseTooLarge(
        f"the response is larger than max_response_bytes ({limit:,} bytes); it was not read further"
    )


class _Budget:
    """The bookkeeping both stream kinds share: decoded bytes against the cap, time against
    the deadline."""

    def __init__(
        self, limit: int, decoder: Any | None, deadline: float | None, *, cut: bool
    ) -> None:
        self.limit = limit
        self.decoder = decoder  # a zlib decompressobj, for gzip or deflate bodies
        self.deadline = deadline
        self.cut = cut
        self.received = 0
        self.full = False  # the cap was reached (``cut``): nothing more is read

    def take(self, raw: bytes) -> bytes:
        """The decoded bytes of ``raw`` that fit; raises past the cap (unless ``cut``) or
        the deadline."""
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise ResponseDeadline("the response was still arriving at the request's deadline")
        chunk = raw
        room = self.limit - self.received
        if self.decoder is not None:
            try:
                # Never inflate more than the cap allows: a small gzip bomb stays small.
                chunk = self.decoder.decompress(raw, room + 1)
            except zlib.error:
                raise ResponseTooLarge("the compressed body is corrupt") from None
            # With input left over (``unconsumed_tail``), ``chunk`` is ``room + 1`` bytes long:
            # more than fits, whatever the rest holds.
        if len(chunk) > room:
            if not self.cut:
                raise _too_large(self.limit)
            chunk = chunk[:room]
            self.full = True
        self.received += len(chunk)
        return chunk

    def rest(self) -> bytes:
        if self.decoder is None or self.full:
            return b""
        return self.take_tail(self.decoder.flush())

    def take_tail(self, tail: bytes) -> bytes:
        room = self.limit - self.received
        if len(tail) > room:
            if not self.cut:
                raise _too_large(self.limit)
            tail, self.full = tail[:room], True
        self.received += len(tail)
        return tail


def _decoder_for(headers: Any) -> Any | None:
    """A bounded decoder for the body's ``content-encoding`` (removing the header, so the
    HTTP client does not inflate the body whole itself); ``None`` for an identity body."""
    encoding = headers.get("content-encoding", "").strip().lower()
    if encoding in ("", "identity"):
        return None
    # We ask for identity; a server that compresses anyway is decoded here, bounded by the
    # cap, rather than by the HTTP client, which would inflate it whole.
    if encoding not in ("gzip", "x-gzip", "deflate"):
        raise ResponseTooLarge(
            f"the response is encoded as {encoding!r} although identity was asked for"
        )
    del headers["content-encoding"]
    return zlib.decompressobj(zlib.MAX_WBITS | 32)  # gzip or zlib header


def async_response_cap(limit: int) -> Callable[[Any], Any]:
    """An ``httpx2`` async response hook: the body raises past ``limit`` decoded bytes.

    The client should send ``Accept-Encoding: identity``; a compressed body is decoded
    under the cap.

    Example:
        >>> hook = async_response_cap(1_000_000)
        >>> callable(hook)
        True
    """
    import httpx2

    class BoundedStream(httpx2.AsyncByteStream):
        def __init__(self, inner: Any, budget: _Budget) -> None:
            self._inner = inner
            self._budget = budget

        async def __aiter__(self) -> AsyncIterator[bytes]:
            async for raw in self._inner:
                yield self._budget.take(raw)
            rest = self._budget.rest()
            if rest:
                yield rest

        async def aclose(self) -> None:
            # Closing an unfinished response drops its connection: the rest is never read.
            await self._inner.aclose()

    async def cap(response: Any) -> None:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise _too_large(limit)
        decoder = _decoder_for(response.headers)
        response.stream = BoundedStream(response.stream, _Budget(limit, decoder, None, cut=False))

    return cap


def sync_response_hooks(
    limit: int, deadline_s: float, *, module: Any = None
) -> dict[str, list[Callable[[Any], None]]]:
    """``event_hooks`` for a sync ``httpx`` / ``httpx2`` client: bodies cut at ``limit``
    decoded bytes, and a total deadline of ``deadline_s`` seconds per request.

    A body over the cap ends there (the connection is dropped; :func:`was_cut` says so):
    enough to quote an error, never a memory blow-up. A body still arriving past the
    deadline raises :class:`ResponseDeadline` from the read.

    Args:
        limit: The most decoded bytes read of one body.
        deadline_s: Seconds from the request's start to the end of its body.
        module: The HTTP package the client comes from (``httpx2`` by default; the
            ``langfuse`` SDK's client is an ``httpx`` one).

    Example:
        >>> import httpx2
        >>> client = httpx2.Client(event_hooks=sync_response_hooks(1_000_000, 10.0))
        >>> client.close()
    """
    if module is None:
        import httpx2 as module

    class BoundedStream(module.SyncByteStream):  # type: ignore[misc, name-defined]
        def __init__(self, inner: Any, budget: _Budget) -> None:
            self._inner = inner
            self._budget = budget

        def __iter__(self) -> Iterator[bytes]:
            for raw in self._inner:
                chunk = self._budget.take(raw)
                if chunk:
                    yield chunk
                if self._budget.full:
                    return  # cut: the rest is never read
            rest = self._budget.rest()
            if rest:
                yield rest

        def close(self) -> None:
            self._inner.close()

    def start(request: Any) -> None:
        request.extensions = {**request.extensions, _DEADLINE: time.monotonic() + deadline_s}

    def cap(response: Any) -> None:
        deadline = response.request.extensions.get(_DEADLINE)
        if deadline is not None and time.monotonic() > deadline:
            response.close()
            raise ResponseDeadline("the response headers came after the request's deadline")
        decoder = _decoder_for(response.headers)
        budget = _Budget(limit, decoder, deadline, cut=True)
        response.extensions = {**response.extensions, _CUT: budget}
        response.stream = BoundedStream(response.stream, budget)

    return {"request": [start], "response": [cap]}


def was_cut(response: Any) -> bool:
    """Whether :func:`sync_response_hooks` cut this response's body at the cap."""
    budget = getattr(response, "extensions", {}).get(_CUT)
    return bool(budget is not None and budget.full)
