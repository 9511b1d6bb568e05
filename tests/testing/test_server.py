"""OpenAITestServer: the real ``openai`` client against the in-process server."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from typing import Any

import anyio
import openai
import pytest

from livescore.testing import OpenAITestServer, Reply, ReplyLike

MESSAGES: list[Any] = [{"role": "user", "content": "hello"}]


def client_for(server: OpenAITestServer, **kwargs: Any) -> openai.OpenAI:
    kwargs.setdefault("timeout", 5.0)
    return openai.OpenAI(base_url=server.base_url, api_key="test-key", max_retries=0, **kwargs)


def post(url: str, body: Any) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, json.loads(exc.read())


def test_json_reply_is_the_assistant_content_with_usage() -> None:
    reply = Reply.json({"claims": ["a"]}, usage=(12, 5))
    with OpenAITestServer([reply]) as server, client_for(server) as client:
        completion = client.chat.completions.create(model="m", messages=MESSAGES)
    assert json.loads(completion.choices[0].message.content or "") == {"claims": ["a"]}
    assert completion.choices[0].finish_reason == "stop"
    assert completion.model == "m"
    assert completion.usage is not None
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (12, 5)
    assert completion.usage.total_tokens == 17
    assert server.requests == [{"model": "m", "messages": MESSAGES}]
    assert server.headers[0]["authorization"] == "Bearer test-key"


def test_dict_and_str_are_shorthand_and_usage_is_estimated() -> None:
    with OpenAITestServer([{"x": 1}, "plain text"]) as server, client_for(server) as client:
        first = client.chat.completions.create(model="m", messages=MESSAGES)
        second = client.chat.completions.create(model="m", messages=MESSAGES)
    assert first.choices[0].message.content == '{"x": 1}'
    assert second.choices[0].message.content == "plain text"
    assert second.usage is not None
    assert second.usage.prompt_tokens > 0
    assert second.usage.completion_tokens > 0


def test_empty_reply_and_length_finish_reason() -> None:
    replies = [Reply.empty(), Reply.text('{"claims": [', finish_reason="length")]
    with OpenAITestServer(replies) as server, client_for(server) as client:
        empty = client.chat.completions.create(model="m", messages=MESSAGES)
        cut = client.chat.completions.create(model="m", messages=MESSAGES)
    assert empty.choices[0].message.content == ""
    assert cut.choices[0].finish_reason == "length"


def test_both_routes_answer_and_others_are_404() -> None:
    with OpenAITestServer(["one", "two"]) as server:
        root = server.base_url.removesuffix("/v1")
        body = {"model": "m", "messages": MESSAGES}
        assert post(f"{root}/v1/chat/completions", body)[0] == 200
        status, reply = post(f"{root}/chat/completions", body)
        assert status == 200
        assert reply["choices"][0]["message"]["content"] == "two"
        assert post(f"{root}/v1/embeddings", body)[0] == 404
        status, reply = post(f"{root}/v1/chat/completions", {"model": "m"})
    assert status == 400
    assert "messages" in reply["error"]["message"]


def test_an_exhausted_script_fails_loudly() -> None:
    with (
        OpenAITestServer() as server,
        client_for(server) as client,
        pytest.raises(openai.InternalServerError, match="script ran out"),
    ):
        client.chat.completions.create(model="m", messages=MESSAGES)


def test_responder_answers_when_the_queue_is_empty() -> None:
    seen: list[dict[str, Any]] = []

    def responder(body: dict[str, Any]) -> Reply:
        seen.append(body)
        return Reply.text(f"echo {body['messages'][-1]['content']}")

    with OpenAITestServer(["queued first"], responder=responder) as server:
        server.enqueue(Reply.text("queued second"))
        assert server.pending == 2
        with client_for(server) as client:
            answers = [
                client.chat.completions.create(model="m", messages=MESSAGES)
                .choices[0]
                .message.content
                for _ in range(3)
            ]
    assert answers == ["queued first", "queued second", "echo hello"]
    assert len(seen) == 1


def test_error_replies_carry_status_body_and_headers() -> None:
    replies = [
        Reply.rate_limited(retry_after=1.5),
        Reply.error(401, "Incorrect API key provided"),
        Reply.error(418, {"detail": "custom body"}),
        Reply.server_error(503),
    ]
    with OpenAITestServer(replies) as server, client_for(server) as client:
        with pytest.raises(openai.RateLimitError) as limited:
            client.chat.completions.create(model="m", messages=MESSAGES)
        with pytest.raises(openai.AuthenticationError, match="Incorrect API key"):
            client.chat.completions.create(model="m", messages=MESSAGES)
        with pytest.raises(openai.APIStatusError) as teapot:
            client.chat.completions.create(model="m", messages=MESSAGES)
        with pytest.raises(openai.InternalServerError) as unavailable:
            client.chat.completions.create(model="m", messages=MESSAGES)
    assert limited.value.response.headers["retry-after-ms"] == "1500"
    assert limited.value.response.headers["retry-after"] == "1.5"
    assert teapot.value.status_code == 418
    assert teapot.value.body == {"detail": "custom body"}
    assert unavailable.value.status_code == 503


def test_reject_json_schema_emulates_llama_cpp() -> None:
    schema_format: Any = {
        "type": "json_schema",
        "json_schema": {"name": "a", "schema": {"type": "object"}},
    }
    object_format: Any = {"type": "json_object", "schema": {"type": "object"}}
    with (
        OpenAITestServer([{"ok": True}], reject_json_schema=True, reject_status=422) as server,
        client_for(server) as client,
    ):
        with pytest.raises(openai.UnprocessableEntityError, match="json_schema"):
            client.chat.completions.create(
                model="m", messages=MESSAGES, response_format=schema_format
            )
        assert server.pending == 1  # a rejection does not use up the script
        completion = client.chat.completions.create(
            model="m", messages=MESSAGES, response_format=object_format
        )
    assert completion.choices[0].message.content == '{"ok": true}'
    assert [r["response_format"]["type"] for r in server.requests] == ["json_schema", "json_object"]


def test_drop_and_broken_body_are_transport_faults() -> None:
    replies: list[ReplyLike] = [Reply.drop(), Reply.broken_body(), "fine"]
    with OpenAITestServer(replies) as server, client_for(server) as client:
        with pytest.raises(openai.APIConnectionError):
            client.chat.completions.create(model="m", messages=MESSAGES)
        with pytest.raises(ValueError, match="Expecting"):
            client.chat.completions.create(model="m", messages=MESSAGES)
        completion = client.chat.completions.create(model="m", messages=MESSAGES)
    assert completion.choices[0].message.content == "fine"


def test_hang_outlasts_the_client_timeout_and_close_ends_it() -> None:
    replies = [Reply.hang(), Reply.delay(0.01, "late but fine")]
    with OpenAITestServer(replies) as server, client_for(server, timeout=0.3) as client:
        with pytest.raises(openai.APITimeoutError):
            client.chat.completions.create(model="m", messages=MESSAGES)
        completion = client.chat.completions.create(model="m", messages=MESSAGES)
    assert completion.choices[0].message.content == "late but fine"


def test_serves_concurrent_requests_and_counts_them() -> None:
    # Every request waits at the barrier until four are in flight together: only a server
    # that really serves them concurrently gets past it.
    barrier = threading.Barrier(4, timeout=10)

    def responder(body: dict[str, Any]) -> Reply:
        barrier.wait()
        return Reply.text("together")

    async def main() -> list[str | None]:
        answers: list[str | None] = []
        async with (
            OpenAITestServer(responder=responder, latency=0.01) as server,
            openai.AsyncOpenAI(
                base_url=server.base_url, api_key="k", max_retries=0, timeout=10
            ) as client,
        ):

            async def one() -> None:
                completion = await client.chat.completions.create(model="m", messages=MESSAGES)
                answers.append(completion.choices[0].message.content)

            async with anyio.create_task_group() as tg:
                for _ in range(4):
                    tg.start_soon(one)
            assert server.max_concurrent == 4
        return answers

    assert anyio.run(main) == ["together"] * 4


def test_bad_script_entries_and_unstarted_server_are_clear_errors() -> None:
    with pytest.raises(TypeError, match="Reply, a dict or a str"):
        OpenAITestServer([42])  # type: ignore[list-item]
    server = OpenAITestServer()
    with pytest.raises(RuntimeError, match="not running"):
        _ = server.base_url


def test_judge_helper_points_at_the_server() -> None:
    with OpenAITestServer() as server:
        judge = server.judge("my-model", timeout=2.0)
        assert judge.model_name == "my-model"
        assert judge.base_url == server.base_url
        assert (judge.timeout, judge.backoff_base) == (2.0, 0.01)


def test_tool_calls_and_refusal_replies() -> None:
    replies: list[ReplyLike] = [
        Reply.tool_calls(("search", {"q": "paris"}), ("lookup", {"id": 3})),
        Reply.refusal("I won't."),
    ]
    with OpenAITestServer(replies) as server, client_for(server) as client:
        called = client.chat.completions.create(model="m", messages=MESSAGES)
        refused = client.chat.completions.create(model="m", messages=MESSAGES)
    calls = called.choices[0].message.tool_calls or []
    assert called.choices[0].finish_reason == "tool_calls"
    assert [(c.id, c.function.name, json.loads(c.function.arguments)) for c in calls] == [  # type: ignore[union-attr]
        ("call_0", "search", {"q": "paris"}),
        ("call_1", "lookup", {"id": 3}),
    ]
    assert refused.choices[0].message.content is None
    assert refused.choices[0].message.refusal == "I won't."


def test_streaming_requests_get_server_sent_events() -> None:
    replies: list[ReplyLike] = [
        Reply.text("streamed answer", usage=(8, 3)),
        Reply.tool_calls(("search", {"q": "x"})),
    ]
    with OpenAITestServer(replies) as server, client_for(server) as client:
        stream = client.chat.completions.create(
            model="m", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
        )
        chunks = list(stream)
        tool_stream = list(
            client.chat.completions.create(model="m", messages=MESSAGES, stream=True)
        )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "streamed answer"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens == 3
    deltas = [c.choices[0].delta for c in tool_stream if c.choices]
    streamed_calls = [call for d in deltas for call in (d.tool_calls or [])]
    assert [call.function.name for call in streamed_calls] == ["search"]  # type: ignore[union-attr]


def _raw_post(server: OpenAITestServer) -> Any:
    body = json.dumps({"model": "m", "messages": MESSAGES}).encode()
    request = urllib.request.Request(
        f"{server.base_url}/chat/completions",
        data=body,
        headers={"content-type": "application/json"},
    )
    return urllib.request.urlopen(request, timeout=5)


def test_raw_body_sends_exactly_the_given_bytes_status_and_headers() -> None:
    page = b"<html><h1>502 Bad Gateway</h1></html>"
    reply = Reply.raw_body(page, status=200, content_type="text/html", headers={"x-proxy": "1"})
    with OpenAITestServer([reply]) as server, _raw_post(server) as response:
        assert response.read() == page
        assert response.headers["content-type"] == "text/html"
        assert response.headers["x-proxy"] == "1"
        assert response.headers["content-length"] == str(len(page))


@pytest.mark.parametrize("chunked", [True, False])
def test_large_body_streams_the_size_asked_for(chunked: bool) -> None:
    size = 3 * 65536 + 123
    reply = Reply.large_body(size, chunked=chunked)
    with OpenAITestServer([reply]) as server, _raw_post(server) as response:
        data = response.read()
        length = response.headers.get("content-length")
    assert len(data) == size
    assert length == (None if chunked else str(size))


def test_an_endless_body_keeps_coming_until_the_client_leaves() -> None:
    with OpenAITestServer([Reply.large_body(None)]) as server:
        with _raw_post(server) as response:
            received = sum(len(response.read(65536)) for _ in range(64))
            assert received >= 64 * 65536 - 65536  # reads may come back a little short
        assert server.wait_for_no_connections(timeout=10)
    with pytest.raises(ValueError, match="endless"):
        Reply.large_body(None, chunked=False)


def test_open_connections_counts_keep_alive_connections() -> None:
    with OpenAITestServer(["a", "b"]) as server:
        assert server.open_connections == 0
        with client_for(server) as client:
            client.chat.completions.create(model="m", messages=MESSAGES)
            client.chat.completions.create(model="m", messages=MESSAGES)
            assert server.open_connections == 1  # kept alive and reused
        assert server.wait_for_no_connections(timeout=10)
        assert server.open_connections == 0
