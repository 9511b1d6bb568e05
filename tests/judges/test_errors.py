"""Judge errors: one class per kind, each with its ``error_type``; messages say what happened
once and say it right."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from livescore import LivescoreError
from livescore._errors import judge_error
from livescore.judges import (
    JudgeAuthError,
    JudgeBadRequestError,
    JudgeConfigError,
    JudgeConnectionError,
    JudgeError,
    JudgeRateLimitError,
    JudgeResponseError,
    JudgeServerError,
    JudgeTimeoutError,
    OpenAIJudge,
)
from livescore.testing import OpenAITestServer, Reply

# The span ``error.type`` values users filter on: they must never change.
ERROR_TYPES = {
    JudgeTimeoutError: "timeout",
    JudgeRateLimitError: "rate_limited",
    JudgeServerError: "server_error",
    JudgeConnectionError: "connection_error",
    JudgeAuthError: "auth_error",
    JudgeBadRequestError: "bad_request",
    JudgeResponseError: "invalid_response",
    JudgeConfigError: "config",
}


class Claims(BaseModel):
    claims: list[str]


def test_each_kind_is_a_judge_error_with_its_error_type() -> None:
    for cls, error_type in ERROR_TYPES.items():
        assert issubclass(cls, JudgeError)
        assert issubclass(cls, LivescoreError)
        assert cls.error_type == error_type
        error = judge_error(error_type, "m")
        assert type(error) is cls
        assert error.error_type == error_type
    assert issubclass(JudgeConfigError, ValueError)
    assert JudgeError.error_type == "judge_error"
    other = judge_error("quota_exhausted", "m")
    assert (type(other), other.error_type) == (JudgeError, "quota_exhausted")
    # The old spelling keeps working.
    assert JudgeError("m", error_type="timeout").error_type == "timeout"


FAULTS: list[tuple[Any, type[JudgeError], int | None]] = [
    (Reply.rate_limited(retry_after=0.01), JudgeRateLimitError, 429),
    (Reply.server_error(503), JudgeServerError, 503),
    (Reply.hang(), JudgeTimeoutError, None),
    (Reply.drop(), JudgeConnectionError, None),
    (Reply.error(401, "bad key"), JudgeAuthError, 401),
    (Reply.error(404, "no such model"), JudgeBadRequestError, 404),
    (Reply.broken_body(), JudgeResponseError, None),
]


@pytest.mark.anyio
@pytest.mark.parametrize(("reply", "kind", "status"), FAULTS, ids=[f[1].__name__ for f in FAULTS])
async def test_users_can_catch_one_kind(
    reply: Reply, kind: type[JudgeError], status: int | None
) -> None:
    async with OpenAITestServer(responder=lambda body: reply) as server:
        judge = server.judge(max_retries=1, timeout=0.5)
        try:
            await judge.generate_text(system="s", prompt="p")
        except kind as caught:
            error: JudgeError = caught
        else:  # pragma: no cover - the assertion below reports it
            pytest.fail(f"no {kind.__name__}")
    assert error.error_type == ERROR_TYPES[kind]
    assert error.status_code == status
    assert error.usage.calls >= 1


@pytest.mark.anyio
async def test_nothing_listening_is_a_connection_error() -> None:
    judge = OpenAIJudge("m", base_url="http://127.0.0.1:9/v1", max_retries=0, timeout=5)
    with pytest.raises(JudgeConnectionError, match="connection failed"):
        await judge.generate_text(system="s", prompt="p")


@pytest.mark.anyio
@pytest.mark.parametrize("reply", [Reply.hang(), Reply.server_error(), Reply.drop()])
async def test_the_judge_is_named_once_after_retries(reply: Reply) -> None:
    async with OpenAITestServer(responder=lambda body: reply) as server:
        judge = server.judge(max_retries=2, timeout=0.3)
        with pytest.raises(JudgeError) as caught:
            await judge.generate_text(system="s", prompt="p")
        url = server.base_url
    message = str(caught.value)
    assert message.startswith(f"judge test-model at {url}: ")
    assert message.count("judge test-model at") == 1, message
    assert message.count("(after 3 attempts)") == 1, message
    assert caught.value.usage.calls == 3


HTML = (
    b"<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head>"
    b"<body><h1>502 Bad Gateway</h1><p>nginx</p></body></html>"
)


@pytest.mark.anyio
async def test_an_html_page_is_called_an_html_page_not_an_empty_answer() -> None:
    page = Reply.raw_body(HTML, content_type="text/html")
    async with OpenAITestServer(responder=lambda body: page) as server:
        judge = server.judge(max_retries=1)
        with pytest.raises(JudgeResponseError) as caught:
            await judge.generate_object(system="s", prompt="p", schema=Claims)
    message = str(caught.value)
    assert "HTTP 200 with a body that is an HTML page" in message
    assert "502 Bad Gateway" in message  # a short excerpt says what the page was
    assert "empty" not in message
    assert len(message) < 400
    assert caught.value.usage.calls == 2  # a proxy's page is a passing fault: retried


@pytest.mark.anyio
async def test_an_html_page_then_a_real_answer_succeeds() -> None:
    replies = [Reply.raw_body(HTML, content_type="text/html"), {"claims": ["ok"]}]
    async with OpenAITestServer(replies) as server:
        reply = await server.judge().generate_object(system="s", prompt="p", schema=Claims)
    assert (reply.value.claims, reply.usage.calls) == (["ok"], 2)


@pytest.mark.anyio
async def test_json_that_is_not_a_completion_says_so() -> None:
    odd = Reply.raw_body(b'{"error": "model is loading"}')
    async with OpenAITestServer([odd]) as server:
        with pytest.raises(JudgeResponseError, match=r"not a chat completion: .*model is loading"):
            await server.judge(max_retries=0).generate_text(system="s", prompt="p")


@pytest.mark.anyio
async def test_an_empty_answer_is_still_called_empty() -> None:
    async with OpenAITestServer([Reply.empty(), Reply.empty()]) as server:
        with pytest.raises(JudgeResponseError, match="the answer was empty"):
            await server.judge().generate_object(system="s", prompt="p", schema=Claims)
