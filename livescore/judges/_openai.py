"""The OpenAI-compatible judge: structured answers from any chat-completions server, robustly.

It works with OpenAI and with any server that speaks the chat-completions API (vLLM, llama.cpp,
Ollama, LiteLLM). The work is split by job:

- :mod:`._transport`: the HTTP request (one client per event loop, the response cap,
  retries with backoff and ``retry-after``, timeouts, error types);
- :mod:`._structured`: the structured-output ladder, remembered per server, and parsing;
- :mod:`._validation`: local validation and the one corrective retry (shared with
  :class:`~livescore.testing.ScriptedJudge`);
- :mod:`livescore._redaction`: keeping credentials out of errors, logs and reprs (shared
  with the dashboard sinks);
- this module: the judge's settings, the request body (and adapting it to what a model
  refuses), the optional cache.

``openai`` is imported when the first judge is built, not when ``livescore`` is imported.
"""

from __future__ import annotations

import copy
import logging
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from livescore import _http
from livescore._errors import JudgeConfigError, JudgeError, JudgeResponseError, RequestRefused
from livescore._redaction import Redactor, header_secrets, redact_url, split_credentials
from livescore._text import replace_lone_surrogates
from livescore._usage import JudgeReply, JudgeUsage
from livescore.judges._classify import (
    MAX_TOP_LOGPROBS,
    Classification,
    check_choices,
    classification_from_completion,
    classify_with_object,
    logprobs_refused,
    refuses_logprobs,
    remember_no_logprobs,
)
from livescore.judges._prices import Price, PriceLike, PriceTable, resolve_price
from livescore.judges._protocol import ModelT
from livescore.judges._structured import (
    LADDER,
    Answer,
    Message,
    SchemaForms,
    StructuredOutputMode,
    forget_server,
    next_rung,
    read_answer,
    rejects_format,
    remember_mode,
    remembered_mode,
    schema_forms,
    structured_request,
)
from livescore.judges._validation import ask_for_object

if TYPE_CHECKING:
    import openai

    from livescore.judges._budget import JudgeBudget
    from livescore.judges._cache import ResponseCache
    from livescore.judges._transport import ClientSettings

__all__ = ("DEFAULT_MAX_RESPONSE_BYTES", "DEFAULT_TIMEOUT", "OpenAIJudge", "TransportName")

_log = logging.getLogger("livescore.judges")

DEFAULT_MAX_RESPONSE_BYTES = _http.DEFAULT_MAX_RESPONSE_BYTES
"""The most bytes :class:`OpenAIJudge` reads of one response by default (1 MB)."""

DEFAULT_TIMEOUT = 30.0
"""Seconds one judge request may take by default, for the library and ``--judge-timeout``
alike. A live score's own timeout is 60 s (``ScorerConfig.timeout``), so one slow request
still leaves room for its retry; a judge that hangs no longer costs a timeout per call, as
the circuit breaker opens after the first few."""

TransportName = Literal["auto", "aiohttp", "httpx"]
"""The HTTP transport under the ``openai`` client (see :class:`OpenAIJudge`)."""

_OFFICIAL_HOST = "api.openai.com"
_LOCAL_KEY = "not-needed"  # local servers ignore the key, but the client insists on one
_TRANSPORTS = ("auto", "aiohttp", "httpx")


class OpenAIJudge:
    """A judge that speaks the OpenAI-compatible chat-completions API.

    Configured like the ``openai`` client: ``api_key`` / ``base_url`` arguments, else the
    ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL`` environment variables, or a ready ``client``.
    A local server needs no key: with a ``base_url`` and no key, a placeholder key is sent.
    Credentials in the URL (``http://user:password@host/v1``) are sent as HTTP Basic
    authentication and never appear in logs, errors or spans.

    Args:
        model_name: The model name the server knows (``"gpt-4o-mini"``, ``"qwen2.5:7b"``).
        client: A ready ``openai.AsyncOpenAI``; it is then used from every event loop as
            is (your responsibility, as are its logging and response sizes), and
            ``base_url`` / ``api_key`` / ``transport`` / ``max_response_bytes`` are ignored.
        base_url: The server's URL, ending in ``/v1`` for most servers.
        api_key: The API key; never written into errors or logs.
        timeout: Seconds one HTTP request may take in total.
        max_retries: Extra attempts after a 429, a 5xx, a timeout, a dropped connection or a
            reply that is not a chat completion (an HTML error page from a proxy).
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
            Values of headers named like credentials are masked in errors too.
        max_response_bytes: The most bytes read of one response (default 1 MB, a chat
            completion is a few KB). A bigger one is dropped unread and the call fails
            as ``invalid_response``: a broken or hostile server cannot fill the memory
            of the process the agent runs in.
        transport: The HTTP transport under the ``openai`` client: ``"auto"`` uses aiohttp
            on asyncio loops when it is installed (``openai[aiohttp]``, a dependency of
            livescore; about half the CPU per call), else httpx; or force one.
        circuit_failures: Attempts in a row that do not reach the server (a refused or
            dropped connection, a timeout) after which the judge stops calling it: every
            call then fails at once as ``connection_error`` (``error.type`` on its score),
            instead of each one waiting through its retries, while one probe every
            ``circuit_probe_interval`` seconds checks whether the server is back (its
            success closes the circuit). Any HTTP answer, even an error, ends a streak.
            ``None`` never opens it. :attr:`unreachable` says when it is open.
        circuit_probe_interval: Seconds between probes while the circuit is open.
        prices: What this judge's tokens cost, in USD per million tokens: one price,
            ``(input, output)`` or ``(input, output, cached_input)``, or a price table
            ``{model_name: (input, output[, cached_input])}``. Without it the price comes
            from the budget's ``prices``, ``$LIVESCORE_JUDGE_PRICES`` or
            :data:`~livescore.judges.DEFAULT_PRICES`; a model none of them names has no
            price, and its scores carry no cost.
        budget: A :class:`~livescore.judges.JudgeBudget` every scorer using this judge
            spends from: a score it cannot pay is skipped before any judge call.
        response_cache: A :class:`~livescore.judges.ResponseCache`: answers to identical
            requests stored on disk by an earlier run are served from it, with no call
            and no cost (``livescore eval`` uses one by default; live scoring only when
            given one).

    Example:
        >>> judge = OpenAIJudge("llama3.2", base_url="http://127.0.0.1:8080/v1")
        >>> judge.model_name
        'llama3.2'

        Then, in a scorer: ``create_hallucination_scorer(model=judge)``, or give the string
        ``"openai/gpt-4o-mini"`` and let :func:`resolve_judge` build one from the environment.
    """

    def __init__(
        self,
        model_name: str,
        *,
        client: openai.AsyncOpenAI | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
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
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        transport: TransportName = "auto",
        circuit_failures: int | None = 5,
        circuit_probe_interval: float = 5.0,
        prices: PriceLike | PriceTable | None = None,
        budget: JudgeBudget | None = None,
        response_cache: ResponseCache | None = None,
    ) -> None:
        _check_options(
            model_name,
            timeout=timeout,
            max_retries=max_retries,
            max_concurrency=max_concurrency,
            max_response_bytes=max_response_bytes,
            structured_output=structured_output,
            transport=transport,
            circuit_failures=circuit_failures,
            circuit_probe_interval=circuit_probe_interval,
        )
        from livescore.judges import _transport  # here: `import livescore` never loads openai

        self._model = model_name.strip()
        settings, url, raw_url, secrets = _connection(
            self._model, client, base_url, api_key, default_headers, max_response_bytes, transport
        )
        self._url, self._display_url = url, redact_url(raw_url)  # _url: no credentials
        self._redact = Redactor(secrets)
        self.max_concurrency = int(max_concurrency)
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.structured_output = structured_output
        self.max_response_bytes = int(max_response_bytes)
        self._send_temperature = True
        self._refusal: str | None = None  # see `refused`
        # Newer OpenAI models refuse ``max_tokens``; most local servers only know it.
        self._max_tokens_param = (
            "max_completion_tokens" if _OFFICIAL_HOST in self._url else "max_tokens"
        )
        self._transport = _transport.Transport(
            describe=f"judge {self._model} at {self._display_url}",
            settings=settings,
            user_client=client,
            redact=self._redact,
            timeout=float(timeout),
            max_retries=int(max_retries),
            max_concurrency=self.max_concurrency,
            backoff_base=float(backoff_base),
            backoff_max=float(backoff_max),
            retry_after_max=float(retry_after_max),
            breaker=_transport.CircuitBreaker(circuit_failures, float(circuit_probe_interval)),
        )
        self._cache_size = max(0, 1024 if cache is True else int(cache))
        self._cache: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
        self._lock = threading.Lock()
        # Checked now: a malformed table fails here, not on the first score.
        self._prices_given = prices
        self._price = resolve_price(self._model, prices)
        self._budget: JudgeBudget | None = None
        if budget is not None:
            self.budget = budget
        self.response_cache = response_cache

    # -- public surface --------------------------------------------------------------------

    @property
    def model_name(self) -> str:
        """The model's name, as sent to the server and shown on score spans."""
        return self._model

    @property
    def base_url(self) -> str:
        """The server's base URL (credentials in it shown as ``***``)."""
        return self._display_url

    @staticmethod
    def forget_server(base_url: str) -> None:
        """Forget which structured-output form the server at ``base_url`` accepted.

        Every judge on one server remembers what it took (``json_schema``, ``json_object``
        or the schema in the prompt), so the next one starts there. Call this after
        swapping the model behind a URL; :class:`~livescore.testing.OpenAITestServer` calls
        it on start, since a new server may reuse an old one's port.

        Example:
            >>> OpenAIJudge.forget_server("http://127.0.0.1:8080/v1")
        """
        forget_server(base_url)

    @property
    def price(self) -> Price | None:
        """What this judge's tokens cost (``None``: unknown, its scores carry no cost)."""
        return self._price

    @property
    def budget(self) -> JudgeBudget | None:
        """The budget every scorer using this judge spends from (``None``: no limit).

        Settable; a USD budget needs a price for the model (else ``JudgeConfigError``).
        """
        return self._budget

    @budget.setter
    def budget(self, value: JudgeBudget | None) -> None:
        from livescore.judges._budget import JudgeBudget

        if value is not None and not isinstance(value, JudgeBudget):
            raise JudgeConfigError(f"budget must be a JudgeBudget, not {value!r}")
        price = resolve_price(self._model, self._prices_given, value.prices if value else None)
        self._price = price
        if value is not None:
            value.check_judge(self)
        self._budget = value

    @property
    def response_cache(self) -> ResponseCache | None:
        """The disk cache of this judge's answers (``None``: every request is sent).

        Settable. Identical requests (same server, model, prompt, schema, temperature and
        token settings) are answered from it with no call and no cost (``usage.cached``).
        """
        return self._transport.cache

    @response_cache.setter
    def response_cache(self, value: ResponseCache | None) -> None:
        from livescore.judges._cache import ResponseCache

        if value is not None and not isinstance(value, ResponseCache):
            raise JudgeConfigError(f"response_cache must be a ResponseCache, not {value!r}")
        self._transport.cache = value
        self._transport.cache_scope = self._url

    def __repr__(self) -> str:
        return f"OpenAIJudge({self._model!r}, base_url={self.base_url!r})"

    @property
    def unreachable(self) -> str | None:
        """Why the server cannot be reached (``"connection refused"``) while the circuit
        is open and calls fail at once; ``None`` while it is closed."""
        breaker = self._transport.breaker
        return (breaker.reason or "unreachable") if breaker.open else None

    @property
    def refused(self) -> str | None:
        """Why every call to this judge fails the same way, once the server said so: an
        unknown model (HTTP 404, or a 400 that names the model) or a refused key (401,
        403), as ``"HTTP 404: The model 'x' does not exist"``; ``None`` until then. Unlike
        :attr:`unreachable`, nothing clears it: retrying cannot change the answer, so a
        command that scores a dataset stops at the first (as ``livescore eval`` does)."""
        return self._refusal

    def _final(self, refused: RequestRefused) -> JudgeError:
        """The error to raise for a refusal the judge could not adapt to; notes it in
        :attr:`refused` when it is permanent."""
        status, detail = refused.status, refused.detail
        # The model's name as a word of its own ("model=m", "`gpt-4o` does not exist"), not
        # inside another one: a 400 about this item's prompt is no reason to stop.
        names_model = re.search(rf"(?<![\w.:/-]){re.escape(self._model)}(?![\w.:/-])", detail)
        if status in (401, 403, 404) or (status == 400 and names_model):
            self._refusal = self._redact(f"HTTP {status}: {detail}")
        return refused.error

    # The retry settings live on the transport, which uses them; these read and set them.

    @property
    def timeout(self) -> float:
        """Seconds one HTTP request may take in total."""
        return self._transport.timeout

    @timeout.setter
    def timeout(self, value: float) -> None:
        self._transport.timeout = float(value)

    @property
    def max_retries(self) -> int:
        """Extra attempts after a retryable failure."""
        return self._transport.max_retries

    @max_retries.setter
    def max_retries(self, value: int) -> None:
        self._transport.max_retries = int(value)

    @property
    def backoff_base(self) -> float:
        """First retry wait, in seconds."""
        return self._transport.backoff_base

    @backoff_base.setter
    def backoff_base(self, value: float) -> None:
        self._transport.backoff_base = float(value)

    @property
    def backoff_max(self) -> float:
        """The longest wait between retries, in seconds."""
        return self._transport.backoff_max

    @backoff_max.setter
    def backoff_max(self, value: float) -> None:
        self._transport.backoff_max = float(value)

    @property
    def retry_after_max(self) -> float:
        """The longest ``retry-after`` honoured, in seconds."""
        return self._transport.retry_after_max

    @retry_after_max.setter
    def retry_after_max(self, value: float) -> None:
        self._transport.retry_after_max = float(value)

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
        ``ValueError``) gets one corrective retry with the problem spelled out (quoting at
        most 2,000 characters of the bad answer); a second bad answer raises
        :class:`~livescore.judges.JudgeResponseError`. Transport failures raise the
        :class:`~livescore.judges.JudgeError` subclass of their kind, after the retries.

        Example:
            >>> from pydantic import BaseModel
            >>> class Claims(BaseModel):
            ...     claims: list[str]
            >>> # reply = await judge.generate_object(system="...", prompt="...", schema=Claims)
        """
        forms = schema_forms(schema)
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

        async def ask(messages: list[Message]) -> Answer:
            return await self._complete(messages, usage, forms)

        value = await ask_for_object(
            ask,
            _messages(system, prompt),
            schema,
            validate=validate,
            model_name=self._model,
            usage=usage,
        )
        self._cache_put(cache_key, value.model_dump(mode="json"))
        return JudgeReply(value, usage)

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
        messages = _messages(system, prompt)
        for _ in range(2):
            text = (await self._complete(messages, usage, None)).text
            if text.strip():
                self._cache_put(cache_key, text)
                return JudgeReply(text, usage)
        raise JudgeResponseError(f"{self._model} returned an empty answer twice", usage=usage)

    async def classify(
        self, *, system: str, prompt: str, choices: Sequence[str]
    ) -> JudgeReply[Classification]:
        """Ask for one of ``choices``; each word's probability from the first token's logprobs.

        One call with ``max_tokens`` 1, ``logprobs`` and ``top_logprobs`` (see
        :class:`~livescore.judges.Classification`). Where the server gives no logprobs, or
        refuses the request for them, the judge logs so once (a warning), remembers it for
        that server, and asks for the structured answer instead (``{"verdict": ...}``):
        ``from_logprobs`` is then false and the probabilities are 1 and 0. A first token
        that starts none of the words gets the structured answer too, that time only.

        Example:
            >>> # reply = await judge.classify(system="...", prompt="...",
            >>> #                              choices=("supported", "unsupported"))
            >>> # reply.value.probability("unsupported")
        """
        words = check_choices(choices)
        cache_key = ("classify", system, prompt, words, self.temperature)
        cached = self._cache_get(cache_key)
        if isinstance(cached, dict):
            return JudgeReply(Classification(**cached), JudgeUsage(cached=1))
        usage = JudgeUsage()
        if not logprobs_refused(self._url, self._model):
            result = await self._send(_messages(system, prompt), None, usage, one_token=True)
            if isinstance(result, RequestRefused):
                if not refuses_logprobs(result.status, result.detail):
                    raise self._final(result)
                self._no_logprobs(f"it refused them (HTTP {result.status}: {result.detail})")
            else:
                found = classification_from_completion(result, words)
                if found is not None:
                    self._cache_put(cache_key, found.to_dict())
                    return JudgeReply(found, usage)
                if not _has_logprobs(result):
                    self._no_logprobs("its answer had none")
                else:
                    _log.debug(
                        "judge %s: no first-token alternative starts one of %s; asking for "
                        "the structured answer",
                        self._model,
                        list(words),
                    )
        reply = await classify_with_object(self, system=system, prompt=prompt, choices=words)
        usage.add(reply.usage)
        return JudgeReply(reply.value, usage)

    def _no_logprobs(self, why: str) -> None:
        if remember_no_logprobs(self._url, self._model):
            _log.warning(
                "judge %s at %s gives no logprobs (%s): one-word verdicts come from "
                "structured answers from now on (probabilities 0 or 1, not continuous)",
                self._model,
                self.base_url,
                self._redact(why),
            )

    async def aclose(self) -> None:
        """Close the HTTP client this judge uses on the running event loop.

        Only needed when you run your own event loop and close it without
        ``loop.shutdown_asyncgens()``: ``asyncio.run``, ``anyio.run`` and the live worker
        close every judge client of their loop when it ends. Judges that talk to the same
        server with the same settings share a client; they open a new one if they need it.
        A ``client`` you gave is left open.
        """
        await self._transport.aclose()

    # -- the request -----------------------------------------------------------------------

    async def _complete(
        self, messages: list[Message], usage: JudgeUsage, forms: SchemaForms | None
    ) -> Answer:
        """One answer (walking the structured-output ladder), with transport retries."""
        if forms is None:
            result = await self._send(messages, None, usage)
            if isinstance(result, RequestRefused):
                raise self._final(result)
            return read_answer(result)
        start = mode = self._mode()
        while True:
            request_messages, response_format = structured_request(messages, mode, forms)
            result = await self._send(request_messages, response_format, usage)
            if not isinstance(result, RequestRefused):
                if mode != start and self.structured_output == "auto":
                    remember_mode(self._url, self._model, mode)
                    _log.info(
                        "judge %s at %s: structured output via %s from now on",
                        self._model,
                        self.base_url,
                        mode,
                    )
                return read_answer(result)
            if not rejects_format(result.status, result.detail):
                raise self._final(result)
            lower = next_rung(mode)
            if self.structured_output != "auto" or lower is None:
                assert response_format is not None
                raise self._transport.error(
                    "bad_request",
                    f"HTTP {result.status} refused response_format "
                    f"{response_format['type']!r}: {result.detail}",
                    usage,
                    result.status,
                )
            mode = lower

    async def _send(
        self,
        messages: list[Message],
        response_format: dict[str, Any] | None,
        usage: JudgeUsage,
        *,
        one_token: bool = False,
    ) -> Mapping[str, Any] | RequestRefused:
        """The completion, or the refusal (returned, so that it is raised outside ``except``).

        A parameter the model refuses (a temperature, ``max_tokens``) is adapted and the
        request sent again at once. ``one_token`` asks for one token and its logprobs.
        """

        def refuses(status: int, detail: str) -> bool:
            # llama.cpp refuses a format, or logprobs, with a 500: not a fault to retry.
            if one_token and refuses_logprobs(status, detail):
                return True
            return response_format is not None and rejects_format(status, detail)

        adaptations = 0
        while True:
            body = self._request_body(messages, response_format, one_token=one_token)
            try:
                return await self._transport.post(body, usage, refuses=refuses)
            except RequestRefused as exc:
                refused = exc
            if not (refused.status == 400 and adaptations < 2 and self._adapt(refused, body)):
                return refused
            adaptations += 1

    def _mode(self) -> StructuredOutputMode:
        if self.structured_output != "auto":
            return self.structured_output
        return remembered_mode(self._url, self._model)

    def _request_body(
        self,
        messages: list[Message],
        response_format: dict[str, Any] | None,
        *,
        one_token: bool = False,
    ) -> dict[str, Any]:
        # A lone surrogate (a broken decoder upstream) cannot be encoded as UTF-8: the
        # HTTP client would fail the request before sending anything.
        body: dict[str, Any] = {
            "model": self._model,
            "messages": [{**m, "content": replace_lone_surrogates(m["content"])} for m in messages],
        }
        if self.temperature is not None and self._send_temperature:
            body["temperature"] = self.temperature
        if one_token:
            body[self._max_tokens_param] = 1
            body["logprobs"] = True
            body["top_logprobs"] = MAX_TOP_LOGPROBS
        elif self.max_tokens is not None:
            body[self._max_tokens_param] = self.max_tokens
        if response_format is not None:
            body["response_format"] = response_format
        return body

    def _adapt(self, refused: RequestRefused, body: Mapping[str, Any]) -> bool:
        """Drop or rename a parameter the model refused; True when there was one.

        Reasoning models (OpenAI's o-series, gpt-5) accept only their default temperature
        and want ``max_completion_tokens``; most local servers want ``max_tokens``. Rather
        than make every user learn that, the judge adapts once and remembers.
        """
        text = refused.detail.lower()
        refusal = any(word in text for word in ("unsupported", "not support", "only the default"))
        if "temperature" in body and "temperature" in text and refusal:
            self._send_temperature = False
            _log.info("judge %s does not accept a temperature: sending none", self._model)
            return True
        if "max_tokens" in body and "max_completion_tokens" in text:
            self._max_tokens_param = "max_completion_tokens"
            _log.info("judge %s wants max_completion_tokens instead of max_tokens", self._model)
            return True
        if "max_completion_tokens" in body and "max_completion_tokens" in text and refusal:
            self._max_tokens_param = "max_tokens"
            return True
        return False

    # -- cache -------------------------------------------------------------------------------

    def _cache_get(self, key: tuple[Any, ...]) -> Any:
        if not self._cache_size:
            return None
        full_key = (self._url, self._model, *key)
        with self._lock:
            value = self._cache.get(full_key)
            if value is not None:
                self._cache.move_to_end(full_key)
        return copy.deepcopy(value)

    def _cache_put(self, key: tuple[Any, ...], value: Any) -> None:
        if not self._cache_size:
            return
        full_key = (self._url, self._model, *key)
        with self._lock:
            self._cache[full_key] = value
            self._cache.move_to_end(full_key)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)


def _check_options(
    model_name: object,
    *,
    timeout: float,
    max_retries: int,
    max_concurrency: int,
    max_response_bytes: int,
    structured_output: str,
    transport: str,
    circuit_failures: int | None,
    circuit_probe_interval: float,
) -> None:
    """The argument errors of :class:`OpenAIJudge`, before anything is built."""
    if not isinstance(model_name, str) or not model_name.strip():
        raise JudgeConfigError("OpenAIJudge needs a model name, e.g. OpenAIJudge('gpt-4o-mini')")
    if timeout <= 0:
        raise JudgeConfigError(f"timeout must be positive, got {timeout!r}")
    if max_retries < 0:
        raise JudgeConfigError(f"max_retries must be 0 or more, got {max_retries!r}")
    if max_concurrency < 1:
        raise JudgeConfigError(f"max_concurrency must be 1 or more, got {max_concurrency!r}")
    if max_response_bytes < 1024:
        raise JudgeConfigError(
            f"max_response_bytes must be at least 1024, got {max_response_bytes!r}"
        )
    if structured_output not in ("auto", *LADDER):
        raise JudgeConfigError(
            f"structured_output must be 'auto', 'json_schema', 'json_object' or 'prompt', "
            f"got {structured_output!r}"
        )
    if transport not in _TRANSPORTS:
        raise JudgeConfigError(f"transport must be 'auto', 'aiohttp' or 'httpx', got {transport!r}")
    if circuit_failures is not None and (
        isinstance(circuit_failures, bool) or circuit_failures < 1
    ):
        raise JudgeConfigError(
            f"circuit_failures must be 1 or more (or None), got {circuit_failures!r}"
        )
    if not circuit_probe_interval > 0:
        raise JudgeConfigError(
            f"circuit_probe_interval must be positive, got {circuit_probe_interval!r}"
        )
    # Imported here, not at module level: ``import livescore`` must not load ``openai``.
    from livescore.judges import _transport

    if transport == "aiohttp" and not _transport.aiohttp_installed():
        raise JudgeConfigError("transport='aiohttp' needs aiohttp: pip install 'openai[aiohttp]'")


def _connection(
    model: str,
    client: openai.AsyncOpenAI | None,
    base_url: str | None,
    api_key: str | None,
    default_headers: Mapping[str, str] | None,
    max_response_bytes: int,
    transport: TransportName,
) -> tuple[ClientSettings | None, str, str, list[str | None]]:
    """Where a judge connects: the client settings (``None`` with the user's ``client``),
    the URL without credentials, the URL as given, and the secrets its logs must hide."""
    from livescore.judges._transport import ClientSettings

    headers = dict(default_headers or {})
    secrets: list[str | None] = list(header_secrets(headers))
    settings: ClientSettings | None = None
    if client is None:
        raw_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        key = api_key or os.environ.get("OPENAI_API_KEY") or None
        if key is None:
            if raw_url is None:
                raise JudgeConfigError(
                    f"OpenAIJudge({model!r}) has no API key: set OPENAI_API_KEY, pass "
                    "api_key=..., or point base_url= (or OPENAI_BASE_URL) at an "
                    "OpenAI-compatible server that needs no key"
                )
            key = _LOCAL_KEY
        raw_url = (raw_url or f"https://{_OFFICIAL_HOST}/v1").rstrip("/")
        _check_base_url(raw_url)
        # The HTTP client never sees credentials in the URL, so its logs cannot show them.
        url, authorization, url_secrets = split_credentials(raw_url)
        if authorization is not None:
            headers.setdefault("Authorization", authorization)
        secrets += [key if key != _LOCAL_KEY else None, *url_secrets]
        settings = ClientSettings(
            base_url=url,
            api_key=key,
            headers=tuple(sorted(headers.items())),
            max_response_bytes=int(max_response_bytes),
            transport=transport,
        )
    else:
        raw_url = str(client.base_url).rstrip("/")
        url = split_credentials(raw_url)[0]
        secrets.append(client.api_key)
    return settings, url, raw_url, secrets


def _has_logprobs(completion: Mapping[str, Any]) -> bool:
    choices = completion.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        return False
    logprobs = choices[0].get("logprobs")
    return isinstance(logprobs, Mapping) and bool(logprobs.get("content"))


def _check_base_url(url: str) -> None:
    """A judge URL is http(s) with a host; anything else fails now, not at each call."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError as exc:
        raise JudgeConfigError(
            f"the judge's base URL {redact_url(url)!r} is not valid: {exc}"
        ) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise JudgeConfigError(
            f"the judge's base URL must be an http(s) URL such as http://127.0.0.1:8000/v1, "
            f"not {redact_url(url)!r}"
        )


def _messages(system: str, prompt: str) -> list[Message]:
    return [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
