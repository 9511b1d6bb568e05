"""Scores as Arize Phoenix span annotations: the score badges on the run's span."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import unquote, urlsplit

from livescore._errors import RetryLater, SkipRecord
from livescore._http import (
    DEFAULT_MAX_RESPONSE_BYTES,
    check_max_response_bytes,
    sync_response_hooks,
    was_cut,
)
from livescore._redaction import Redactor, header_secrets
from livescore._version import __version__
from livescore.sinks._base import ScoreRecord
from livescore.sinks._batching import (
    BatchingSink,
    DeliveryResult,
    check_request_timeout,
    refused_batch,
    request_errors,
)
from livescore.sinks._payload import ContentPolicy, score_metadata, target_span

if TYPE_CHECKING:
    import httpx2

__all__ = ("PhoenixSink", "phoenix_endpoint", "phoenix_headers")

DEFAULT_ENDPOINT = "http://localhost:6006"
"""Where Phoenix listens when nothing else is configured (its own clients' default)."""

# Phoenix's 404 body when a span (or a session) of the batch is not (yet) ingested.
_MISSING_SPANS = re.compile(r"Spans with IDs (?P<ids>[0-9a-fA-F, ]+) do not exist")
_MISSING_SESSIONS = re.compile(r"Sessions with IDs (?P<ids>.+?) do not exist")
_TRACES_PATH = re.compile(r"/+v1/traces/?$")


def phoenix_endpoint(endpoint: str | None = None) -> str:
    """Phoenix's base URL, resolved as Phoenix's own clients do.

    ``endpoint`` when given, else ``PHOENIX_ENDPOINT``, else ``PHOENIX_COLLECTOR_ENDPOINT``
    (a trailing ``/v1/traces`` is dropped: that variable may hold the OTLP URL), else
    ``http://localhost:6006``. ``OTEL_EXPORTER_OTLP_ENDPOINT`` is not read: it usually
    names a collector, not Phoenix.

    Raises:
        ValueError: The URL is not http(s).

    Example:
        >>> phoenix_endpoint("http://127.0.0.1:6006/v1/traces")
        'http://127.0.0.1:6006'
    """
    value = (
        endpoint
        or os.environ.get("PHOENIX_ENDPOINT")
        or os.environ.get("PHOENIX_COLLECTOR_ENDPOINT")
        or DEFAULT_ENDPOINT
    ).strip()
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"Phoenix's endpoint must be an http(s) URL, not {value!r}")
    return _TRACES_PATH.sub("", value.rstrip("/")) or value


def phoenix_headers(
    api_key: str | None = None, headers: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The headers Phoenix's clients send: ``PHOENIX_CLIENT_HEADERS`` and the API key.

    ``headers`` (else ``PHOENIX_CLIENT_HEADERS``, ``key=value`` pairs separated by commas,
    URL-encoded as in ``OTEL_EXPORTER_OTLP_HEADERS``), plus ``Authorization: Bearer`` with
    ``api_key`` (else ``PHOENIX_API_KEY``) unless an authorization header is already set.

    Example:
        >>> phoenix_headers("k-123", {"x-team": "search"})
        {'x-team': 'search', 'Authorization': 'Bearer k-123'}
    """
    result = (
        dict(headers)
        if headers is not None
        else _parse_headers(os.environ.get("PHOENIX_CLIENT_HEADERS", ""))
    )
    key = api_key or os.environ.get("PHOENIX_API_KEY")
    if key and "authorization" not in (name.lower() for name in result):
        result["Authorization"] = f"Bearer {key}"
    return result


def _parse_headers(text: str) -> dict[str, str]:
    headers: dict[str, str] = {}
    for pair in text.split(","):
        name, sep, value = pair.partition("=")
        if sep and name.strip():
            headers[unquote(name.strip())] = unquote(value.strip())
    return headers


class PhoenixSink(BatchingSink[dict[str, Any]]):
    """Each score becomes a span annotation in Arize Phoenix: a badge on the run's span.

    The annotation goes on the span the evaluation span nests under (the run's span,
    ``record.parent``): name = the scorer id; annotator kind ``LLM`` when the scorer has a
    judge, else ``CODE``; result = score, label and explanation; metadata = the judge model
    and its usage, the scorer version, the sample rate, the run id and the scorer's own
    facts (``livescore.claims.total``…), under the evaluation span's attribute names.

    Delivery is batched (``POST /v1/span_annotations?sync=true``, up to ``max_batch``
    annotations per request) on the sink's own thread, never on the agent's or the
    scorer's. The identifier ``"{identifier_prefix}:{run id}"`` makes a retry update the
    same annotation (Phoenix upserts on name, span and identifier), keeps the scores of two
    runs that share a span apart, and leaves annotations made by people alone. Phoenix
    answers 404 while the run's span is not ingested yet (a score can be faster than the
    span exporter): those annotations are retried with backoff until ``retry_deadline``,
    then counted as failed (``span_not_found``); the rest of the batch goes at once.
    Network errors, 429 and 5xx are retried the same way; other answers (401, 403…) fail
    the batch for good, logged once with Phoenix's message (credentials in it masked: the
    API key, any header value named like one, anything that looks like a key). A batch
    refused with 400 or 422 is sent again one annotation at a time, so only the bad one
    fails. Each request has a total deadline of ``timeout`` seconds, checked while the
    body arrives (a server trickling its answer cannot stall delivery), and at most
    ``max_response_bytes`` of an answer are read (a bigger one is cut there and its
    connection dropped).

    A conversation's score (``result.turns`` set) becomes a *session annotation* instead
    (``POST /v1/session_annotations?sync=true``), on the Phoenix session whose id is the
    conversation id. Phoenix files a trace under a session when one of its spans carries
    ``session.id`` (OpenInference instrumentations set it from your session id); the
    conversation's evaluation span carries it too, so the session exists once that span is
    ingested (until then Phoenix answers 404, retried like a span not yet ingested). Its
    identifier names the turns covered (``"{identifier_prefix}:{conversation id}:1-4"``):
    a conversation scored again after it resumed gets a second annotation beside the
    first. The metadata names the last covered turn's trace and span.

    Failed and skipped scores have no score to show: they are counted as skipped
    (``unscored``) unless ``include_unscored=True``, which annotates them too, with the
    label ``failed`` or ``skipped``, the error or skip reason as explanation and the
    status, error type and failed step in the metadata. Runs without a span and runs of
    unsampled traces are skipped (``no_span``, ``trace_not_sampled``): no dashboard has
    their span.

    Configured like Phoenix's clients: :func:`phoenix_endpoint` (``PHOENIX_ENDPOINT``,
    ``PHOENIX_COLLECTOR_ENDPOINT``) and :func:`phoenix_headers` (``PHOENIX_API_KEY``,
    ``PHOENIX_CLIENT_HEADERS``), or the arguments. HTTP goes through ``httpx2``, which
    livescore already depends on; no Phoenix package is needed.

    Args:
        endpoint: Phoenix's base URL (``http://localhost:6006``).
        api_key: Sent as ``Authorization: Bearer``.
        headers: Extra HTTP headers (instead of ``PHOENIX_CLIENT_HEADERS``).
        identifier_prefix: The start of each annotation's identifier.
        include_unscored: Annotate failed and skipped scores too.
        capture_content: What explanations (and error messages) the annotations carry:
            ``"full"``, ``"truncated"`` (cut at ``max_content_chars``) or ``"none"``.
        max_content_chars: The cut for ``"truncated"``.
        timeout: Seconds per HTTP request, all of it: connecting, sending, and reading
            the answer to its end.
        max_response_bytes: The most bytes read of one answer (1 MB).
        max_queue: See :class:`BatchingSink` (so are the next arguments).
        max_batch: Annotations per request.
        flush_interval: Seconds an annotation may wait for its batch.
        retry_deadline: Seconds after the first try past which nothing is retried; covers
            the span exporter's delay (5 s by default for ``BatchSpanProcessor``).
        initial_backoff: Seconds before the first retry.
        max_backoff: The longest wait between tries.
        shutdown_timeout: Seconds the exit-time shutdown may take.
        meter_provider: Where ``livescore.sink.records`` goes.

    Raises:
        ValueError: The endpoint is not an http(s) URL, or a setting is out of range.

    Example:
        >>> from livescore.sinks import PhoenixSink
        >>> sink = PhoenixSink("http://127.0.0.1:6006")
        >>> sink.url
        'http://127.0.0.1:6006/v1/span_annotations'
        >>> sink.shutdown()
    """

    name = "phoenix"

    def __init__(
        self,
        endpoint: str | None = None,
        *,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        identifier_prefix: str = "livescore",
        include_unscored: bool = False,
        capture_content: Literal["full", "truncated", "none"] = "full",
        max_content_chars: int = 1000,
        timeout: float = 10.0,
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
        if not isinstance(identifier_prefix, str) or not identifier_prefix:
            raise ValueError("identifier_prefix must be a non-empty string")
        self.timeout = check_request_timeout(timeout)
        self.endpoint = phoenix_endpoint(endpoint)
        self.url = f"{self.endpoint}/v1/span_annotations"
        self.sessions_url = f"{self.endpoint}/v1/session_annotations"
        self.identifier_prefix = identifier_prefix
        self.include_unscored = bool(include_unscored)
        self.content = ContentPolicy(capture_content, max_content_chars)
        self.max_response_bytes = check_max_response_bytes(max_response_bytes)
        self._headers = {
            "User-Agent": f"livescore/{__version__}",
            # An uncompressed answer is what the cap counts (a compressed one is decoded
            # under the cap all the same).
            "Accept-Encoding": "identity",
            **phoenix_headers(api_key, headers),
        }
        # What Phoenix quotes back (a 401 body echoing the request) is masked with these.
        self._redact = Redactor(header_secrets(self._headers))
        self._client: httpx2.Client | None = None
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
        return f"PhoenixSink({self.endpoint!r})"

    def prepare(self, record: ScoreRecord) -> dict[str, Any]:
        """The span annotation for one score, or a conversation's session annotation (see
        the class docstring)."""
        result = record.result
        span = target_span(record) if result.turns is None else None
        outcome: dict[str, Any] = {}
        if result.status == "scored":
            if result.score is not None:
                if not math.isfinite(result.score):
                    raise SkipRecord("invalid_score")  # JSON has no NaN or infinity
                outcome["score"] = float(result.score)
            if result.label:
                outcome["label"] = result.label
            explanation = self.content.text(result.reason)
        elif not self.include_unscored:
            raise SkipRecord("unscored")
        else:
            outcome["label"] = result.status
            explanation = self.content.text(
                result.error if result.status == "failed" else result.reason
            )
        if explanation:
            outcome["explanation"] = explanation
        if not outcome:
            raise SkipRecord("empty")  # Phoenix needs a score, a label or an explanation
        annotation = {
            "name": result.scorer_id,
            "annotator_kind": "LLM" if result.judge_model else "CODE",
            "result": outcome,
            "metadata": score_metadata(record, self.content),
        }
        if span is not None:
            annotation["span_id"] = span.span_id
            annotation["identifier"] = f"{self.identifier_prefix}:{record.run.run_id}"
            return annotation
        turns = result.turns
        assert turns is not None
        annotation["session_id"] = turns.conversation_id
        annotation["identifier"] = (
            f"{self.identifier_prefix}:{turns.conversation_id}:{turns.first}-{turns.last}"
        )
        return annotation

    def deliver(self, batch: Sequence[dict[str, Any]]) -> DeliveryResult | None:
        """``POST /v1/span_annotations?sync=true`` with the batch's span annotations, and
        ``/v1/session_annotations`` with its session annotations; see the class docstring."""
        spans = [i for i, item in enumerate(batch) if "session_id" not in item]
        sessions = [i for i, item in enumerate(batch) if "session_id" in item]
        if not sessions:
            return self._deliver_kind(batch, "span_id")
        if not spans:
            return self._deliver_kind(batch, "session_id")
        merged = DeliveryResult()
        for indices, key in ((spans, "span_id"), (sessions, "session_id")):
            try:
                answer = self._deliver_kind([batch[i] for i in indices], key)
            except RetryLater as later:
                answer = DeliveryResult(
                    retry=dict.fromkeys(range(len(indices)), later.reason),
                    retry_after=later.retry_after,
                    detail=later.detail,
                )
            if answer is not None:
                merged = DeliveryResult(
                    retry={**merged.retry, **{indices[i]: r for i, r in answer.retry.items()}},
                    failed={**merged.failed, **{indices[i]: r for i, r in answer.failed.items()}},
                    retry_after=answer.retry_after or merged.retry_after,
                    detail=answer.detail or merged.detail,
                )
        return merged if merged.retry or merged.failed else None

    def _deliver_kind(self, batch: Sequence[dict[str, Any]], key: str) -> DeliveryResult | None:
        """One request: span annotations (``key="span_id"``) or session annotations."""
        import httpx2

        url = self.url if key == "span_id" else self.sessions_url
        client = self._client
        if client is None:
            client = self._client = httpx2.Client(
                timeout=self.timeout,
                headers=self._headers,
                event_hooks=sync_response_hooks(self.max_response_bytes, self.timeout),
            )
        with request_errors(httpx2, self._masked):
            response = client.post(url, params={"sync": "true"}, json={"data": list(batch)})
        status = response.status_code
        if 200 <= status < 300:
            return None
        # Mask first, cut after: a cut could otherwise leave a key's first characters.
        detail = f"HTTP {status} from {url}: {self._redact.excerpt(response.text, 300)}"
        if was_cut(response):
            detail += f" (the answer was cut at {self.max_response_bytes:,} bytes)"
        if status == 404:
            pattern = _MISSING_SPANS if key == "span_id" else _MISSING_SESSIONS
            found = pattern.search(response.text)
            if found is None:  # not Phoenix's answer (a wrong path, a proxy): may pass
                raise RetryLater("http_404", detail=detail)
            missing = {s.strip() for s in found.group("ids").split(",") if s.strip()}
            if key == "span_id":
                missing = {s.lower() for s in missing}
            return self._deliver_present(batch, missing, detail, key)
        return refused_batch(
            status,
            batch,
            detail,
            lambda items: self._deliver_kind(items, key),
            retry_after=_retry_after(response.headers),
        )

    def _deliver_present(
        self, batch: Sequence[dict[str, Any]], missing: set[str], detail: str, key: str
    ) -> DeliveryResult:
        """Phoenix refused the batch for spans (or sessions) it does not have yet: those
        annotations wait for a retry; the others are sent again right away."""
        waiting = [i for i, item in enumerate(batch) if item[key] in missing]
        if not waiting:  # Phoenix named spans this batch does not hold: retry it all
            return DeliveryResult(retry=dict.fromkeys(range(len(batch)), "http_404"))
        present = [i for i, item in enumerate(batch) if item[key] not in missing]
        reason = "span_not_found" if key == "span_id" else "session_not_found"
        retry = dict.fromkeys(waiting, reason)
        failed: dict[int, str] = {}
        detail += (
            " (the run's span never reached this Phoenix: are the spans exported there, "
            "and is the trace sampled?)"
            if key == "span_id"
            else " (no span of this session reached this Phoenix yet: is the conversation's "
            "evaluation span exported there?)"
        )
        if present:
            try:
                again = self._deliver_kind([batch[i] for i in present], key)
            except RetryLater as later:
                again = DeliveryResult(
                    retry=dict.fromkeys(range(len(present)), later.reason), detail=later.detail
                )
            if again is not None:
                retry.update({present[i]: reason for i, reason in again.retry.items()})
                failed.update({present[i]: reason for i, reason in again.failed.items()})
                detail = again.detail or detail
        return DeliveryResult(retry=retry, failed=failed, detail=detail)

    def _masked(self, exc: BaseException) -> str | None:
        return self._redact(str(exc)) or None

    def close(self) -> None:
        """Close the HTTP client."""
        client, self._client = self._client, None
        if client is not None:
            client.close()

    def after_fork_in_child(self) -> None:
        """Forget the parent's connections (closing them would close the parent's)."""
        self._client = None


def _retry_after(headers: Mapping[str, str]) -> float | None:
    value = headers.get("retry-after")
    try:
        return max(float(value), 0.0) if value is not None else None
    except ValueError:
        return None
