"""The scorer catalog: entries declared where each scorer is defined (the decorator registers
them when the module is imported), discovered on first use, and what the CLI,
``build_scorer`` and the docs take from it."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest

from livescore import Scorer, _catalog, create_scorer
from livescore._catalog import get_catalog_entry, parse_scorer_spec, scorer_span_attributes
from livescore.scorers import (
    SCORER_FAMILIES,
    CatalogEntry,
    ScorerOptions,
    build_scorer,
    catalog_entry,
    scorer_catalog,
)
from livescore.testing import OpenAITestServer, ScriptedJudge

PACKAGE = Path(__file__).resolve().parents[1] / "livescore"
BUILT_IN = [entry for entry in scorer_catalog() if entry.origin.startswith("livescore.")]
IDS = [entry.name for entry in BUILT_IN]


@pytest.fixture
def fresh_catalog(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The catalog as it is now; what a test registers or imports is gone afterwards."""
    monkeypatch.setattr(_catalog, "_entries", dict(_catalog._catalog()))
    monkeypatch.setattr(_catalog, "_discovered", set(_catalog._discovered))
    modules = set(sys.modules)
    yield
    for name in set(sys.modules) - modules:
        if not name.startswith("livescore"):
            del sys.modules[name]


def test_the_built_in_entries() -> None:
    names = [entry.name for entry in scorer_catalog()]
    assert names[:2] == ["faithfulness", "hallucination"]  # grounding comes first
    assert len(BUILT_IN) == 37
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


def test_a_plugin_entry_with_a_required_argument(fresh_catalog: None) -> None:
    @catalog_entry(
        "mentions",
        family="custom",
        summary="1 when the answer contains TEXT",
        argument="TEXT: what the answer must contain",
        argument_required=True,
    )
    def build(argument: str | None, options: ScorerOptions) -> Scorer:
        assert argument is not None
        return create_scorer(
            id=f"mentions-{argument}",
            description=f"1 when the answer mentions {argument}",
            generate_score=lambda ctx: float(argument in ctx.output_text),
        )

    assert get_catalog_entry("mentions").usage() == "mentions:TEXT"
    assert get_catalog_entry("mentions").family == "custom"
    assert scorer_catalog()[-1].name == "mentions"  # after the known families
    assert build_scorer("mentions:refund").run_sync({"input": "q", "output": "a refund"}).score == 1
    with pytest.raises(ValueError, match="needs an argument: mentions:TEXT"):
        build_scorer("mentions")
    with pytest.raises(ValueError, match="already has 'hallucination'"):
        catalog_entry("hallucination", family="custom", summary="")(build)
    with pytest.raises(ValueError, match="one word without ':'"):
        catalog_entry("a:b", family="custom", summary="")(build)


def test_a_decorated_plugin_function_joins_the_catalog(fresh_catalog: None) -> None:
    @catalog_entry("doc-length", family="text", summary="1 for short answers")
    def build(argument: str | None, options: ScorerOptions) -> Scorer:
        return create_scorer(
            id="doc-length",
            description="short answers",
            generate_score=lambda ctx: float(len(ctx.output_text) < 20),
        )

    entry = get_catalog_entry("doc-length")
    assert entry.build is build
    assert entry.origin.endswith(":" + build.__qualname__)
    assert next(e.name for e in scorer_catalog() if e.family == "text") == "completeness"
    assert "doc-length" in [e.name for e in scorer_catalog() if e.family == "text"]

    def again(argument: str | None, options: ScorerOptions) -> Scorer:
        return build(argument, options)

    with pytest.raises(ValueError, match="already has 'doc-length'"):
        catalog_entry("doc-length", family="text", summary="again")(again)
    # The same function declared again (its module imported anew) replaces its entry.
    catalog_entry("doc-length", family="text", summary="1 for short answers, again")(build)
    assert get_catalog_entry("doc-length").summary == "1 for short answers, again"
    with pytest.raises(TypeError, match="needs_judge cannot be 'yes'"):
        catalog_entry("x", family="text", summary="s", needs_judge="yes")(build)  # type: ignore[arg-type]


# -- every built-in entry --------------------------------------------------------------------


@pytest.mark.parametrize("entry", BUILT_IN, ids=IDS)
def test_each_entry_builds_with_the_function_its_module_declares(entry: CatalogEntry) -> None:
    module_name, function_name = entry.origin.split(":")
    assert entry.build is getattr(importlib.import_module(module_name), function_name)


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


def test_the_catalog_imports_the_scorer_modules_on_first_use_only() -> None:
    code = textwrap.dedent(
        """
        import json, sys
        def loaded():
            return sorted(m for m in sys.modules
                          if m.startswith(("livescore.scorers._", "livescore.checks")))
        import livescore.scorers
        at_import = loaded()
        from livescore.scorers import create_keyword_coverage_scorer
        one = loaded()
        from livescore.scorers import scorer_catalog
        names = [e.name for e in scorer_catalog()]
        print(json.dumps([at_import, one, loaded(), len(names)]))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    at_import, one, listed, count = json.loads(done.stdout.strip().splitlines()[-1])
    assert at_import == []  # import livescore.scorers loads no scorer
    assert "livescore.scorers._keyword_coverage" in one
    assert not {"livescore.scorers._bias", "livescore.checks"} & set(one)
    modules = {f"livescore.scorers.{p.stem}" for p in (PACKAGE / "scorers").glob("_[!_]*.py")}
    modules |= {f"livescore.checks.{p.stem}" for p in (PACKAGE / "checks").glob("_[!_]*.py")}
    assert modules <= set(listed)  # listing the catalog imported every module
    assert count == len(BUILT_IN)


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


def _plugin_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    package = tmp_path / name
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "_shouting.py").write_text(SHOUTING.replace("acme_scorers", name), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))


def test_a_new_scorer_is_one_module(
    fresh_catalog: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # A package of scorers beside the built-in ones: its module is all that names the scorer,
    # and the catalog, the CLI's help, `--scorer` and the attribute list all find it.
    _plugin_package(tmp_path, monkeypatch, "acme_scorers")
    monkeypatch.setattr(_catalog, "_PROVIDERS", (*_catalog._PROVIDERS, "acme_scorers"))
    from livescore.cli import main

    entry = get_catalog_entry("shouting")
    assert (entry.family, entry.higher_is_better) == ("text", False)
    assert entry.origin == "acme_scorers._shouting:_build"
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


def _plugins(points: list[EntryPoint]) -> Any:
    def entry_points(*, group: str) -> list[EntryPoint]:
        return [point for point in points if point.group == group]

    return entry_points


def test_a_plugin_declares_its_scorers_through_an_entry_point(
    fresh_catalog: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    _plugin_package(tmp_path, monkeypatch, "loud_scorers")
    points = [
        EntryPoint("loud", "loud_scorers._shouting", _catalog.PLUGINS_GROUP),
        EntryPoint("broken", "no_such_module_here", _catalog.PLUGINS_GROUP),
        EntryPoint("other", "loud_scorers.nothing", "another.group"),
    ]
    monkeypatch.setattr(_catalog, "entry_points", _plugins(points))
    _catalog._discovered.discard(_catalog._PLUGINS_READ)  # the plugins are read anew

    with caplog.at_level("WARNING", logger="livescore.scorers"):
        entry = get_catalog_entry("shouting")
    assert entry.origin == "loud_scorers._shouting:_build"
    assert build_scorer("shouting").run_sync({"input": "q", "output": "AB cd"}).score == 0.5
    # A plugin that cannot be imported costs its own scorers and a warning, nothing else.
    assert "scorer plugin 'broken' (no_such_module_here) cannot be imported" in caplog.text
    assert get_catalog_entry("hallucination").needs_judge


# -- a new judge scorer is a spec ----------------------------------------------------------------

JARGON = '''
"""A judge scorer defined as data: the share of the answer's sentences that are jargon."""

from typing import Literal

from livescore.scorers import JudgeSpec, LogprobSpec, StatementVerdict, judge_catalog_entry


class JargonVerdict(StatementVerdict):
    """One sentence's verdict: ``"yes"`` when a customer would not follow it."""

    spellings = {"yes": ("y", "true", "unclear", "jargon"), "no": ("n", "false", "clear")}
    verdict: Literal["yes", "no"]


JARGON = JudgeSpec(
    name="jargon",
    family="answer",
    summary="share of the answer's sentences a customer would not follow",
    check="jargon",
    items="sentences",
    noun="sentence",
    defect="unclear",
    verdict=JargonVerdict,
    rules='A sentence is unclear ("yes") when it leans on internal codes. Otherwise "no".',
    split=lambda text: [s for s in text.replace(". ", ".\\n").splitlines() if s.strip()],
    advice="quote the jargon",
    explain="quote the jargon",
    none_found="no jargon",
    empty_answer="there is nothing to read",
    logprob=LogprobSpec(
        system="You check whether a customer can follow an answer.",
        prompt=lambda output, context, question: (
            f"Answer: {output}\\n\\nCan a customer follow every sentence? Answer yes or no."
        ),
        choices=("yes", "no"),
        verdicts={"yes": "no", "no": "yes"},
        reason=lambda ctx, unclear: f"The score is {ctx.score} (P(unclear) = {unclear:.2f}).",
    ),
)
judge_catalog_entry(JARGON)
'''

_JARGON_VERDICTS = {
    "verdicts": [
        {"statement": "Your RMA is queued.", "verdict": "Jargon", "reason": "RMA."},
        {"statement": "It ships Monday.", "verdict": "no", "reason": "Plain."},
    ]
}


def test_a_new_judge_scorer_is_a_spec(
    fresh_catalog: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The spec's module is all that names the scorer: its catalog entry, the CLI's help and
    # `--scorer`, its flags and span attributes and both judge modes come from the spec.
    package = tmp_path / "jargon_scorers"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "_jargon.py").write_text(JARGON, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(_catalog, "_PROVIDERS", (*_catalog._PROVIDERS, "jargon_scorers"))
    from livescore.cli import main

    entry = get_catalog_entry("jargon")
    assert (entry.family, entry.needs_judge, entry.higher_is_better) == ("answer", True, False)
    assert entry.predicts == "unclear"
    assert entry.origin == "jargon_scorers._jargon:_build"
    assert entry.usage() == "jargon"
    assert scorer_span_attributes()["livescore.sentences.unclear"] == {
        "jargon": "unclear sentences"
    }
    assert scorer_span_attributes()["livescore.sentences.total"] == {"jargon": "sentences judged"}
    with pytest.raises(SystemExit):
        main(["eval", "--help"])
    assert "share of the answer's sentences a customer would not follow" in capsys.readouterr().out

    run = {"input": "Where is my return?", "output": "Your RMA is queued. It ships Monday."}
    reason = "The score is 0.5 because 'RMA' is an internal code."
    for mode, replies, calls in (
        ("three_step", [_JARGON_VERDICTS, reason], 2),
        ("one_call", [{**_JARGON_VERDICTS, "reason": "'RMA' is an internal code."}], 1),
    ):
        judge = ScriptedJudge(replies)
        scorer = build_scorer("jargon", ScorerOptions(model=judge, judge_mode=mode))
        result = scorer.run_sync(run)
        assert (result.status, result.score, result.label) == ("scored", 0.5, "mixed"), mode
        assert result.flags == {"sentences_total": 2, "sentences_unclear": 1}
        assert result.attributes["livescore.sentences.unclear"] == 1
        assert result.preprocess_step_result == {
            "sentences": ["Your RMA is queued.", "It ships Monday."]
        }
        assert result.analyze_step_result["verdicts"][0]["verdict"] == "yes"  # "Jargon", read
        assert result.usage.calls == calls
        assert result.reason is not None
        assert "'RMA' is an internal code" in result.reason
    assert "<sentences>" in judge.prompts[0]
    assert "unclear" in judge.prompts[0]
    empty = build_scorer("jargon", ScorerOptions(model=ScriptedJudge([]))).run_sync(
        {"input": "q", "output": ""}
    )
    assert (empty.score, empty.usage.calls) == (0.0, 0)
    assert empty.reason == "The score is 0 because the answer is empty: there is nothing to read."
    # The logprob mode: one word on the whole answer, its probability the score.
    judge = ScriptedJudge([{"yes": 0.2, "no": 0.8}])
    scorer = build_scorer("jargon", ScorerOptions(model=judge, judge_mode="logprob"))
    result = scorer.run_sync(run)
    assert (result.score, result.label, result.usage.calls) == (0.8, "high", 1)
    assert result.flags["verdict_probability"] == 0.8
    assert result.attributes["livescore.verdict.probability"] == 0.8
    assert result.reason == "The score is 0.8 (P(unclear) = 0.80)."
    assert judge.prompts == [
        f"Answer: {run['output']}\n\nCan a customer follow every sentence? Answer yes or no."
    ]
    assert "livescore.verdict.probability" in entry.span_attributes

    with OpenAITestServer([{**_JARGON_VERDICTS, "reason": "'RMA' is jargon."}]) as server:
        data = tmp_path / "data.jsonl"
        data.write_text(json.dumps(run) + "\n", encoding="utf-8")
        out = tmp_path / "out.jsonl"
        args = ["eval", str(data), "--scorer", "jargon", "--model", "test-judge"]
        args += ["--base-url", server.base_url, "--judge-mode", "one_call"]
        code = main([*args, "--out", str(out), "--quiet", "--no-cache"])
    assert code == 0, capsys.readouterr()
    (row,) = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert row["scores"]["jargon"]["score"] == 0.5
