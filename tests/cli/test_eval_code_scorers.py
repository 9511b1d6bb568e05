"""livescore eval with the code scorers and quick checks: built from the catalog, no judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli_support import write_jsonl

from livescore.cli import main
from livescore.scorers import build_scorer, scorer_catalog

# Every example spec of every code entry of the catalog (each entry declares its own), with
# the scorer id it must build: the name, or the whole spec for the quick checks (their
# argument is part of the id).
CODE_SPECS = {
    spec: spec if entry.family == "checks" and entry.argument is not None else entry.name
    for entry in scorer_catalog()
    if not entry.needs_judge
    for spec in entry.examples
}


@pytest.fixture(autouse=True)
def _wide_plain_output(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    for name in ("LIVESCORE_JUDGE_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_every_code_entry_of_the_catalog_has_examples() -> None:
    code_entries = {e.name for e in scorer_catalog() if not e.needs_judge}
    assert code_entries == {spec.partition(":")[0] for spec in CODE_SPECS}
    assert {"includes:refund", "tone:0.5", "keyword-coverage:ground_truth"} <= set(CODE_SPECS)


@pytest.mark.parametrize(("spec", "scorer_id"), sorted(CODE_SPECS.items()))
def test_each_spec_builds_its_scorer(spec: str, scorer_id: str) -> None:
    assert build_scorer(spec).id == scorer_id


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("matches:(", "regular expression|regex|pattern"),
        ("max-tool-calls:many", "whole number"),
        ("max-tool-calls:-1", "0 or more"),
        ("tool-order:a,,b", "comma-separated"),
        ("completeness:output", "input or ground_truth"),
        ("includes", "needs an argument"),
        ("no-tool-errors:x", "takes no argument"),
    ],
)
def test_bad_arguments_are_refused_when_the_scorer_is_built(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build_scorer(spec)


def test_eval_scores_code_scorers_and_checks_and_reports_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(
        tmp_path / "data.jsonl",
        [
            {
                "id": "a",
                "input": "What is the refund window?",
                "output": "You can get a refund within 30 days.",
                "ground_truth": "Refunds are accepted within 30 days.",
            },
            {
                "id": "b",
                "input": "Can I return shoes?",
                "output": "Sorry, shoes cannot be returned.",
                "ground_truth": "Shoes can be returned within 30 days.",
            },
        ],
    )
    out, report = tmp_path / "out.jsonl", tmp_path / "report.html"

    code = main(
        [
            "eval",
            str(data),
            "--scorer",
            "includes:refund",
            "--scorer",
            "excludes:sorry",
            "--scorer",
            "content-similarity",
            "--scorer",
            "textual-difference",
            "--out",
            str(out),
            "--report",
            str(report),
        ]
    )

    assert code == 0, capsys.readouterr()
    rows = {row["id"]: row for row in map(json.loads, out.read_text().splitlines())}
    scores_a = {sid: s["score"] for sid, s in rows["a"]["scores"].items()}
    scores_b = {sid: s["score"] for sid, s in rows["b"]["scores"].items()}
    assert scores_a["includes:refund"] == 1.0
    assert scores_b["includes:refund"] == 0.0
    assert scores_a["excludes:sorry"] == 1.0
    assert scores_b["excludes:sorry"] == 0.0
    # Compared with the ground truth (auto): the first answer is the closer one.
    assert scores_a["content-similarity"] > scores_b["content-similarity"]
    assert 0 < scores_b["textual-difference"] < 1
    page = report.read_text(encoding="utf-8")
    for scorer_id in ("includes:refund", "excludes:sorry", "content-similarity"):
        assert scorer_id in page
    reason = rows["b"]["scores"]["includes:refund"]["reason"]
    assert reason.startswith("Failed: the answer does not contain")
    assert "Failed: the answer does not contain &#39;refund&#39;" in page
