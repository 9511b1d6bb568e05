"""Usage errors of the ``livescore`` command: one line, with the nearest option or choice."""

from __future__ import annotations

import pytest

from livescore.cli import main


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        # Before: the top-level usage, with no suggestion.
        (
            ["eval", "data.jsonl", "--scroer", "hallucination"],
            "livescore eval: error: unrecognized arguments: --scroer hallucination; "
            "did you mean --scorer?",
        ),
        (["eval", "data.jsonl", "--limt=3"], "did you mean --limit?"),
        (["worker", "m:scorers", "--brokr", "redis://x"], "did you mean --broker?"),
        (["evl", "data.jsonl"], "invalid choice: 'evl'"),
        (["evl", "data.jsonl"], "did you mean eval?"),
        (["eval", "d.jsonl", "--judge-mode", "onecall"], "did you mean one_call?"),
        # Before: an 18-line usage block above the error.
        (["eval", "data.jsonl", "--limit", "0"], "argument --limit: must be 1 or more, got 0"),
    ],
)
def test_a_usage_error_is_one_line_with_the_nearest_option(
    argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert expected in lines[0]
    assert lines[0].endswith("-h lists the options)")


def test_an_option_far_from_every_known_one_gets_no_guess(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["eval", "data.jsonl", "--zzzzzz"])
    err = capsys.readouterr().err
    assert "did you mean" not in err
    assert err == (
        "livescore eval: error: unrecognized arguments: --zzzzzz "
        "(livescore eval -h lists the options)\n"
    )
