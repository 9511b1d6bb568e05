"""The scorer catalog the CLI builds scorers from: names, arguments, judges, plugins."""

from __future__ import annotations

import pytest

from livescore import Scorer, create_scorer
from livescore.scorers import (
    CatalogEntry,
    ScorerOptions,
    _catalog,
    build_scorer,
    get_catalog_entry,
    parse_scorer_spec,
    register_scorer,
    scorer_catalog,
)
from livescore.testing import ScriptedJudge


def test_the_built_in_entries() -> None:
    names = [entry.name for entry in scorer_catalog()]
    assert names[:2] == ["hallucination", "keyword-coverage"]
    hallucination = get_catalog_entry("hallucination")
    assert hallucination.needs_judge
    assert not hallucination.higher_is_better
    assert hallucination.predicts == "hallucinated"
    assert hallucination.usage() == "hallucination"
    assert get_catalog_entry("keyword-coverage").usage() == "keyword-coverage[:REFERENCE]"


def test_arguments_are_parsed_and_checked() -> None:
    assert parse_scorer_spec("keyword-coverage")[1] is None
    assert parse_scorer_spec("keyword-coverage:ground_truth")[1] == "ground_truth"
    with pytest.raises(ValueError, match="takes no argument"):
        parse_scorer_spec("hallucination:x")
    with pytest.raises(ValueError, match="nothing after ':'"):
        parse_scorer_spec("keyword-coverage:")
    with pytest.raises(ValueError, match="did you mean keyword-coverage"):
        parse_scorer_spec("keyword-coverag")


def test_judge_entries_get_the_resolved_judge_and_mode() -> None:
    with pytest.raises(ValueError, match="needs a judge model"):
        build_scorer("hallucination")
    judge = ScriptedJudge([])
    scorer = build_scorer("hallucination", ScorerOptions(judge=judge, mode="one_call"))
    assert scorer.id == "hallucination"
    assert scorer.judge is judge


def test_a_plugin_entry_with_a_required_argument(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_catalog, "_CATALOG", dict(_catalog._CATALOG))  # restored afterwards

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
    assert build_scorer("mentions:refund").run_sync({"input": "q", "output": "a refund"}).score == 1
    with pytest.raises(ValueError, match="needs an argument: mentions:TEXT"):
        build_scorer("mentions")
    with pytest.raises(ValueError, match="already has 'mentions'"):
        register_scorer(get_catalog_entry("mentions"))
    with pytest.raises(ValueError, match="one word without ':'"):
        register_scorer(CatalogEntry(name="a:b", summary="", build=build))
