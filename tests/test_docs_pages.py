"""The README is an entry page into the docs, and the docs cover what the code does.

``mkdocs build --strict`` (``make docs``) checks the links between the pages of ``docs/``;
these tests check what it cannot see: the README's and ``examples/README.md``'s links into
the docs, the README's length and the tasks it must lead to, an API page per public
subpackage, and a troubleshooting entry for every ``error.type`` and drop reason the code
emits (read from the source, so a new one fails here until it is documented).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from markdown.extensions.toc import slugify

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
ENTRY_PAGES = (README, ROOT / "examples" / "README.md")
PAGES = (*ENTRY_PAGES, *sorted(DOCS.rglob("*.md")))
SOURCES = (ROOT / "livescore", *sorted((ROOT / "integrations").glob("*/livescore_*")))

_LINK = re.compile(r"\[[^\]]*\]\((?P<target>[^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def _prose(text: str) -> str:
    """``text`` without its fenced code blocks."""
    return _FENCE.sub("", text)


def _anchors(page: Path) -> set[str]:
    """The heading anchors of a Markdown page, as the docs site slugs them."""
    headings = re.findall(r"^#{1,6} (.+?)\s*$", _prose(page.read_text(encoding="utf-8")), re.M)
    return {slugify(heading, "-") for heading in headings}


def _links(page: Path) -> Iterator[tuple[Path, str]]:
    """Each relative link of ``page``: the file it points at and its anchor ("" if none)."""
    for match in _LINK.finditer(_prose(page.read_text(encoding="utf-8"))):
        target = match.group("target")
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path, _, anchor = target.partition("#")
        yield (page.parent / path).resolve(), anchor


# -- the README as an entry page -------------------------------------------------------------


def test_the_readme_is_an_entry_page() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 400, len(lines)


@pytest.mark.parametrize("page", ENTRY_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_links_of_the_entry_pages_resolve(page: Path) -> None:
    links = list(_links(page))
    assert links
    for target, anchor in links:
        assert target.exists(), f"{page.name} links to a missing {target.relative_to(ROOT)}"
        if anchor:
            assert anchor in _anchors(target), f"{page.name}: no #{anchor} in {target.name}"


# What a newcomer must find from the README, and the page that says it.
TASKS = {
    "install": "docs/getting-started.md",
    "score one answer": "docs/scorers/index.md",
    "attach to LangChain": "docs/live/langchain.md",
    "attach to the Agents SDK": "docs/live/openai-agents.md",
    "attach to plain code": "docs/live/plain-python.md",
    "gate CI with livescore eval": "docs/evals/index.md",
    "see scores in a dashboard": "docs/dashboards/index.md",
    "run the fleet": "docs/fleet.md",
}


def test_the_readme_leads_to_every_first_task() -> None:
    text = README.read_text(encoding="utf-8")
    headings = set(re.findall(r"^## (.+)$", text, re.M))
    assert {
        "Quickstart: two commands",
        "Install",
        "Score one answer",
        "Score a LangChain agent live",
        "Gate CI with `livescore eval`",
        "See the scores in a dashboard",
        "Run the fleet",
        "Documentation",
    } <= headings
    linked = {str(target.relative_to(ROOT)) for target, _ in _links(README)}
    missing = {task: page for task, page in TASKS.items() if page not in linked}
    assert not missing, missing
    assert "make demo" in text
    assert "make test" in text


# How the project was made is no part of it: no word of it in the code, its messages, the
# report template, the examples, the docs or the tests.
_MAKING = re.compile(
    r"(?i:the seed\b|seed's|seed-style|\bissues? #?\d)|REFERENCE\.md|\(REFERENCE\)|DESIGN\.md"
)
_TEXT_SUFFIXES = {".py", ".md", ".j2", ".html", ".txt", ".toml", ".yml", ".json", ".css", ".js"}


def _project_files() -> Iterator[Path]:
    yield from PAGES
    for folder in (*SOURCES, ROOT / "examples", ROOT / "tests", ROOT / "bench"):
        for path in sorted(folder.rglob("*")):
            if path.suffix in _TEXT_SUFFIXES and "results" not in path.parts:
                yield path
    yield from sorted((ROOT / "integrations").glob("*/README.md"))
    yield from (ROOT / "docs").glob("*.py")


def test_the_project_speaks_of_itself_alone() -> None:
    found = []
    for path in _project_files():
        if path == Path(__file__):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            match = _MAKING.search(line)
            if match:
                found.append(f"{path.relative_to(ROOT)}:{number}: {match.group(0)!r}")
    assert found == []


def test_the_check_for_how_it_was_made_sees_each_form() -> None:
    for line in ("the seed's example", "(REFERENCE)", "see REFERENCE.md", "issue 9, item 3"):
        assert _MAKING.search(line), line
    for line in ("random.seed(1)", "keyword-coverage[:REFERENCE]", "check_reference(reference)"):
        assert not _MAKING.search(line), line


# -- the API reference -----------------------------------------------------------------------


def _public_packages() -> list[str]:
    """Every public subpackage of livescore (the command line and the demo are programs,
    not libraries), the root, and the integrations' packages."""
    names = ["livescore"]
    for init in sorted((ROOT / "livescore").glob("*/__init__.py")):
        name = init.parent.name
        if not name.startswith("_") and name not in ("cli", "demo"):
            names.append(f"livescore.{name}")
    names += [p.name for p in SOURCES[1:]]
    return names


def test_every_public_subpackage_has_an_api_page() -> None:
    shown = set()
    for page in (DOCS / "api").glob("*.md"):
        shown |= set(re.findall(r"^::: ([\w.]+)$", page.read_text(encoding="utf-8"), re.M))
    packages = _public_packages()
    assert len(packages) >= 14
    assert set(packages) <= shown, set(packages) - shown
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in (DOCS / "api").glob("*.md"):
        assert f"api/{page.name}" in nav, page.name


# -- troubleshooting: every error.type and drop reason the code emits -------------------------


def _modules() -> Iterator[tuple[Path, ast.Module]]:
    for source in SOURCES:
        for path in sorted(source.rglob("*.py")):
            if "testing" not in path.relative_to(source).parts:  # test doubles emit none
                yield path, ast.parse(path.read_text(encoding="utf-8"))


def _string(node: ast.AST | None, constants: dict[str, str]) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    return None


def _call_name(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _is_error_type(node: ast.AST) -> bool:
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
    return name == "error_type"


def emitted_values() -> tuple[set[str], set[str]]:
    """The ``error.type`` values and the drop reasons written as literals in the source.

    Error types: ``error_type = "x"`` (a class attribute or an assignment), ``error_type="x"``
    (a keyword), ``x.error_type or "x"`` (a default), the first argument of the judge
    transport's failures (``_Failure("x", ...)``, ``judge_error("x", ...)``), the return
    values of a function named ``*error_type*``, and ``(type, message)`` failure pairs
    assigned to a ``failure``. Drop reasons: the string arguments of calls named ``*drop*``
    (``drop``, ``_count_drop``, ``record_dropped``…), module constants included, and their
    ``reason or "x"`` defaults.
    """
    error_types: set[str] = set()
    reasons: set[str] = set()
    for _path, module in _modules():
        constants = {
            t.id: n.value.value
            for n in module.body
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant)
            for t in n.targets
            if isinstance(t, ast.Name) and isinstance(n.value.value, str)
        }
        for node in ast.walk(module):
            if isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(_is_error_type(t) for t in targets):
                    found = _string(node.value, {})
                    error_types |= {found} if found else set()
                pairs = [node.value]
                if isinstance(node.value, ast.Tuple):
                    pairs += node.value.elts
                names = [t for t in targets if isinstance(t, ast.Tuple)]
                flat = [e for t in names for e in t.elts] + list(targets)
                if any(getattr(t, "attr", getattr(t, "id", "")) == "failure" for t in flat):
                    for pair in pairs:
                        if isinstance(pair, ast.Tuple) and pair.elts:
                            found = _string(pair.elts[0], {})
                            error_types |= {found} if found else set()
            elif isinstance(node, ast.Call):
                name = _call_name(node)
                for keyword in node.keywords:
                    if keyword.arg == "error_type":
                        found = _string(keyword.value, {})
                        error_types |= {found} if found else set()
                if name in ("_Failure", "judge_error") and node.args:
                    found = _string(node.args[0], {})
                    error_types |= {found} if found else set()
                if "drop" in name.lower():
                    for arg in node.args:
                        found = _string(arg, constants)
                        if found is None and isinstance(arg, ast.BoolOp):
                            found = _string(arg.values[-1], {})
                        reasons |= {found} if found else set()
            elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
                if _is_error_type(node.values[0]):
                    found = _string(node.values[-1], {})
                    error_types |= {found} if found else set()
            elif isinstance(node, ast.FunctionDef) and "error_type" in node.name:
                for inner in ast.walk(node):
                    if isinstance(inner, ast.Return):
                        found = _string(inner.value, {})
                        error_types |= {found} if found else set()
    return error_types, reasons


def _documented(section: str) -> set[str]:
    """The values in the first column of the tables of one section of the page."""
    text = (DOCS / "troubleshooting.md").read_text(encoding="utf-8")
    start = text.index(f"\n## {section}")
    end = text.find("\n## ", start + 1)
    body = text[start : end if end != -1 else None]
    return set(re.findall(r"^\| `([^`]+)` \|", body, re.M))


def test_the_source_scan_finds_the_known_values() -> None:
    error_types, reasons = emitted_values()
    # One of each way a value is written, so a scan that stops seeing a kind fails here.
    assert {"rate_limited", "timeout", "invalid_item", "poisoned_job", "tool_error"} <= error_types
    assert {"judge_error", "error", "unknown_scorer", "auth_error"} <= error_types
    assert {"queue_full", "broker_unavailable", "evicted", "run_error", "dropped"} <= reasons


def test_every_error_type_has_a_troubleshooting_entry() -> None:
    error_types, _ = emitted_values()
    missing = error_types - _documented("Failed scores")
    assert not missing, f"docs/troubleshooting.md does not explain error.type {sorted(missing)}"


def test_every_drop_reason_has_a_troubleshooting_entry() -> None:
    _, reasons = emitted_values()
    # a run's pair dropped by the dispatcher, or a span let go by the trace assembler
    documented = _documented("Dropped runs") | _documented("Spans and traces the assembler")
    missing = reasons - documented
    assert not missing, f"docs/troubleshooting.md does not explain drop reason {sorted(missing)}"


def test_the_readme_counts_the_prebuilt_scorers_of_the_catalog() -> None:
    from livescore.scorers import scorer_catalog

    prebuilt = [e for e in scorer_catalog() if e.factory.startswith("livescore.scorers.")]
    judged = sum(e.needs_judge for e in prebuilt)
    said = re.search(
        r"\*\*(\d+) prebuilt scorers\*\*, (\d+) with an LLM judge and (\d+) in plain code",
        " ".join((ROOT / "README.md").read_text().split()),
    )
    assert said, "the README no longer says how many prebuilt scorers there are"
    assert tuple(map(int, said.groups())) == (len(prebuilt), judged, len(prebuilt) - judged)
