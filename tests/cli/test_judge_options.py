"""The judge options eval and demo share: written once, resolved into one judge."""

from __future__ import annotations

import pytest

from livescore.cli._common import UsageError
from livescore.cli._judge_options import JUDGE_MODEL_ENV, JudgeOptions
from livescore.cli._main import build_parser
from livescore.judges import OpenAIJudge


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (JUDGE_MODEL_ENV, "OPENAI_BASE_URL", "OPENAI_API_KEY", "MY_JUDGE_KEY"):
        monkeypatch.delenv(name, raising=False)


def _options(*argv: str, command: str = "eval") -> JudgeOptions:
    extra = ["data.jsonl"] if command == "eval" else []
    return JudgeOptions.from_args(build_parser().parse_args([command, *extra, *argv]))


@pytest.mark.parametrize("command", ["eval", "demo"])
def test_both_commands_take_the_same_judge_options(command: str) -> None:
    options = _options(
        "--model",
        "llama3.2",
        "--base-url",
        "http://127.0.0.1:8080/v1",
        "--structured-output",
        "json_object",
        "--judge-concurrency",
        "3",
        "--judge-timeout",
        "12",
        "--judge-mode",
        "one_call",
        command=command,
    )
    assert options == JudgeOptions(
        model="openai/llama3.2",
        base_url="http://127.0.0.1:8080/v1",
        structured_output="json_object",
        concurrency=3,
        timeout=12.0,
        judge_mode="one_call",
    )
    judge = options.resolve()
    assert isinstance(judge, OpenAIJudge)
    assert judge.model_name == "llama3.2"
    assert judge.max_concurrency == 3


def test_the_model_comes_from_the_environment_and_none_means_no_judge(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert _options().resolve() is None
    monkeypatch.setenv(JUDGE_MODEL_ENV, "openai/gpt-4o-mini")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert _options().model == "openai/gpt-4o-mini"


def test_api_key_env_names_where_the_key_is(monkeypatch: pytest.MonkeyPatch) -> None:
    options = _options("--model", "m", "--api-key-env", "MY_JUDGE_KEY")
    with pytest.raises(UsageError, match="MY_JUDGE_KEY: that environment variable is not set"):
        options.resolve()
    monkeypatch.setenv("MY_JUDGE_KEY", "sk-from-my-var")
    assert options.resolve() is not None


@pytest.mark.parametrize(
    ("option", "value"), [("--judge-concurrency", "0"), ("--judge-timeout", "-1")]
)
def test_bad_numbers_are_usage_errors(option: str, value: str) -> None:
    with pytest.raises(SystemExit) as exit_info:
        _options(option, value)
    assert exit_info.value.code == 2


def test_a_missing_api_key_is_said_in_flags_not_python_arguments() -> None:
    # Before: "OpenAIJudge('gpt-4o-mini') has no API key: ... pass api_key=..., or point
    # base_url= ...", advice for a Python caller.
    with pytest.raises(UsageError) as raised:
        _options("--model", "gpt-4o-mini").resolve()
    message = str(raised.value)
    assert "$OPENAI_API_KEY" in message
    assert "--api-key-env" in message
    assert "--base-url" in message
    assert "=..." not in message
    assert "OpenAIJudge(" not in message
    # A key in another variable, or a server that needs none, is enough.
    assert _options("--model", "m", "--base-url", "http://127.0.0.1:9/v1").resolve() is not None
