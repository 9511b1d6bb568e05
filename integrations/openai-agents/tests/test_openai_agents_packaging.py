"""The distribution can be installed from a checkout as its README says, and ships its
license, like livescore-langchain."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11+")

ROOT = Path(__file__).resolve().parents[3]
HERE = ROOT / "integrations" / "openai-agents"


def test_it_ships_the_projects_license() -> None:
    license_file = HERE / "LICENSE"
    # Before: no LICENSE file (livescore-langchain has one).
    assert license_file.is_file()
    assert license_file.read_text(encoding="utf-8") == (ROOT / "LICENSE").read_text(
        encoding="utf-8"
    )
    project = tomllib.loads((HERE / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "Apache-2.0"


def _pip_lines(text: str) -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
    return [line for block in blocks for line in block.splitlines() if "pip install" in line]


def test_the_readme_installs_it_from_a_checkout_with_the_core() -> None:
    lines = _pip_lines((HERE / "README.md").read_text(encoding="utf-8"))
    editable = [line for line in lines if "-e integrations/openai-agents" in line]
    # Before: only the package-index form (with a distribution name that is not ours); the
    # integration alone cannot be installed from a checkout, its core not being published.
    assert editable, lines
    for line in editable:
        assert re.search(r'-e "?\.(\[[a-z-]+\])?"?\s', line), line
    for line in lines:
        names = re.findall(r'pip install "([a-z-]+)\[', line)
        assert all(name == "livescore-ai" for name in names), line


def test_its_core_dependency_is_the_checkouts_distribution() -> None:
    core = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    ours = tomllib.loads((HERE / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert any(dep.startswith(core["name"]) for dep in ours["dependencies"])
    assert core["optional-dependencies"]["openai-agents"] == [ours["name"]]
