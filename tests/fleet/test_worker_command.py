"""``livescore worker``'s usage errors (exit 2, a message that says what to fix)."""

from __future__ import annotations

import sys

import pytest

from livescore.cli import main


def test_a_broker_is_required(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LIVESCORE_BROKER", raising=False)
    assert main(["worker", "fleet_scorers:scorers"]) == 2
    assert "--broker URL is required" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_colon_here", "must look like 'module:attribute'"),
        ("no_such_module_xyz:scorers", "cannot import 'no_such_module_xyz'"),
        ("fleet_scorers:nothing", "has no attribute 'nothing'"),
    ],
)
def test_the_scorers_must_be_importable(
    spec: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["worker", spec, "--broker", "redis://127.0.0.1:9/0"]) == 2
    assert message in capsys.readouterr().err


def test_worker_is_listed_in_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["worker", "--help"])
    out = capsys.readouterr().out
    for option in (
        "--broker",
        "--scorer-concurrency",
        "--fleet-judge-rpm",
        "--fleet-judge-concurrency",
        "--judge-budget",
        "--judge-token-budget",
        "--judge-prices",
        "--sinks",
        "--drain-timeout",
        "--heartbeat-timeout",
        "--max-deliveries",
    ):
        assert option in out


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--judge-budget", "5/week"], "the period is one of day, hour, minute, total"),
        (["--judge-budget", "lots"], "expected a number"),
        (["--judge-budget", "0/day"], "expected a positive amount"),
        (["--judge-token-budget", "1.5/day"], "expected a whole number of tokens"),
        (
            ["--judge-budget", "5/day", "--judge-token-budget", "9000/hour"],
            "need the same period",
        ),
        (["--judge-prices", "{broken"], "--judge-prices: the price table is not valid JSON"),
        (
            ["--judge-budget", "5/day", "--judge-prices", '{"other-model": [1, 2]}'],
            "judge model 'test-model' has no known price",
        ),
    ],
)
def test_judge_budget_options_say_what_is_wrong(
    options: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The scorers' module builds a judge for "test-model" (no default price).
    monkeypatch.setenv("FLEET_TEST_JUDGE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.delenv("LIVESCORE_JUDGE_PRICES", raising=False)
    monkeypatch.delitem(sys.modules, "fleet_scorers", raising=False)
    code = main(["worker", "fleet_scorers:scorers", "--broker", "redis://127.0.0.1:9/0", *options])
    assert code == 2
    assert message in capsys.readouterr().err
