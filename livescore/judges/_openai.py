"""The OpenAI-compatible judge: structured output over ``openai.AsyncOpenAI``, done robustly.

It works with OpenAI and with any server that speaks the chat-completions API (vLLM, llama.cpp,
Ollama, LiteLLM). What it adds over a bare ``chat.completions.parse``:

- a structured-output ladder: strict ``json_schema``, else ``json_object`` with the schema in
  the prompt, else plain prompting; what a server accepts is remembered per base URL;
- local validation with pydantic and one corrective retry on an invalid answer;
- its own retries (429, 5xx, timeouts, dropped connections) with backoff, jitter and
  ``retry-after``, so that usage and error types are exact;
- a total timeout per request, a concurrency limit, an optional in-memory cache;
- one HTTP client per event loop, because an async HTTP client must not cross loops (the live
  worker's loop, ``anyio.run`` in ``run_sync`` and a test's loop all use the same judge).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import email.utils
import functools
import json
import logging
import os
import random
import re
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import anyio
import openai
from pydantic import BaseModel, ValidationError

from livescore.judges._protocol import (
    Judge,
    JudgeConfigError,
    JudgeError,
    JudgeReply,
    JudgeResponseError,
    JudgeUsage,
    ModelT,
)

__all__ = ("OpenAIJudge", "StructuredOutputMode", "forget_server", "resolve_judge")

StructuredOutputMode = Literal["json_schema", "json_object", "prompt"]
"""How a structured answer is requested, from the strongest guarantee to the weakest."""

_log = logging.getLogger("livescore.judges")

_LADDER: tuple[StructuredOutputMode, ...] = ("json_schema", "json_object", "prompt")

# What each server accepted, keyed by base URL and model (a gateway routes models to different
# backends): shared by every judge in the process, so a llama.cpp server that refused
# ``json_schema`` once is not asked again by the next scorer.
_SERVER_MODES: dict[tuple[str, str], StructuredOutputMode] = {}
_SERVER_MODES_LOCK = threading.Lock()

_OFFICIAL_HOST = "api.openai.com"
_LOCAL_KEY = "not-needed"  # local servers ignore the key, but the client insists on one
_MAX_ERROR_EXCERPT = 300
_MAX_CORRECTION_EXCERPT = 1500
_KEY_PATTERN = re.compile(r"(sk-[A-Za-z0-9_\-*]{2})[A-Za-z0-9_\-*]+")
_OTHER_PARAMETER = re.compile(
    r"temperature|max_tokens|max_completion_tokens|context length|context_length|"
    r"maximum context|model|messages",
    re.IGNORECASE,
)
_UNSUPPORTED_FORMAT = re.compile(r"response_format|json_schema|schema|structured", re.IGNORECASE)


# Indirection so tests can record the backoff waits instead of sleeping through them.
_sleep = anyio.sleep


def forget_server(base_url: str) -> None:
    """Forget which structured-output rung the server at ``base_url`` accepted.

    :class:`~livescore.testing.OpenAITestServer` calls it on start, since a new server may
    reuse an old one's port; call it yourself after swapping the model behind a URL.
    """
    url = base_url.rstrip("/")
    with _SERVER_MODES_LOCK:
        for key in [k for k in _SERVER_MODES if k[0] == url]:
            del _SERVER_MODES[key]


def _loop_key() -> object:
    """The running event loop (the unit an async HTTP client must not cross)."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        # Another anyio backend (trio): its per-run token identifies the loop just as well.
        import sys

        trio = sys.modules.get("trio")
        if trio is None:
            raise RuntimeError("OpenAIJudge must be awaited inside an event loop") from None
        token: object = trio.lowlevel.current_trio_token()
        return token


@dataclass(eq=False)
class _LoopState:
    client: openai.AsyncOpenAI
    limiter: anyio.CapacityLimiter
    owns_client: bool
    closer: AsyncGenerator[None, None] | None = None


# Every client a judge opened, per event loop, held strongly until the loop shuts down (or the
# judge's ``aclose``). Were a client only reachable from a judge that became garbage, the
# cyclic collector would finalise its sockets with it: "unclosed transport" warnings.
_OPEN_CLIENTS: dict[object, dict[int, AsyncGenerator[None, None]]] = {}
_OPEN_CLIENTS_LOCK = threading.Lock()


async def _close_when_loop_ends(
    loop: object, client: openai.AsyncOpenAI, forget: Callable[[], None]
) -> AsyncGenerator[None, None]:
    # An async generator parked at its ``yield``: ``asyncio.run`` (and so ``anyio.run`` and
    # pytest's runner) closes every live async generator before closing the loop, which runs
    # this ``finally`` inside the loop and closes the client's sockets cleanly. Without it,
    # each finished ``run_sync`` loop would leave connections to be reaped with warnings.
    try:
        yield
    finally:
        with _OPEN_CLIENTS_LOCK:
            owned = _OPEN_CLIENTS.get(loop, {})
            owned.pop(id(client), None)
            if not owned:
                _OPEN_CLIENTS.pop(loop, None)
        forget()
        await client.close()


def _keep_open(
    loop: object, client: openai.AsyncOpenAI, closer: AsyncGenerator[None, None]
) -> None:
    with _OPEN_CLIENTS_LOCK:
        # A loop closed without ``shutdown_asyncgens`` never ran its closers: let go of them.
        for dead in [k for k in _OPEN_CLIENTS if _is_closed(k)]:
            del _OPEN_CLIENTS[dead]
        _OPEN_CLIENTS.setdefault(loop, {})[id(client)] = closer


def _forgetter(judge: OpenAIJudge, key: object) -> Callable[[], None]:
    # A weak reference: the closer must not keep its judge alive (nor form a cycle with it).
    ref = weakref.ref(judge)

    def forget() -> None:
        alive = ref()
        if alive is not None:
            alive._forget(key)

    return forget


class OpenAIJudge:
    """A judge that speaks the OpenAI-compatible chat-completions API.

    Configured like the ``openai`` client: ``api_key`` / ``base_url`` arguments, else the
    ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL`` environment variables, or a ready ``client``.
    A local server needs no key: with a ``base_url`` and no key, a placeholder key is sent.

    Args:
        model: The model name the server knows (``"gpt-4o-mini"``, ``"qwen2.5:7b"``).
        client: A ready ``openai.AsyncOpenAI``; it is then used from every event loop as
            is (your responsibility), and ``base_url`` / ``api_key`` are ignored.
        base_url: The server's URL, ending in ``/v1`` for most servers.
        api_key: The API key; never written into errors or logs.
        timeout: Seconds one HTTP request may take in total.
        max_retries: Extra attempts after a 429, a 5xx, a timeout or a dropped connection.
        max_concurrency: Requests in flight at once, per event loop.
        cache: Keep identical requests' answers in memory (``True`` for 1024 entries, or
            the number of entries). Cached answers count in ``usage.cached``.
        temperature: Sampling temperature; ``None`` leaves it to the server (some
            reasoning models accept only their default).
        max_tokens: The longest answer, in tokens; ``None`` leaves it to the server.
        structured_output: ``"auto"`` walks the ladder ``json_schema`` → ``json_object``
            → ``prompt`` and remembers what the server accepts; or force one rung.
        backoff_base: First retry wait, in seconds; it doubles each retry, with jitter.
        backoff_max: The longest wait between retries, in seconds.
        retry_after_max: The longest ``retry-after`` honoured, in seconds.
        default_headers: Extra headers on every request (a gateway's routing header).

    Example:
        >>> judge = OpenAIJudge("llama3.2", base_url="http://127.0.0.1:8080/v1")
        >>> judge.model
        'llama3.2'

        Then, in a scorer: ``create_scorer(..., judge=judge)``, or give the string
        ``"openai/gpt-4o-mini"`` and let :func:`resolve_judge` build one from the environment.
    """

    def __init__(
        self,
        model: str,
        *,
        client: openai.AsyncOpenAI | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 3,
        max_concurrency: int = 8,
        cache: bool | int = False,
        temperature: float | None = 0.0,
        max_tokens: int | None = 2048,
        structured_output: Literal["auto"] | StructuredOutputMode = "auto",
        backoff_base: float = 0.5,
        backoff_max: float = 10.0,
        retry_after_max: float = 30.0,
        default_headers: Mapping[str, str] | None = None,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise JudgeConfigError(
                "OpenAIJudge needs a model name, e.g. OpenAIJudge('gpt-4o-mini')"
            )
        if timeout <= 0:
            raise JudgeConfigError(f"timeout must be positive, got {timeout!r}")
        if max_retries < 0:
            raise JudgeConfigError(f"max_retries must be 0 or more, got {max_retries!r}")
        if max_concurrency < 1:
            raise JudgeConfigError(f"max_concurrency must be 1 or more, got {max_concurrency!r}")
        if structured_output not in ("auto", *_LADDER):
            raise JudgeConfigError(
                f"structured_output must be 'auto', 'json_schema', 'json_object' or 'prompt', "
                f"got {structured_output!r}"
            )
        self._model = model.strip()
        self._user_client = client
        if client is None:
            base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
            api_key = api_key or os.environ.get("OPENAI_API_KEY") or None
            if api_key is None:
                if base_url is None:
                    raise JudgeConfigError(
                        f"OpenAIJudge({self._model!r}) has no API key: set OPENAI_API_KEY, pass "
                        "api_key=..., or point base_url= (or OPENAI_BASE_URL) at an "
                        "OpenAI-compatible server that needs no key"
                    )
                api_key = _LOCAL_KEY
            self._base_url = (base_url or f"https://{_OFFICIAL_HOST}/v1").rstrip("/")
        else:
            self._base_url = str(client.base_url).rstrip("/")
        self._api_key = api_key
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.max_concurrency = int(max_concurrency)
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.structured_output = structured_output
        self.backoff_base = float(backoff_base)
        self.backoff_max = float(backoff_max)
        self.retry_after_max = float(retry_after_max)
        self._default_headers = dict(default_headers or {})
        self._send_temperature = True
        # Newer OpenAI models refuse ``max_tokens``; most local servers only know it.
        self._max_tokens_param = (
            "max_completion_tokens" if _OFFICIAL_HOST in self._base_url else "max_tokens"
        )
        cache_size = 1024 if cache is True else int(cache)
        self._cache_size = max(0, cache_size)
        self._cache: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
        self._lock = threading.Lock()
        # Keyed by event loop; an entry leaves when its loop shuts down (see
        # ``_close_when_loop_ends``) or, failing that, when a closed loop is noticed.
        self._loops: dict[object, _LoopState] = {}

    # -- public surface --------------------------------------------------------------------

    @property
    def model(self) -> str:
        """The model's name, as sent to the server and shown on score spans."""
        return self._model

    @property
    def base_url(self) -> str:
        """The server's base URL (without credentials)."""
        return _redact_url(self._base_url)

    def __repr__(self) -> str:
        return f"OpenAIJudge(model={self._model!r}, base_url={self.base_url!r})"

    async def generate_object(
        self,
        *,
        system: str,
        prompt: str,
        schema: type[ModelT],
        validate: Callable[[ModelT], None] | None = None,
    ) -> JudgeReply[ModelT]:
        """Ask for a JSON answer that fits ``schema``, validated locally.

        An answer that is not JSON, breaks the schema, or fails ``validate`` (which raises
        ``ValueError``) gets one corrective retry with the problem spelled out; a second bad
        answer raises :class:`~livescore.judges.JudgeResponseError`. Transport failures raise
        :class:`~livescore.judges.JudgeError` after the retries, with ``error_type`` set.

        Example:
            >>> class Claims(BaseModel):
            ...     claims: list[str]
            >>> # reply = await judge.generate_object(system="...", prompt="...", schema=Claims)
        """
        forms = _schema_forms(schema)
        cache_key = ("object", system, prompt, forms.key, self.temperature, self.max_tokens)
        cached = self._cache_get(cache_key)
        if cached is not None:
            value = schema.model_validate(cached)
            try:
                if validate is not None:
                    validate(value)
            except ValueError:
                pass  # the caller's check changed: ask the server again
            else:
                return JudgeReply(value, JudgeUsage(cached=1))

        usage = JudgeUsage()
        messages: list[dict[str, str]] = [
            {"role": "system", "content": system},
            {"role": "user", "content": prompt},
        ]
        for attempt in range(2):  # the answer, then one corrective retry
            answer = await self._complete(messages, usage, forms)
            text = answer.text
            try:
                value = _parse_object(answer, schema)
                if validate is not None:
                    validate(value)
            except ValueError as exc:
                problem = _describe_problem(exc)
                if attempt == 0:
                    messages = [
                        *messages,
                        {"role": "assistant", "content": text},
                        {"role": "user", "content": _correction(problem)},
                    ]
                    continue
                raise JudgeResponseError(
                    f"{self._model} gave an invalid answer twice (after a corrective retry): "
                    f"{problem}",
                    usage=usage,
                ) from None
            self._cache_put(cache_key, value.model_dump(mode="json"))
            return JudgeReply(value, usage)
        raise AssertionError("unreachable")  # pragma: no cover

    async def generate_text(self, *, system: str, prompt: str) -> JudgeReply[str]:
        """Ask for free text. An empty answer is asked once more, then an error.

        Example:
            >>> # reply = await judge.generate_text(system="Be brief.", prompt="Explain.")
        """
        cache_key = ("text", system, prompt, self.temperature, self.max_tokens)
        cached = self._cache_get(cache_key)
        if isinstance(cached, str):
            return JudgeReply(cached, JudgeUsage(cached=1))
        usage = JudgeUsage()
        messages = [
            {"role": "system", "content": system},
            {"role": "user", "content": prompt},
        ]
        for _ in range(2):
            text = (await self._complete(messages, usage, None)).text
            if text.strip():
                self._cache_put(cache_key, text)
                return JudgeReply(text, usage)
        raise JudgeResponseError(f"{self._model} returned an empty answer twice", usage=usage)

    async def aclose(self) -> None:
        """Close the HTTP client this judge opened for the running event loop.

        Only needed when you run your own event loop and close it without
        ``loop.shutdown_asyncgens()``; ``asyncio.run`` and ``anyio.run`` clean up by themselves.
        """
        with self._lock:
            state = self._loops.pop(_loop_key(), None)
        if state is not None and state.owns_client:
            if state.closer is not None:
                await state.closer.aclose()
            else:
                await state.client.close()

    # -- the request machinery ---------------------------------------------------------------

    async def _loop_state(self) -> _LoopState:
        key = _loop_key()
        with self._lock:
            state = self._loops.get(key)
        if state is not None:
            return state
        if self._user_client is not None:
            state = _LoopState(
                self._user_client, anyio.CapacityLimiter(self.max_concurrency), owns_client=False
            )
        else:
            client = openai.AsyncOpenAI(
                api_key=self._api_key,
                base_url=self._base_url,
                timeout=self.timeout,
                max_retries=0,  # retries are ours: exact usage and error types
                default_headers=self._default_headers or None,
            )
            state = _LoopState(
                client, anyio.CapacityLimiter(self.max_concurrency), owns_client=True
            )
            if isinstance(key, asyncio.AbstractEventLoop):
                closer = _close_when_loop_ends(key, client, _forgetter(self, key))
                await closer.__anext__()  # park it at its yield: the loop now tracks it
                _keep_open(key, client, closer)
                state.closer = closer
        with self._lock:
            for other in [k for k in self._loops if _is_closed(k)]:
                del self._loops[other]
            existing = self._loops.get(key)
            if existing is None:
                self._loops[key] = state
        if existing is not None:  # another task of this loop got there first
            if state.closer is not None:
                await state.closer.aclose()
            return existing
        return state

    def _forget(self, key: object) -> None:
        with self._lock:
            self._loops.pop(key, None)

    def _mode(self) -> StructuredOutputMode:
        if self.structured_output != "auto":
            return self.structured_output
        with _SERVER_MODES_LOCK:
            return _SERVER_MODES.get((self._base_url, self._model), "json_schema")

    def _remember_mode(self, mode: StructuredOutputMode) -> None:
        if self.structured_output == "auto":
            with _SERVER_MODES_LOCK:
                _SERVER_MODES[(self._base_url, self._model)] = mode
            _log.info(
                "judge %s at %s: structured output via %s from now on",
                self._model,
                self.base_url,
                mode,
            )

    async def _complete(
        self,
        messages: list[dict[str, str]],
        usage: JudgeUsage,
        forms: _SchemaForms | None,
    ) -> _Answer:
        """One answer's text (walking the structured-output ladder), with transport retries."""
        if forms is None:
            completion = await self._create(messages, None, usage)
            return _content(completion)
        mode = self._mode()
        while True:
            request_messages, response_format = _structured_request(messages, mode, forms)
            try:
                completion = await self._create(request_messages, response_format, usage)
            except _FormatRejectedError as exc:
                next_mode = _next_rung(mode)
                if self.structured_output != "auto" or next_mode is None:
                    raise exc.error from None
                mode = next_mode
                continue
            if mode != self._mode():
                self._remember_mode(mode)
            return _content(completion)

    async def _create(
        self,
        messages: list[dict[str, str]],
        response_format: dict[str, Any] | None,
        usage: JudgeUsage,
    ) -> Any:
        state = await self._loop_state()
        last: JudgeError | None = None
        attempt = adaptations = 0
        while attempt <= self.max_retries:
            kwargs = self._request_kwargs(messages, response_format)
            retry_after: float | None = None
            async with state.limiter:
                usage.calls += 1
                started = time.perf_counter()
                try:
                    with anyio.fail_after(self.timeout):
                        # The client's documented raw ``post``, answered as plain JSON:
                        # ``chat.completions.create`` would spend ~2 ms of CPU per call
                        # re-walking our (already plain) body against its TypedDicts and
                        # building typed models from the reply, CPU a live worker takes
                        # from the agent it shares a GIL with. Errors and auth are the
                        # client's, as with create.
                        completion = await state.client.post(
                            "/chat/completions",
                            cast_to=object,
                            body=kwargs,
                            options={"timeout": self.timeout},
                        )
                except (TimeoutError, openai.APITimeoutError):
                    last = self._error(f"timed out after {self.timeout:g}s", "timeout", usage)
                except openai.APIConnectionError as exc:
                    last = self._error(
                        f"connection failed ({type(exc.__cause__ or exc).__name__})",
                        "connection_error",
                        usage,
                    )
                except openai.APIStatusError as exc:
                    status = exc.status_code
                    excerpt = self._excerpt(exc)
                    if status == 400 and adaptations < 2 and self._adapt(excerpt, kwargs):
                        adaptations += 1
                        continue  # the same request minus what the model refused, at once
                    if response_format is not None and _rejects_format(status, excerpt):
                        raise _FormatRejectedError(
                            self._error(
                                f"HTTP {status} refused response_format "
                                f"{response_format['type']!r}: {excerpt}",
                                "bad_request",
                                usage,
                            )
                        ) from None
                    error_type = _status_error_type(status)
                    last = self._error(f"HTTP {status}: {excerpt}", error_type, usage)
                    if error_type in ("auth_error", "bad_request"):
                        raise last from None
                    retry_after = _retry_after(exc.response.headers)
                except (ValueError, openai.APIResponseValidationError) as exc:
                    # A 200 whose body is not JSON (a proxy cut it): a server fault, retried.
                    last = self._error(
                        f"the response body was not valid JSON ({type(exc).__name__})",
                        "invalid_response",
                        usage,
                    )
                else:
                    _add_tokens(usage, completion)
                    return completion
                finally:
                    usage.latency_s += time.perf_counter() - started
            if attempt < self.max_retries:
                wait = self._backoff(attempt, retry_after)
                _log.debug("%s; retrying in %.2fs", last, wait)
                started = time.perf_counter()
                await _sleep(wait)
                usage.latency_s += time.perf_counter() - started
            attempt += 1
        assert last is not None
        if self.max_retries:
            last = self._error(
                f"{last.args[0]} (after {self.max_retries + 1} attempts)", last.error_type, usage
            )
        raise last

    def _request_kwargs(
        self, messages: list[dict[str, str]], response_format: dict[str, Any] | None
    ) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self._model,
            "messages": [{**m, "content": _valid_unicode(m["content"])} for m in messages],
        }
        if self.temperature is not None and self._send_temperature:
            kwargs["temperature"] = self.temperature
        if self.max_tokens is not None:
            kwargs[self._max_tokens_param] = self.max_tokens
        if response_format is not None:
            kwargs["response_format"] = response_format
        return kwargs

    def _adapt(self, excerpt: str, kwargs: Mapping[str, Any]) -> bool:
        """Drop or rename a parameter the model refused; True when there was one.

        Reasoning models (OpenAI's o-series, gpt-5) accept only their default temperature
        and want ``max_completion_tokens``; most local servers want ``max_tokens``. Rather
        than make every user learn that, the judge adapts once and remembers.
        """
        text = excerpt.lower()
        refused = any(word in text for word in ("unsupported", "not support", "only the default"))
        if "temperature" in kwargs and "temperature" in text and refused:
            self._send_temperature = False
            _log.info("judge %s does not accept a temperature: sending none", self._model)
            return True
        if "max_tokens" in kwargs and "max_completion_tokens" in text:
            self._max_tokens_param = "max_completion_tokens"
            _log.info("judge %s wants max_completion_tokens instead of max_tokens", self._model)
            return True
        if "max_completion_tokens" in kwargs and "max_completion_tokens" in text and refused:
            self._max_tokens_param = "max_tokens"
            return True
        return False

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return max(0.0, min(retry_after, self.retry_after_max))
        # Full jitter on an exponential ceiling: a fleet of judges does not retry in step.
        ceiling = min(self.backoff_max, self.backoff_base * 2.0**attempt)
        return ceiling * (0.5 + random.random() / 2)

    def _error(self, detail: str, error_type: str, usage: JudgeUsage) -> JudgeError:
        message = f"judge {self._model} at {self.base_url}: {detail}"
        return JudgeError(self._redact(message), error_type=error_type, usage=usage)

    def _excerpt(self, exc: openai.APIStatusError) -> str:
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
        text = " ".join(str(message).split())
        if len(text) > _MAX_ERROR_EXCERPT:
            text = text[:_MAX_ERROR_EXCERPT] + "…"
        return self._redact(text) or "(no error message)"

    def _redact(self, text: str) -> str:
        if self._api_key and self._api_key != _LOCAL_KEY and len(self._api_key) >= 4:
            text = text.replace(self._api_key, "***")
        return _KEY_PATTERN.sub(r"\1***", text)

    # -- cache -------------------------------------------------------------------------------

    def _cache_get(self, key: tuple[Any, ...]) -> Any:
        if not self._cache_size:
            return None
        full_key = (self._base_url, self._model, *key)
        with self._lock:
            value = self._cache.get(full_key)
            if value is not None:
                self._cache.move_to_end(full_key)
        return copy.deepcopy(value)

    def _cache_put(self, key: tuple[Any, ...], value: Any) -> None:
        if not self._cache_size:
            return
        full_key = (self._base_url, self._model, *key)
        with self._lock:
            self._cache[full_key] = value
            self._cache.move_to_end(full_key)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)


def _is_closed(key: object) -> bool:
    return isinstance(key, asyncio.AbstractEventLoop) and key.is_closed()


class _FormatRejectedError(Exception):
    """The server refused the ``response_format``: try the next rung of the ladder."""

    def __init__(self, error: JudgeError) -> None:
        super().__init__(str(error))
        self.error = error


def _next_rung(mode: StructuredOutputMode) -> StructuredOutputMode | None:
    index = _LADDER.index(mode)
    return _LADDER[index + 1] if index + 1 < len(_LADDER) else None


def _rejects_format(status: int, excerpt: str) -> bool:
    # 400/422 are how most servers refuse an unknown response_format, often with a terse
    # message; a 400 that names another parameter is about that parameter, not the format.
    # llama.cpp answers 500, which only counts when it names the format, else it is retried.
    names_format = bool(_UNSUPPORTED_FORMAT.search(excerpt))
    if status in (400, 422):
        return names_format or not _OTHER_PARAMETER.search(excerpt)
    return status >= 500 and names_format


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
            parsed = email.utils.parsedate_to_datetime(value) if value else None
            if parsed is not None:
                return parsed.timestamp() - time.time()
    return None


def _add_tokens(usage: JudgeUsage, completion: Any) -> None:
    reported = completion.get("usage") if isinstance(completion, Mapping) else None
    if isinstance(reported, Mapping):
        usage.input_tokens += _count(reported.get("prompt_tokens"))
        usage.output_tokens += _count(reported.get("completion_tokens"))


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


class _Answer(NamedTuple):
    text: str
    finish_reason: str | None = None
    refusal: str | None = None


def _content(completion: Any) -> _Answer:
    """The first choice's text from a chat completion body (an empty answer if malformed)."""
    choices = completion.get("choices") if isinstance(completion, Mapping) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        return _Answer("")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, Mapping):
        return _Answer("")
    content, refusal, finish = (
        message.get("content"),
        message.get("refusal"),
        choice.get("finish_reason"),
    )
    return _Answer(
        content if isinstance(content, str) else "",
        finish if isinstance(finish, str) else None,
        refusal if isinstance(refusal, str) else None,
    )


def _redact_url(url: str) -> str:
    # Credentials in a URL (https://user:secret@host) must never reach a span or an error.
    return re.sub(r"//[^/@]*@", "//***@", url)


# -- structured output ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _SchemaForms:
    """Everything a request needs of one answer schema, computed once per model class.

    Building a JSON schema from a pydantic model, making it strict and serialising it cost
    a noticeable share of a score's CPU, which a live worker shares with the agent.
    """

    name: str
    json_schema: dict[str, Any]
    key: str  # canonical JSON text, for the request cache
    compact: str  # for the prompt of the weaker rungs
    strict_schema: dict[str, Any]
    strict: bool


@functools.lru_cache(maxsize=256)
def _schema_forms(schema: type[BaseModel]) -> _SchemaForms:
    json_schema = schema.model_json_schema()
    strict_schema, strict = _strict_schema(json_schema)
    return _SchemaForms(
        name=_schema_name(schema),
        json_schema=json_schema,
        key=json.dumps(json_schema, sort_keys=True),
        compact=json.dumps(json_schema, separators=(",", ":")),
        strict_schema=strict_schema,
        strict=strict,
    )


def _structured_request(
    messages: list[dict[str, str]],
    mode: StructuredOutputMode,
    forms: _SchemaForms,
) -> tuple[list[dict[str, str]], dict[str, Any] | None]:
    if mode == "json_schema":
        return messages, {
            "type": "json_schema",
            "json_schema": {
                "name": forms.name,
                "schema": forms.strict_schema,
                "strict": forms.strict,
            },
        }
    # Weaker rungs: the schema is spelled out in the system prompt, since the server does
    # not enforce it (llama.cpp's ``json_object`` does take a ``schema``, so send it too).
    instructions = (
        "\n\nAnswer with one JSON object and nothing else (no prose, no code fences). "
        f"It must match this JSON Schema:\n{forms.compact}"
    )
    system, *rest = messages
    with_schema = [{"role": "system", "content": system["content"] + instructions}, *rest]
    if mode == "json_object":
        return with_schema, {"type": "json_object", "schema": forms.json_schema}
    return with_schema, None


def _schema_name(schema: type[BaseModel]) -> str:
    name = re.sub(r"[^A-Za-z0-9_-]", "_", schema.__name__)[:64]
    return name or "answer"


def _strict_schema(json_schema: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The schema in OpenAI's strict form; ``False`` when it cannot be made strict.

    Strict mode wants every object closed (``additionalProperties: false``), every property
    required (an optional field is then sent as ``null``) and no ``default`` keywords;
    pydantic still validates what comes back against the original model.
    """
    result = copy.deepcopy(json_schema)
    strict = True

    def visit(node: Any) -> None:
        nonlocal strict
        if isinstance(node, dict):
            if node.get("type") == "object" or "properties" in node:
                extra = node.get("additionalProperties")
                if extra not in (None, False):
                    strict = False  # a dict[str, X] cannot be strict
                if "properties" in node:
                    node["additionalProperties"] = False
                    node["required"] = list(node["properties"])
                elif extra is None:
                    strict = False
            if "$ref" in node and len(node) > 1:
                for key in [k for k in node if k != "$ref"]:
                    del node[key]  # strict mode refuses siblings of $ref
            node.pop("default", None)
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for item in node:
                visit(item)

    visit(result)
    return (result if strict else json_schema), strict


def _strip_fences(text: str) -> str:
    # Reasoning models served locally (DeepSeek-R1, Qwen3) put their thinking before the JSON.
    text = re.sub(r"<think>.*?</think>", "", text, flags=re.DOTALL).strip()
    match = re.match(r"^```[A-Za-z0-9_-]*\s*\n?(.*?)\n?```\s*$", text, re.DOTALL)
    if match:
        return match.group(1).strip()
    return text


def _parse_object(answer: _Answer, schema: type[ModelT]) -> ModelT:
    text = answer.text
    if not text.strip():
        if answer.refusal:
            raise ValueError(f"the model refused to answer: {answer.refusal}")
        raise ValueError("the answer was empty")
    body = _strip_fences(text)
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        # Some models wrap the object in prose: take the outermost braces as a last resort.
        start, end = body.find("{"), body.rfind("}")
        data = None
        if 0 <= start < end:
            with contextlib.suppress(json.JSONDecodeError):
                data = json.loads(body[start : end + 1])
        if data is None:
            cut = " (the answer was cut at max_tokens)" if answer.finish_reason == "length" else ""
            raise ValueError(f"the answer is not valid JSON{cut}: {exc}") from None
    return schema.model_validate(data)


def _describe_problem(exc: ValueError) -> str:
    if isinstance(exc, ValidationError):
        lines = []
        for error in exc.errors()[:10]:
            where = ".".join(str(p) for p in error["loc"]) or "(root)"
            lines.append(f"{where}: {error['msg']}")
        text = "the answer does not match the schema: " + "; ".join(lines)
    else:
        text = str(exc)
    return text[:_MAX_CORRECTION_EXCERPT]


def _correction(problem: str) -> str:
    return (
        f"Your previous answer was invalid: {problem}\n"
        "Answer again with only the corrected JSON object, following the instructions and "
        "the schema exactly."
    )


# -- model strings -------------------------------------------------------------------------


def resolve_judge(model: str | Judge, **kwargs: Any) -> Judge:
    """Turn a model string into a judge; a :class:`~livescore.judges.Judge` passes through.

    Accepted strings: ``"openai/<model>"`` for any OpenAI-compatible server, configured by
    ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL`` or by keyword arguments, which go to
    :class:`OpenAIJudge` (``base_url=``, ``api_key=``, ``timeout=``…).

    Raises:
        JudgeConfigError: For an empty string, a string without a provider, an unknown
            provider, or a missing API key.

    Example:
        >>> judge = resolve_judge("openai/llama3.2", base_url="http://127.0.0.1:8080/v1")
        >>> judge.model
        'llama3.2'
    """
    if not isinstance(model, str) and isinstance(model, Judge):
        if kwargs:
            raise JudgeConfigError(
                f"resolve_judge got a ready judge ({model!r}) and judge options "
                f"({', '.join(sorted(kwargs))}): configure the judge object itself"
            )
        return model
    accepted = (
        "accepted: 'openai/<model>' (any OpenAI-compatible server, set OPENAI_API_KEY and/or "
        "OPENAI_BASE_URL), or a Judge object such as OpenAIJudge(...)"
    )
    if not isinstance(model, str):
        raise JudgeConfigError(
            f"a judge must be a model string or a Judge, not {type(model)!r}; {accepted}"
        )
    text = model.strip()
    if not text:
        raise JudgeConfigError(f"the judge model string is empty; {accepted}")
    provider, sep, name = text.partition("/")
    if not sep:
        raise JudgeConfigError(f"judge {model!r} has no provider prefix; {accepted}")
    if provider.lower() != "openai":
        raise JudgeConfigError(f"judge {model!r}: unknown provider {provider!r}; {accepted}")
    if not name.strip():
        raise JudgeConfigError(f"judge {model!r} names no model after 'openai/'; {accepted}")
    return OpenAIJudge(name.strip(), **kwargs)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _valid_unicode(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD.

    A broken decoder upstream (``errors="surrogateescape"``, a bad JSON escape) can leave
    lone surrogates in an agent's output or a tool result; the HTTP client cannot encode
    them as UTF-8 and would fail the request before sending anything.
    """
    return _LONE_SURROGATE.sub("\ufffd", text)
