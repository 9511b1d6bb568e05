"""Loading the scripts in examples/ as modules, so tests call their main() in process."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

EXAMPLES = Path(__file__).parents[2] / "examples"


def example_path(name: str) -> Path:
    """The path of ``examples/<name>.py``."""
    return EXAMPLES / f"{name}.py"


def load_example(name: str) -> ModuleType:
    """Import ``examples/<name>.py`` afresh (a new module object each call)."""
    spec = importlib.util.spec_from_file_location(f"example_{name}", example_path(name))
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
