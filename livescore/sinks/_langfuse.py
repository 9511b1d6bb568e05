"""Scores as Langfuse scores on the run's trace and observation."""

from __future__ import annotations

import base64
import math
import os
from collections.abc import Sequence
from typing import Any, Literal

from livescore._errors import SkipRecord
from livescore._http import (
    DEFAULT_MAX_RESPONSE_BYTES,
    check_max_response_bytes,
    sync_response_hooks,
    was_cut,
)
from livescore._redaction import Redactor
from livescore._version import install_hint
from livescore.sinks._base import ScoreRecord
from livescore.sinks._batching import (
    BatchingSink,
    DeliveryResult,
    check_request_timeout,
    refused_batch,
    request_errors,
)
from livescore.sinks._payload import (
    ContentPolicy,
    conversation_key,
    score_key,
    score_metadata,
    target_span,
)

__all__ = ("LangfuseSink",)

DEFAULT_BASE_URL = "https://cloud.langfuse.com"
"""The Langfuse SDK's default host."""


class LangfuseSink(BatchingSink[dict[str, Any]]):
    """Each score becomes a Langfuse score on the run's trace and observation.

    Langfuse's OpenTelemetry ingestion keeps the OTel ids, so the score names the run's
    trace (``traceId`` = the 32-hex trace id) and its span (``observationId`` = the 16-hex
    span id of the span the evaluation span nests under). Each score is ``NUMERIC``:
    name = the scorer id, value = the score, comment = the label and the explanation
    (``"low: The score is 0.33 because …"``), metadata = the label, the judge model and its
    usage, the scorer version, the sample rate, the run id and the scorer's own facts,
    under the evaluation span's attribute names. Its ``id`` is derived from the trace,
    span, scorer and run, so a retry updates the score instead of adding one (Langfuse
    upserts scores by id).

    A conversation's score (``result.turns`` set) is a session score instead: ``sessionId``
    = the conversation id (Langfuse's session, which its OTel ingestion reads from
    ``session.id`` / ``langfuse.session.id`` on the agent's spans), with the turns it
    covers and the last covered turn's trace and span in the metadata. Its ``id`` includes
    the turns covered, so a conversation scored again after it resumed gets a second score
    beside the first, never over it.

    Why the label goes in the comment (and metadata) rather than a second, categorical
    score: one score per score keeps Langfuse's score analytics (counts, means, charts by
    name) exact, and a score name keeps one data type.

    Delivery goes through the official ``langfuse`` SDK's API client
    (``langfuse.api.LangfuseAPI``, ``POST /api/public/scores`` with a batch of scores), on
    the sink's own thread, with this sink's retries and counts: network errors, 429 and 5xx
    are retried with backoff until ``retry_deadline``; other errors fail the batch for good
    (logged once, with the keys masked in Langfuse's message; a batch refused with 400 or
    422 is sent again one score at a time, so only the bad one fails); scores Langfuse
    rejects in a partial answer (207) are counted as failed (``rejected``).
    ``Langfuse().create_score`` would hand the score to the SDK's own queue, which logs and
    drops failures without a count. The sink gives the API client an HTTP client of its
    own: each request has a total deadline of ``timeout`` seconds, checked while the answer
    arrives, and at most ``max_response_bytes`` of an answer are read (a ``client`` you pass
    is used as it is).

    No ``Langfuse()`` client is created, so the sink never installs Langfuse's tracer
    provider (``Langfuse()`` sets a global one when none is set, else adds its span
    processor to yours): your spans go where your application sends them.

    Failed and skipped scores have no value: they are counted as skipped (``unscored``).
    Runs without a span and runs of unsampled traces are skipped too (``no_span``,
    ``trace_not_sampled``).

    Configured with Langfuse's environment variables: ``LANGFUSE_PUBLIC_KEY``,
    ``LANGFUSE_SECRET_KEY``, ``LANGFUSE_BASE_URL`` (or ``LANGFUSE_HOST``; Langfuse Cloud
    by default), ``LANGFUSE_TRACING_ENVIRONMENT``, ``LANGFUSE_TIMEOUT``; or the arguments.
    Install with ``pip install "livescore-ai[langfuse]"``.

    Args:
        public_key: The project's public key.
        secret_key: The project's secret key.
        base_url: Langfuse's URL.
        environment: The scores' environment (as in ``Langfuse(environment=...)``).
        client: A ``langfuse.Langfuse`` client or ``langfuse.api.LangfuseAPI`` to send
            through instead (its keys and host are used; what ``Langfuse()`` did to
            tracing when you created it is yours).
        capture_content: What the comments carry of explanations: ``"full"``,
            ``"truncated"`` (cut at ``max_content_chars``) or ``"none"``.
        max_content_chars: The cut for ``"truncated"``.
        timeout: Seconds per HTTP request, all of it: connecting, sending, and reading
            the answer to its end.
        max_response_bytes: The most bytes read of one answer (1 MB).
        max_queue: See :class:`BatchingSink` (so are the next arguments).
        max_batch: Scores per request.
        flush_interval: Seconds a score may wait for its batch.
        retry_deadline: Seconds after the first try past which nothing is retried.
        initial_backoff: Seconds before the first retry.
        max_backoff: The longest wait between tries.
        shutdown_timeout: Seconds the exit-time shutdown may take.
        meter_provider: Where ``livescore.sink.records`` goes.

    Raises:
        ImportError: The ``langfuse`` package is not installed (the message says how).
        ValueError: No public or secret key, or a setting out of range.

    Example:
        >>> sink = LangfuseSink(public_key="pk-lf-1", secret_key="sk-lf-1",
        ...                     base_url="http://127.0.0.1:3000")
        >>> sink.base_url
        'http://127.0.0.1:3000'
        >>> sink.shutdown()
    """

    name = "langfuse"

    def __init__(
        self,
        *,
        public_key: str | None = None,
        secret_key: str | None = None,
        base_url: str | None = None,
        environment: str | None = None,
        client: Any = None,
        capture_content: Literal["full", "truncated", "none"] = "full",
        max_content_chars: int = 1000,
        timeout: float | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        max_queue: int = 10_000,
        max_batch: int = 100,
        flush_interval: float = 1.0,
        retry_deadline: float = 60.0,
        initial_backoff: float = 0.5,
        max_backoff: float = 5.0,
        shutdown_timeout: float = 5.0,
        meter_provider: Any = None,
    ) -> None:
        try:
            from langfuse.api import LangfuseAPI
        except ImportError as exc:
            raise ImportError(
                f"LangfuseSink needs the langfuse SDK: {install_hint('langfuse')}"
            ) from exc
        self.content = ContentPolicy(capture_content, max_content_chars)
        self.environment = environment or os.environ.get("LANGFUSE_TRACING_ENVIRONMENT") or None
        if timeout is None:
            timeout = float(os.environ.get("LANGFUSE_TIMEOUT") or 10)
        self.timeout = check_request_timeout(timeout)
        self.max_response_bytes = check_max_response_bytes(max_response_bytes)
        self._client = client
        self._api: Any = None
        self._last_cut = False
        if client is not None:
            api = getattr(client, "api", client)
            if not hasattr(api, "scores"):
                raise TypeError(
                    "client must be a langfuse.Langfuse or a langfuse.api.LangfuseAPI, "
                    f"not {client!r}"
                )
            self._api = api
            self.base_url = str(getattr(client, "_base_url", "") or "")
            self.public_key = None
            self._secret_key = None
        else:
            self.public_key = public_key or os.environ.get("LANGFUSE_PUBLIC_KEY")
            self._secret_key = secret_key or os.environ.get("LANGFUSE_SECRET_KEY")
            if not self.public_key or not self._secret_key:
                raise ValueError(
                    "LangfuseSink needs a public and a secret key: set LANGFUSE_PUBLIC_KEY and "
                    "LANGFUSE_SECRET_KEY (or pass public_key= and secret_key=)"
                )
            self.base_url = (
                base_url
                or os.environ.get("LANGFUSE_BASE_URL")
                or os.environ.get("LANGFUSE_HOST")
                or DEFAULT_BASE_URL
            ).rstrip("/")
        self._api_class = LangfuseAPI
        self._redact = _key_redactor(self.public_key, self._secret_key)
        super().__init__(
            max_queue=max_queue,
            max_batch=max_batch,
            flush_interval=flush_interval,
            retry_deadline=retry_deadline,
            initial_backoff=initial_backoff,
            max_backoff=max_backoff,
            shutdown_timeout=shutdown_timeout,
            meter_provider=meter_provider,
        )

    def __repr__(self) -> str:
        return f"LangfuseSink({self.base_url!r})"

    def prepare(self, record: ScoreRecord) -> dict[str, Any]:
        """The Langfuse score for one score, with the API's field names."""
        result = record.result
        span = target_span(record) if result.turns is None else None
        if result.status != "scored" or result.score is None:
            raise SkipRecord("unscored")
        if not math.isfinite(result.score):
            raise SkipRecord("invalid_score")  # JSON has no NaN or infinity
        explanation = self.content.text(result.reason)
        parts = [p for p in (result.label, explanation) if p]
        metadata = score_metadata(record, self.content)
        if result.label:
            metadata["label"] = result.label
        score: dict[str, Any] = {
            "name": result.scorer_id,
            "value": float(result.score),
            "dataType": "NUMERIC",
            "metadata": metadata,
        }
        if span is not None:
            score.update(
                id=score_key(record, span), traceId=span.trace_id, observationId=span.span_id
            )
        else:
            assert result.turns is not None
            score.update(id=conversation_key(record), sessionId=result.turns.conversation_id)
        if parts:
            score["comment"] = ": ".join(parts)
        if self.environment:
            score["environment"] = self.environment
        return score

    def deliver(self, batch: Sequence[dict[str, Any]]) -> DeliveryResult | None:
        """``POST /api/public/scores`` through the SDK's API client."""
        import httpx
        from langfuse.api.core import ApiError
        from langfuse.api.scores.types.create_score_batch_results import (
            CreateScoreBatchResults,
        )

        api = self._get_api()
        self._last_cut = False
        try:
            with request_errors(httpx, self._masked):
                # Items are JSON-ready dicts with the API's field names, as the SDK's own
                # score consumer sends them; retries are this sink's (the client's are off).
                response = api.scores.create(
                    request=list(batch), request_options={"max_retries": 0}
                )
        except ApiError as exc:
            status = exc.status_code
            # Mask first, cut after: a cut could otherwise leave a key's first characters.
            detail = (
                f"HTTP {status} from {self.base_url}: {self._redact.excerpt(str(exc.body), 300)}"
            )
            if self._last_cut:
                detail += f" (the answer was cut at {self.max_response_bytes:,} bytes)"
                if status is not None and 200 <= status < 300:
                    # A success answer too big to read: what it said is unknown.
                    return DeliveryResult(
                        failed=dict.fromkeys(range(len(batch)), "response_too_large"),
                        detail=detail,
                    )
            return refused_batch(status, batch, detail, self.deliver)
        if isinstance(response, CreateScoreBatchResults) and response.rejected:
            # Langfuse says how many it rejected, not which: the count is exact.
            rejected = min(response.rejected, len(batch))
            messages = self._redact.excerpt("; ".join(e.message for e in response.errors), 300)
            return DeliveryResult(
                failed=dict.fromkeys(range(len(batch) - rejected, len(batch)), "rejected"),
                detail=messages or None,
            )
        return None

    def _get_api(self) -> Any:
        if self._api is None:
            from importlib.metadata import version

            import httpx  # the SDK's HTTP package

            hooks = sync_response_hooks(self.max_response_bytes, self.timeout, module=httpx)

            def note_cut(response: Any) -> None:  # after the cap's hook: was the body cut?
                response.read()
                self._last_cut = was_cut(response)

            langfuse_version = version("langfuse")
            self._api = self._api_class(
                base_url=self.base_url,
                username=self.public_key,
                password=self._secret_key,
                x_langfuse_sdk_name="python",
                x_langfuse_sdk_version=langfuse_version,
                x_langfuse_public_key=self.public_key,
                timeout=self.timeout,
                httpx_client=httpx.Client(
                    timeout=self.timeout,
                    # An uncompressed answer is what the cap counts.
                    headers={"Accept-Encoding": "identity"},
                    event_hooks={
                        "request": hooks["request"],
                        "response": [*hooks["response"], note_cut],
                    },
                ),
            )
        return self._api

    def _masked(self, exc: BaseException) -> str | None:
        return self._redact(str(exc)) or None

    def close(self) -> None:
        """Close the HTTP client this sink created (a client you passed stays open)."""
        api, self._api = self._api, None
        if api is not None and self._client is None:
            wrapper = getattr(api, "_client_wrapper", None)
            http = getattr(getattr(wrapper, "httpx_client", None), "httpx_client", None)
            if http is not None:
                http.close()

    def after_fork_in_child(self) -> None:
        """Forget the parent's connections; a client you passed is kept."""
        if self._client is None:
            self._api = None


def _key_redactor(public_key: str | None, secret_key: str | None) -> Redactor:
    """Masks what Langfuse quotes back (an error body echoing the request): the keys, and
    the Basic credentials the API client builds from them."""
    keys = [k for k in (public_key, secret_key) if k]
    basic = (
        base64.b64encode(f"{public_key}:{secret_key}".encode()).decode("ascii")
        if len(keys) == 2
        else None
    )
    return Redactor([*keys, basic])
