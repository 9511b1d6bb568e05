"""Both dashboard sinks against hostile answers: endless bodies, a byte-a-second trickle,
and servers that quote the request's credentials back in an error."""

from __future__ import annotations

import base64
import logging
import time
from collections.abc import Iterator
from typing import Any

import pytest
from _sink_support import make_record, span_id
from score_api_doubles import LangfuseTestReceiver, PhoenixAnnotationsTestDouble, Reply

from livescore.sinks import BatchingSink, LangfuseSink, PhoenixSink

PHOENIX_KEY = "phx_Zq9XvL2mN8pR4tY7wB3c"
LANGFUSE_PUBLIC = "pk-lf-7hQ2xZ9vK4mL8Hn4Tb8W"
LANGFUSE_SECRET = "sk-lf-Wq1Ls6Yd3Kx9Mv2Rc7Gf"
FAST = {"initial_backoff": 0.01, "max_backoff": 0.05}
CAP = 1_000_000


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "PHOENIX_ENDPOINT",
        "PHOENIX_COLLECTOR_ENDPOINT",
        "PHOENIX_API_KEY",
        "PHOENIX_CLIENT_HEADERS",
        "LANGFUSE_PUBLIC_KEY",
        "LANGFUSE_SECRET_KEY",
        "LANGFUSE_BASE_URL",
        "LANGFUSE_HOST",
        "LANGFUSE_TIMEOUT",
    ):
        monkeypatch.delenv(name, raising=False)


def endless() -> Iterator[bytes]:
    """A body that never ends (until the reader hangs up)."""
    chunk = b"x" * 65536
    while True:
        yield chunk


def trickle() -> Iterator[bytes]:
    """A byte every 0.2 s: each read returns long before any per-read timeout."""
    for _ in range(3000):
        yield b"x"
        time.sleep(0.2)


def _phoenix(server: PhoenixAnnotationsTestDouble, **options: Any) -> PhoenixSink:
    return PhoenixSink(server.url, api_key=PHOENIX_KEY, **(FAST | options))


def _langfuse(server: LangfuseTestReceiver, **options: Any) -> LangfuseSink:
    return LangfuseSink(
        public_key=LANGFUSE_PUBLIC,
        secret_key=LANGFUSE_SECRET,
        base_url=server.url,
        **(FAST | options),
    )


def _deliver_one(sink: BatchingSink[Any]) -> None:
    sink.send(make_record(1))
    # Before: an endless or trickled answer was read for ever, and this never returned.
    assert sink.flush(30), "the delivery never ended"
    sink.shutdown(5)


@pytest.mark.parametrize("which", ["phoenix", "langfuse"])
def test_an_endless_error_body_is_read_up_to_the_cap_only(which: str) -> None:
    server: Any = (
        PhoenixAnnotationsTestDouble({span_id(1)})
        if which == "phoenix"
        else (LangfuseTestReceiver())
    )
    with server:
        server.scripted = [Reply(401, chunks=endless)]
        sink = _phoenix(server) if which == "phoenix" else _langfuse(server)
        _deliver_one(sink)
        sent = server.bytes_sent
    assert dict(sink.stats().failed_by_reason) == {"http_401": 1}
    # The reader hung up after 1 MB: what reached the socket is the cap plus the kernel's
    # socket buffers, never the body (before: 200 MB read, 624 MB to 4.2 GB of memory).
    assert CAP <= sent < 40 * CAP


@pytest.mark.parametrize("which", ["phoenix", "langfuse"])
def test_a_trickled_answer_times_out_at_the_request_deadline(which: str) -> None:
    server: Any = (
        PhoenixAnnotationsTestDouble({span_id(1)})
        if which == "phoenix"
        else (LangfuseTestReceiver())
    )
    with server:
        server.scripted = [Reply(200, chunks=trickle) for _ in range(5)]
        options = {"timeout": 1.0, "retry_deadline": 0.1}
        sink = _phoenix(server, **options) if which == "phoenix" else _langfuse(server, **options)
        _deliver_one(sink)
    assert dict(sink.stats().failed_by_reason) == {"timeout": 1}


def _leaks(text: str, *secrets: str) -> list[str]:
    """Each secret, or its first 8 characters, found in ``text``."""
    return [secret for secret in secrets if secret[:8] in text]


def test_phoenix_never_logs_its_key_when_phoenix_quotes_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with PhoenixAnnotationsTestDouble({span_id(1)}) as server:
        server.scripted = [Reply(401, echo=True)]
        sink = _phoenix(server)
        with caplog.at_level(logging.WARNING, logger="livescore.sinks"):
            _deliver_one(sink)
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "HTTP 401" in logged  # the failure is logged, with Phoenix's answer
    assert "***" in logged  # the echoed header is there, masked
    assert _leaks(logged, PHOENIX_KEY) == []


def test_langfuse_never_logs_its_keys_when_langfuse_quotes_them(
    caplog: pytest.LogCaptureFixture,
) -> None:
    token = base64.b64encode(f"{LANGFUSE_PUBLIC}:{LANGFUSE_SECRET}".encode()).decode()
    with LangfuseTestReceiver() as server:
        server.scripted = [Reply(401, echo=True)]
        sink = _langfuse(server)
        with caplog.at_level(logging.WARNING, logger="livescore.sinks"):
            _deliver_one(sink)
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "HTTP 401" in logged
    assert _leaks(logged, LANGFUSE_PUBLIC, LANGFUSE_SECRET, token) == []


def test_a_long_error_is_masked_before_it_is_cut(caplog: pytest.LogCaptureFixture) -> None:
    # The key straddles the 300-character cut: cutting first (before) left its first 22
    # characters in the log, where no pattern could recognise them any more.
    body = "a" * 270 + f" token={PHOENIX_KEY} and more"
    with PhoenixAnnotationsTestDouble({span_id(1)}) as server:
        server.scripted = [Reply(403, body)]
        sink = _phoenix(server)
        with caplog.at_level(logging.WARNING, logger="livescore.sinks"):
            _deliver_one(sink)
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "HTTP 403" in logged
    assert _leaks(logged, PHOENIX_KEY) == []
