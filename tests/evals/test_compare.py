"""EvalResult.compare: pairing by id then input, the two paired tests and their verdicts,
the direction of each scorer, the items that moved (regressions first)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from livescore import create_scorer
from livescore.evals import (
    BaselineError,
    EvalResult,
    load_baseline,
    run_evals_sync,
    summary_markdown,
)
from livescore.evals._compare import mcnemar_exact, paired_bootstrap


def _scorer(sid: str, scores: dict[str, float]) -> Any:
    """A code scorer reading each item's score from a table (by output)."""
    return create_scorer(
        id=sid,
        description="table",
        generate_score=lambda ctx: scores[ctx.output_text],
        generate_reason=lambda ctx: f"scored {ctx.score}",
    )


def _run(sid: str, scores: list[float], *, ids: bool = True) -> EvalResult:
    table = {f"out-{i}": s for i, s in enumerate(scores)}
    data = [
        {**({"id": f"q{i}"} if ids else {}), "input": f"in-{i}", "output": f"out-{i}"}
        for i in range(len(scores))
    ]
    return run_evals_sync(data, [_scorer(sid, table)])


def _records(result: EvalResult) -> list[dict[str, Any]]:
    return [item.to_dict() for item in result.items]


def test_identical_runs_show_no_change() -> None:
    scores = [0.1 * (i % 10) for i in range(50)]
    comparison = _run("s", scores).compare(_records(_run("s", scores)))
    c = comparison.scorers["s"]
    assert (c.n, c.change, c.interval, c.verdict) == (50, 0.0, (0.0, 0.0), "no significant change")
    assert comparison.items == []
    assert (comparison.matched, comparison.new, comparison.missing) == (50, 0, 0)


def test_a_consistent_drop_is_a_significant_regression_for_a_higher_is_better_scorer() -> None:
    before = [0.8] * 30
    after = [0.6] * 10 + [0.8] * 20
    comparison = _run("s", after).compare(_records(_run("s", before)))
    c = comparison.scorers["s"]
    assert c.test == "paired bootstrap"
    assert c.change == pytest.approx(-0.2 / 3)
    assert c.interval is not None
    assert c.interval[1] < 0
    assert c.verdict == "regressed"
    assert comparison.regressed == ["s"]
    assert [i.key for i in comparison.regressed_items] == [f"id:q{i}" for i in range(10)]
    assert comparison.regressed_items[0].baseline_reason == "scored 0.8"
    assert comparison.regressed_items[0].reason == "scored 0.6"


def test_a_rise_is_a_regression_where_higher_is_worse() -> None:
    before = [0.2] * 30
    after = [0.6] * 10 + [0.2] * 20
    old = _records(_run("hallucination-like", before))
    result = _run("hallucination-like", after)
    assert result.compare(old).scorers["hallucination-like"].verdict == "improved"
    worse = result.compare(old, higher_is_better={"hallucination-like": False})
    assert worse.scorers["hallucination-like"].verdict == "regressed"


def test_labels_use_mcnemar_and_few_flips_are_not_significant() -> None:
    before = [1.0] * 40
    few = [0.0] * 3 + [1.0] * 37
    many = [0.0] * 8 + [1.0] * 32
    c = _run("s", few).compare(_records(_run("s", before))).scorers["s"]
    assert c.test == "McNemar"
    assert (c.went_bad, c.went_good) == (3, 0)
    assert c.p_value == pytest.approx(0.25)
    assert c.verdict == "no significant change"
    c = _run("s", many).compare(_records(_run("s", before))).scorers["s"]
    assert c.p_value == pytest.approx(2 / 2**8)
    assert c.verdict == "regressed"
    assert c.bad_interval is not None
    assert c.bad_interval[0] > 0


def test_items_without_ids_pair_by_input_and_repeats_pair_in_order(tmp_path: Path) -> None:
    old = _run("s", [0.5, 0.5, 0.5], ids=False)
    new = _run("s", [0.5, 0.9, 0.5, 0.5], ids=False)
    path = tmp_path / "old.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _records(old)))
    comparison = new.compare(path)
    assert (comparison.matched, comparison.new, comparison.missing) == (3, 1, 0)
    assert [i.key for i in comparison.items] == ['input:"in-1"']
    assert not comparison.items[0].regressed  # 0.5 -> 0.9: better


def test_regressions_come_before_improvements_worst_first() -> None:
    before = [0.5] * 6
    after = [0.9, 0.3, 0.5, 0.0, 0.7, 0.5]
    comparison = _run("s", after).compare(_records(_run("s", before)))
    assert [(i.key, i.regressed) for i in comparison.items] == [
        ("id:q3", True),
        ("id:q1", True),
        ("id:q0", False),
        ("id:q4", False),
    ]


def test_a_scorer_the_baseline_lacks_is_not_compared() -> None:
    comparison = _run("new", [0.5]).compare(_records(_run("old", [0.5])))
    assert comparison.scorers == {}


def test_a_baseline_that_is_not_a_results_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "b.jsonl"
    path.write_text('{"input": "x", "output": "y"}\n')
    with pytest.raises(BaselineError, match=r":1: not a results record"):
        load_baseline(path)
    with pytest.raises(BaselineError, match="No such file"):
        load_baseline(tmp_path / "missing.jsonl")


def test_the_summary_without_a_baseline_lists_the_means() -> None:
    text = summary_markdown(_run("s", [0.25, 0.75]))
    assert "| s | 0.500 | 2 | 0 |" in text
    assert "no baseline" in text


def test_a_pipe_in_an_id_does_not_break_the_summary_table() -> None:
    before = _run("s", [1.0] * 3)
    for item in before.items:
        item.id = f"a|{item.index}"
    after = _run("s", [0.0] * 3)
    for item in after.items:
        item.id = f"a|{item.index}"
    text = summary_markdown(after, after.compare(_records(before)))
    assert "| a\\|0 | s | 1.000 | 0.000 |" in text


def test_the_statistics_agree_with_their_definitions() -> None:
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(5, 0) == pytest.approx(2 / 32)
    assert mcnemar_exact(1, 12) == mcnemar_exact(12, 1) == pytest.approx(2 * 14 / 2**13)
    low, high = paired_bootstrap([1.0, -1.0] * 50)
    assert low < 0 < high
    assert paired_bootstrap([0.1, 0.2, 0.3]) == paired_bootstrap([0.1, 0.2, 0.3])  # seeded
