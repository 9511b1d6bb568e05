"""livescore eval says, in one line, when its default scorers leave out hallucination
although the data has context it could be checked against (no judge configured)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _cli_support import hallucination_responder, write_jsonl

from livescore.cli import main
from livescore.testing import OpenAITestServer

ROWS = [
    {
        "input": "When was the first iPhone announced?",
        "output": "It was announced in January 2007.",
        "context": ["The first iPhone was announced on January 9, 2007."],
    },
    {"input": "Weather in Paris?", "output": "Sunny in Paris."},
    {
        # Context from the run's own tool call, as a results file or a trace holds it.
        "input": "Weather in Lyon?",
        "output": "Sunny in Lyon.",
        "steps": [
            {
                "kind": "tool",
                "name": "get_weather",
                "tool_call": {"name": "get_weather", "args": {"city": "Lyon"}, "result": "sunny"},
            }
        ],
    },
]

LEFT_OUT = "Hallucination scoring is left out"


def test_data_with_context_and_no_judge_says_what_is_left_out_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "answers.jsonl", ROWS)
    assert main(["eval", str(data)]) == 0
    err = capsys.readouterr().err
    notes = [line for line in err.splitlines() if LEFT_OUT in line]
    assert notes == [
        "Hallucination scoring is left out: 2 of 3 item(s) have context to check the answers "
        "against, but the hallucination scorer needs a judge model: pass --model "
        "openai/<model> or set LIVESCORE_JUDGE_MODEL (the endpoint comes from --base-url or "
        "OPENAI_BASE_URL, the key from $OPENAI_API_KEY)."
    ]


@pytest.mark.parametrize(
    ("rows", "extra"),
    [
        (ROWS[1:2], []),  # no context: nothing the scorer could check
        (ROWS, ["--scorer", "keyword-coverage"]),  # scorers the user chose
    ],
    ids=["no-context", "scorers-chosen"],
)
def test_nothing_is_said_when_nothing_is_left_out(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    rows: list[dict[str, object]],
    extra: list[str],
) -> None:
    data = write_jsonl(tmp_path / "answers.jsonl", rows)
    assert main(["eval", str(data), *extra]) == 0
    err = capsys.readouterr().err
    assert "scoring " in err  # the command ran and spoke
    assert LEFT_OUT not in err


def test_with_a_judge_hallucination_runs_and_nothing_is_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "answers.jsonl", ROWS[:1])
    with OpenAITestServer(responder=hallucination_responder) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        code = main(["eval", str(data), "--model", "openai/test-judge"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "with hallucination, keyword-coverage" in err
    assert LEFT_OUT not in err
