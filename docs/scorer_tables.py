"""Render the scorer table of each family page from the scorer catalog.

Each family of the catalog (``SCORER_FAMILIES``: grounding, context, answer, safety, tools,
text, checks) has one page, ``docs/scorers/<family>.md``, and on it a table between two
markers, ``<!-- catalog:FAMILY -->`` and ``<!-- /catalog:FAMILY -->``: one row per scorer
the catalog lists in that family (what ``--scorer`` takes, the Python factory, what it
measures, which way is better, whether it calls a judge, the span attributes it records).
``docs/scorers/index.md`` holds one more, ``<!-- catalog:span-attributes -->``: every
attribute a scorer records, what it holds and which scorers set it. Each fact is stated
once, in the scorer's catalog entry. So after adding a scorer:

    python docs/scorer_tables.py            # print every table (Markdown)
    python docs/scorer_tables.py --write    # replace the tables in the pages
    python docs/scorer_tables.py --check    # exit 1 if a table or a page is missing or stale

``tests/test_docs_scorer_tables.py`` runs the check, so a page always lists its family.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
SCORERS = DOCS / "scorers"

SPAN_ATTRIBUTES = "span-attributes"  # the marker of the index page's attribute table
MARKER = re.compile(
    r"<!-- catalog:(?P<name>[\w-]+) -->\n(?P<body>.*?)<!-- /catalog:(?P=name) -->", re.S
)


def family_table(family: str) -> str:
    """The Markdown table of the catalog's scorers of ``family``."""
    from livescore.scorers import scorer_catalog

    rows = [
        "| `--scorer` | in Python | measures | better | judge | records on its span |",
        "|---|---|---|---|---|---|",
    ]
    for entry in scorer_catalog():
        if entry.family != family or not entry.origin.startswith("livescore."):
            continue
        factory = f"`{entry.factory.rpartition('.')[2]}`" if entry.factory else ""
        better = "higher" if entry.higher_is_better else "lower"
        judge = "yes" if entry.needs_judge else "no"
        records = ", ".join(f"`{name}`" for name in entry.span_attributes)
        rows.append(
            f"| `{entry.usage()}` | {factory} | {entry.summary} | {better} | {judge} | {records} |"
        )
    return "\n".join(rows) + "\n"


def span_attributes_table() -> str:
    """Every span attribute the catalog's scorers record: what it holds, which set it."""
    from livescore._catalog import scorer_span_attributes

    rows = ["| attribute | holds | set by |", "|---|---|---|"]
    for name, by_scorer in scorer_span_attributes().items():
        meanings = sorted(set(by_scorer.values()))
        scorers = ", ".join(f"`{scorer}`" for scorer in sorted(by_scorer))
        rows.append(f"| `{name}` | {'; '.join(meanings)} | {scorers} |")
    return "\n".join(rows) + "\n"


def table(name: str) -> str:
    """The table a marker names: a family's, or the span attributes'."""
    return span_attributes_table() if name == SPAN_ATTRIBUTES else family_table(name)


def render(text: str) -> str:
    """``text`` with each marked table rendered anew."""
    return MARKER.sub(
        lambda m: f"<!-- catalog:{m['name']} -->\n{table(m['name'])}<!-- /catalog:{m['name']} -->",
        text,
    )


def problems() -> list[str]:
    """What is missing or stale: a family without its page, a page without its table, a
    table that differs from the catalog, a page of ``docs/scorers/`` for no family."""
    from livescore.scorers import SCORER_FAMILIES

    found = []
    for family in SCORER_FAMILIES:
        page = SCORERS / f"{family}.md"
        if not page.exists():
            found.append(f"{page.relative_to(ROOT)}: missing (the page of family {family!r})")
            continue
        text = page.read_text(encoding="utf-8")
        names = [m["name"] for m in MARKER.finditer(text)]
        if names != [family]:
            found.append(f"{page.relative_to(ROOT)}: needs one table, <!-- catalog:{family} -->")
        elif render(text) != text:
            found.append(f"{page.relative_to(ROOT)}: stale (python docs/scorer_tables.py --write)")
    index = SCORERS / "index.md"
    text = index.read_text(encoding="utf-8") if index.exists() else ""
    where = index.relative_to(ROOT)
    if [m["name"] for m in MARKER.finditer(text)] != [SPAN_ATTRIBUTES]:
        found.append(f"{where}: needs one table, <!-- catalog:{SPAN_ATTRIBUTES} -->")
    elif render(text) != text:
        found.append(f"{where}: stale (python docs/scorer_tables.py --write)")
    others = {"index", "custom"}
    for page in sorted(SCORERS.glob("*.md")):
        if page.stem not in SCORER_FAMILIES and page.stem not in others:
            found.append(f"{page.relative_to(ROOT)}: a scorer page for no family")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--write", action="store_true", help="replace the tables in the pages")
    action.add_argument("--check", action="store_true", help="exit 1 if a table is stale")
    args = parser.parse_args(argv)
    from livescore.scorers import SCORER_FAMILIES

    if args.check:
        found = problems()
        for problem in found:
            print(problem, file=sys.stderr)
        return 1 if found else 0
    if args.write:
        for stem in (*SCORER_FAMILIES, "index"):
            page = SCORERS / f"{stem}.md"
            if page.exists():
                page.write_text(render(page.read_text(encoding="utf-8")), encoding="utf-8")
        return 0
    for family in SCORER_FAMILIES:
        print(f"{family}:\n{family_table(family)}")
    print(f"{SPAN_ATTRIBUTES}:\n{span_attributes_table()}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
