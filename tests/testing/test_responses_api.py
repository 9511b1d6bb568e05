"""OpenAITestServer's Responses API (``POST /v1/responses``): the real ``openai`` client
reads the same script as on the chat route, streamed or not."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import openai
import pytest

from livescore.testing import OpenAITestServer, Reply, ReplyLike


def client_for(server: OpenAITestServer, **kwargs: Any) -> openai.OpenAI:
    kwargs.setdefault("timeout", 5.0)
    return openai.OpenAI(base_url=server.base_url, api_key="test-key", max_retries=0, **kwargs)


def test_text_and_json_replies_are_output_messages_with_usage() -> None:
    replies: list[ReplyLike] = [Reply.text("Hello there", usage=(12, 3)), {"claims": []}]
    with OpenAITestServer(replies) as server, client_for(server) as client:
        text = client.responses.create(model="m", input="hi", instructions="Be brief.")
        data = client.responses.create(model="m", input=[{"role": "user", "content": "hi"}])
        request = server.requests[0]
    assert text.status == "completed"
    assert text.output_text == "Hello there"
    assert text.id.startswith("resp_")
    assert text.model == "m"
    assert text.instructions == "Be brief."
    assert text.usage is not None
    assert (text.usage.input_tokens, text.usage.output_tokens) == (12, 3)
    assert json.loads(data.output_text) == {"claims": []}
    assert request == {"model": "m", "input": "hi", "instructions": "Be brief."}


def test_tool_calls_become_function_call_items_with_the_ids_given() -> None:
    reply = Reply.tool_calls(("search", {"q": "paris"}), ("lookup", {"id": 3}), ids=["a1", "a2"])
    with OpenAITestServer([reply]) as server, client_for(server) as client:
        response = client.responses.create(model="m", input="hi")
    calls = [(i.type, i.call_id, i.name, json.loads(i.arguments)) for i in response.output]  # type: ignore[union-attr]
    assert calls == [
        ("function_call", "a1", "search", {"q": "paris"}),
        ("function_call", "a2", "lookup", {"id": 3}),
    ]
    assert response.output_text == ""


def test_tool_call_ids_must_match_the_calls() -> None:
    with pytest.raises(ValueError, match="2 tool calls need 2 ids"):
        Reply.tool_calls(("a", {}), ("b", {}), ids=["only-one"])


def test_refusal_and_length_cut_replies() -> None:
    replies = [Reply.refusal("I won't."), Reply.text("cut", finish_reason="length")]
    with OpenAITestServer(replies) as server, client_for(server) as client:
        refused = client.responses.create(model="m", input="hi")
        cut = client.responses.create(model="m", input="hi")
    (message,) = refused.output
    assert message.type == "message"
    assert [(p.type, getattr(p, "refusal", None)) for p in message.content] == [  # type: ignore[union-attr]
        ("refusal", "I won't.")
    ]
    assert cut.status == "incomplete"
    assert cut.incomplete_details is not None
    assert cut.incomplete_details.reason == "max_output_tokens"


def test_streamed_text_arrives_in_deltas_and_ends_with_the_whole_response() -> None:
    with OpenAITestServer([Reply.text("streamed answer")]) as server, client_for(server) as client:
        events = list(client.responses.create(model="m", input="hi", stream=True))
    kinds = [e.type for e in events]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    deltas = [e.delta for e in events if e.type == "response.output_text.delta"]  # type: ignore[union-attr]
    assert len(deltas) == 2
    assert "".join(deltas) == "streamed answer"
    assert events[-1].response.output_text == "streamed answer"  # type: ignore[union-attr]
    assert [e.sequence_number for e in events] == list(range(len(events)))


def test_streamed_tool_calls_carry_their_arguments() -> None:
    reply = Reply.tool_calls(("search", {"q": "x"}), ids=["s1"])
    with OpenAITestServer([reply]) as server, client_for(server) as client:
        events = list(client.responses.create(model="m", input="hi", stream=True))
    done = [e for e in events if e.type == "response.function_call_arguments.done"]
    assert [json.loads(e.arguments) for e in done] == [{"q": "x"}]  # type: ignore[union-attr]
    (item,) = events[-1].response.output  # type: ignore[union-attr]
    assert (item.type, item.call_id, item.name) == ("function_call", "s1", "search")


def test_faults_behave_as_on_the_chat_route() -> None:
    replies: list[ReplyLike] = [
        Reply.rate_limited(retry_after=0.01),
        Reply.server_error(),
        Reply.drop(),
        Reply.broken_body(),
        Reply.delay(0.01, "late but fine"),
    ]
    with OpenAITestServer(replies) as server, client_for(server) as client:
        with pytest.raises(openai.RateLimitError):
            client.responses.create(model="m", input="hi")
        with pytest.raises(openai.InternalServerError):
            client.responses.create(model="m", input="hi")
        with pytest.raises(openai.APIConnectionError):
            client.responses.create(model="m", input="hi")
        with pytest.raises(ValueError, match="Expecting"):
            client.responses.create(model="m", input="hi")
        late = client.responses.create(model="m", input="hi")
    assert late.output_text == "late but fine"
    assert server.pending == 0


def test_a_request_without_a_model_is_a_400_and_uses_no_script() -> None:
    with OpenAITestServer(["unused"]) as server:
        request = urllib.request.Request(
            f"{server.base_url}/responses",
            data=json.dumps({"input": "hi"}).encode(),
            headers={"content-type": "application/json"},
        )
        with pytest.raises(urllib.error.HTTPError) as raised:
            urllib.request.urlopen(request, timeout=5)
        with raised.value as error:
            body = json.loads(error.read())
        assert raised.value.code == 400
        assert "needs 'model'" in body["error"]["message"]
        assert server.pending == 1


def test_a_responder_sees_the_responses_request() -> None:
    seen: list[dict[str, Any]] = []

    def responder(body: dict[str, Any]) -> ReplyLike:
        seen.append(body)
        return f"you said {body['input']}"

    with OpenAITestServer(responder=responder) as server, client_for(server) as client:
        response = client.responses.create(model="m", input="ping")
    assert response.output_text == "you said ping"
    assert seen == [{"model": "m", "input": "ping"}]
