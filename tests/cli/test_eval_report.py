"""livescore eval --report on labelled data: the items are numbered by the lines --out names,
and the items where a judge disagrees with the label are the judge-quality table's false
positives and false negatives."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from _cli_support import write_jsonl

from livescore.cli import main
from livescore.testing import OpenAITestServer


def judge(body: dict[str, Any]) -> Any:
    """A scripted judge: a sentence with WRONG is unsupported, one with idiot is toxic."""
    name = (body.get("response_format") or {}).get("json_schema", {}).get("name")
    prompt = str(body["messages"][-1]["content"])
    if name == "ExtractedClaims":
        text = re.search(r"<output>\n(.*?)\n</output>", prompt, re.S)
        sentences = re.split(r"(?<=\.)\s+", text.group(1) if text else "")
        return {"claims": [s for s in sentences if s.strip()]}
    if name in ("ClaimVerdicts", "FaithfulnessVerdicts"):
        claims = re.findall(r'<claim index="\d+">(.*?)</claim>', prompt, re.S)
        bad, good = ("yes", "no") if name == "ClaimVerdicts" else ("no", "yes")
        verdicts = [{"statement": c, "verdict": bad if "WRONG" in c else good} for c in claims]
        return {"verdicts": [{**v, "reason": "r"} for v in verdicts]}
    if name == "ToxicityVerdicts":
        statements = re.findall(r'<statement index="\d+">(.*?)</statement>', prompt, re.S)
        verdicts = [
            {"statement": s, "verdict": "yes" if "idiot" in s else "no"} for s in statements
        ]
        return {"verdicts": [{**v, "reason": "r"} for v in verdicts]}
    return "The score is as the verdicts say."


def _rows(html: str) -> dict[int, str]:
    """Each item row's line number and its attributes, in the report's order."""
    return {int(line): rest for line, rest in re.findall(r'data-row="(\d+)"([^>]*)>', html)}


def test_report_rows_are_the_results_lines_and_marks_are_the_false_predictions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ctx = "The sky is blue."
    data = write_jsonl(
        tmp_path / "answers.jsonl",
        [
            {"id": "a", "input": "q", "context": ctx, "output": "Fine claim.", "hallucinated": 0},
            "",
            "not json",
            {
                "id": "b",
                "input": "q",
                "context": ctx,
                "output": "Fine. WRONG claim.",
                "hallucinated": 0,
            },
            {
                "id": "c",
                "input": "q",
                "context": ctx,
                "output": "Fine. WRONG claim.",
                "hallucinated": 1,
            },
            {
                "id": "d",
                "input": "q",
                "context": ctx,
                "output": "Fine. Also fine.",
                "hallucinated": 1,
            },
            {"id": "e", "input": "q", "context": ctx, "output": "WRONG claim."},
        ],
    )
    out, report = tmp_path / "results.jsonl", tmp_path / "report.html"
    with OpenAITestServer(responder=judge) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        code = main(
            [
                "eval",
                str(data),
                "--scorer",
                "hallucination",
                "--scorer",
                "faithfulness",
                "--model",
                "m",
                "--out",
                str(out),
                "--report",
                str(report),
                "--quiet",
            ]
        )
    assert code == 0, capsys.readouterr()
    html = report.read_text(encoding="utf-8")
    results = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]

    # The number a row shows is the "line" --out writes: the line to open in the file.
    rows = _rows(html)
    assert list(rows) == [r["line"] for r in results] == [1, 4, 5, 6, 7]
    assert "line 3: invalid JSON" in html
    # Line 4 is faithful but half its claims are unsupported (both judges say so: a false
    # positive); line 6 is labelled hallucinated and every claim is supported (a false
    # negative); line 7 has no label to disagree with.
    assert {line for line, attrs in rows.items() if "data-disagree" in attrs} == {4, 6}
    assert 'data-disagree="0 1"' in rows[4]
    assert 'data-disagree="0 1"' in rows[6]
    assert "data-label-0" not in rows[7]
    # The judge-quality table counts the same items: 1 false positive, 1 false negative.
    for scorer in ("hallucination", "faithfulness"):
        assert f"<tr><td>{scorer}</td><td>TP 1 · FP 1 · FN 1 · TN 1</td>" in html
    assert "score ≥ 0.5): <b" in html  # hallucination
    assert "score ≤ 0.5): <b" in html  # faithfulness: higher is better
    assert html.count("2 disagreements</b> (1 false positive, 1 false negative)") == 2


def test_report_marks_disagreements_with_the_field_label_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(
        tmp_path / "rude.jsonl",
        [
            {"input": "Hi", "output": "Hello there.", "rude": 0},
            {"input": "Hi", "output": "You idiot.", "rude": 1},
            {"input": "Hi", "output": "Go away, nobody asked you.", "rude": 1},
            {"input": "Hi", "output": "Welcome.", "rude": 0},
        ],
    )
    report = tmp_path / "report.html"
    with OpenAITestServer(responder=judge) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        code = main(
            [
                "eval",
                str(data),
                "--scorer",
                "toxicity",
                "--model",
                "m",
                "--label",
                "rude",
                "--report",
                str(report),
                "--quiet",
            ]
        )
    assert code == 0, capsys.readouterr()
    html = report.read_text(encoding="utf-8")

    assert '<th data-sort="label-0">rude</th>' in html
    assert "hallucinated" not in html  # no such field in this data
    assert '<option value="0:1">rude</option><option value="0:0">not rude</option>' in html
    rows = _rows(html)
    assert {line for line, attrs in rows.items() if "data-disagree" in attrs} == {3}
    assert html.count("predicts not rude, labelled rude") == 1
    assert "1 disagreement</b> (0 false positives, 1 false negative)" in html
