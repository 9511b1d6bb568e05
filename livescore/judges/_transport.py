"""The judge's HTTP transport: one chat-completions request, sent robustly and safely.

- Requests go through the ``openai`` client's documented raw ``post``, with the reply read
  as bytes and parsed here: ``chat.completions.create`` would spend CPU re-walking our plain
  body and building typed models, CPU a live worker takes from the agent it shares a GIL with.
- On an asyncio loop the client rides on aiohttp (``openai.DefaultAioHttpClient``, the
  documented switch) when it is installed: about half the CPU per call of the httpx
  transport. Elsewhere (trio), or with ``transport="httpx"``, it uses httpx.
- One HTTP client per event loop, shared by the judges of that loop that talk to the same
  server with the same credentials, and closed when the loop ends: an async HTTP client must
  not cross loops, and the live worker's loop, ``anyio.run`` and a test's loop all use judges.
- The bytes read per response are capped (``max_response_bytes``): past the cap the
  connection is dropped unread and the call fails as ``invalid_response``.
- Retries (429, 5xx, timeouts, dropped connections, bodies that are not a chat completion)
  with exponential backoff, jitter and ``retry-after``; a total timeout per request.
- A circuit breaker (:class:`CircuitBreaker`): after a few attempts in a row that did not
  reach the server (refused, dropped, timed out), calls fail at once as
  ``connection_error`` instead of each waiting through its retries, while one probe every
  few seconds checks whether the server is back.
- Errors are built from masked strings only and raised outside ``except`` blocks, so the
  ``openai`` exception (which holds the request, key included) is never in their chain.

This is the only module of livescore that imports ``openai``; it is loaded when the first
:class:`~livescore.judges.OpenAIJudge` is built.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import importlib.util
import json
import logging
import random
import socket
import threading
import time
import weakref
from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel
import anyio.to_thread
import openai

from livescore._errors import (
    JudgeConfigError,
    JudgeError,
    RequestRefused,
    UnreadableResponse,
    judge_error,
)
from livescore._http import async_response_cap
from livescore._redaction import Redactor
from livescore._request_gate import current_request_gate
from livescore._usage import JudgeUsage

if TYPE_CHECKING:
    from livescore.judges._cache import ResponseCache
    from livescore.judges._openai import TransportName

__all__ = (
    "CIRCUIT_OPEN_EVENT",
    "CircuitBreaker",
    "ClientSettings",
    "Transport",
)

_log = logging.getLogger("livescore.judges")

CIRCUIT_OPEN_EVENT = "judge_circuit_open"
"""The ``livescore_event`` attribute of the warning logged when a judge's circuit opens."""

_MAX_ERROR_EXCERPT = 300
_MAX_BODY_EXCERPT = 200

# Indirection so tests can record the backoff waits instead of sleeping through them.
_sleep = anyio.sleep


@dataclass(frozen=True, slots=True)
class ClientSettings:
    """What an HTTP client is built from; judges with equal settings share one per loop."""

    base_url: str  # never with credentials in it: see ``split_credentials``
    api_key: str = field(repr=False)
    headers: tuple[tuple[str, str], ...] = field(repr=False)
    max_response_bytes: int
    transport: TransportName


@functools.cache
def aiohttp_installed() -> bool:
    """Whether the aiohttp transport (``openai[aiohttp]``) can be used."""
    return importlib.util.find_spec("aiohttp") is not None


# -- one HTTP client per event loop ----------------------------------------------------------


class _LoopClients:
    """The HTTP clients judges opened on one event loop, and their concurrency limiters."""

    def __init__(self) -> None:
        self.clients: dict[ClientSettings, openai.AsyncOpenAI] = {}
        # Keyed weakly by transport: a judge that is garbage takes its limiter with it.
        self.limiters: weakref.WeakKeyDictionary[Transport, anyio.CapacityLimiter] = (
            weakref.WeakKeyDictionary()
        )
        self.closer: AsyncGenerator[None, None] | None = None

    async def close_when_loop_ends(self) -> AsyncGenerator[None, None]:
        # An async generator parked at its ``yield``: asyncio (``asyncio.run``, ``anyio.run``,
        # the live worker's portal, pytest's runner) and trio close every live async
        # generator before their loop ends, which runs this ``finally`` inside the loop and
        # closes the sockets cleanly instead of leaving them to the garbage collector.
        try:
            yield
        finally:
            await self.close_all()

    async def close_all(self) -> None:
        clients = list(self.clients.values())
        self.clients.clear()
        for client in clients:
            try:
                await client.close()
            except Exception as exc:  # a socket already gone: nothing left to release
                _log.debug("closing a judge HTTP client failed: %s", type(exc).__name__)


# Scoped to the running event loop by anyio: the value goes when the loop goes.
_LOOP_CLIENTS: anyio.lowlevel.RunVar[_LoopClients] = anyio.lowlevel.RunVar(
    "livescore_judge_clients"
)


async def _loop_clients() -> _LoopClients:
    try:
        return _LOOP_CLIENTS.get()
    except LookupError:
        pass
    pool = _LoopClients()
    _LOOP_CLIENTS.set(pool)
    # Held by the pool (the loop only keeps a weak reference to its async generators).
    pool.closer = pool.close_when_loop_ends()
    await pool.closer.__anext__()
    return pool


def _on_asyncio() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _new_client(settings: ClientSettings) -> openai.AsyncOpenAI:
    use_aiohttp = settings.transport == "aiohttp" or (
        settings.transport == "auto" and aiohttp_installed() and _on_asyncio()
    )
    if use_aiohttp and not _on_asyncio():
        raise JudgeConfigError("transport='aiohttp' needs an asyncio event loop")
    options: dict[str, Any] = {
        # Compression buys nothing on a few-KB reply, and an uncompressed body is what the
        # response cap counts; a server that compresses anyway is decoded under the cap.
        "headers": {"Accept-Encoding": "identity"},
        "event_hooks": {"response": [async_response_cap(settings.max_response_bytes)]},
    }
    http_client = (
        openai.DefaultAioHttpClient(**options)
        if use_aiohttp
        else openai.DefaultAsyncHttpxClient(**options)
    )
    return openai.AsyncOpenAI(
        api_key=settings.api_key,
        base_url=settings.base_url,
        max_retries=0,  # retries are ours: exact usage and error types
        default_headers=dict(settings.headers) or None,
        http_client=http_client,
    )


# -- the request -------------------------------------------------------------------------------


@dataclass(slots=True)
class _Failure:
    error_type: str
    detail: str
    status: int | None = None
    retry_after: float | None = None
    final: bool = False  # not worth retrying
    unreachable: bool = False  # the server was not reached (refused, dropped, timed out)


class CircuitBreaker:
    """Stops calling a server that cannot be reached, and notices when it is back.

    Closed (normal): each attempt that does not reach the server (a refused or dropped
    connection, a timeout with no answer) adds to a streak; any HTTP answer, even an
    error, ends it. After ``failures`` such attempts in a row the circuit opens: calls
    fail at once as ``connection_error`` (counted like any failed score), except one probe
    every ``probe_interval`` seconds, whose success closes it again.

    Thread-safe and loop-independent: one judge shares it across event loops (the live
    worker's, ``anyio.run``'s).

    Args:
        failures: Attempts in a row that open the circuit; ``None`` never opens it.
        probe_interval: Seconds between probes while open.

    Example:
        >>> breaker = CircuitBreaker(2, probe_interval=60)
        >>> breaker.record(False, "connection refused")  # did this attempt open it?
        False
        >>> breaker.record(False, "connection refused"), breaker.open
        (True, True)
        >>> breaker.admit()
        'refuse'
    """

    def __init__(self, failures: int | None, probe_interval: float) -> None:
        self.failures = failures
        self.probe_interval = probe_interval
        self.reason: str | None = None
        self.streak = 0
        self._lock = threading.Lock()
        self._open = False
        self._next_probe = 0.0
        self._probing = False

    @property
    def open(self) -> bool:
        """Whether calls are refused (the server is unreachable)."""
        return self._open

    def admit(self) -> str:
        """``"go"`` (closed), ``"probe"`` (open, and this attempt checks the server) or
        ``"refuse"`` (open: fail at once)."""
        with self._lock:
            if not self._open:
                return "go"
            if not self._probing and time.monotonic() >= self._next_probe:
                self._probing = True
                return "probe"
            return "refuse"

    def next_probe_in(self) -> float:
        """Seconds until the next probe may go (0 when one may go now)."""
        return max(0.0, self._next_probe - time.monotonic())

    def record(self, reached: bool, reason: str | None = None, *, probe: bool = False) -> bool:
        """Note an attempt's outcome; returns whether this one opened the circuit."""
        with self._lock:
            if probe:
                self._probing = False
            if reached:
                self.streak, self._open, self.reason = 0, False, None
                return False
            self.streak += 1
            self.reason = reason
            opened = False
            if self.failures is not None and self.streak >= self.failures:
                opened = not self._open
                self._open = True
                self._next_probe = time.monotonic() + self.probe_interval
            return opened

    def release_probe(self) -> None:
        """A probe that ended without an outcome (cancelled): let the next one go."""
        with self._lock:
            self._probing = False


class Transport:
    """Sends chat-completion bodies to one server for one judge; see the module docstring.

    Args:
        describe: How errors name the judge (``"judge gpt-4o-mini at https://…/v1"``).
        settings: How to build the HTTP client (``None`` with ``user_client``).
        user_client: A ready ``openai.AsyncOpenAI`` the user gave: used as is, on every
            loop, never closed here; the response cap is then the user's client's business.
        redact: Masks the judge's secrets in every error text.
    """

    def __init__(
        self,
        *,
        describe: str,
        settings: ClientSettings | None,
        user_client: openai.AsyncOpenAI | None,
        redact: Redactor,
        timeout: float,
        max_retries: int,
        max_concurrency: int,
        backoff_base: float,
        backoff_max: float,
        retry_after_max: float,
        breaker: CircuitBreaker | None = None,
    ) -> None:
        self.describe = describe
        self.breaker = breaker or CircuitBreaker(None, 5.0)
        self.settings = settings
        self.user_client = user_client
        self.redact = redact
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_concurrency = max_concurrency
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.retry_after_max = retry_after_max
        # The disk cache of answers (livescore.judges.ResponseCache), keyed by the server
        # (cache_scope) and the body: set by the judge, off unless asked.
        self.cache: ResponseCache | None = None
        self.cache_scope = ""

    def error(
        self, error_type: str, detail: str, usage: JudgeUsage, status: int | None = None
    ) -> JudgeError:
        """The error for ``detail``, named after the judge once, masked."""
        message = self.redact(f"{self.describe}: {detail}")
        return judge_error(error_type, message, usage=usage, status_code=status)

    async def _client_and_limiter(self) -> tuple[openai.AsyncOpenAI, anyio.CapacityLimiter]:
        pool = await _loop_clients()
        limiter = pool.limiters.get(self)
        if limiter is None:
            limiter = pool.limiters[self] = anyio.CapacityLimiter(self.max_concurrency)
        if self.user_client is not None:
            return self.user_client, limiter
        assert self.settings is not None
        client = pool.clients.get(self.settings)
        if client is None:
            client = pool.clients[self.settings] = _new_client(self.settings)
        return client, limiter

    async def aclose(self) -> None:
        """Close the HTTP client this transport uses on the running loop (not a user's)."""
        if self.user_client is not None or self.settings is None:
            return
        pool = _LOOP_CLIENTS.get(None)
        client = pool.clients.pop(self.settings, None) if pool is not None else None
        if client is not None:
            await client.close()

    async def post(
        self,
        body: Mapping[str, Any],
        usage: JudgeUsage,
        *,
        refuses: Callable[[int, str], bool] | None = None,
    ) -> Mapping[str, Any]:
        """Send ``body`` to ``/chat/completions``; the chat completion, parsed.

        Args:
            body: The request body (plain JSON values).
            usage: Calls, tokens and time are added to it.
            refuses: Says which retryable HTTP errors (a 5xx) mean "this request is
                refused" rather than "try again" (llama.cpp refuses a format with a 500).

        Raises:
            RequestRefused: A 4xx other than 408/409/429, or what ``refuses`` picks.
            JudgeError: The request failed for good, after the retries.
        """
        cache = self.cache
        key = None
        if cache is not None:
            # Before the limiter and the circuit: a cached answer needs neither the server
            # nor a slot, and counts as no call and no tokens (so no cost).
            key = cache.key(self.cache_scope, body)
            stored = await anyio.to_thread.run_sync(cache.get, key)
            if stored is not None:
                usage.cached += 1
                return stored
        client, limiter = await self._client_and_limiter()
        gate = current_request_gate()  # a fleet worker's shared judge limits, else None
        breaker = self.breaker
        attempt = 0
        while True:
            async with limiter:
                # Asked after the wait for a slot: calls queued behind attempts that found
                # the server gone must not try it again one by one.
                admission = breaker.admit()
                if admission == "refuse":
                    raise self._unreachable(usage)
                usage.calls += 1
                started = time.perf_counter()
                try:
                    if gate is None:
                        outcome = await self._attempt(client, body)
                    else:
                        async with gate.request():
                            outcome = await self._attempt(client, body)
                except BaseException:
                    if admission == "probe":
                        breaker.release_probe()
                    raise
                finally:
                    usage.latency_s += time.perf_counter() - started
            self._record_reach(outcome, probe=admission == "probe")
            if gate is not None and not isinstance(outcome, Mapping) and outcome.status == 429:
                await gate.rate_limited(outcome.retry_after)
            if isinstance(outcome, Mapping):
                _add_tokens(usage, outcome)
                if cache is not None and key is not None:
                    await anyio.to_thread.run_sync(cache.put, key, outcome)
                return outcome
            failure = outcome
            detail = self._raise_unless_retried(
                failure, attempt, usage, refuses, probe=admission == "probe"
            )
            wait = self._backoff(attempt, failure.retry_after)
            _log.debug("%s; retrying in %.2fs", self.redact(f"{self.describe}: {detail}"), wait)
            started = time.perf_counter()
            await _sleep(wait)
            usage.latency_s += time.perf_counter() - started
            attempt += 1

    def _record_reach(self, outcome: Mapping[str, Any] | _Failure, *, probe: bool) -> None:
        """Tell the circuit breaker whether the server was reached; warn when it opens."""
        breaker = self.breaker
        unreached = outcome if isinstance(outcome, _Failure) and outcome.unreachable else None
        if breaker.record(
            unreached is None,
            None if unreached is None else _reason_of(unreached),
            probe=probe,
        ):
            _log.warning(
                "%s: unreachable (%s, %d attempts in a row): judge calls fail at once "
                "until a probe (every %gs) gets through",
                self.redact(self.describe),
                breaker.reason,
                breaker.streak,
                breaker.probe_interval,
                # Lets a command that reports the outage its own way hold this line back.
                extra={"livescore_event": CIRCUIT_OPEN_EVENT},
            )

    def _raise_unless_retried(
        self,
        failure: _Failure,
        attempt: int,
        usage: JudgeUsage,
        refuses: Callable[[int, str], bool] | None,
        *,
        probe: bool,
    ) -> str:
        """Raise what ends the request (refused, final, out of retries); else what failed."""
        if probe and failure.unreachable:
            # Still unreachable: the probe's call fails now, not after retries.
            failure.final = True
        detail = (
            f"HTTP {failure.status}: {failure.detail}"
            if failure.status is not None
            else failure.detail
        )
        if failure.status is not None and (
            failure.error_type in ("auth_error", "bad_request")
            or (refuses is not None and refuses(failure.status, failure.detail))
        ):
            error = self.error(failure.error_type, detail, usage, failure.status)
            raise RequestRefused(failure.status, failure.detail, error)
        if failure.final or attempt >= self.max_retries:
            if attempt:
                detail += f" (after {attempt + 1} attempts)"
            raise self.error(failure.error_type, detail, usage, failure.status)
        return detail

    def _unreachable(self, usage: JudgeUsage) -> JudgeError:
        breaker = self.breaker
        return self.error(
            "connection_error",
            f"unreachable ({breaker.reason}, {breaker.streak} attempts in a row): not "
            f"called while the circuit is open; next probe in {breaker.next_probe_in():.1f}s",
            usage,
        )

    async def _attempt(
        self, client: openai.AsyncOpenAI, body: Mapping[str, Any]
    ) -> Mapping[str, Any] | _Failure:
        """One HTTP exchange: the parsed completion, or what went wrong (masked text only).

        Every ``except`` here only extracts masked strings: the ``openai`` exception holds
        the request (API key included) and must not outlive this frame.
        """
        started = time.perf_counter()
        try:
            with anyio.fail_after(self.timeout):
                raw = await client.post(
                    "/chat/completions",
                    cast_to=bytes,
                    body=body,
                    options={"timeout": self.timeout},
                )
        except TimeoutError:
            return _Failure("timeout", f"timed out after {self.timeout:g}s", unreachable=True)
        except UnreadableResponse as exc:
            return _Failure("invalid_response", str(exc), final=True)
        except openai.APITimeoutError as exc:
            # A timeout cannot fire before the timeout: an early one is the aiohttp
            # transport's name for a refused or dropped connection.
            if time.perf_counter() - started >= 0.9 * self.timeout:
                return _Failure("timeout", f"timed out after {self.timeout:g}s", unreachable=True)
            return _Failure(
                "connection_error",
                f"connection failed ({_connection_detail(exc)})",
                unreachable=True,
            )
        except openai.APIConnectionError as exc:
            if isinstance(exc.__cause__, UnreadableResponse):  # older openai wraps it
                return _Failure("invalid_response", str(exc.__cause__), final=True)
            return _Failure(
                "connection_error",
                f"connection failed ({_connection_detail(exc)})",
                unreachable=True,
            )
        except openai.APIStatusError as exc:
            status = exc.status_code
            return _Failure(
                _status_error_type(status),
                self._status_detail(exc),
                status=status,
                retry_after=_retry_after(exc.response.headers),
            )
        return self._completion(raw)

    def _completion(self, raw: bytes) -> Mapping[str, Any] | _Failure:
        try:
            data = json.loads(raw)
        except ValueError:
            kind = "an HTML page" if raw.lstrip()[:1] == b"<" else "not JSON"
            return _Failure(
                "invalid_response",
                f"HTTP 200 with a body that is {kind}: {self._body_excerpt(raw)}",
            )
        if not isinstance(data, Mapping) or not isinstance(data.get("choices"), list):
            return _Failure(
                "invalid_response",
                f"HTTP 200 with JSON that is not a chat completion: {self._body_excerpt(raw)}",
            )
        return data

    def _body_excerpt(self, raw: bytes) -> str:
        text = raw.decode("utf-8", errors="replace")
        return repr(self.redact.excerpt(text, _MAX_BODY_EXCERPT)) if text.strip() else "(empty)"

    def _status_detail(self, exc: openai.APIStatusError) -> str:
        body = exc.body
        message: Any = None
        if isinstance(body, dict):
            inner = body.get("error", body)
            message = inner.get("message") if isinstance(inner, dict) else inner
            if message is None:
                message = body.get("detail") or body
        elif body is not None:
            message = body
        if message is None:
            message = exc.response.text
        # Mask first, cut after: cutting first could leave a key's first characters.
        return self.redact.excerpt(str(message), _MAX_ERROR_EXCERPT) or "(no error message)"

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return max(0.0, min(retry_after, self.retry_after_max))
        # Full jitter on an exponential ceiling: a fleet of judges does not retry in step.
        ceiling = min(self.backoff_max, self.backoff_base * 2.0**attempt)
        return ceiling * (0.5 + random.random() / 2)


def _connection_detail(exc: BaseException) -> str:
    """What went wrong underneath the client's error: ``connection refused``, not the
    ``ConnectTimeout`` the aiohttp transport reports a refused port as."""
    seen: set[int] = set()
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        chain.append(current)
        current = current.__cause__ or current.__context__
    for error in chain:
        if isinstance(error, ConnectionRefusedError):
            return "connection refused"
        if isinstance(error, socket.gaierror):
            return f"cannot resolve the host: {error.strerror or error}"
        if isinstance(error, ConnectionResetError | BrokenPipeError):
            return "connection reset"
        if isinstance(error, ConnectionAbortedError):
            return "connection aborted"
    for error in chain:
        if isinstance(error, OSError) and error.strerror:
            return error.strerror.lower()
    return type(exc.__cause__ or exc).__name__


def _reason_of(failure: _Failure) -> str:
    detail = failure.detail
    if detail.startswith("connection failed (") and detail.endswith(")"):
        return detail[len("connection failed (") : -1]
    return detail


def _status_error_type(status: int) -> str:
    if status == 429:
        return "rate_limited"
    if status == 408:
        return "timeout"
    if status >= 500 or status == 409:
        return "server_error"
    if status in (401, 403):
        return "auth_error"
    return "bad_request"


def _retry_after(headers: Mapping[str, str]) -> float | None:
    value = headers.get("retry-after-ms")
    if value:
        try:
            return float(value) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value:
        try:
            return float(value)
        except ValueError:
            try:
                parsed = email.utils.parsedate_to_datetime(value)
            except (TypeError, ValueError):
                return None
            return parsed.timestamp() - time.time()
    return None


def _add_tokens(usage: JudgeUsage, completion: Mapping[str, Any]) -> None:
    reported = completion.get("usage")
    if isinstance(reported, Mapping):
        usage.input_tokens += _count(reported.get("prompt_tokens"))
        usage.output_tokens += _count(reported.get("completion_tokens"))
        details = reported.get("prompt_tokens_details")
        if isinstance(details, Mapping):
            usage.cached_input_tokens += _count(details.get("cached_tokens"))


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
