"""``import livescore`` stays light: a fresh interpreter, and the modules it loaded.

Serverless agents pay the import on every cold start (figures: ``bench/import_time.py``).
The judge client (openai), the report templates (jinja2), the terminal UI (rich), the
OpenTelemetry SDK and any agent framework load only when something uses them.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = (
    "openai",
    "jinja2",
    "rich",
    "opentelemetry.sdk",
    "langchain",
    "langchain_core",
    "langgraph",
    "livescore_langchain",
)


def loaded_after(statement: str) -> set[str]:
    """The HEAVY modules a fresh interpreter has loaded after ``statement``."""
    listing = f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    code = f"{statement}\nimport json, sys\n{listing}"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_import_livescore_loads_nothing_heavy() -> None:
    assert loaded_after("import livescore") == set()
    # Not even pydantic or anyio: the names are imported when first used.
    code = (
        "import sys, livescore; print(sorted(m for m in ('pydantic', 'anyio') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_scorers_load_no_report_ui_sdk_or_framework() -> None:
    assert loaded_after("import livescore.scorers") <= {"openai"}


def test_the_scorers_do_not_load_the_judge_client() -> None:
    assert "openai" not in loaded_after("import livescore.scorers")


def test_writing_a_report_loads_jinja2_only_then() -> None:
    assert "jinja2" not in loaded_after("import livescore.evals")
    assert "jinja2" in loaded_after(
        "from livescore.evals import EvalResult, render_report\nrender_report(EvalResult())"
    )


def test_every_public_name_is_importable_and_typed_in_all() -> None:
    import livescore

    for name in livescore.__all__:
        assert getattr(livescore, name) is not None, name
    from livescore import Run, __version__, run_evals  # the lazy names work in from-imports

    assert callable(run_evals)
    assert Run(input="q").input == "q"
    assert __version__ == livescore.__version__
    assert set(livescore.__all__) <= set(dir(livescore))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        livescore.nope  # noqa: B018
