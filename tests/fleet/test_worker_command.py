"""``livescore worker``'s usage errors (exit 2, a message that says what to fix)."""

from __future__ import annotations

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
        "--sinks",
        "--drain-timeout",
        "--heartbeat-timeout",
        "--max-deliveries",
    ):
        assert option in out
