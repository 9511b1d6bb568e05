"""The scorer catalog: entries declared where each scorer is defined, read without importing
the scorer modules, and what the CLI, ``build_scorer`` and the docs take from it."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from livescore import Scorer, _catalog, create_scorer
from livescore.scorers import (
    SCORER_FAMILIES,
    CatalogEntry,
    ScorerOptions,
    build_scorer,
    get_catalog_entry,
    parse_scorer_spec,
    register_scorer,
    scorer_catalog,
    scorer_span_attributes,
)
from livescore.testing import ScriptedJudge

PACKAGE = Path(__file__).resolve().parents[1] / "livescore"
BUILT_IN = [entry for entry in scorer_catalog() if entry.origin is not None]
IDS = [entry.name for entry in BUILT_IN]


@pytest.fixture
def fresh_catalog(monkeypatch: pytest.MonkeyPatch) -> _catalog._Catalog:
    """A catalog of the built-in entries alone, replaced by the real one afterwards."""
    catalog = _catalog._Catalog(_catalog._PROVIDERS)
    monkeypatch.setattr(_catalog, "_CATALOG", catalog)
    return catalog


def test_the_built_in_entries() -> None:
    names = [entry.name for entry in scorer_catalog()]
    assert names[:2] == ["faithfulness", "hallucination"]  # grounding comes first
    assert len(BUILT_IN) == 29
    hallucination = get_catalog_entry("hallucination")
    assert hallucination.needs_judge
    assert not hallucination.higher_is_better
    assert hallucination.predicts == "hallucinated"
    assert hallucination.usage() == "hallucination"
    assert hallucination.origin == "livescore.scorers._hallucination:_build"
    assert get_catalog_entry("keyword-coverage").usage() == "keyword-coverage[:REFERENCE]"
    assert get_catalog_entry("includes").origin == "livescore.checks._text_checks:_build_includes"


def test_entries_are_listed_by_family_then_name() -> None:
    families = list(SCORER_FAMILIES)
    order = [(families.index(e.family), e.name) for e in BUILT_IN]
    assert order == sorted(order)


def test_arguments_are_parsed_and_checked() -> None:
    assert parse_scorer_spec("keyword-coverage")[1] is None
    assert parse_scorer_spec("keyword-coverage:ground_truth")[1] == "ground_truth"
    with pytest.raises(ValueError, match="takes no argument"):
        parse_scorer_spec("hallucination:x")
    with pytest.raises(ValueError, match="nothing after ':'"):
        parse_scorer_spec("keyword-coverage:")
    with pytest.raises(ValueError, match="did you mean keyword-coverage"):
        parse_scorer_spec("keyword-coverag")
    with pytest.raises(ValueError, match="completeness compares with input or ground_truth"):
        build_scorer("completeness:output")


def test_judge_entries_get_the_resolved_judge_and_mode() -> None:
    with pytest.raises(ValueError, match="needs a judge model"):
        build_scorer("hallucination")
    judge = ScriptedJudge([])
    scorer = build_scorer("hallucination", ScorerOptions(model=judge, judge_mode="one_call"))
    assert scorer.id == "hallucination"
    assert scorer.judge is judge
    with pytest.raises(ValueError, match="needs a judge model"):
        ScorerOptions().require_model()


def test_a_plugin_entry_with_a_required_argument(fresh_catalog: _catalog._Catalog) -> None:
    def build(argument: str | None, options: ScorerOptions) -> Scorer:
        assert argument is not None
        return create_scorer(
            id=f"mentions-{argument}",
            description=f"1 when the answer mentions {argument}",
            generate_score=lambda ctx: float(argument in ctx.output_text),
        )

    register_scorer(
        CatalogEntry(
            name="mentions",
            summary="1 when the answer contains TEXT",
            build=build,
            argument="TEXT: what the answer must contain",
            argument_required=True,
        )
    )
    assert get_catalog_entry("mentions").usage() == "mentions:TEXT"
    assert get_catalog_entry("mentions").family == "custom"
    assert scorer_catalog()[-1].name == "mentions"  # after the known families
    assert build_scorer("mentions:refund").run_sync({"input": "q", "output": "a refund"}).score == 1
    with pytest.raises(ValueError, match="needs an argument: mentions:TEXT"):
        build_scorer("mentions")
    with pytest.raises(ValueError, match="already has 'mentions'"):
        register_scorer(get_catalog_entry("mentions"))
    with pytest.raises(ValueError, match="already has 'hallucination'"):
        register_scorer(CatalogEntry(name="hallucination", summary="", build=build))
    with pytest.raises(ValueError, match="one word without ':'"):
        register_scorer(CatalogEntry(name="a:b", summary="", build=build))


def test_a_decorated_plugin_function_joins_the_catalog(fresh_catalog: _catalog._Catalog) -> None:
    @_catalog.catalog_entry("doc-length", family="text", summary="1 for short answers")
    def build(argument: str | None, options: ScorerOptions) -> Scorer:
        return create_scorer(
            id="doc-length",
            description="short answers",
            generate_score=lambda ctx: float(len(ctx.output_text) < 20),
        )

    entry = get_catalog_entry("doc-length")
    assert entry.build is build
    assert entry.origin is not None
    assert entry.origin.endswith(":" + build.__qualname__)
    assert next(e.name for e in scorer_catalog() if e.family == "text") == "completeness"
    assert "doc-length" in [e.name for e in scorer_catalog() if e.family == "text"]

    def again(argument: str | None, options: ScorerOptions) -> Scorer:
        return build(argument, options)

    with pytest.raises(ValueError, match="already has 'doc-length'"):
        _catalog.catalog_entry("doc-length", family="text", summary="again")(again)
    with pytest.raises(TypeError, match="needs_judge cannot be 'yes'"):
        _catalog.catalog_entry("x", family="text", summary="s", needs_judge="yes")(build)  # type: ignore[arg-type]


# -- every built-in entry --------------------------------------------------------------------


@pytest.mark.parametrize("entry", BUILT_IN, ids=IDS)
def test_what_the_catalog_reads_from_the_source_is_what_the_module_declares(
    entry: CatalogEntry,
) -> None:
    assert entry.origin is not None
    module_name, function_name = entry.origin.split(":")
    declared: CatalogEntry = getattr(
        importlib.import_module(module_name), function_name
    ).catalog_entry
    read = {f: getattr(entry, f) for f in CatalogEntry.__dataclass_fields__ if f != "build"}
    ran = {f: getattr(declared, f) for f in CatalogEntry.__dataclass_fields__ if f != "build"}
    assert read == ran
    # Importing the module did not make a second entry or replace the one read.
    assert get_catalog_entry(entry.name) is entry


@pytest.mark.parametrize("entry", BUILT_IN, ids=IDS)
def test_every_built_in_entry_has_a_docs_family_a_factory_and_examples(
    entry: CatalogEntry,
) -> None:
    assert entry.family in SCORER_FAMILIES  # its page: docs/scorers/<family>.md
    assert entry.factory is not None
    module, _, name = entry.factory.rpartition(".")
    assert callable(getattr(importlib.import_module(module), name))
    assert entry.examples
    options = ScorerOptions(model=ScriptedJudge([]) if entry.needs_judge else None)
    for spec in entry.examples:
        assert parse_scorer_spec(spec)[0] is entry
        assert build_scorer(spec, options).id in (entry.name, spec)
    for name in entry.span_attributes:
        assert name.startswith("livescore."), name


def test_every_family_has_scorers() -> None:
    assert {entry.family for entry in BUILT_IN} == set(SCORER_FAMILIES)


def test_the_scorers_span_attributes_are_all_listed() -> None:
    # The scorer-specific names of livescore.otel.attributes (its "set by scorers" part,
    # less the truncation flags every scorer may set) are all declared by an entry.
    source = (PACKAGE / "_attributes.py").read_text(encoding="utf-8")
    section = source.split("# -- set by scorers", 1)[1].split("# -- metrics", 1)[0]
    names = {line.split('"')[1] for line in section.splitlines() if ': Final = "' in line}
    names -= {"livescore.input_truncated", "livescore.output_truncated"}
    listed = scorer_span_attributes()
    assert names <= set(listed)
    assert listed["livescore.claims.total"] == {
        "faithfulness": "claims judged",
        "hallucination": "claims judged",
    }


def test_listing_the_catalog_imports_no_scorer_module() -> None:
    code = textwrap.dedent(
        """
        import json, sys
        from livescore.scorers import build_scorer, scorer_catalog
        names = [e.name for e in scorer_catalog()]
        before = sorted(m for m in sys.modules if m.startswith(("livescore.scorers._",
                                                               "livescore.checks")))
        build_scorer("includes:refund")
        after = "livescore.checks._text_checks" in sys.modules
        print(json.dumps([len(names), before, after]))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    count, loaded, checks_after_build = json.loads(done.stdout.strip().splitlines()[-1])
    assert count == 29
    judge_modules = {f"livescore.scorers.{p.stem}" for p in (PACKAGE / "scorers").glob("_[!_]*.py")}
    lazy = {m for m in judge_modules if m.rsplit("._", 1)[1] in ("bias", "criteria", "toxicity")}
    assert not lazy & set(loaded)  # the judge scorers' modules stay unloaded
    assert not any(m.startswith("livescore.checks") for m in loaded)
    assert checks_after_build


# -- reading declarations ------------------------------------------------------------------------


def test_a_declaration_must_be_literal_and_right_above_its_def(tmp_path: Path) -> None:
    computed = tmp_path / "_computed.py"
    computed.write_text(
        'SUMMARY = "s"\n\n\n@catalog_entry("x", family="text", summary=SUMMARY)\n'
        "def build(argument, options):\n    return None\n",
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match=r"_computed.py:4: the arguments of catalog_entry\(\)"):
        _catalog._declarations(computed)
    stacked = tmp_path / "_stacked.py"
    stacked.write_text(
        '@catalog_entry("x", family="text", summary="s")\n@other\n'
        "def build(argument, options):\n    return None\n",
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match=r"_stacked.py:1: @catalog_entry\(...\) must stand"):
        _catalog._declarations(stacked)


# -- a new scorer is one module ------------------------------------------------------------------

SHOUTING = '''
"""A scorer defined in one module: the share of the answer's letters in capitals."""

from livescore import Scorer, create_scorer
from livescore._catalog import ScorerOptions, catalog_entry


def create_shouting_scorer(*, id: str = "shouting") -> Scorer:
    def generate_score(ctx):
        letters = [c for c in ctx.output_text if c.isalpha()]
        ctx.attributes["acme.letters"] = len(letters)
        return sum(c.isupper() for c in letters) / len(letters) if letters else 0.0

    return create_scorer(id=id, description="share of capitals", generate_score=generate_score)


@catalog_entry(
    "shouting",
    family="text",
    summary="share of the answer's letters in capitals",
    higher_is_better=False,
    factory="acme_scorers._shouting.create_shouting_scorer",
    examples=("shouting",),
    span_attributes={"acme.letters": "letters counted"},
)
def _build(argument: str | None, options: ScorerOptions) -> Scorer:
    return create_shouting_scorer()
'''


def test_a_new_scorer_is_one_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A package of scorers beside the built-in ones: its module is all that names the scorer,
    # and the catalog, the CLI's help, `--scorer` and the attribute list all find it.
    package = tmp_path / "acme_scorers"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "_shouting.py").write_text(SHOUTING, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    providers = (*_catalog._PROVIDERS, "acme_scorers")
    monkeypatch.setattr(_catalog, "_CATALOG", _catalog._Catalog(providers))
    from livescore.cli import main

    entry = get_catalog_entry("shouting")
    assert (entry.family, entry.higher_is_better) == ("text", False)
    assert "acme_scorers._shouting" not in sys.modules  # read, not imported
    assert scorer_span_attributes()["acme.letters"] == {"shouting": "letters counted"}

    with pytest.raises(SystemExit):
        main(["eval", "--help"])
    assert "share of the answer's letters in capitals" in capsys.readouterr().out

    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"input": "q", "output": "HELLO there"}) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    code = main(["eval", str(data), "--scorer", "shouting", "--out", str(out), "--quiet"])
    assert code == 0, capsys.readouterr()
    (row,) = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert row["scores"]["shouting"]["score"] == 0.5
    assert "acme_scorers._shouting" in sys.modules
    monkeypatch.delitem(sys.modules, "acme_scorers._shouting")
