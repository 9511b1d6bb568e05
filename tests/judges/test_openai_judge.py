"""OpenAIJudge: the real ``openai`` client against OpenAITestServer on 127.0.0.1."""

from __future__ import annotations

import gc
import json
import threading
from collections.abc import Iterator
from typing import Any

import anyio
import anyio.lowlevel
import anyio.to_thread
import openai
import pytest
from pydantic import BaseModel

from livescore.judges import (
    Judge,
    JudgeConfigError,
    JudgeError,
    JudgeResponseError,
    OpenAIJudge,
    _structured,
    _transport,
    resolve_judge,
)
from livescore.testing import OpenAITestServer, Reply, ScriptedJudge

SECRET = "sk-secret-0123456789abcdefABCDEF"


class Claims(BaseModel):
    claims: list[str]


class Verdict(BaseModel):
    statement: str
    verdict: str
    reason: str | None = None


class Verdicts(BaseModel):
    verdicts: list[Verdict]


class Labels(BaseModel):
    labels: dict[str, int]


pytestmark = pytest.mark.usefixtures("no_openai_env", "http_transport")


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The backoff waits the judge asked for, recorded instead of slept through."""
    recorded: list[float] = []

    async def record(seconds: float) -> None:
        recorded.append(seconds)
        await anyio.lowlevel.checkpoint()

    monkeypatch.setattr(_transport, "_sleep", record)
    return recorded


@pytest.fixture
def server() -> Iterator[OpenAITestServer]:
    with OpenAITestServer() as running:
        yield running


def fast_judge(server: OpenAITestServer, **kwargs: Any) -> OpenAIJudge:
    return server.judge(**kwargs)


def formats(server: OpenAITestServer) -> list[str | None]:
    return [(r.get("response_format") or {}).get("type") for r in server.requests]


# -- structured output ----------------------------------------------------------------------


@pytest.mark.anyio
async def test_json_schema_answer_is_validated_and_costed(server: OpenAITestServer) -> None:
    server.enqueue(Reply.json({"claims": ["Paris is in France"]}, usage=(40, 9)))
    judge = fast_judge(server)
    reply = await judge.generate_object(system="sys", prompt="Extract.", schema=Claims)
    assert reply.value == Claims(claims=["Paris is in France"])
    assert (reply.usage.calls, reply.usage.input_tokens, reply.usage.output_tokens) == (1, 40, 9)
    assert reply.usage.latency_s > 0
    assert reply.usage.cached == 0
    request = server.requests[0]
    assert request["model"] == "test-model"
    assert request["messages"] == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "Extract."},
    ]
    assert request["temperature"] == 0.0
    assert request["max_tokens"] == 2048
    response_format = request["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["name"] == "Claims"
    assert response_format["json_schema"]["strict"] is True
    assert response_format["json_schema"]["schema"]["additionalProperties"] is False


@pytest.mark.anyio
async def test_strict_schema_closes_nested_objects_and_requires_everything(
    server: OpenAITestServer,
) -> None:
    server.enqueue({"verdicts": [{"statement": "s", "verdict": "no", "reason": None}]})
    reply = await fast_judge(server).generate_object(system="s", prompt="p", schema=Verdicts)
    assert reply.value.verdicts[0].verdict == "no"
    sent = server.requests[0]["response_format"]["json_schema"]["schema"]
    item = sent["$defs"]["Verdict"]
    assert item["additionalProperties"] is False
    assert item["required"] == ["statement", "verdict", "reason"]
    assert "default" not in item["properties"]["reason"]


@pytest.mark.anyio
async def test_a_schema_that_cannot_be_strict_is_sent_non_strict(server: OpenAITestServer) -> None:
    server.enqueue({"labels": {"a": 1}})
    reply = await fast_judge(server).generate_object(system="s", prompt="p", schema=Labels)
    assert reply.value.labels == {"a": 1}
    assert server.requests[0]["response_format"]["json_schema"]["strict"] is False


@pytest.mark.anyio
async def test_falls_back_to_json_object_and_remembers_per_server() -> None:
    async with OpenAITestServer(reject_json_schema=True) as server:
        server.enqueue({"claims": ["a"]}, {"claims": ["b"]}, {"claims": ["c"]})
        judge = fast_judge(server)
        first = await judge.generate_object(system="sys", prompt="p", schema=Claims)
        assert first.value.claims == ["a"]
        assert first.usage.calls == 2  # the refused attempt counts
        assert formats(server) == ["json_schema", "json_object"]
        fallback = server.requests[1]
        assert fallback["response_format"]["schema"] == Claims.model_json_schema()
        system = fallback["messages"][0]["content"]
        assert system.startswith("sys")
        assert '"claims"' in system  # the schema is spelled out for the model

        second = await judge.generate_object(system="sys", prompt="p2", schema=Claims)
        assert second.usage.calls == 1
        # Another judge at the same server skips the refused rung too.
        third = await fast_judge(server).generate_object(system="sys", prompt="p3", schema=Claims)
        assert third.value.claims == ["c"]
        assert formats(server) == ["json_schema", "json_object", "json_object", "json_object"]


@pytest.mark.anyio
async def test_a_500_that_names_the_format_falls_back_like_llama_cpp() -> None:
    async with OpenAITestServer(reject_json_schema=True, reject_status=500) as server:
        server.enqueue({"claims": []})
        reply = await fast_judge(server).generate_object(system="s", prompt="p", schema=Claims)
    assert reply.value.claims == []
    assert formats(server) == ["json_schema", "json_object"]


@pytest.mark.anyio
async def test_falls_back_to_plain_prompting_when_no_format_is_accepted() -> None:
    def responder(body: dict[str, Any]) -> Reply:
        if "response_format" in body:
            return Reply.error(400, "Unrecognized request argument: response_format")
        return Reply.text('```json\n{"claims": ["x"]}\n```')

    async with OpenAITestServer(responder=responder) as server:
        judge = fast_judge(server)
        reply = await judge.generate_object(system="s", prompt="p", schema=Claims)
        assert reply.value.claims == ["x"]
        assert formats(server) == ["json_schema", "json_object", None]
        await judge.generate_object(system="s", prompt="p", schema=Claims)
        assert formats(server)[-1] is None
        assert len(server.requests) == 4


@pytest.mark.anyio
async def test_a_forced_rung_is_not_walked(server: OpenAITestServer) -> None:
    server.enqueue(Reply.error(400, "response_format json_schema not supported"))
    judge = fast_judge(server, structured_output="json_schema")
    with pytest.raises(JudgeError) as caught:
        await judge.generate_object(system="s", prompt="p", schema=Claims)
    assert caught.value.error_type == "bad_request"
    assert "json_schema" in str(caught.value)
    assert len(server.requests) == 1


@pytest.mark.anyio
async def test_json_object_rung_can_be_forced(server: OpenAITestServer) -> None:
    server.enqueue({"claims": []})
    judge = fast_judge(server, structured_output="json_object")
    await judge.generate_object(system="s", prompt="p", schema=Claims)
    assert formats(server) == ["json_object"]


# -- corrective retry ------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        (Reply.text('{"claims": ["a",'), "not valid JSON"),
        (Reply.json({"claim": ["a"]}), "claims: Field required"),
        (Reply.json({"claims": "a"}), "claims: Input should be a valid list"),
        (Reply.empty(), "empty"),
    ],
)
async def test_one_corrective_retry_then_success(
    server: OpenAITestServer, bad: Reply, problem: str
) -> None:
    server.enqueue(bad, {"claims": ["fixed"]})
    reply = await fast_judge(server).generate_object(system="s", prompt="p", schema=Claims)
    assert reply.value.claims == ["fixed"]
    assert reply.usage.calls == 2
    retry = server.requests[1]["messages"]
    assert [m["role"] for m in retry] == ["system", "user", "assistant", "user"]
    assert retry[2]["content"] == bad.content
    assert problem in retry[3]["content"]


@pytest.mark.anyio
async def test_the_corrective_retry_quotes_a_bounded_excerpt_of_a_huge_answer(
    server: OpenAITestServer,
) -> None:
    huge = '{"claims": "' + "y" * 900_000 + '"}'  # under the response cap, far over the quote
    server.enqueue(Reply.text(huge), {"claims": ["fixed"]})
    reply = await fast_judge(server).generate_object(system="s", prompt="p", schema=Claims)
    assert reply.value.claims == ["fixed"]
    quoted = server.requests[1]["messages"][2]["content"]
    assert quoted.startswith(huge[:2000])
    assert len(quoted) < 2100
    assert f"{len(huge) - 2000:,} more characters not shown" in quoted
    assert len(json.dumps(server.requests[1])) < 10_000


@pytest.mark.anyio
async def test_the_scripted_judge_shares_the_parsing_and_the_corrective_retry() -> None:
    # The same rules as over HTTP: fences stripped, a bad answer corrected once, with the
    # problem named in what the judge is asked the second time.
    judge = ScriptedJudge(['```json\n{"claims": 1}\n```', '```json\n{"claims": ["a"]}\n```'])
    reply = await judge.generate_object(system="s", prompt="Extract.", schema=Claims)
    assert (reply.value.claims, reply.usage.calls) == (["a"], 2)
    assert judge.prompts[0] == "Extract."
    assert judge.prompts[1].startswith("Extract.\n\nYour previous answer was invalid: ")
    assert "claims: Input should be a valid list" in judge.prompts[1]
    failing = ScriptedJudge(["no", "still no"], model_name="scripted-m")
    with pytest.raises(JudgeResponseError, match=r"^scripted-m gave an invalid answer twice"):
        await failing.generate_object(system="s", prompt="p", schema=Claims)


@pytest.mark.anyio
async def test_validate_rejection_is_corrected(server: OpenAITestServer) -> None:
    server.enqueue({"claims": ["a"]}, {"claims": ["a", "b"]})

    def two_claims(value: Claims) -> None:
        if len(value.claims) != 2:
            raise ValueError(f"expected 2 claims, got {len(value.claims)}")

    reply = await fast_judge(server).generate_object(
        system="s", prompt="p", schema=Claims, validate=two_claims
    )
    assert reply.value.claims == ["a", "b"]
    assert "expected 2 claims, got 1" in server.requests[1]["messages"][-1]["content"]


@pytest.mark.anyio
async def test_two_invalid_answers_are_an_invalid_response(server: OpenAITestServer) -> None:
    server.enqueue(Reply.text("not json at all"), Reply.text('{"claims": [1, 2'))
    with pytest.raises(JudgeResponseError) as caught:
        await fast_judge(server).generate_object(system="s", prompt="p", schema=Claims)
    assert caught.value.error_type == "invalid_response"
    assert caught.value.usage.calls == 2
    assert caught.value.usage.input_tokens > 0
    assert "not valid JSON" in str(caught.value)


@pytest.mark.anyio
async def test_a_cut_answer_says_so(server: OpenAITestServer) -> None:
    cut = Reply.text('{"claims": ["a", "b', finish_reason="length")
    server.enqueue(cut, cut)
    with pytest.raises(JudgeResponseError, match="max_tokens"):
        await fast_judge(server).generate_object(system="s", prompt="p", schema=Claims)


@pytest.mark.anyio
async def test_thinking_before_the_json_is_ignored(server: OpenAITestServer) -> None:
    server.enqueue(Reply.text('<think>{maybe} let me see</think>\n```json\n{"claims": []}\n```'))
    reply = await fast_judge(server).generate_object(system="s", prompt="p", schema=Claims)
    assert reply.value.claims == []
    assert reply.usage.calls == 1


@pytest.mark.anyio
async def test_json_wrapped_in_prose_is_accepted(server: OpenAITestServer) -> None:
    server.enqueue(Reply.text('Sure! Here it is: {"claims": ["z"]} Hope that helps.'))
    reply = await fast_judge(server).generate_object(system="s", prompt="p", schema=Claims)
    assert reply.value.claims == ["z"]
    assert reply.usage.calls == 1


# -- free text ---------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_generate_text(server: OpenAITestServer) -> None:
    server.enqueue(Reply.text("The answer is well supported.", usage=(30, 6)))
    judge = fast_judge(server, temperature=None, max_tokens=None)
    reply = await judge.generate_text(system="s", prompt="Why?")
    assert reply.value == "The answer is well supported."
    assert (reply.usage.calls, reply.usage.input_tokens, reply.usage.output_tokens) == (1, 30, 6)
    request = server.requests[0]
    assert "response_format" not in request
    assert "temperature" not in request
    assert "max_tokens" not in request


@pytest.mark.anyio
async def test_generate_text_retries_an_empty_answer_once(server: OpenAITestServer) -> None:
    server.enqueue(Reply.empty(), "second try", Reply.empty(), Reply.empty())
    judge = fast_judge(server)
    assert (await judge.generate_text(system="s", prompt="p")).value == "second try"
    with pytest.raises(JudgeResponseError, match="empty") as caught:
        await judge.generate_text(system="s", prompt="p")
    assert caught.value.usage.calls == 2


# -- transport faults ----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_429_honours_retry_after_then_succeeds(
    server: OpenAITestServer, waits: list[float]
) -> None:
    server.enqueue(Reply.rate_limited(retry_after=0.25), {"claims": []})
    judge = fast_judge(server, backoff_base=5.0)
    reply = await judge.generate_object(system="s", prompt="p", schema=Claims)
    assert reply.usage.calls == 2
    assert waits == [0.25]  # the server's figure, not the 5 s backoff


@pytest.mark.anyio
async def test_retry_after_is_capped(server: OpenAITestServer, waits: list[float]) -> None:
    server.enqueue(Reply.rate_limited(retry_after=3600), "ok")
    judge = fast_judge(server, retry_after_max=2.0)
    await judge.generate_text(system="s", prompt="p")
    assert waits == [2.0]


@pytest.mark.anyio
async def test_backoff_grows_exponentially_with_jitter(
    server: OpenAITestServer, waits: list[float]
) -> None:
    server.enqueue(*[Reply.server_error()] * 4)
    judge = fast_judge(server, max_retries=3, backoff_base=1.0, backoff_max=3.0)
    with pytest.raises(JudgeError):
        await judge.generate_text(system="s", prompt="p")
    assert len(waits) == 3
    for wait, ceiling in zip(waits, [1.0, 2.0, 3.0], strict=True):
        assert ceiling / 2 <= wait <= ceiling


@pytest.mark.anyio
async def test_rate_limit_storm_is_rate_limited(server: OpenAITestServer) -> None:
    server.enqueue(*[Reply.rate_limited(retry_after=0.001)] * 3)
    with pytest.raises(JudgeError) as caught:
        await fast_judge(server, max_retries=2).generate_text(system="s", prompt="p")
    assert caught.value.error_type == "rate_limited"
    assert caught.value.usage.calls == 3


@pytest.mark.anyio
async def test_500_storm_is_a_server_error_with_calls_counted(server: OpenAITestServer) -> None:
    server.enqueue(*[Reply.server_error()] * 3)
    judge = fast_judge(server, max_retries=2)
    with pytest.raises(JudgeError) as caught:
        await judge.generate_object(system="s", prompt="p", schema=Claims)
    assert caught.value.error_type == "server_error"
    assert caught.value.usage.calls == 3
    assert "after 3 attempts" in str(caught.value)
    assert formats(server) == ["json_schema"] * 3  # a plain 500 is retried, not a fallback


@pytest.mark.anyio
async def test_a_500_then_success(server: OpenAITestServer) -> None:
    server.enqueue(Reply.server_error(502), Reply.server_error(503), {"claims": ["ok"]})
    reply = await fast_judge(server).generate_object(system="s", prompt="p", schema=Claims)
    assert reply.value.claims == ["ok"]
    assert reply.usage.calls == 3


@pytest.mark.anyio
async def test_timeout(server: OpenAITestServer) -> None:
    server.enqueue(Reply.hang(), Reply.hang())
    judge = fast_judge(server, timeout=0.2, max_retries=1)
    with pytest.raises(JudgeError) as caught:
        await judge.generate_text(system="s", prompt="p")
    assert caught.value.error_type == "timeout"
    assert caught.value.usage.calls == 2
    assert "timed out after 0.2s" in str(caught.value)


@pytest.mark.anyio
async def test_a_timeout_then_success(server: OpenAITestServer) -> None:
    server.enqueue(Reply.hang(), Reply.delay(0.01, "answered"))
    judge = fast_judge(server, timeout=0.2)
    reply = await judge.generate_text(system="s", prompt="p")
    assert reply.value == "answered"
    assert reply.usage.calls == 2


@pytest.mark.anyio
async def test_dropped_connection(server: OpenAITestServer) -> None:
    server.enqueue(Reply.drop(), Reply.drop(), Reply.drop(), "after drop")
    with pytest.raises(JudgeError) as caught:
        await fast_judge(server, max_retries=1).generate_text(system="s", prompt="p")
    assert caught.value.error_type == "connection_error"
    assert caught.value.usage.calls == 2
    reply = await fast_judge(server).generate_text(system="s", prompt="p")
    assert reply.value == "after drop"
    assert reply.usage.calls == 2


@pytest.mark.anyio
async def test_nothing_listening_is_a_connection_error() -> None:
    with OpenAITestServer() as gone:
        judge = fast_judge(gone, max_retries=0)
    with pytest.raises(JudgeError) as caught:
        await judge.generate_text(system="s", prompt="p")
    assert caught.value.error_type == "connection_error"


@pytest.mark.anyio
async def test_broken_response_body_is_retried(server: OpenAITestServer) -> None:
    server.enqueue(Reply.broken_body(), {"claims": []}, Reply.broken_body(), Reply.broken_body())
    judge = fast_judge(server, max_retries=1)
    reply = await judge.generate_object(system="s", prompt="p", schema=Claims)
    assert reply.usage.calls == 2
    with pytest.raises(JudgeError) as caught:
        await judge.generate_text(system="s", prompt="p")
    assert caught.value.error_type == "invalid_response"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("status", "error_type"), [(401, "auth_error"), (403, "auth_error"), (404, "bad_request")]
)
async def test_client_errors_are_not_retried(
    server: OpenAITestServer, status: int, error_type: str
) -> None:
    server.enqueue(Reply.error(status, "nope"), "never sent")
    with pytest.raises(JudgeError) as caught:
        await fast_judge(server).generate_text(system="s", prompt="p")
    assert caught.value.error_type == error_type
    assert caught.value.usage.calls == 1
    assert f"HTTP {status}: nope" in str(caught.value)
    assert server.pending == 1


@pytest.mark.anyio
async def test_the_api_key_never_appears_in_errors(server: OpenAITestServer) -> None:
    server.enqueue(
        Reply.error(401, f"Incorrect API key provided: {SECRET}"),
        Reply.error(401, "Incorrect API key provided: sk-proj-abcdefghijklmnop1234"),
        Reply.hang(),
        Reply.server_error(),
    )
    judge = fast_judge(server, api_key=SECRET, timeout=0.2, max_retries=0)
    messages: list[str] = []
    for _ in range(4):
        with pytest.raises(JudgeError) as caught:
            await judge.generate_text(system="s", prompt="p")
        assert caught.value.__cause__ is None  # the openai error holds the request headers
        messages.extend([str(caught.value), repr(caught.value)])
    assert server.headers[0]["authorization"] == f"Bearer {SECRET}"
    text = "\n".join(messages)
    assert SECRET not in text
    assert SECRET[5:20] not in text
    assert "abcdefghijklmnop" not in text
    assert "Incorrect API key provided: ***" in text
    assert SECRET not in repr(judge)


# -- cache, concurrency, event loops -----------------------------------------------------------


@pytest.mark.anyio
async def test_cache_serves_identical_requests(server: OpenAITestServer) -> None:
    server.enqueue({"claims": ["a"]}, {"claims": ["other"]}, "text", "unused")
    judge = fast_judge(server, cache=True)
    first = await judge.generate_object(system="s", prompt="p", schema=Claims)
    first.value.claims.append("mutated by the caller")
    again = await judge.generate_object(system="s", prompt="p", schema=Claims)
    assert again.value.claims == ["a"]
    assert (again.usage.calls, again.usage.cached, again.usage.total_tokens) == (0, 1, 0)
    other = await judge.generate_object(system="s", prompt="different", schema=Claims)
    assert other.value.claims == ["other"]
    await judge.generate_text(system="s", prompt="p")
    text_again = await judge.generate_text(system="s", prompt="p")
    assert (text_again.value, text_again.usage.cached) == ("text", 1)
    assert len(server.requests) == 3


@pytest.mark.anyio
async def test_cache_is_off_by_default_and_bounded(server: OpenAITestServer) -> None:
    server.enqueue("1", "2", "3", "4", "5")
    uncached = fast_judge(server)
    await uncached.generate_text(system="s", prompt="p")
    assert (await uncached.generate_text(system="s", prompt="p")).value == "2"
    small = fast_judge(server, cache=1)
    await small.generate_text(system="s", prompt="a")
    await small.generate_text(system="s", prompt="b")  # evicts "a"
    assert (await small.generate_text(system="s", prompt="a")).value == "5"


@pytest.mark.anyio
async def test_concurrency_limit_holds() -> None:
    # Two requests meet at the barrier, so two in flight is reached for sure; the latency
    # gives any third request (were the limit broken) time to overlap and be counted.
    barrier = threading.Barrier(2, timeout=10)

    def responder(body: dict[str, Any]) -> Reply:
        barrier.wait()
        return Reply.text("ok")

    async with OpenAITestServer(responder=responder, latency=0.05) as server:
        judge = fast_judge(server, max_concurrency=2)
        results: list[str] = []

        async def ask(i: int) -> None:
            results.append((await judge.generate_text(system="s", prompt=f"p{i}")).value)

        async with anyio.create_task_group() as tg:
            for i in range(6):
                tg.start_soon(ask, i)
    assert results == ["ok"] * 6
    assert server.max_concurrent == 2


def test_one_judge_across_event_loops_and_threads() -> None:
    with OpenAITestServer(responder=lambda body: Reply.json({"claims": ["x"]})) as server:
        judge = fast_judge(server)

        async def ask() -> list[str]:
            reply = await judge.generate_object(system="s", prompt="p", schema=Claims)
            return reply.value.claims

        assert anyio.run(ask) == ["x"]
        assert anyio.run(ask) == ["x"]  # a new loop: a new client, not the dead loop's one
        in_thread: list[list[str]] = []
        worker = threading.Thread(target=lambda: in_thread.append(anyio.run(ask)))
        worker.start()
        assert anyio.run(ask) == ["x"]
        worker.join(timeout=30)
        assert in_thread == [["x"]]
        assert len(server.requests) == 4
        # Each loop's client was closed when its loop ended: no connection is left open.
        assert server.wait_for_no_connections(timeout=10), server.open_connections


def test_many_short_loops_leave_no_connection_and_no_warning() -> None:
    # ``run_sync`` and notebooks start a loop per call: none may leak a client or a socket
    # (an unclosed one would be a ResourceWarning, an error under this suite's filters).
    with OpenAITestServer(responder=lambda body: Reply.text("ok")) as server:
        judges = [fast_judge(server), fast_judge(server, model="other")]

        async def ask() -> None:
            for judge in judges:
                await judge.generate_text(system="s", prompt="p")
            assert server.open_connections >= 1  # the loop's client keeps its connection

        for _ in range(20):
            anyio.run(ask)
            assert server.wait_for_no_connections(timeout=10), server.open_connections
        gc.collect()
        assert len(server.requests) == 40


@pytest.mark.anyio
async def test_judges_of_one_loop_share_a_client_per_server(server: OpenAITestServer) -> None:
    server.enqueue("a", "b", "c")
    first, second = fast_judge(server), fast_judge(server, model="other")
    await first.generate_text(system="s", prompt="p")
    await second.generate_text(system="s", prompt="p")
    assert server.open_connections == 1  # one keep-alive connection, reused
    other_key = fast_judge(server, api_key="another-key")
    await other_key.generate_text(system="s", prompt="p")
    assert server.open_connections == 2  # other credentials: another client


@pytest.mark.anyio
async def test_the_transport_under_the_client(
    server: OpenAITestServer, http_transport: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[str] = []
    for name in ("DefaultAioHttpClient", "DefaultAsyncHttpxClient"):
        original = getattr(openai, name)

        def spy(*args: Any, _original: Any = original, _name: str = name, **kwargs: Any) -> Any:
            built.append(_name)
            return _original(*args, **kwargs)

        monkeypatch.setattr(openai, name, spy)
    server.enqueue("auto", "forced")
    await fast_judge(server).generate_text(system="s", prompt="p")
    await fast_judge(server, transport="httpx").generate_text(system="s", prompt="p")
    auto = "DefaultAioHttpClient" if http_transport == "aiohttp" else "DefaultAsyncHttpxClient"
    assert built == [auto, "DefaultAsyncHttpxClient"]


def test_an_unknown_transport_is_a_config_error() -> None:
    with pytest.raises(JudgeConfigError, match="transport must be"):
        OpenAIJudge("m", base_url="http://127.0.0.1:9/v1", transport="curl")  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_aclose_and_a_user_client(server: OpenAITestServer) -> None:
    server.enqueue("one", "two")
    judge = fast_judge(server)
    await judge.generate_text(system="s", prompt="p")
    assert server.open_connections == 1
    await judge.aclose()
    assert await anyio.to_thread.run_sync(server.wait_for_no_connections)
    async with openai.AsyncOpenAI(base_url=server.base_url, api_key="user-key") as client:
        user_judge = OpenAIJudge("m", client=client)
        assert user_judge.base_url == server.base_url
        assert (await user_judge.generate_text(system="s", prompt="p")).value == "two"
        await user_judge.aclose()  # leaves the user's client alone
        assert not client.is_closed()
    assert server.headers[1]["authorization"] == "Bearer user-key"


# -- configuration -------------------------------------------------------------------------------


def test_missing_key_is_a_clear_config_error() -> None:
    with pytest.raises(JudgeConfigError, match="OPENAI_API_KEY") as caught:
        OpenAIJudge("gpt-4o-mini")
    assert caught.value.error_type == "config"
    assert "base_url" in str(caught.value)


@pytest.mark.anyio
async def test_environment_configures_the_judge(
    server: OpenAITestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.enqueue("a", "b")
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    await OpenAIJudge("m").generate_text(system="s", prompt="p")
    monkeypatch.setenv("OPENAI_API_KEY", "env-key")
    await OpenAIJudge("m").generate_text(system="s", prompt="p")
    auth = [h["authorization"] for h in server.headers]
    assert auth == ["Bearer not-needed", "Bearer env-key"]


def test_official_endpoint_uses_max_completion_tokens() -> None:
    judge = OpenAIJudge("gpt-4o-mini", api_key="k")
    assert judge.base_url == "https://api.openai.com/v1"
    assert judge._max_tokens_param == "max_completion_tokens"


def test_credentials_in_the_base_url_are_hidden() -> None:
    judge = OpenAIJudge("m", base_url="https://user:hunter2@gateway.example/v1")
    assert "hunter2" not in judge.base_url
    assert "hunter2" not in repr(judge)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"model_name": ""}, "needs a model name"),
        ({"model_name": "m", "timeout": 0}, "timeout must be positive"),
        ({"model_name": "m", "max_retries": -1}, "max_retries"),
        ({"model_name": "m", "max_concurrency": 0}, "max_concurrency"),
        ({"model_name": "m", "structured_output": "xml"}, "structured_output"),
    ],
)
def test_bad_settings_are_config_errors(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(JudgeConfigError, match=message):
        OpenAIJudge(base_url="http://127.0.0.1:9/v1", **kwargs)


def test_resolve_openai_model_strings(monkeypatch: pytest.MonkeyPatch) -> None:
    judge = resolve_judge("openai/gpt-4o-mini", api_key="k", timeout=3.0)
    assert isinstance(judge, OpenAIJudge)
    assert (judge.model_name, judge.timeout) == ("gpt-4o-mini", 3.0)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
    local = resolve_judge("openai/org/model-7b")
    assert isinstance(local, Judge)
    assert local.model_name == "org/model-7b"


def test_resolve_passes_judges_through() -> None:
    scripted = ScriptedJudge()
    assert resolve_judge(scripted) is scripted
    with pytest.raises(JudgeConfigError, match="configure the judge object"):
        resolve_judge(scripted, timeout=1.0)


@pytest.mark.parametrize(
    ("model", "message"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("gpt-4o-mini", "no provider prefix"),
        ("anthropic/claude-3-5-haiku", "unknown provider 'anthropic'"),
        ("openai/", "names no model"),
        (42, "not <class 'int'>"),
    ],
)
def test_resolve_rejects_other_forms_listing_the_accepted_ones(model: Any, message: str) -> None:
    with pytest.raises(JudgeConfigError, match=message) as caught:
        resolve_judge(model)
    assert "'openai/<model>'" in str(caught.value)


def test_resolve_without_any_configuration_is_a_config_error() -> None:
    with pytest.raises(JudgeConfigError, match="OPENAI_API_KEY"):
        resolve_judge("openai/gpt-4o-mini")


def test_structured_request_json_is_serialisable() -> None:
    # What the ladder sends must be plain JSON, whatever the pydantic model holds.
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "p"}]
    for mode in ("json_schema", "json_object", "prompt"):
        sent, response_format = _structured.structured_request(
            messages, mode, _structured.schema_forms(Verdicts)
        )
        json.dumps([sent, response_format])
        assert sent[1] == messages[1]


# -- adapting to what the model accepts ---------------------------------------------------------


@pytest.mark.anyio
async def test_a_refused_temperature_is_dropped_and_remembered(server: OpenAITestServer) -> None:
    server.enqueue(
        Reply.error(
            400,
            "Unsupported value: 'temperature' does not support 0.0 with this model. "
            "Only the default (1) value is supported.",
        ),
        {"claims": []},
        {"claims": ["again"]},
    )
    judge = fast_judge(server)
    reply = await judge.generate_object(system="s", prompt="p", schema=Claims)
    assert reply.usage.calls == 2
    await judge.generate_object(system="s", prompt="p2", schema=Claims)
    assert ["temperature" in r for r in server.requests] == [True, False, False]
    assert formats(server) == ["json_schema"] * 3  # not mistaken for a format refusal


@pytest.mark.anyio
async def test_max_tokens_is_renamed_when_the_model_asks(server: OpenAITestServer) -> None:
    server.enqueue(
        Reply.error(
            400,
            "Unsupported parameter: 'max_tokens' is not supported with this model. "
            "Use 'max_completion_tokens' instead.",
        ),
        "ok",
    )
    judge = fast_judge(server, max_tokens=300)
    assert (await judge.generate_text(system="s", prompt="p")).value == "ok"
    assert server.requests[0]["max_tokens"] == 300
    assert server.requests[1]["max_completion_tokens"] == 300
    assert "max_tokens" not in server.requests[1]


@pytest.mark.anyio
async def test_a_400_about_something_else_does_not_walk_the_ladder(
    server: OpenAITestServer,
) -> None:
    server.enqueue(Reply.error(400, "This model's maximum context length is 8192 tokens."))
    with pytest.raises(JudgeError) as caught:
        await fast_judge(server).generate_object(system="s", prompt="p", schema=Claims)
    assert caught.value.error_type == "bad_request"
    assert "maximum context length" in str(caught.value)
    assert len(server.requests) == 1


@pytest.mark.anyio
async def test_format_memory_is_per_model() -> None:
    def responder(body: dict[str, Any]) -> Reply:
        refuses = body["model"] == "small-local"
        if refuses and body.get("response_format", {}).get("type") == "json_schema":
            return Reply.error(400, "json_schema not supported")
        return Reply.json({"claims": []})

    async with OpenAITestServer(responder=responder) as server:
        await fast_judge(server, model="small-local").generate_object(
            system="s", prompt="p", schema=Claims
        )
        await fast_judge(server, model="big-remote").generate_object(
            system="s", prompt="p", schema=Claims
        )
        await fast_judge(server, model="small-local").generate_object(
            system="s", prompt="p", schema=Claims
        )
    assert [(r["model"], r["response_format"]["type"]) for r in server.requests] == [
        ("small-local", "json_schema"),
        ("small-local", "json_object"),
        ("big-remote", "json_schema"),
        ("small-local", "json_object"),
    ]


@pytest.mark.anyio
async def test_a_refusal_gets_the_corrective_retry(server: OpenAITestServer) -> None:
    server.enqueue(Reply.refusal("I cannot judge this."), Reply.refusal("Still no."))
    with pytest.raises(JudgeResponseError, match="refused to answer: Still no"):
        await fast_judge(server).generate_object(system="s", prompt="p", schema=Claims)
    assert (
        "refused to answer: I cannot judge this." in server.requests[1]["messages"][-1]["content"]
    )


@pytest.mark.anyio
async def test_logs_never_carry_the_key(
    server: OpenAITestServer, caplog: pytest.LogCaptureFixture
) -> None:
    server.enqueue(
        Reply.error(503, f"upstream rejected key {SECRET}"),
        Reply.error(400, "response_format is not supported"),
        {"claims": []},
    )
    caplog.set_level("DEBUG", logger="livescore.judges")
    judge = fast_judge(server, api_key=SECRET)
    await judge.generate_object(system="s", prompt="p", schema=Claims)
    assert "retrying" in caplog.text
    assert "json_object from now on" in caplog.text
    assert SECRET not in caplog.text
