"""Dependencies run one way: cli → evals | demo → live | otel → scoring → scorers/judges → runs.

Read from the source (module-level imports, outside ``if TYPE_CHECKING:``): evals and demo
never import each other or the CLI, nothing below the CLI imports it, and the core never
imports an agent framework, an integration or the OpenTelemetry SDK at module level.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "livescore"
FORBIDDEN_EVERYWHERE = (
    "langchain",
    "langchain_core",
    "langgraph",
    "livescore_langchain",
    "agents",
    "livescore_openai_agents",
)


def module_level_imports(path: Path) -> set[str]:
    """Modules imported at module level (not in functions, not under TYPE_CHECKING)."""
    found: set[str] = set()

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module)
            elif isinstance(node, ast.If):
                test = ast.unparse(node.test)
                if "TYPE_CHECKING" not in test:
                    visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                for handler in node.handlers:
                    visit(handler.body)

    visit(ast.parse(path.read_text(encoding="utf-8")).body)
    return found


def _imports_of(subpackage: str) -> dict[str, set[str]]:
    return {
        str(path.relative_to(PACKAGE.parent)): module_level_imports(path)
        for path in sorted((PACKAGE / subpackage).rglob("*.py"))
    }


def _offenders(imports: dict[str, set[str]], prefixes: tuple[str, ...]) -> list[str]:
    return [
        f"{path}: {name}"
        for path, names in imports.items()
        for name in sorted(names)
        if any(name == p or name.startswith(p + ".") for p in prefixes)
    ]


@pytest.mark.parametrize(
    ("subpackage", "must_not_import"),
    [
        ("evals", ("livescore.demo", "livescore.cli")),
        ("demo", ("livescore.evals", "livescore.cli")),
        ("live", ("livescore.evals", "livescore.demo", "livescore.cli")),
        ("otel", ("livescore.evals", "livescore.demo", "livescore.cli", "livescore.live")),
        ("sinks", ("livescore.evals", "livescore.demo", "livescore.cli", "livescore.live")),
        ("fleet", ("livescore.evals", "livescore.demo", "livescore.cli")),
        ("checks", ("livescore.evals", "livescore.demo", "livescore.cli", "livescore.live")),
        (
            "judges",
            (
                "livescore.evals",
                "livescore.demo",
                "livescore.cli",
                "livescore.live",
                "livescore.scoring",
                "livescore.scorers",
                "livescore.otel",
            ),
        ),
        ("scorers", ("livescore.evals", "livescore.demo", "livescore.cli", "livescore.live")),
        ("scoring", ("livescore.evals", "livescore.demo", "livescore.cli", "livescore.live")),
        ("runs", ("livescore.",)),
        # Spans to runs, shared by the span processor, the receiver and the file reader:
        # between runs and live, it reads spans and builds runs, nothing more.
        (
            "traces",
            (
                "livescore.live",
                "livescore.fleet",
                "livescore.cli",
                "livescore.evals",
                "livescore.demo",
                "livescore.otel",
                "livescore.scoring",
                "livescore.scorers",
                "livescore.judges",
                "livescore.sinks",
                "livescore.collect",
            ),
        ),
        ("collect", ("livescore.evals", "livescore.demo", "livescore.cli")),
    ],
)
def test_layers_import_downwards_only(subpackage: str, must_not_import: tuple[str, ...]) -> None:
    imports = _imports_of(subpackage)
    if subpackage == "runs":  # runs imports nothing of livescore but itself
        imports = {
            p: {n for n in names if not n.startswith("livescore.runs")}
            for p, names in imports.items()
        }
    assert _offenders(imports, must_not_import) == []


def test_the_core_never_imports_a_framework_or_the_sdk_at_module_level() -> None:
    imports = {
        str(path.relative_to(PACKAGE.parent)): module_level_imports(path)
        for path in sorted(PACKAGE.rglob("*.py"))
    }
    assert _offenders(imports, (*FORBIDDEN_EVERYWHERE, "opentelemetry.sdk")) == []


def test_the_checker_sees_what_it_should(tmp_path: Path) -> None:
    source = (
        "import a\nfrom b.c import d\nif TYPE_CHECKING:\n    import hidden\n"
        "def f():\n    import inner\n"
        "try:\n    import tried\nexcept ImportError:\n    import other\n"
    )
    path = tmp_path / "probe.py"
    path.write_text(source, encoding="utf-8")
    assert module_level_imports(path) == {"a", "b.c", "tried", "other"}


def _all_imports(path: Path) -> set[str]:
    """Every module ``path`` imports, wherever the import stands (functions included)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def test_no_subpackage_imports_another_ones_private_modules() -> None:
    # A subpackage's public face is its __init__; livescore/_x.py modules at the root are
    # shared by all (errors, version, text helpers).
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        own = path.relative_to(PACKAGE).parts[0]
        for name in sorted(_all_imports(path)):
            parts = name.split(".")
            private = len(parts) >= 3 and parts[0] == "livescore" and parts[2].startswith("_")
            if private and parts[1] != own:
                offenders.append(f"{path.relative_to(PACKAGE.parent)}: {name}")
    assert offenders == []
