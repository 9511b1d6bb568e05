"""ResultsFile: the lines of ``livescore eval --out``, written as items finish, then put in
data order (moved here from tests/cli/test_eval_files.py with the class)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from livescore.evals import Dataset, ItemResult, ResultsFile


@pytest.mark.parametrize("in_data_order", [True, False])
def test_the_results_file_puts_lines_in_data_order_by_reading_them_back(
    tmp_path: Path, in_data_order: bool
) -> None:
    # A results file (livescore eval --out) holds where each line lies, not its text: the
    # lines (multi-byte text among them) are read back from the file in data order when
    # the run completed.

    dataset = Dataset(items=[{}] * 4, lines=[2, 3, 5, 7], labels=[None] * 4)
    path = tmp_path / "results.jsonl"
    results = ResultsFile(path, dataset)
    finished = [2, 0, 3, 1]
    for index in finished:
        results.add(ItemResult(index=index, input=f"q{index}", output=f"réponse {index} ✓"))
    results.finish(in_data_order=in_data_order)
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    order = [0, 1, 2, 3] if in_data_order else finished
    assert [r["index"] for r in records] == order
    assert [r["line"] for r in records] == [dataset.lines[i] for i in order]
    assert [r["output"] for r in records] == [f"réponse {i} ✓" for i in order]
    assert results.error is None
    assert [p.name for p in tmp_path.iterdir()] == ["results.jsonl"]  # no temporary left


def test_a_results_file_fed_by_run_evals_reads_back_as_a_dataset(tmp_path: Path) -> None:
    # What a notebook user writes: ResultsFile.add as on_item_complete.
    from livescore import create_scorer
    from livescore.evals import load_dataset, run_evals_sync

    short = create_scorer(
        id="short",
        description="1 when the answer is short",
        generate_score=lambda ctx: float(len(ctx.output_text) < 5),
    )
    data = [{"id": str(i), "input": f"q{i}", "output": "x" * i} for i in range(6)]
    path = tmp_path / "out.jsonl"
    results = ResultsFile(path)
    result = run_evals_sync(
        data, [short], on_item_complete=results.add, concurrency=3, keep_items=False
    )
    results.finish(in_data_order=True)
    assert result.items == []
    assert result.item_count == 6
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in records] == [str(i) for i in range(6)]
    assert [r["scores"]["short"]["score"] for r in records] == [1.0] * 5 + [0.0]
    again = load_dataset(path)
    assert [item["output"] for item in again.items] == ["x" * i for i in range(6)]
