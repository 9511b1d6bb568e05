"""``make docs`` fails on a warning: a broken link or a page missing from the nav.

The recipe is read from the Makefile and run, as written, on a small site with both faults,
so an option that silences the warnings ``--strict`` counts (``--quiet`` did) fails here.
"""

from __future__ import annotations

import itertools
import os
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _docs_recipe() -> list[str]:
    """The command line of the Makefile's ``docs`` target, with ``$(BIN)`` resolved."""
    lines = (ROOT / "Makefile").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("docs:"))
    recipe = list(itertools.takewhile(lambda line: line.startswith("\t"), lines[start + 1 :]))
    recipe = [line.strip() for line in recipe]
    assert len(recipe) == 1, recipe
    command = recipe[0].replace("$(BIN)", str(Path(sys.executable).parent))
    return shlex.split(command)


def test_make_docs_fails_on_a_broken_link_and_a_page_missing_from_the_nav(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\nSee [the guide](missing.md).\n", encoding="utf-8")
    (docs / "orphan.md").write_text("# Orphan\n", encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text(
        "site_name: probe\nnav:\n  - index.md\nvalidation:\n  omitted_files: warn\n"
        "  links:\n    not_found: warn\n",
        encoding="utf-8",
    )
    words = _docs_recipe()
    env = dict(os.environ)
    while "=" in words[0]:  # leading VAR=value assignments, as make passes them to the shell
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    done = subprocess.run(
        words, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    assert "missing.md" in output, output
    assert "orphan.md" in output, output
