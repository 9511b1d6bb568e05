"""Load a script of the repository (``bench/render_tables.py``, ``docs/scorer_tables.py``) as
a module, for the tests that check what it renders."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType


def load_script(path: Path) -> ModuleType:
    """The module that ``path`` defines, executed once per call."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
