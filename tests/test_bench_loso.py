"""``bench/_loso.py``: the leave-one-set-out choice of a judge prompt, on synthetic cells.

No judge: each cell is a list of items with a label and a score, made here so the right
choice is known in advance.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
SETS = ("s1", "s2", "s3")


@pytest.fixture(scope="module")
def loso() -> ModuleType:
    bench = str(ROOT / "bench")
    if bench not in sys.path:
        sys.path.insert(0, bench)
    return importlib.import_module("_loso")


def cell(
    name: str, positives: list[float], negatives: list[float], tokens: int
) -> list[dict[str, Any]]:
    """Items of one set: ``positives`` are the hallucinated items' scores."""
    items = [{"label": 1, "score": s} for s in positives]
    items += [{"label": 0, "score": s} for s in negatives]
    return [{**it, "id": f"{name}-{i}", "tokens": tokens} for i, it in enumerate(items)]


def spread(low: float, high: float, n: int = 20) -> list[float]:
    return [low + (high - low) * i / (n - 1) for i in range(n)]


# Ranks perfectly, but every score is above 0.5: at the fixed threshold it calls everything
# hallucinated (balanced accuracy 0.5); with a threshold chosen on labels it is perfect.
def ranks_well(name: str, tokens: int = 300) -> list[dict[str, Any]]:
    return cell(name, spread(0.8, 0.95), spread(0.55, 0.75), tokens)


# Right at the fixed threshold on most items (balanced accuracy 0.8), but its scores mix the
# classes more: a lower AUROC.
def fixed_threshold_only(name: str, tokens: int = 300) -> list[dict[str, Any]]:
    return cell(
        name,
        spread(0.6, 0.9, 16) + spread(0.1, 0.4, 4),
        spread(0.1, 0.45, 16) + spread(0.55, 0.95, 4),
        tokens,
    )


def test_the_choice_ranks_by_auroc_and_held_out_accuracy_not_the_fixed_threshold(
    loso: ModuleType,
) -> None:
    cells = {}
    for s in SETS:
        cells[s, "rules"] = fixed_threshold_only(s)
        cells[s, "plain"] = ranks_well(s)
    assert loso.set_figures(cells["s1", "rules"])["balanced_accuracy"] == pytest.approx(0.8)
    assert loso.set_figures(cells["s1", "plain"])["balanced_accuracy"] == pytest.approx(0.5)
    table = loso.loso_table(cells, SETS, [], ["rules", "plain"])
    assert [row["chosen"] for row in table["rows"]] == ["plain"] * 3
    for row in table["rows"]:
        # The threshold comes from the other sets' items, and holds on the one left out.
        assert 0.75 < row["threshold"] < 0.8
        assert row["balanced_accuracy"] == pytest.approx(1.0)
        assert row["auroc"] == pytest.approx(1.0)
    assert table["default"]["chosen"] == "plain"


def test_candidates_that_transfer_equally_go_to_the_cheaper_one(loso: ModuleType) -> None:
    cells = {(s, "dear"): ranks_well(s, tokens=600) for s in SETS}
    cells |= {(s, "cheap"): ranks_well(s, tokens=150) for s in SETS}
    table = loso.loso_table(cells, SETS, [], ["dear", "cheap"])
    assert [row["chosen"] for row in table["rows"]] == ["cheap"] * 3
    assert all(row["tied"] == ["dear", "cheap"] for row in table["rows"])
    assert [row["tokens_per_item"] for row in table["rows"]] == [150] * 3


def test_the_set_left_out_never_takes_part_in_its_own_choice(loso: ModuleType) -> None:
    # "local" ranks perfectly on s3 alone and badly elsewhere; "steady" ranks well enough
    # everywhere. Left out, s3 cannot pull the choice towards "local".
    cells = {(s, "steady"): cell(s, spread(0.5, 0.9), spread(0.2, 0.6), 100) for s in SETS}
    cells |= {(s, "local"): cell(s, spread(0.2, 0.6), spread(0.4, 0.8), 100) for s in SETS}
    cells["s3", "local"] = ranks_well("s3", tokens=100)
    table = loso.loso_table(cells, SETS, [], ["local", "steady"])
    rows = {row["left_out"]: row for row in table["rows"]}
    assert rows["s3"]["chosen_on"] == ["s1", "s2"]
    assert rows["s3"]["chosen"] == "steady"
    merits = rows["s3"]["merits"]["local"]
    alone = [loso.set_figures(cells[s, "local"]) for s in ("s1", "s2")]
    assert merits["mean_auroc"] == pytest.approx(sum(f["auroc"] for f in alone) / 2)


def test_a_held_out_set_reports_every_candidate_with_the_shipped_sets_threshold(
    loso: ModuleType,
) -> None:
    cells = {(s, c): ranks_well(s) for s in (*SETS, "held") for c in ("a", "b")}
    table = loso.loso_table(cells, SETS, ["held"], ["a", "b"])
    [entry] = table["held_out"]
    assert entry["chosen"] == table["default"]["chosen"] == "a"
    assert entry["chosen_on"] == list(SETS)
    assert set(entry["candidates"]) == {"a", "b"}
    for figures in entry["candidates"].values():
        assert figures["threshold"] == table["default"]["threshold"]
        assert figures["threshold_from"] == "shipped sets"
        assert figures["balanced_accuracy"] == pytest.approx(1.0)
    assert entry["missing_cells"] == []


def test_missing_cells_are_named_instead_of_figures(loso: ModuleType) -> None:
    cells = {(s, "a"): ranks_well(s) for s in ("s1", "s2")}
    cells["held", "a"] = ranks_well("held")
    table = loso.loso_table(cells, SETS, ["held"], ["a", "b"])
    rows = {row["left_out"]: row for row in table["rows"]}
    # Left out s3: chosen on s1 and s2, but s3 has no cell to report on.
    assert "chosen" not in rows["s3"]
    assert "s3 · a" in rows["s3"]["missing_cells"]
    # Left out s1: "a" lacks s3, so no candidate has every set it is chosen on.
    assert "chosen" not in rows["s1"]
    assert table["default"] is None
    [entry] = table["held_out"]
    assert entry["candidates"]["a"]["threshold_from"] == "fixed 0.5"
    assert entry["missing_cells"] == ["held · b"]


def test_unscored_items_are_left_out_of_the_figures_and_counted(loso: ModuleType) -> None:
    items = ranks_well("s1")
    items[0] = {**items[0], "score": None}
    figures = loso.set_figures(items)
    assert (figures["n"], figures["scored"]) == (40, 39)
    assert figures["auroc"] == pytest.approx(1.0)


def test_no_choice_is_made_while_a_candidate_lacks_a_cell(loso: ModuleType) -> None:
    # "a" has every cell, "b" lacks s2's: choosing "a" because it alone is complete would be
    # no choice, so every row that needs s2 and the default say what is missing.
    cells = {(s, "a"): ranks_well(s) for s in SETS}
    cells |= {(s, "b"): ranks_well(s, tokens=100) for s in ("s1", "s3")}
    table = loso.loso_table(cells, SETS, [], ["a", "b"])
    rows = {row["left_out"]: row for row in table["rows"]}
    assert "chosen" not in rows["s1"]
    assert "chosen" not in rows["s3"]
    assert rows["s1"]["missing_cells"] == ["s2 · b"]
    # Left out s2, both are complete on s1 and s3 and the cheaper "b" is chosen, but s2 has
    # no cell of "b" to report on: the row names it.
    assert rows["s2"]["missing_cells"] == ["s2 · b"]
    assert table["default"] is None


def test_a_cell_stopped_part_way_never_makes_a_choice(loso: ModuleType) -> None:
    cells = {(s, c): ranks_well(s) for s in (*SETS, "held") for c in ("a", "b")}
    stopped = [("s2", "b")]
    table = loso.loso_table(cells, SETS, ["held"], ["a", "b"], partial=stopped)
    rows = {row["left_out"]: row for row in table["rows"]}
    assert rows["s1"]["missing_cells"] == ["s2 · b"]
    assert rows["s3"]["missing_cells"] == ["s2 · b"]
    # Left out, it is reported on as it is: the choice was made on s1 and s3.
    assert rows["s2"]["chosen"] == "a"
    assert table["default"] is None
    [entry] = table["held_out"]
    assert entry["candidates"]["b"]["threshold_from"] == "fixed 0.5"
    assert entry["candidates"]["a"]["threshold_from"] == "shipped sets"
