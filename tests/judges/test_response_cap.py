"""The bytes read per judge response are capped: a hostile or broken server cannot fill the
memory of the process the agent runs in, on both HTTP transports."""

from __future__ import annotations

import gzip
import json
import tracemalloc
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from livescore.judges import (
    JudgeConfigError,
    JudgeError,
    JudgeResponseError,
    OpenAIJudge,
    _transport,
)
from livescore.judges._openai import DEFAULT_MAX_RESPONSE_BYTES
from livescore.testing import OpenAITestServer, Reply

MB = 1_000_000
# Generous: the cap is 1 MB, and what is read is buffered at most twice (chunks, then joined).
# Before the cap, a 50 MB body grew the process by hundreds of MB.
PEAK_BOUND = 16 * MB


class Claims(BaseModel):
    claims: list[str]


@pytest.fixture(params=["aiohttp", "httpx"])
def transport(request: pytest.FixtureRequest) -> str:
    if request.param == "aiohttp" and not _transport.aiohttp_installed():
        pytest.skip("aiohttp is not installed")
    return str(request.param)


def _gzip_bomb() -> bytes:
    # 50 MB of JSON whitespace compresses to ~50 KB: small on the wire, huge when inflated.
    return gzip.compress(b"{" + b" " * (50 * MB) + b"}", compresslevel=6)


OVERSIZED = {
    "endless chunked body": lambda: Reply.large_body(None),
    "50 MB with content-length": lambda: Reply.large_body(50 * MB, chunked=False),
    "50 MB chunked": lambda: Reply.large_body(50 * MB),
    "gzip bomb": lambda: Reply.raw_body(_gzip_bomb(), headers={"content-encoding": "gzip"}),
}


class _PeakMemory:
    """Peak Python memory growth (all threads) during a ``with`` block."""

    def __init__(self) -> None:
        self.growth = 0

    def __enter__(self) -> _PeakMemory:
        tracemalloc.start()
        tracemalloc.reset_peak()
        self._start = tracemalloc.get_traced_memory()[0]
        return self

    def __exit__(self, *exc: object) -> None:
        self.growth = tracemalloc.get_traced_memory()[1] - self._start
        tracemalloc.stop()


@pytest.fixture
def peak() -> Iterator[_PeakMemory]:
    yield _PeakMemory()
    if tracemalloc.is_tracing():
        tracemalloc.stop()


@pytest.mark.anyio
@pytest.mark.parametrize("make_reply", OVERSIZED.values(), ids=OVERSIZED.keys())
async def test_an_oversized_response_fails_at_the_cap_without_reading_the_rest(
    transport: str, make_reply: Any, peak: _PeakMemory
) -> None:
    reply = make_reply()
    async with OpenAITestServer(["warm-up", reply]) as server:
        judge = server.judge(transport=transport, max_retries=2, timeout=30)
        await judge.generate_text(system="s", prompt="p")  # the client exists before measuring
        with peak, pytest.raises(JudgeResponseError) as caught:
            await judge.generate_object(system="s", prompt="p", schema=Claims)
    error = caught.value
    assert error.error_type == "invalid_response"
    assert "max_response_bytes (1,000,000 bytes)" in str(error)
    assert error.usage.calls == 1  # a server that sends too much is not asked again
    assert peak.growth < PEAK_BOUND, f"grew {peak.growth / MB:.1f} MB"


@pytest.mark.anyio
async def test_the_memory_check_can_fail_when_the_cap_is_raised(peak: _PeakMemory) -> None:
    # The same measurement with a 64 MB cap reads the 50 MB body whole: the bound above
    # really separates a capped read from an uncapped one.
    async with OpenAITestServer(["warm-up", Reply.large_body(50 * MB, chunked=False)]) as server:
        judge = server.judge(max_retries=0, timeout=30, max_response_bytes=64 * MB)
        await judge.generate_text(system="s", prompt="p")
        with peak, pytest.raises(JudgeError) as caught:
            await judge.generate_text(system="s", prompt="p")
    assert "not JSON" in str(caught.value)  # it was read, then found not to be JSON
    assert peak.growth > 40 * MB


@pytest.mark.anyio
async def test_the_cap_is_configurable_and_a_reply_under_it_is_read(transport: str) -> None:
    answer = json.dumps({"claims": ["x" * 3000]})
    async with OpenAITestServer([answer, answer]) as server:
        small = server.judge(transport=transport, max_response_bytes=2048, max_retries=0)
        with pytest.raises(JudgeResponseError, match=r"max_response_bytes \(2,048 bytes\)"):
            await small.generate_object(system="s", prompt="p", schema=Claims)
        default = server.judge(transport=transport)
        reply = await default.generate_object(system="s", prompt="p", schema=Claims)
    assert reply.value.claims == ["x" * 3000]
    assert DEFAULT_MAX_RESPONSE_BYTES == MB


@pytest.mark.anyio
async def test_a_compressed_reply_under_the_cap_is_decoded(transport: str) -> None:
    completion = {
        "id": "chatcmpl-gz",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": '{"claims": ["zipped"]}'},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2},
    }
    body = gzip.compress(json.dumps(completion).encode())
    async with OpenAITestServer(
        [Reply.raw_body(body, headers={"content-encoding": "gzip"})]
    ) as server:
        reply = await server.judge(transport=transport).generate_object(
            system="s", prompt="p", schema=Claims
        )
    assert reply.value.claims == ["zipped"]
    assert server.headers[0]["accept-encoding"] == "identity"


def test_a_cap_too_small_for_any_completion_is_a_config_error() -> None:
    with pytest.raises(JudgeConfigError, match="max_response_bytes"):
        OpenAIJudge("m", base_url="http://127.0.0.1:9/v1", max_response_bytes=10)
