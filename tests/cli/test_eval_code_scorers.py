"""livescore eval with the code scorers and quick checks: built from the catalog, no judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli_support import write_jsonl

from livescore.cli import main
from livescore.scorers import build_scorer, scorer_catalog

# One working spec per code entry of the catalog, with the scorer id it must build.
CODE_SPECS = {
    "completeness": "completeness",
    "completeness:ground_truth": "completeness",
    "content-similarity": "content-similarity",
    "textual-difference:input": "textual-difference",
    "tone": "tone",
    "tone:0.5": "tone",
    "tone:What a lovely day.": "tone",
    "tool-call-accuracy:search": "tool-call-accuracy",
    "tool-call-accuracy:search,answer": "tool-call-accuracy",
    "trajectory:search,answer": "trajectory",
    "includes:refund": "includes:refund",
    "excludes:sorry": "excludes:sorry",
    "equals:30 days": "equals:30 days",
    "matches:\\d+ days": "matches:\\d+ days",
    "similarity:refund in 30 days": "similarity:refund in 30 days",
    "called-tool:search": "called-tool:search",
    "did-not-call:delete": "did-not-call:delete",
    "tool-order:search,answer": "tool-order:search,answer",
    "max-tool-calls:3": "max-tool-calls:3",
    "no-tool-errors": "no-tool-errors",
    "used-no-tools": "used-no-tools",
}


@pytest.fixture(autouse=True)
def _wide_plain_output(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    for name in ("LIVESCORE_JUDGE_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_every_code_entry_of_the_catalog_is_covered_here() -> None:
    code_entries = {e.name for e in scorer_catalog() if not e.needs_judge} - {"keyword-coverage"}
    assert code_entries == {spec.partition(":")[0] for spec in CODE_SPECS}


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
