"""The layers that docs/architecture.md draws hold in the code.

The table in the page's "Layers" section is the one source: each row is a layer (the top
row highest), naming its subpackages. This test reads that table and every import in the
package, wherever it stands (module level, inside functions, under ``try``, and the module
names of a ``_LAZY`` map, which ``__getattr__`` imports on first use), and fails on:

- an import of a layer above, or of a sibling in the same layer;
- a cycle between subpackages (or the private root modules);
- a private root module (``livescore/_x.py``, usable by every layer) importing a subpackage;
- an import of another subpackage's private module (``livescore.live._exit`` from ``fleet``);
- reaching through the root façade from inside the package (``from livescore import Run``,
  or a bare ``import livescore``): inside, names come from the subpackage that defines them;
- a module-level import of an agent framework, an integration or the OpenTelemetry SDK
  anywhere in the core;
- a subpackage missing from the table, or a row naming one that does not exist;
- the page's layer diagram differing from the one drawn from the table.

Imports under ``if TYPE_CHECKING:`` never run, so the layer and cycle rules skip them; the
private-module and façade rules read them too. One lazy name points up, and it is named
below (``LAZY_REEXPORTS``): ``from livescore.otel import LiveScoringSpanProcessor``, the
spelling the "Any agent" page documents beside the rest of livescore's OpenTelemetry. It is
loaded only when used, so importing ``livescore.otel`` never loads the layer above; no other
lazy name, and no import statement, may point up.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "livescore"
PAGE = ROOT / "docs" / "architecture.md"

# What the core never imports at module level (it may, inside a function, when asked to).
FRAMEWORKS = (
    "langchain",
    "langchain_core",
    "langgraph",
    "agents",
    "livescore_langchain",
    "livescore_openai_agents",
    "opentelemetry.sdk",
)

# (module, the module its ``_LAZY`` map may name from a layer above): documented re-exports.
LAZY_REEXPORTS = frozenset({("livescore.otel", "livescore.collect")})

Layers = list[tuple[str, ...]]

# -- the table and the diagram ----------------------------------------------------------------

_SECTION = re.compile(r"^## Layers\n(.*?)(?=^## |\Z)", re.S | re.M)
_DIAGRAM = re.compile(r"^```text\n(.*?)^```", re.S | re.M)


def read_layers(markdown: str) -> Layers:
    """The layers of the "Layers" section's table, top row first."""
    section = _SECTION.search(markdown)
    assert section is not None, "no '## Layers' section"
    rows = [line for line in section.group(1).splitlines() if line.startswith("|")]
    assert rows, "no table in the 'Layers' section"
    assert rows[0].split("|")[1].strip() == "packages", "the table's first column: packages"
    layers = []
    for row in rows[2:]:  # past the header and its |---| line
        names = tuple(re.findall(r"`([a-z_]+)`", row.split("|")[1]))
        assert names, f"a row names no package: {row}"
        layers.append(names)
    return layers


def draw_diagram(layers: Layers) -> str:
    """The layer diagram the page shows, drawn from the table."""
    lines = [
        " integrations/<runtime>   (distributions of their own: they capture runs and submit",
        "   │                       them; they may use the public names of every layer)",
        "   ▼",
    ]
    for index, names in enumerate(layers):
        if index:
            lines.append("   ▼")
        lines.append(" " + " │ ".join(names))
    lines += [
        " ══════════════════════════════════════════════════════════════════════════════",
        " livescore/_*.py          private helpers every layer may use; they import only",
        "                          each other",
    ]
    return "\n".join(lines) + "\n"


def page_diagram(markdown: str) -> str:
    section = _SECTION.search(markdown)
    assert section is not None, "no '## Layers' section"
    block = _DIAGRAM.search(section.group(1))
    assert block is not None, "no ```text diagram in the 'Layers' section"
    return block.group(1)


# -- the imports of the code ------------------------------------------------------------------


@dataclass(frozen=True)
class Import:
    """One import statement's target, as seen from the module that makes it."""

    source: str  # the importing module, dotted ("livescore.live._dispatcher")
    path: str  # its file, from the package's parent ("livescore/live/_dispatcher.py")
    line: int
    target: str  # the imported module, dotted ("livescore.fleet")
    runs: bool  # False under ``if TYPE_CHECKING:``
    module_level: bool  # False inside a function
    facade: bool  # reaches through the root package's lazy names
    lazy: bool = False  # a module named in a ``_LAZY`` map, imported on first use

    def where(self) -> str:
        return f"{self.path}:{self.line}"


def module_name(path: Path, package_dir: Path) -> str:
    parts = path.relative_to(package_dir.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(dotted: str, package_dir: Path) -> bool:
    base = package_dir.parent.joinpath(*dotted.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def imports_of(path: Path, package_dir: Path) -> list[Import]:
    """Every import in ``path``, with where it stands."""
    source = module_name(path, package_dir)
    where = path.relative_to(package_dir.parent).as_posix()
    is_package = path.name == "__init__.py"
    root = package_dir.name
    found: list[Import] = []

    def add(
        node: ast.stmt,
        target: str,
        runs: bool,
        module_level: bool,
        facade: bool,
        lazy: bool = False,
    ) -> None:
        found.append(Import(source, where, node.lineno, target, runs, module_level, facade, lazy))

    def visit(node: ast.AST, runs: bool, module_level: bool) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                visit(child, False, module_level)
            for child in node.orelse:
                visit(child, runs, module_level)
            return
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            module_level = False
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "_LAZY" for t in targets):
                for value in ast.walk(node.value):
                    if (
                        isinstance(value, ast.Constant)
                        and isinstance(value.value, str)
                        and value.value.split(".")[0] == root
                        and _is_module(value.value, package_dir)
                    ):
                        add(node, value.value, runs, False, False, lazy=True)
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(node, alias.name, runs, module_level, alias.name == root)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = source.split(".")
                keep = len(base) - node.level + (1 if is_package else 0)
                module = ".".join(base[:keep] + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                child = f"{module}.{alias.name}"
                if module.split(".")[0] == root and _is_module(child, package_dir):
                    add(node, child, runs, module_level, False)
                else:
                    add(node, module, runs, module_level, module == root)
        for child in ast.iter_child_nodes(node):
            visit(child, runs, module_level)

    visit(ast.parse(path.read_text(encoding="utf-8")), True, True)
    return found


def all_imports(package_dir: Path) -> list[Import]:
    return [i for path in sorted(package_dir.rglob("*.py")) for i in imports_of(path, package_dir)]


def unit_of(dotted: str, root: str) -> str | None:
    """The subpackage or private root module a module belongs to (``None``: outside)."""
    parts = dotted.split(".")
    if parts[0] != root:
        return None
    return parts[1] if len(parts) > 1 else root  # the root package itself: the façade


def subpackages(package_dir: Path) -> set[str]:
    return {p.parent.name for p in package_dir.glob("*/__init__.py")}


def private_root_modules(package_dir: Path) -> set[str]:
    # Dunder modules (__init__, __main__: the command as `python -m livescore`) are entry
    # points, not helpers.
    return {p.stem for p in package_dir.glob("_*.py") if not p.stem.startswith("__")}


# -- the rules --------------------------------------------------------------------------------


def placement_violations(package_dir: Path, layers: Layers) -> list[str]:
    placed = [name for names in layers for name in names]
    named, actual = set(placed), subpackages(package_dir)
    problems = [f"{name}: in the table twice" for name in sorted(named) if placed.count(name) > 1]
    problems += [f"{name}: a subpackage with no layer" for name in sorted(actual - named)]
    problems += [f"{name}: in the table, not in the package" for name in sorted(named - actual)]
    return problems


def _edges(
    package_dir: Path, allowed: frozenset[tuple[str, str]] = LAZY_REEXPORTS
) -> list[tuple[str, str, Import]]:
    """(importing unit, imported unit, import) for runtime imports between units, less the
    ``allowed`` lazy re-exports."""
    root = package_dir.name
    edges = []
    for imp in all_imports(package_dir):
        if imp.lazy and (imp.source, imp.target) in allowed:
            continue
        source, target = unit_of(imp.source, root), unit_of(imp.target, root)
        if imp.runs and source and target and source != target and source != root:
            edges.append((source, target, imp))
    return edges


def layer_violations(
    package_dir: Path, layers: Layers, allowed: frozenset[tuple[str, str]] = LAZY_REEXPORTS
) -> list[str]:
    rank = {name: index for index, names in enumerate(layers) for name in names}
    private = private_root_modules(package_dir)
    root = package_dir.name
    problems = []
    for source, target, imp in _edges(package_dir, allowed):
        if target == root:
            continue  # the façade rule reports it
        if source in private:
            if target not in private:
                why = "a private root module imports a subpackage"
                problems.append(f"{imp.where()}: {imp.target} ({why})")
            continue
        if target in private or source not in rank or target not in rank:
            continue  # private root modules are for all; an unplaced one is reported apart
        if rank[target] < rank[source]:
            problems.append(f"{imp.where()}: {imp.target} (a layer above)")
        elif rank[target] == rank[source]:
            problems.append(f"{imp.where()}: {imp.target} (a sibling in the same layer)")
    return problems


def cycle_violations(
    package_dir: Path, allowed: frozenset[tuple[str, str]] = LAZY_REEXPORTS
) -> list[str]:
    graph: dict[str, set[str]] = {}
    for source, target, _ in _edges(package_dir, allowed):
        graph.setdefault(source, set()).add(target)
    cycles: list[str] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(" → ".join([*path[path.index(nxt) :], nxt]))
            elif nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return cycles


def private_violations(package_dir: Path) -> list[str]:
    root = package_dir.name
    problems = []
    for imp in all_imports(package_dir):
        parts = imp.target.split(".")
        if parts[0] != root or len(parts) < 3 or not parts[2].startswith("_"):
            continue
        if unit_of(imp.source, root) != parts[1]:
            problems.append(f"{imp.where()}: {imp.target}")
    return problems


def facade_violations(package_dir: Path) -> list[str]:
    return [f"{imp.where()}: {imp.target}" for imp in all_imports(package_dir) if imp.facade]


def framework_violations(package_dir: Path) -> list[str]:
    return [
        f"{imp.where()}: {imp.target}"
        for imp in all_imports(package_dir)
        if imp.runs
        and imp.module_level
        and any(imp.target == f or imp.target.startswith(f + ".") for f in FRAMEWORKS)
    ]


# -- the package ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def layers() -> Layers:
    return read_layers(PAGE.read_text(encoding="utf-8"))


def test_every_subpackage_has_one_layer(layers: Layers) -> None:
    assert placement_violations(PACKAGE, layers) == []


def test_imports_point_down_only(layers: Layers) -> None:
    assert layer_violations(PACKAGE, layers) == []


def test_no_cycle_between_subpackages() -> None:
    assert cycle_violations(PACKAGE) == []


def test_no_subpackage_imports_another_ones_private_modules() -> None:
    assert private_violations(PACKAGE) == []


def test_nothing_inside_reaches_through_the_root_facade() -> None:
    assert facade_violations(PACKAGE) == []


def test_the_core_never_imports_a_framework_or_the_sdk_at_module_level() -> None:
    assert framework_violations(PACKAGE) == []


def test_the_pages_diagram_is_drawn_from_its_table(layers: Layers) -> None:
    expected = draw_diagram(layers)
    found = page_diagram(PAGE.read_text(encoding="utf-8"))
    assert found == expected, f"docs/architecture.md's diagram should read:\n{expected}"


# -- the checker itself -----------------------------------------------------------------------

_PROBE_PAGE = """\
# Architecture

## Layers

| packages | what lives there |
|---|---|
| `top` | the top |
| `high` · `side` | two siblings |
| `low` | the bottom |

## Next
"""

_PROBE = {
    "__init__.py": "def __getattr__(name):\n    return name\n",
    "_util.py": "from probe.low import value\n",
    "_fine.py": "from probe import _util\n",
    "top/__init__.py": "from probe.high import thing\nfrom probe import _fine\n",
    "high/__init__.py": (
        "from typing import TYPE_CHECKING\n"
        "import langchain\n"
        "from probe.low import value\n"
        "from probe.low._private import secret\n"
        "from probe import Thing\n"
        "import probe\n"
        "if TYPE_CHECKING:\n"
        "    from probe.top import Hidden\n"
        "def later():\n"
        "    import opentelemetry.sdk.trace\n"
        "thing = 1\n"
    ),
    "side/__init__.py": "from .. import high\n",
    "low/__init__.py": "value = 1\ndef up():\n    from probe.high import thing\n",
    "low/_private.py": "secret = 2\n",
    # A lazy name from a layer above: loaded by __getattr__, still an upward edge.
    "low/lazy/__init__.py": "_LAZY = {'Thing': 'probe.top', 'Mine': 'probe.low._private'}\n",
    "unplaced/__init__.py": "",
}


@pytest.fixture
def probe(tmp_path: Path) -> Path:
    package = tmp_path / "probe"
    for name, text in _PROBE.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(text, encoding="utf-8")
    return package


def test_the_checker_sees_every_kind_of_violation(probe: Path) -> None:
    layers = read_layers(_PROBE_PAGE)
    assert layers == [("top",), ("high", "side"), ("low",)]
    assert placement_violations(probe, layers) == ["unplaced: a subpackage with no layer"]
    assert layer_violations(probe, layers) == [
        "probe/_util.py:1: probe.low (a private root module imports a subpackage)",
        "probe/low/__init__.py:3: probe.high (a layer above)",  # inside a function
        "probe/low/lazy/__init__.py:1: probe.top (a layer above)",  # a _LAZY map
        "probe/side/__init__.py:1: probe.high (a sibling in the same layer)",  # relative
    ]
    assert cycle_violations(probe) == ["low → high → low", "_fine → _util → low → top → _fine"]
    assert private_violations(probe) == ["probe/high/__init__.py:4: probe.low._private"]
    assert facade_violations(probe) == [
        "probe/high/__init__.py:5: probe",
        "probe/high/__init__.py:6: probe",
    ]
    # Module level only: the SDK imported inside a function is allowed.
    assert framework_violations(probe) == ["probe/high/__init__.py:2: langchain"]


def test_a_named_lazy_reexport_is_the_only_upward_name_allowed(probe: Path) -> None:
    layers = read_layers(_PROBE_PAGE)
    allowed = frozenset({("probe.low.lazy", "probe.top")})
    # The lazy name goes; the import statement inside a function still counts.
    assert layer_violations(probe, layers, allowed) == [
        "probe/_util.py:1: probe.low (a private root module imports a subpackage)",
        "probe/low/__init__.py:3: probe.high (a layer above)",
        "probe/side/__init__.py:1: probe.high (a sibling in the same layer)",
    ]
    assert cycle_violations(probe, allowed) == ["low → high → low"]
    # Allowing a pair exempts only a _LAZY map, never an import statement.
    statement = frozenset({("probe.low", "probe.high")})
    assert "probe/low/__init__.py:3: probe.high (a layer above)" in layer_violations(
        probe, layers, statement
    )


def test_livescore_otel_names_the_span_processor_without_loading_collect() -> None:
    import subprocess
    import sys

    code = (
        "import sys, livescore.otel as o; assert 'livescore.collect' not in sys.modules; "
        "from livescore.otel import LiveScoringSpanProcessor as P; "
        "from livescore.collect import LiveScoringSpanProcessor as Q; "
        "import livescore; assert P is Q is livescore.LiveScoringSpanProcessor; print('ok')"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (done.returncode, done.stdout.strip()) == (0, "ok"), done.stderr


def test_the_checker_reads_the_table_and_draws_the_diagram() -> None:
    diagram = draw_diagram(read_layers(_PROBE_PAGE))
    assert " high │ side\n   ▼\n low\n" in diagram
    page = _PROBE_PAGE.replace("## Next", f"```text\n{diagram}```\n\n## Next")
    assert page_diagram(page) == diagram
    with pytest.raises(AssertionError, match="no '## Layers' section"):
        read_layers("# nothing here\n")
