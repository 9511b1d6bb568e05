"""``livescore.scorers``: every public name resolves, the judge scorers' modules on first use."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import livescore.scorers


def test_every_public_name_resolves() -> None:
    for name in livescore.scorers.__all__:
        assert getattr(livescore.scorers, name) is not None, name
    assert set(livescore.scorers.__all__) <= set(dir(livescore.scorers))


def test_a_judge_scorers_module_loads_when_its_name_is_first_used() -> None:
    code = (
        "import json, sys, livescore.scorers as s\n"
        "before = 'livescore.scorers._bias' in sys.modules\n"
        "factory = s.create_bias_scorer\n"
        "print(json.dumps([before, 'livescore.scorers._bias' in sys.modules, factory.__name__,"
        " 'livescore.scorers._criteria' in sys.modules]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    before, after, name, others = json.loads(done.stdout.strip().splitlines()[-1])
    assert (before, after, name, others) == (False, True, "create_bias_scorer", False)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'create_nothing_scorer'"):
        livescore.scorers.create_nothing_scorer  # noqa: B018
    # A private module's own name is not a public name of the package.
    with pytest.raises(AttributeError):
        livescore.scorers.ClaimVerdict  # noqa: B018


def test_the_typed_imports_name_where_each_name_is_found() -> None:
    # The package's TYPE_CHECKING imports (what type checkers read) and its lazy lookup
    # (what runs) agree, name for name, and cover __all__.
    source = Path(livescore.scorers.__file__).read_text(encoding="utf-8")
    typed = {
        alias.name: node.module
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("livescore")
        for alias in node.names
    }
    assert set(typed) == set(livescore.scorers.__all__)
    for name, module in typed.items():
        assert livescore.scorers._module_of(name) == module, name


def test_every_factory_of_the_scorer_modules_is_exported() -> None:
    folder = Path(livescore.scorers.__file__).parent
    factories = {
        node.name
        for path in folder.glob("_[!_]*.py")
        for node in ast.parse(path.read_text(encoding="utf-8")).body
        if isinstance(node, ast.FunctionDef)
        and re.fullmatch(r"create_\w+_scorer(_llm)?", node.name)
    }
    assert len(factories) == 18
    assert factories <= set(livescore.scorers.__all__)
