"""``livescore eval``'s files: what it refuses to overwrite, how it writes, what it reads back.

Outputs never replace an input, are written beside the target and renamed (a symbolic link
is followed and stays a link), store each output once, and read back as a dataset (steps
included); hostile lines are skipped with their number; standard input is a dataset too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _cli_support import write_jsonl

from livescore.cli import main

ROWS = [
    {"input": "alpha beta", "output": "alpha beta"},
    {"input": "alpha beta", "output": "alpha"},
]


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# -- outputs that would replace an input (item 1) ------------------------------------------


def test_out_naming_the_dataset_is_refused_and_the_dataset_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", ROWS)
    before = data.read_bytes()
    # Before: exit 0, and the dataset was replaced by the results.
    assert main(["eval", str(data), "--out", str(data), "--quiet"]) == 2
    assert "--out" in capsys.readouterr().err
    assert main(["eval", str(data), "--report", str(data), "--quiet"]) == 2
    assert "is the dataset" in capsys.readouterr().err
    assert data.read_bytes() == before


def test_an_output_reaching_the_dataset_through_a_link_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", ROWS)
    (tmp_path / "alias.jsonl").symlink_to(data)
    before = data.read_bytes()
    assert main(["eval", str(data), "--out", str(tmp_path / "alias.jsonl"), "--quiet"]) == 2
    assert "is the dataset" in capsys.readouterr().err
    assert data.read_bytes() == before


def test_out_and_report_naming_one_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", ROWS)
    same = str(tmp_path / "r.out")
    assert main(["eval", str(data), "--out", same, "--report", same, "--quiet"]) == 2
    assert "--out and --report both name" in capsys.readouterr().err
    assert not Path(same).exists()


def test_out_naming_the_target_module_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    module = tmp_path / "answering_target.py"
    module.write_text("def answer(question):\n    return question\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    data = write_jsonl(tmp_path / "d.jsonl", [{"input": "alpha"}])
    code = main(["eval", str(data), "--target", "answering_target:answer", "--out", str(module)])
    assert code == 2
    assert "the --target module's file" in capsys.readouterr().err
    assert module.read_text(encoding="utf-8").startswith("def answer")


# -- how outputs are written (item 23) -------------------------------------------------------


def test_an_out_link_is_followed_and_stays_a_link(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", ROWS)
    real = tmp_path / "kept" / "results.jsonl"
    real.parent.mkdir()
    real.write_text("old results\n", encoding="utf-8")
    link = tmp_path / "results.jsonl"
    link.symlink_to(real)
    assert main(["eval", str(data), "--out", str(link), "--quiet"]) == 0
    # Before: the link was replaced by a plain file (and its target left stale).
    assert link.is_symlink()
    assert [r["output"] for r in _records(real)] == ["alpha beta", "alpha"]
    assert [p.name for p in real.parent.iterdir()] == ["results.jsonl"]  # no temporary left


CHECKING_TARGET = """
from pathlib import Path

OUT = Path(__file__).with_name("results.jsonl")


def answer(question):
    # What a reader of --out sees while the run is still going.
    return OUT.read_text(encoding="utf-8") if question == "look" else question
"""


def test_out_keeps_the_old_file_until_the_run_has_its_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "checking_target.py").write_text(CHECKING_TARGET, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "results.jsonl"
    out.write_text("the previous run's results\n", encoding="utf-8")
    data = write_jsonl(tmp_path / "d.jsonl", [{"input": "alpha"}, {"input": "look"}])
    code = main(
        [
            *("eval", str(data), "--target", "checking_target:answer", "--concurrency", "1"),
            *("--out", str(out), "--quiet"),
        ]
    )
    assert code == 0
    records = _records(out)
    # Before: the file was truncated at the start and held the partial results meanwhile.
    assert records[1]["output"] == "the previous run's results\n"
    assert records[0]["output"] == "alpha"


def test_a_lone_surrogate_escape_is_written_back_as_an_escape(tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text('{"input": "alpha \\ud800", "output": "alpha \\ud800"}\n', encoding="utf-8")
    out = tmp_path / "r.jsonl"
    # Before: UnicodeEncodeError while writing --out.
    assert main(["eval", str(data), "--out", str(out), "--report", str(tmp_path / "r.html")]) == 0
    line = out.read_text(encoding="utf-8")
    assert "\\ud800" in line
    assert json.loads(line)["output"] == "alpha \ud800"
    assert "alpha \ufffd" in (tmp_path / "r.html").read_text(encoding="utf-8")


# -- what a record holds, and reading it back (items 13, 16) ---------------------------------


def test_out_stores_each_output_once(tmp_path: Path) -> None:
    big = "alpha " * 20_000
    data = write_jsonl(tmp_path / "d.jsonl", [{"input": "alpha", "output": big}])
    out = tmp_path / "r.jsonl"
    assert main(["eval", str(data), "--out", str(out), "--quiet"]) == 0
    text = out.read_text(encoding="utf-8")
    # Before: output, output_text and run.output: three copies.
    assert text.count(big) == 1
    (record,) = _records(out)
    assert record["output"] == big
    assert "run" not in record
    assert "output_text" not in record


TOOL_CALL = {
    "kind": "tool",
    "name": "get_weather",
    "tool_call": {
        "name": "get_weather",
        "call_id": "c1",
        "args": {"city": "Paris"},
        "result": {"sky": "sunny"},
    },
}


def test_a_dataset_line_carries_its_steps_to_tool_scorers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(
        tmp_path / "d.jsonl",
        [
            {"input": "Weather?", "output": "Sunny.", "steps": [TOOL_CALL]},
            {"input": "Weather?", "output": "Sunny."},
        ],
    )
    out = tmp_path / "r.jsonl"
    code = main(
        [
            *("eval", str(data), "--scorer", "tool-call-accuracy:get_weather"),
            *("--out", str(out), "--quiet"),
        ]
    )
    assert code == 0, capsys.readouterr().err
    first, second = _records(out)
    # Before: 'steps' was kept as metadata and every line scored 0.
    assert first["scores"]["tool-call-accuracy"]["score"] == 1.0
    assert second["scores"]["tool-call-accuracy"]["score"] == 0.0
    assert first["steps"][0]["tool_call"]["args"] == {"city": "Paris"}
    assert "unknown field" not in capsys.readouterr().err


def test_out_records_read_back_as_a_dataset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(
        tmp_path / "d.jsonl",
        [
            {"id": "a", "input": "Weather?", "output": "Sunny.", "steps": [TOOL_CALL]},
            {"id": "b", "input": "alpha beta", "output": "alpha", "source": "faq"},
        ],
    )
    first_out, second_out = tmp_path / "r1.jsonl", tmp_path / "r2.jsonl"
    scorers = ["--scorer", "tool-call-accuracy:get_weather", "--scorer", "keyword-coverage"]
    assert main(["eval", str(data), *scorers, "--out", str(first_out), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["eval", str(first_out), *scorers, "--out", str(second_out), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "skipped" not in err
    assert "unknown field" not in err
    again = _records(second_out)
    for before, after in zip(_records(first_out), again, strict=True):
        for field in ("id", "input", "output", "steps", "metadata"):
            assert after.get(field) == before.get(field), field
        assert after["scores"].keys() == before["scores"].keys()
        for sid in after["scores"]:
            assert after["scores"][sid]["score"] == before["scores"][sid]["score"]
    assert again[1]["metadata"] == {"source": "faq"}


# -- hostile and plentiful bad lines (items 11, 23) ------------------------------------------


def test_a_line_nested_too_deep_is_skipped_with_its_number(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deep = '{"input": "x", "output": ' + "[" * 200_000 + "]" * 200_000 + "}"
    medium = '{"input": "x", "output": "y", "m": ' + "[" * 500 + "]" * 500 + "}"
    data = write_jsonl(tmp_path / "d.jsonl", [ROWS[0], deep, medium, ROWS[1]])
    out = tmp_path / "r.jsonl"
    # Before: RecursionError, and the whole evaluation aborted.
    assert main(["eval", str(data), "--out", str(out), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert f"{data}:2: nested more than 100 levels deep" in err
    assert f"{data}:3: nested more than 100 levels deep" in err
    assert [r["line"] for r in _records(out)] == [1, 4]


def test_many_bad_lines_print_a_few_and_a_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", [ROWS[0]] + ["{broken"] * 20_000)
    assert main(["eval", str(data), "--quiet", "--report", str(tmp_path / "r.html")]) == 0
    err = capsys.readouterr().err
    # Before: 20,000 "skipped" lines.
    assert err.count("skipped ") <= 7
    assert "19995 more line(s)" in err
    assert (tmp_path / "r.html").read_text(encoding="utf-8").count("invalid JSON") >= 20_000


def test_fail_on_bad_lines_fails_ci_on_any_skipped_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clean = write_jsonl(tmp_path / "clean.jsonl", ROWS)
    assert main(["eval", str(clean), "--quiet", "--fail-on-bad-lines"]) == 0
    dirty = write_jsonl(tmp_path / "dirty.jsonl", [*ROWS, "{broken"])
    assert main(["eval", str(dirty), "--quiet"]) == 0
    assert main(["eval", str(dirty), "--quiet", "--fail-on-bad-lines"]) == 1
    assert "--fail-on-bad-lines: 1 line(s) were skipped" in capsys.readouterr().err


def test_many_unknown_fields_are_named_a_few_and_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = {"input": "alpha", "output": "alpha", **{f"field_{i}": i for i in range(200_000)}}
    data = write_jsonl(tmp_path / "d.jsonl", [line])
    assert main(["eval", str(data), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "'field_0' (1 line(s))" in err  # the first ones, in the line's order
    assert "and 199990 more" in err
    assert len(err) < 2000  # before: all 200,000 names


# -- standard input, python -m (item 18) -----------------------------------------------------


def _cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LIVESCORE_"))}
    return subprocess.run(
        [sys.executable, *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_python_m_livescore_runs_the_command() -> None:
    done = _cli("-m", "livescore", "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("livescore ")


def test_a_dash_reads_the_dataset_from_standard_input(tmp_path: Path) -> None:
    lines = "\n".join(json.dumps(r) for r in ROWS) + "\n{broken\n"
    out = tmp_path / "r.jsonl"
    done = _cli("-m", "livescore", "eval", "-", "--out", str(out), "--quiet", stdin=lines)
    assert done.returncode == 0, done.stderr
    assert "scoring 2 item(s) from <stdin>" in done.stderr
    assert "<stdin>:3: invalid JSON" in done.stderr
    assert [r["output"] for r in _records(out)] == ["alpha beta", "alpha"]
