"""The docs' benchmark tables show the figures of the committed results files.

``make bench`` writes ``bench/results/*.json``; ``bench/render_tables.py`` renders the marked
tables of the docs (``docs/performance.md``, ``docs/evals/judge-quality.md``; any page of
``docs/``, README.md and bench/README.md may hold one) from them. These tests fail when a
table no longer matches its results file, or when a cited results file is not a full run.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import ModuleType

import pytest
from scripts import load_script

ROOT = Path(__file__).resolve().parents[1]
PERFORMANCE = ROOT / "docs" / "performance.md"


def _renderer() -> ModuleType:
    return load_script(ROOT / "bench" / "render_tables.py")


@pytest.fixture(scope="module")
def renderer() -> ModuleType:
    return _renderer()


PAGES = _renderer().pages()


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_marked_table_matches_its_results_file(renderer: ModuleType, page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert renderer.stale_tables(text) == []


def test_the_pages_show_every_table(renderer: ModuleType) -> None:
    shown = {m.group("name") for p in PAGES for m in renderer.MARKER.finditer(p.read_text())}
    assert shown == set(renderer.TABLES)
    names = {m.group("name") for m in renderer.MARKER.finditer(PERFORMANCE.read_text())}
    assert {"hot_path.steady.langchain", "hot_path.burst.langchain", "throughput"} <= names


def test_a_changed_figure_is_found_stale(renderer: ModuleType) -> None:
    text = PERFORMANCE.read_text(encoding="utf-8")
    match = next(renderer.MARKER.finditer(text))
    body = match.group("body")
    digit = re.search(r"\d", body)
    assert digit is not None
    changed_digit = "7" if digit.group() != "7" else "3"
    changed = body[: digit.start()] + changed_digit + body[digit.end() :]
    edited = text[: match.start("body")] + changed + text[match.end("body") :]
    assert renderer.stale_tables(edited) == [match.group("name")]


def test_an_unknown_table_name_is_an_error(renderer: ModuleType) -> None:
    with pytest.raises(KeyError, match="unknown benchmark table 'nope'"):
        renderer.render("<!-- bench:nope -->\n| a |\n<!-- /bench:nope -->")


def test_cited_results_are_full_runs_on_committed_code() -> None:
    cited = set()
    for page in PAGES:
        cited |= set(re.findall(r"bench/results/(\w+)\.json", page.read_text()))
    assert cited, "no results file is cited"
    for name in sorted(cited):
        document = json.loads((ROOT / "bench" / "results" / f"{name}.json").read_text())
        assert document["quick"] is False, name
        if document["partial"]:
            # Only a long run stopped on the way (the local judge's, hours of CPU) is cited
            # partial, and then it names every cell it lacks and why.
            missing = document.get("missing") or []
            assert missing, f"{name}: partial without the cells it lacks"
            assert all(m.get("reason") for m in missing), f"{name}: a missing cell without why"
        assert document["git"]["commit"], name
        assert document["git"]["dirty"] is False, f"{name}: measured on uncommitted changes"
        assert document["machine"]["packages"]["livescore-ai"] != "not installed", name


def test_rows_added_by_a_later_run_are_named(
    renderer: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A local judge-quality file rewritten on another machine: its new rows are told apart
    from those carried from the run the footer describes."""
    document = json.loads((ROOT / "bench" / "results" / "judge_quality_local.json").read_text())
    row = {**document["rows"][0], "method": "livescore one-call"}
    row.pop("carried_from", None)
    for old in document["rows"]:
        old.setdefault("carried_from", document["git"]["commit"])
    document["rows"].append(row)
    document["rewritten"] = {"command": "python bench/x.py", "git": {"commit": "f" * 40}}
    monkeypatch.setattr(renderer, "load", lambda name: document)
    text = renderer.judge_quality_local(row["dataset"])
    assert "*livescore one-call: scored by a later run" in text
    assert "commit fffffff" in text
    other = next(r["dataset"] for r in document["rows"] if r["dataset"] != row["dataset"])
    assert "later run" not in renderer.judge_quality_local(other)
