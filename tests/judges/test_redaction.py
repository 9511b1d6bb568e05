"""No credential reaches an error, a repr, a traceback or a log record."""

from __future__ import annotations

import base64
import logging
import traceback
from collections.abc import Iterator

import openai
import pytest

from livescore import Run
from livescore._redaction import Redactor, split_credentials
from livescore.judges import JudgeError, OpenAIJudge
from livescore.scorers import create_hallucination_scorer
from livescore.testing import OpenAITestServer, Reply

# Distinctive, so that any 6-character prefix of it found in a text is a leak. A gateway's
# key (not OpenAI's ``sk-`` form, which a generic pattern also masks) is the hard case.
KEY = "gw_Zq9XvL2mN8pR4tY7wB3cK6hJ1fD5sA0e"
OPENAI_STYLE_KEY = "sk-proj-Hn4Tb8Wq1Ls6Yd3Kx9Mv2Rc7Gf5Ja0Ze"
PASSWORD = "Pw-7hQ2xZ9vK4mL8"
OFFSETS = (0, 250, 285, 290, 295, 299, 300, 301, 320, 1000, 5000)


def _leaks(text: str, *secrets: str) -> list[str]:
    """Each secret, or any 6-character-or-longer prefix of it, found in ``text``."""
    return [secret for secret in secrets if secret[:6] in text]


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        current = todo.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        todo += [current.__cause__, current.__context__]


def _texts(exc: BaseException) -> list[str]:
    texts = ["".join(traceback.format_exception(exc))]
    for link in _chain(exc):
        texts += [str(link), repr(link), repr(link.args)]
    return texts


@pytest.fixture(autouse=True)
def no_openai_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def test_masking_comes_before_cutting_at_every_offset() -> None:
    redact = Redactor([KEY])
    for offset in range(0, 400, 7):
        text = "x" * offset + f"Incorrect API key provided: {KEY}. Check it."
        excerpt = redact.excerpt(text, 300)
        assert _leaks(excerpt, KEY) == [], (offset, excerpt)
    # Without masking, a cut at 300 characters does leave a prefix: the check can fail.
    cut = ("x" * 260 + f"Incorrect API key provided: {KEY}")[:300]
    assert _leaks(cut, KEY) == [KEY]


def test_a_secret_quoted_cut_short_by_the_server_is_masked_too() -> None:
    redact = Redactor([KEY])
    assert redact(f"key {KEY[:20]}… (truncated)") == "key *** (truncated)"
    assert redact(f"Authorization: Bearer {KEY[:10]}") == "Authorization: Bearer ***"


@pytest.mark.anyio
@pytest.mark.parametrize("offset", OFFSETS)
@pytest.mark.parametrize("status", [401, 400, 500])
@pytest.mark.parametrize("key", [KEY, OPENAI_STYLE_KEY])
async def test_a_key_echoed_at_any_offset_never_survives(
    offset: int, status: int, key: str
) -> None:
    body = "x" * offset + f"Incorrect API key provided: {key}. You can find your key at …"
    async with OpenAITestServer(responder=lambda request: Reply.error(status, body)) as server:
        judge = server.judge(api_key=key, max_retries=1)
        with pytest.raises(JudgeError) as caught:
            await judge.generate_text(system="s", prompt="p")
    assert server.headers[0]["authorization"] == f"Bearer {key}"  # the key was really used
    error = caught.value
    assert "HTTP" in str(error)
    # The openai exception holds the request (key included): it is not in the chain at all.
    assert [e for e in _chain(error) if isinstance(e, openai.OpenAIError)] == []
    for text in _texts(error):
        assert _leaks(text, key) == [], text


@pytest.mark.anyio
async def test_score_results_and_their_errors_never_carry_the_key() -> None:
    replies = [Reply.error(500, "y" * offset + f" key={KEY}") for offset in OFFSETS]
    async with OpenAITestServer(replies) as server:
        scorer = create_hallucination_scorer(
            model=server.judge(api_key=KEY, max_retries=0),
            context=["It is 21°C in Paris."],
            judge_mode="one_call",
        )
        results = [
            await scorer.score(Run(input="Weather?", output="It is 21°C in Paris."))
            for _ in OFFSETS
        ]
    assert [r.status for r in results] == ["failed"] * len(OFFSETS)
    for result in results:
        assert result.error_type == "server_error"
        assert _leaks(f"{result.error} {result!r}", KEY) == [], result.error


@pytest.mark.anyio
async def test_url_credentials_become_a_header_and_never_reach_any_log_record(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)  # every logger: openai's, httpx2's, aiohttp's, ours
    replies = [
        "fine",
        Reply.server_error(),
        Reply.error(401, f"user {PASSWORD} is not allowed"),
    ]
    async with OpenAITestServer(replies) as server:
        url = server.base_url.replace("http://", f"http://judge:{PASSWORD}@")
        judge = OpenAIJudge("m", base_url=url, api_key=KEY, max_retries=1, backoff_base=0.01)
        assert (await judge.generate_text(system="s", prompt="p")).value == "fine"
        with pytest.raises(JudgeError) as caught:
            await judge.generate_text(system="s", prompt="p")
    # The server got the credentials as HTTP Basic authentication, as before.
    token = base64.b64encode(f"judge:{PASSWORD}".encode()).decode()
    assert {h["authorization"] for h in server.headers} == {f"Basic {token}"}
    sent_lines = [
        r.getMessage() for r in caplog.records if r.getMessage().startswith("HTTP Request: POST")
    ]
    assert sent_lines, "the HTTP client logged no request line: the check would prove nothing"
    assert all("127.0.0.1" in line for line in sent_lines)
    for record in caplog.records:
        text = record.getMessage() + repr(record.args)
        if record.exc_info:
            text += "".join(traceback.format_exception(*record.exc_info))
        assert _leaks(text, KEY, PASSWORD, token) == [], (record.name, text)
    for text in [*_texts(caught.value), repr(judge), judge.base_url]:
        assert _leaks(text, KEY, PASSWORD, token) == [], text
    assert str(caught.value).startswith("judge m at http://***@127.0.0.1:")
    assert judge.base_url == url.replace(f"judge:{PASSWORD}", "***")


@pytest.mark.anyio
async def test_credential_headers_are_masked_in_errors() -> None:
    token = "gw-token-5Rk8Lq2Zx7Vn"
    reply = Reply.error(403, f"gateway refused X-Api-Key {token}")
    async with OpenAITestServer([reply]) as server:
        judge = server.judge(default_headers={"X-Api-Key": token, "X-Route": "judges"})
        with pytest.raises(JudgeError) as caught:
            await judge.generate_text(system="s", prompt="p")
    assert server.headers[0]["x-api-key"] == token
    assert caught.value.error_type == "auth_error"
    for text in _texts(caught.value):
        assert _leaks(text, token) == [], text


def test_split_credentials_decodes_percent_escapes_like_the_http_client() -> None:
    url, header, secrets = split_credentials("https://me%40corp:p%3Ass@gw.example/v1")
    assert url == "https://gw.example/v1"
    assert header == "Basic " + base64.b64encode(b"me@corp:p:ss").decode()
    assert "p:ss" in secrets
    assert "p%3Ass" in secrets
