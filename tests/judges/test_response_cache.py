"""ResponseCache: the key covers everything that decides an answer; an answer serves the next
run; it stays under its bound; a corrupt file is a miss; the judge's transport counts a hit
as no call and no tokens (against the test server)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from pydantic import BaseModel

from livescore.judges import JudgeConfigError, ResponseCache
from livescore.testing import OpenAITestServer


class _Verdict(BaseModel):
    verdict: str


def test_the_key_changes_with_every_part_of_the_request() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 0}
    key = ResponseCache.key("http://a/v1", body)
    assert key == ResponseCache.key("http://a/v1", dict(reversed(list(body.items()))))
    assert key != ResponseCache.key("http://b/v1", body)
    for change in (
        {"model": "n"},
        {"messages": [{"role": "user", "content": "hi!"}]},
        {"temperature": 0.7},
        {"max_tokens": 1, "logprobs": True},
        {"response_format": {"type": "json_schema", "json_schema": {"name": "x"}}},
    ):
        assert ResponseCache.key("http://a/v1", {**body, **change}) != key


def test_an_answer_serves_the_next_run_not_the_one_that_stored_it(tmp_path: Path) -> None:
    run = ResponseCache(tmp_path)
    run.put("k", {"usage": {"prompt_tokens": 7, "completion_tokens": 3}})
    assert run.get("k") is None
    rerun = ResponseCache(tmp_path)
    assert rerun.get("k") == {"usage": {"prompt_tokens": 7, "completion_tokens": 3}}
    stats = rerun.stats
    assert (stats.hits, stats.saved_input_tokens, stats.saved_output_tokens) == (1, 7, 3)


def test_the_cache_stays_under_its_bound_dropping_the_least_recently_used(
    tmp_path: Path,
) -> None:
    writer = ResponseCache(tmp_path, max_bytes=10_000)
    for i in range(40):
        writer.put(f"k{i}", {"text": "x" * 900, "i": i})
    reader = ResponseCache(tmp_path, max_bytes=10_000)
    kept = [i for i in range(40) if reader.get(f"k{i}") is not None]
    assert kept
    assert kept == list(range(40 - len(kept), 40))
    assert len(kept) * 900 <= 10_000
    assert tmp_path.joinpath("judge-responses.sqlite3").exists()


def test_a_corrupt_file_is_a_miss_and_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "judge-responses.sqlite3").write_bytes(b"\x00garbage" * 512)
    cache = ResponseCache(tmp_path)
    assert cache.get("k") is None
    cache.put("k", {"a": 1})
    assert cache.get("k") is None
    assert cache.problem is not None
    assert len([r for r in caplog.records if r.levelname == "WARNING"]) == 1


def test_a_bad_bound_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="max_bytes"):
        ResponseCache(tmp_path, max_bytes=0)


def test_the_judge_counts_a_hit_as_no_call_and_no_tokens(tmp_path: Path) -> None:
    async def ask(server: OpenAITestServer) -> tuple[str, int, int, int]:
        judge = server.judge(response_cache=ResponseCache(tmp_path))
        reply = await judge.generate_object(system="s", prompt="p", schema=_Verdict)
        await judge.aclose()
        usage = reply.usage
        return reply.value.verdict, usage.calls, usage.total_tokens, usage.cached

    with OpenAITestServer(responder=lambda body: {"verdict": "yes"}) as server:
        first = anyio.run(ask, server)
        second = anyio.run(ask, server)
        assert len(server.requests) == 1
    assert first[0] == second[0] == "yes"
    assert first[1] == 1
    assert first[2] > 0
    assert first[3] == 0
    assert second[1:] == (0, 0, 1)


def test_a_judge_takes_only_a_response_cache(tmp_path: Path) -> None:
    with OpenAITestServer() as server:
        judge = server.judge()
        assert judge.response_cache is None
        with pytest.raises(JudgeConfigError, match="ResponseCache"):
            judge.response_cache = str(tmp_path)  # type: ignore[assignment]
