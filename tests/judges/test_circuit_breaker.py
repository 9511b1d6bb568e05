"""The judge stops calling a server it cannot reach, and notices when it is back.

A refused port, a server that drops every connection and one that never answers each open
the circuit after a few attempts in a row; later calls then fail at once as
``connection_error`` (no request sent), one probe every ``circuit_probe_interval`` checks the
server, and a probe that gets an answer closes the circuit. Real servers on 127.0.0.1: a
port nothing listens on, and :class:`~livescore.testing.OpenAITestServer` hanging or
dropping.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from livescore.judges import JudgeConnectionError, OpenAIJudge
from livescore.testing import OpenAITestServer, Reply

pytestmark = pytest.mark.usefixtures("no_openai_env", "http_transport")


async def _ask(judge: OpenAIJudge) -> str:
    return (await judge.generate_text(system="s", prompt="p")).value


async def _failure(judge: OpenAIJudge) -> JudgeConnectionError:
    with pytest.raises(JudgeConnectionError) as info:
        await _ask(judge)
    return info.value


@pytest.mark.anyio
async def test_a_refused_port_is_named_a_refused_connection(refused_url: str) -> None:
    judge = OpenAIJudge("m", base_url=f"{refused_url}/v1", backoff_base=0.01)
    error = await _failure(judge)
    # Before: "connection failed (ConnectTimeout)" on the aiohttp transport.
    assert "connection refused" in str(error)
    assert "Timeout" not in str(error)
    assert error.error_type == "connection_error"


@pytest.mark.anyio
async def test_a_refused_port_opens_the_circuit_and_later_calls_fail_at_once(
    refused_url: str,
) -> None:
    judge = OpenAIJudge(
        "m",
        base_url=f"{refused_url}/v1",
        backoff_base=0.01,
        circuit_failures=3,
        circuit_probe_interval=60,
    )
    assert judge.unreachable is None
    first = await _failure(judge)
    assert first.usage.calls == 3  # the third attempt in a row opened it: no fourth
    assert judge.unreachable == "connection refused"
    for _ in range(20):
        later = await _failure(judge)
        # Before: each of them made 4 attempts with backoff (50 items: 200 calls, 34 s).
        assert later.usage.calls == 0
        assert later.error_type == "connection_error"
        assert "unreachable (connection refused" in str(later)


@pytest.mark.anyio
async def test_a_hanging_server_opens_the_circuit_after_a_few_timeouts() -> None:
    with OpenAITestServer(responder=lambda body: Reply.hang(30)) as server:
        judge = server.judge(timeout=0.3, circuit_failures=2, circuit_probe_interval=60)
        errors: list[Exception] = []

        async def one() -> None:
            try:
                await _ask(judge)
            except Exception as exc:
                errors.append(exc)

        async with anyio.create_task_group() as tg:
            for _ in range(12):
                tg.start_soon(one)
        requests = len(server.requests)
    assert len(errors) == 12
    assert {getattr(e, "error_type", None) for e in errors} <= {"timeout", "connection_error"}
    assert judge.unreachable is not None
    assert "timed out" in judge.unreachable
    # At most the first wave reached the server (8 at once); before, 12 calls x 4 attempts.
    assert requests <= judge.max_concurrency + 1


@pytest.mark.anyio
async def test_a_probe_that_gets_an_answer_closes_the_circuit() -> None:
    with OpenAITestServer() as server:
        server.enqueue(*[Reply.drop() for _ in range(3)])
        server.enqueue("back again", "and again")
        judge = server.judge(max_retries=0, circuit_failures=3, circuit_probe_interval=0.2)
        for _ in range(3):
            await _failure(judge)
        assert judge.unreachable is not None
        sent = len(server.requests)
        refused = await _failure(judge)  # open: not sent
        assert refused.usage.calls == 0
        assert len(server.requests) == sent
        await anyio.sleep(0.3)  # the probe interval passes
        assert await _ask(judge) == "back again"  # the probe got through
        assert judge.unreachable is None
        assert await _ask(judge) == "and again"


@pytest.mark.anyio
async def test_an_http_error_answer_ends_a_streak() -> None:
    # The server is reachable when it answers, even with a 500: no circuit for that.
    with OpenAITestServer() as server:
        script: list[Any] = []
        for _ in range(4):
            script += [Reply.drop(), Reply.drop(), Reply.server_error()]
        server.enqueue(*script)
        judge = server.judge(max_retries=0, circuit_failures=3)
        for _ in range(len(script)):
            with pytest.raises(Exception):  # noqa: B017, PT011 - dropped, dropped, 500, ...
                await _ask(judge)
        assert judge.unreachable is None
        assert len(server.requests) == len(script)


def test_circuit_settings_are_checked() -> None:
    from livescore.judges import JudgeConfigError

    with pytest.raises(JudgeConfigError, match="circuit_failures"):
        OpenAIJudge("m", base_url="http://127.0.0.1:1/v1", circuit_failures=0)
    with pytest.raises(JudgeConfigError, match="circuit_probe_interval"):
        OpenAIJudge("m", base_url="http://127.0.0.1:1/v1", circuit_probe_interval=0)


@pytest.mark.parametrize("url", ["not a url", "ftp://host/v1", "http:///v1", "http://h:port/v1"])
def test_a_base_url_that_is_not_http_is_refused_at_once(url: str) -> None:
    from livescore.judges import JudgeConfigError

    # Before: accepted, then every call failed (and was retried) as a connection error.
    with pytest.raises(JudgeConfigError, match="base URL"):
        OpenAIJudge("m", base_url=url)
