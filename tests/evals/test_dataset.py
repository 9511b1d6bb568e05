"""Dataset lines: both formats, labels, and bad lines reported by number."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from livescore.evals import load_dataset
from livescore.evals._dataset import parse_line


def _write(path: Path, lines: list[str | bytes]) -> Path:
    with path.open("wb") as out:
        for line in lines:
            out.write(line if isinstance(line, bytes) else line.encode("utf-8"))
            out.write(b"\n")
    return path


def test_both_formats_and_bad_lines(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "data.jsonl",
        [
            json.dumps({"input": "q1", "output": "a1", "context": ["c1", "c2"], "id": 7}),
            "",
            "{not json",
            json.dumps(
                {
                    "question": "q2",
                    "context": "ctx",
                    "output": "a2",
                    "hallucinated": 1,
                    "dataset": "HaluEval",
                    "sourse": "typo",
                }
            ),
            json.dumps({"output": "no input"}),
            json.dumps(["a", "list"]),
            b"\xff\xfe broken bytes",
            json.dumps({"input": "q3"}),
            json.dumps({"input": "q4", "output": "a4", "hallucinated": 2}),
            json.dumps({"input": "q5", "output": "a5", "context": 5}),
            json.dumps({"input": "  ", "output": "a"}),
        ],
    )
    ds = load_dataset(path)

    assert ds.lines == [1, 4, 11]
    assert ds.items[2] == {"input": "  ", "output": "a"}  # a scorer decides what it needs
    assert ds.unknown_fields == {"sourse": 1}  # provenance fields (dataset, task) are known
    assert ds.items[0] == {"input": "q1", "output": "a1", "context": ["c1", "c2"], "id": "7"}
    assert ds.items[1] == {
        "input": "q2",
        "output": "a2",
        "context": ["ctx"],
        "metadata": {"hallucinated": 1, "dataset": "HaluEval", "sourse": "typo"},
    }
    assert ds.labels == [None, 1, None]
    assert ds.labelled
    assert ds.formats == {"livescore": 2, "hallucination": 1}
    problems = {p.line: p.message for p in ds.problems}
    assert sorted(problems) == [3, 5, 6, 7, 8, 9, 10]
    assert problems[3].startswith("invalid JSON")
    assert problems[5] == "missing field 'input' (or 'question')"
    assert problems[6] == "expected a JSON object, got list"
    assert problems[7].startswith("not valid UTF-8")
    assert "missing field 'output'" in problems[8]
    assert problems[9] == "'hallucinated' must be 0 or 1, not 2"
    assert problems[10] == "'context' must be a string or a list of strings"
    assert str(ds.problems[0]) == f"line 3: {problems[3]}"


def test_output_is_optional_with_a_target_which_needs_an_input(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "inputs.jsonl",
        [json.dumps({"input": "q", "ground_truth": "a"}), json.dumps({"input": " "})],
    )
    ds = load_dataset(path, require_output=False, require_input=True)
    assert ds.items == [{"input": "q", "ground_truth": "a"}]
    assert [str(p) for p in ds.problems] == [
        "line 2: the input is empty, and the target needs one to answer"
    ]
    assert not ds.labelled


def test_summedits_lines_with_an_empty_question_are_kept() -> None:
    # Every SummEdits line has question "" (a summary has no question); the hallucination
    # scorer does not need one. Before: all 200 lines were skipped as "the input is empty".
    root = Path(__file__).resolve().parents[2] / "data" / "hallucination"
    ds = load_dataset(root / "summedits_200.jsonl")
    assert len(ds.items) == 200
    assert ds.problems == []
    assert ds.unknown_fields == {}
    assert {item["input"] for item in ds.items} == {""}


def test_a_utf8_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"input": "q", "output": "a"}).encode() + b"\n")
    ds = load_dataset(path)
    assert ds.problems == []
    assert ds.items == [{"input": "q", "output": "a"}]


def test_shipped_hallucination_data_reads_cleanly() -> None:
    root = Path(__file__).resolve().parents[2] / "data" / "hallucination"
    ds = load_dataset(root / "halueval_qa_200.jsonl")
    assert len(ds.items) == 200
    assert ds.problems == []
    assert sorted(set(ds.labels)) == [0, 1]


def test_the_held_out_expertqa_slice_reads_cleanly_and_is_balanced() -> None:
    # The judge-quality benchmark's held-out set: RAG answers' claims beside their passages.
    root = Path(__file__).resolve().parents[2] / "data" / "hallucination"
    ds = load_dataset(root / "expertqa_rag_200.jsonl")
    assert len(ds.items) == 200
    assert ds.problems == []
    assert ds.unknown_fields == {}
    assert sorted(ds.labels.count(label) for label in (0, 1)) == [100, 100]
    assert all(item["context"] and item["input"] for item in ds.items)
    assert (root / "LICENSE.expertqa").read_text().startswith("MIT License")


def test_an_input_or_output_that_is_not_text_is_a_bad_line(tmp_path: Path) -> None:
    # Before: {"input": 5, ...} was an item that every scorer skipped, unseen by
    # --fail-on-bad-lines, though the docs call it a bad line.
    path = _write(
        tmp_path / "mixed.jsonl",
        [
            json.dumps({"input": 5, "output": "five"}),
            json.dumps({"input": "q", "output": True}),
            json.dumps({"input": "q", "output": [1, 2]}),
            json.dumps({"input": {"topic": "bears"}, "output": "Bears sleep."}),
            json.dumps({"input": [{"role": "user", "content": "Hi"}], "output": "Hello."}),
        ],
    )
    ds = load_dataset(path)
    assert [str(p) for p in ds.problems] == [
        "line 1: 'input' must be text (a string, a message list or an object), not int 5",
        "line 2: 'output' must be text (a string, a message list or an object), not bool true",
        "line 3: 'output' must be text (a string, a message list or an object), not list [1, 2]",
    ]
    assert [item["output"] for item in ds.items] == ["Bears sleep.", "Hello."]
    # A target takes whatever input it was written for.
    inputs = load_dataset(path, require_output=False, require_input=True)
    assert inputs.items[0]["input"] == 5


def test_parse_line_rejects_null_output() -> None:
    with pytest.raises(ValueError, match="'output' is null"):
        parse_line({"input": "q", "output": None}, require_output=True)
    with pytest.raises(ValueError, match="'metadata' must be an object"):
        parse_line({"input": "q", "output": "a", "metadata": 3}, require_output=True)


def test_conversation_lines_carry_their_turns_and_labels(tmp_path: Path) -> None:
    turns = [
        {"input": "Where is order 7?", "output": "In Lyon."},
        {"input": "And order 8?", "output": "Delayed.", "tool_calls": [{"name": "t"}]},
    ]
    path = _write(
        tmp_path / "data.jsonl",
        [
            json.dumps({"id": "c1", "turns": turns, "forgetful": 1, "source": "made"}),
            json.dumps({"id": "c2", "turns": []}),
            json.dumps({"turns": [{"input": "Hi"}]}),
            json.dumps({"turns": [{"input": "Hi", "output": "Hello"}], "forgetful": 2}),
        ],
    )
    dataset = load_dataset(path, label_fields=["forgetful"])
    assert dataset.items == [
        {"turns": turns, "id": "c1", "metadata": {"forgetful": 1, "source": "made"}}
    ]
    assert dataset.label_columns["forgetful"] == [1]
    assert dataset.formats == {"conversation": 1}
    assert [str(p) for p in dataset.problems] == [
        "line 2: 'turns' must be a non-empty list of {input, output} objects",
        "line 3: turn 1: missing field 'output'",
        "line 4: 'forgetful' must be 0 or 1, not 2",
    ]


def test_a_target_cannot_replay_a_conversation_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "data.jsonl", [json.dumps({"turns": [{"input": "Hi"}]})])
    dataset = load_dataset(path, require_output=False)
    assert dataset.items == []
    assert "--target does not replay conversations" in str(dataset.problems[0])
