"""The compatibility table of docs/any-agent.md, checked against what the tests observe.

Each instrumentation test ends with :func:`record_compat`: the row it builds from the run it
just assembled (where its input, output, tool results and conversation id came from) must be
the row the page shows, so the page cannot drift from what livescore reads. With
``LIVESCORE_WRITE_COMPAT=1`` the row is written into the page instead of checked.
"""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path

from livescore.traces import AssembledRun, FieldSource

PAGE = Path(__file__).resolve().parents[2] / "docs" / "any-agent.md"
START, END = "<!-- compat:start -->", "<!-- compat:end -->"
_lock = threading.Lock()


def _where(source: FieldSource | None) -> str:
    if source is None:
        return "–"
    note = "" if source.quality == "whole" else f" ({source.quality})"
    return f"`{source.attribute}` on `{source.span_name}`{note}"


def compat_row(instrumentation: str, version: str, assembled: AssembledRun, settings: str) -> str:
    """One row of the table, from the run livescore assembled."""
    sources = assembled.sources
    tools = sorted({_where(s) for key, s in sources.items() if key.startswith("tool ")})
    conventions = sorted({s.convention for s in sources.values()})
    cells = [
        instrumentation,
        version,
        ", ".join(conventions),
        _where(sources.get("input")),
        _where(sources.get("output")),
        "; ".join(tools) or "–",
        _where(sources.get("conversation_id")),
        settings or "–",
    ]
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def record_compat(
    instrumentation: str, version: str, assembled: AssembledRun, settings: str = ""
) -> None:
    """Check (or, with ``LIVESCORE_WRITE_COMPAT=1``, write) the page's row for an
    instrumentation: the first cell names it."""
    row = compat_row(instrumentation, version, assembled, settings)
    with _lock:
        text = PAGE.read_text(encoding="utf-8")
        start, end = text.index(START), text.index(END)
        table = text[start + len(START) : end].strip("\n").splitlines()
        key = f"| {instrumentation} |"
        current = next((line for line in table if line.startswith(key)), None)
        if os.environ.get("LIVESCORE_WRITE_COMPAT") == "1":
            if current is None:
                table.append(row)
            else:
                table[table.index(current)] = row
            header, body = table[:2], sorted(table[2:], key=str.lower)
            block = "\n".join([*header, *body])
            PAGE.write_text(text[:start] + START + "\n" + block + "\n" + text[end:], "utf-8")
            return
    assert current is not None, (
        f"docs/any-agent.md has no compatibility row for {instrumentation!r}; "
        "run the test with LIVESCORE_WRITE_COMPAT=1 to write it:\n" + row
    )
    assert current == row, (
        "docs/any-agent.md's compatibility row differs from what the test observed "
        f"(LIVESCORE_WRITE_COMPAT=1 rewrites it):\n  page: {current}\n  seen: {row}"
    )


def rows() -> list[str]:
    """The table's rows (for the page's own test)."""
    text = PAGE.read_text(encoding="utf-8")
    block = text[text.index(START) + len(START) : text.index(END)]
    return [line for line in block.strip().splitlines()[2:] if re.match(r"^\| ", line)]
