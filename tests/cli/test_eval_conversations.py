"""livescore eval over multi-turn data: the labelled conversations of data/conversations,
scored by the code conversation scorers, with their agreement with the labels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli_support import write_jsonl

from livescore.cli import main
from livescore.evals import load_dataset

DATA = Path(__file__).resolve().parents[2] / "data" / "conversations" / "support_25.jsonl"
LABELS = (
    "forgetful",
    "incomplete",
    "hallucinated",
    "irrelevant",
    "out_of_role",
    "tool_errors",
    "frustrated",
)


@pytest.fixture(autouse=True)
def _wide_plain_output(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    for name in ("LIVESCORE_JUDGE_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_the_labelled_set_is_whole() -> None:
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 25
    assert len({row["id"] for row in rows}) == 25
    for row in rows:
        assert {row[label] for label in LABELS} <= {0, 1}, row["id"]
        assert row["turns"][0]["metadata"]["system_prompt"].startswith("You are ParcelPal")
    # Every label has positives and negatives, so each scorer's agreement means something.
    for label in LABELS:
        assert 0 < sum(row[label] for row in rows) < len(rows), label


def test_eval_scores_the_labelled_conversations_and_their_agreement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.jsonl"
    code = main(
        [
            "eval",
            str(DATA),
            "--scorer",
            "turn-count",
            "--scorer",
            "tool-error-rate",
            "--scorer",
            "user-frustration",
            "--out",
            str(out),
        ]
    )
    printed = capsys.readouterr()
    assert code == 0, printed
    rows = {row["id"]: row for row in map(json.loads, out.read_text().splitlines())}
    assert rows["c21"]["scores"]["tool-error-rate"]["score"] == 0.25
    assert len(rows["c21"]["turns"]) == 3
    assert rows["c20"]["scores"]["tool-error-rate"]["score"] == 1.0
    assert rows["c01"]["scores"]["turn-count"]["score"] == 2.0
    # The labels predicted by the judge scorers not run here are not called unknown.
    assert "unknown field" not in printed.err
    # The conversation scorer predicting a label not run here is the one suggested.
    assert "add --scorer conversation-hallucination --model" in printed.out
    table = printed.out
    tools_title = "Judge quality: how well each scorer predicts 'tool_errors' (label 1)"
    assert tools_title in table
    assert "Judge quality: how well each scorer predicts 'frustrated' (label 1)" in table
    quality = table.split(tools_title)[1]
    lines = quality.splitlines()
    header = [cell.strip() for cell in next(x for x in lines if x.startswith("┃")).split("┃")]
    tool_row = next(line for line in lines if line.startswith("│ tool-error-rate"))
    cells = dict(zip(header, (cell.strip() for cell in tool_row.split("│")), strict=True))
    # 2 of the 3 conversations with a failed tool call reach 0.5 (the third, 1 of 4 calls);
    # every one ranks above every conversation without one (AUROC 1).
    assert cells["accuracy"] == "0.960"
    assert cells["AUROC"] == "1.000"
    # The results file is a dataset again: the same conversations, the same labels.
    again = load_dataset(out, label_fields=["tool_errors"])
    assert again.problems == []
    assert again.formats == {"conversation": 25}
    assert [item["turns"] for item in again.items] == [
        json.loads(line)["turns"] for line in DATA.read_text(encoding="utf-8").splitlines()
    ]
    assert sum(label or 0 for label in again.label_columns["tool_errors"]) == 3


def test_a_conversation_line_with_a_target_is_skipped_with_its_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(
        tmp_path / "data.jsonl",
        [
            {"turns": [{"input": "Hi", "output": "Hello"}]},
            {"input": "Hi"},
        ],
    )
    module = tmp_path / "echo_agent.py"
    module.write_text("def answer(text):\n    return 'echo ' + text\n", encoding="utf-8")
    import sys

    sys.path.insert(0, str(tmp_path))
    try:
        code = main(["eval", str(data), "--target", "echo_agent:answer", "--scorer", "turn-count"])
    finally:
        sys.path.remove(str(tmp_path))
    printed = capsys.readouterr()
    assert code == 0, printed
    assert "--target does not replay conversations" in printed.err
