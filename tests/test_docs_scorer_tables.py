"""Each scorer family has one page, ``docs/scorers/<family>.md``, whose table lists every
scorer the catalog has in that family, as ``docs/scorer_tables.py`` renders it; and the guide
``docs/guides/which-scorer.md`` names every scorer under the question it answers."""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType

import pytest
from scripts import load_script

from livescore.scorers import SCORER_FAMILIES, scorer_catalog

ROOT = Path(__file__).resolve().parents[1]


def _renderer() -> ModuleType:
    return load_script(ROOT / "docs" / "scorer_tables.py")


@pytest.fixture(scope="module")
def renderer() -> ModuleType:
    return _renderer()


def test_every_family_page_shows_its_scorers_as_the_catalog_has_them(renderer: ModuleType) -> None:
    assert renderer.problems() == []


@pytest.mark.parametrize("entry", scorer_catalog(), ids=lambda e: e.name)
def test_every_scorer_is_on_its_familys_page(entry: object) -> None:
    family, usage = entry.family, entry.usage()  # type: ignore[attr-defined]
    page = ROOT / "docs" / "scorers" / f"{family}.md"
    assert f"| `{usage}` |" in page.read_text(encoding="utf-8")


def test_the_scorer_guide_places_every_scorer() -> None:
    """The guide "Which scorer do I need?" answers questions with scorers: each scorer of the
    catalog is named there, so a new one is placed under the question it answers."""
    guide = (ROOT / "docs" / "guides" / "which-scorer.md").read_text(encoding="utf-8")
    builtin = [e.name for e in scorer_catalog() if e.origin.startswith("livescore.")]
    assert len(builtin) > 30
    missing = [name for name in builtin if not re.search(rf"`{re.escape(name)}[`:\[]", guide)]
    assert missing == [], f"docs/guides/which-scorer.md does not name {missing}"


def test_the_family_pages_are_in_the_site_navigation() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for family in SCORER_FAMILIES:
        assert f"scorers/{family}.md" in nav


def test_a_stale_or_missing_table_is_found(
    renderer: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pages = tmp_path / "scorers"
    pages.mkdir()
    for stem in (*SCORER_FAMILIES, "index"):
        text = (renderer.SCORERS / f"{stem}.md").read_text(encoding="utf-8")
        (pages / f"{stem}.md").write_text(text, encoding="utf-8")
    monkeypatch.setattr(renderer, "SCORERS", pages)
    monkeypatch.setattr(renderer, "ROOT", tmp_path)
    assert renderer.problems() == []

    grounding = pages / "grounding.md"
    text = grounding.read_text(encoding="utf-8")
    without_row = "\n".join(line for line in text.splitlines() if "`faithfulness`" not in line)
    grounding.write_text(without_row + "\n", encoding="utf-8")
    (pages / "safety.md").write_text("# Safety\n\nNo table.\n", encoding="utf-8")
    (pages / "tools.md").unlink()
    (pages / "alignment.md").write_text("# An old page\n", encoding="utf-8")
    index = pages / "index.md"
    text = index.read_text(encoding="utf-8")
    index.write_text(text.replace("| `livescore.opinions.biased` |", "| `x` |"), encoding="utf-8")
    assert renderer.problems() == [
        "scorers/grounding.md: stale (python docs/scorer_tables.py --write)",
        "scorers/safety.md: needs one table, <!-- catalog:safety -->",
        "scorers/tools.md: missing (the page of family 'tools')",
        "scorers/index.md: stale (python docs/scorer_tables.py --write)",
        "scorers/alignment.md: a scorer page for no family",
    ]
    renderer.main(["--write"])
    assert "`faithfulness`" in grounding.read_text(encoding="utf-8")
    assert "| `livescore.opinions.biased` | biased opinions | `bias` |" in index.read_text()
