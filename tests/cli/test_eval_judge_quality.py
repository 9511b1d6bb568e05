"""livescore eval as a judge-quality harness for any scorer: the label each catalog entry
predicts, the direction (a high faithfulness score predicts *no* hallucination), --label for
any other 0/1 field, and claims shared between hallucination and faithfulness."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from _cli_support import write_jsonl

from livescore.cli import main
from livescore.testing import OpenAITestServer

# Scores 0, 0.5, 0.5 and 1 of hallucination (1, 0.5, 0.5 and 0 of faithfulness) for labels
# 0, 0, 1, 1: AUROC 3.5 / 4 = 0.875 either way; at 0.5, accuracy 0.75, precision 0.667,
# recall 1 and F1 0.8 (see test_eval_command's labelled test for the arithmetic).
ROWS = [
    {"id": "a", "question": "q", "context": "ctx", "output": "Fine claim.", "hallucinated": 0},
    {
        "id": "b",
        "question": "q",
        "context": "ctx",
        "output": "Fine. WRONG claim.",
        "hallucinated": 0,
    },
    {
        "id": "c",
        "question": "q",
        "context": "ctx",
        "output": "Fine. WRONG claim.",
        "hallucinated": 1,
    },
    {"id": "d", "question": "q", "context": "ctx", "output": "WRONG claim.", "hallucinated": 1},
]


def judge(body: dict[str, Any]) -> Any:
    """A scripted judge: a sentence with WRONG is unsupported (and toxic if it says idiot)."""
    name = (body.get("response_format") or {}).get("json_schema", {}).get("name")
    prompt = str(body["messages"][-1]["content"])
    if name == "ExtractedClaims":
        text = re.search(r"<output>\n(.*?)\n</output>", prompt, re.S)
        sentences = re.split(r"(?<=\.)\s+", text.group(1) if text else "")
        return {"claims": [s for s in sentences if s.strip()]}
    if name in ("ClaimVerdicts", "FaithfulnessVerdicts"):
        claims = re.findall(r'<claim index="\d+">(.*?)</claim>', prompt, re.S)
        bad, good = ("yes", "no") if name == "ClaimVerdicts" else ("no", "yes")
        return {
            "verdicts": [
                {"statement": c, "verdict": bad if "WRONG" in c else good, "reason": "r"}
                for c in claims
            ]
        }
    if name == "ToxicityVerdicts":
        statements = re.findall(r'<statement index="\d+">(.*?)</statement>', prompt, re.S)
        return {
            "verdicts": [
                {"statement": s, "verdict": "yes" if "idiot" in s else "no", "reason": "r"}
                for s in statements
            ]
        }
    return "The score is as the verdicts say."


def quality_row(out: str, name: str) -> list[str]:
    rows = [
        [c.strip() for c in line.strip("│┃ ").split("│")]
        for line in out.splitlines()
        if line.strip("│┃ ").startswith(name)
    ]
    return rows[-1]  # the summary table comes first, the quality table last


@pytest.fixture(autouse=True)
def _wide_plain_output(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    for name in ("LIVESCORE_JUDGE_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_faithfulness_predicts_hallucination_with_the_direction_handled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "labelled.jsonl", ROWS)
    out_path = tmp_path / "out.jsonl"
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
                "test-judge",
                "--out",
                str(out_path),
                "--quiet",
            ]
        )
        requests = len(server.requests)
    out = capsys.readouterr().out

    assert code == 0, out
    # 5 calls per item, not 6: the claims are extracted once for both scorers.
    assert requests == 4 * 5
    hallucination = quality_row(out, "hallucination")
    faithfulness = quality_row(out, "faithfulness")
    assert hallucination[2] == "score ≥ 0.5"
    assert faithfulness[2] == "score ≤ 0.5"
    # The same figures: a faithfulness of 1 - h predicts exactly what h does.
    assert hallucination[3:8] == faithfulness[3:8] == ["0.750", "0.667", "1.000", "0.800", "0.875"]
    assert "Judge quality: how well each scorer predicts 'hallucinated'" in out
    assert "for scorers where higher is better, a score ≤ 0.5" in out
    records = [json.loads(line) for line in out_path.read_text().splitlines()]
    assert [r["hallucinated"] for r in records] == [0, 0, 1, 1]


def test_label_measures_a_scorer_against_any_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        {"input": "Hi", "output": "Hello there.", "rude": 0},
        {"input": "Hi", "output": "You idiot.", "rude": 1},
        {"input": "Hi", "output": "Thanks. You idiot.", "rude": 1},
        {"input": "Hi", "output": "Welcome.", "rude": 0},
        {"input": "Hi", "output": "Unlabelled."},
    ]
    data = write_jsonl(tmp_path / "rude.jsonl", rows)
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
                "--quiet",
            ]
        )
    captured = capsys.readouterr()
    out = captured.out

    assert code == 0, out
    assert "Judge quality: how well each scorer predicts 'rude'" in out
    row = quality_row(out, "toxicity")
    assert row[1] == "4"  # the unlabelled line is scored but not measured
    assert row[2] == "score ≥ 0.5"
    assert row[3:8] == ["1.000", "1.000", "1.000", "1.000", "1.000"]
    assert "unknown field" not in captured.err  # the label is not mistaken for a typo


def test_a_scorers_own_label_is_read_from_the_catalog(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        {"input": "Hi", "output": "Hello.", "toxic": 0},
        {"input": "Hi", "output": "You idiot.", "toxic": 1},
    ]
    data = write_jsonl(tmp_path / "toxic.jsonl", rows)
    with OpenAITestServer(responder=judge) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        assert main(["eval", str(data), "--scorer", "toxicity", "--model", "m", "--quiet"]) == 0
    out = capsys.readouterr().out

    assert "Judge quality: how well each scorer predicts 'toxic'" in out
    assert quality_row(out, "toxicity")[7] == "1.000"


def test_labelled_data_names_a_scorer_that_predicts_the_label(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(
        tmp_path / "l.jsonl", [{"input": "Hi", "output": "Hello.", "hallucinated": 0}]
    )
    assert main(["eval", str(data), "--quiet"]) == 0
    assert "add --scorer hallucination" in capsys.readouterr().out


def test_a_bad_label_value_skips_the_line_with_its_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        {"input": "Hi", "output": "Hello.", "toxic": 0},
        {"input": "Hi", "output": "Hey.", "toxic": "very"},
    ]
    data = write_jsonl(tmp_path / "bad.jsonl", rows)
    with OpenAITestServer(responder=judge) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        assert main(["eval", str(data), "--scorer", "toxicity", "--model", "m", "--quiet"]) == 0
    err = capsys.readouterr().err

    assert "bad.jsonl:2: 'toxic' must be 0 or 1, not 'very'" in err


def logprob_judge(body: dict[str, Any]) -> Any:
    """A logprob-answering judge: the more WRONG claims an output has, the likelier "no"
    (not every statement supported: a continuous score)."""
    from livescore.testing import Reply

    prompt = str(body["messages"][-1]["content"])
    output = re.search(r"\nAnswer: (.*?)\n\nIs every statement", prompt, re.S)
    wrong = (output.group(1) if output else "").count("WRONG")
    unsupported = min(0.9, 0.2 + 0.3 * wrong)
    return Reply.token_probabilities({"no": unsupported, "yes": 1 - unsupported})


def test_calibration_kappa_confusion_base_rate_and_a_held_out_threshold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        {
            "id": f"item-{i}",
            "question": "q",
            "context": "ctx",
            "output": "Fine." + " WRONG." * (i % 3),
            "hallucinated": int(i % 3 > 0),
        }
        for i in range(12)
    ]
    data = write_jsonl(tmp_path / "labelled.jsonl", rows)
    with OpenAITestServer(responder=logprob_judge) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        code = main(
            [
                "eval",
                str(data),
                "--scorer",
                "hallucination",
                "--scorer",
                "faithfulness",
                "--judge-mode",
                "logprob",
                "--model",
                "m",
                "--quiet",
                "--report",
                str(tmp_path / "report.html"),
            ]
        )
        requests = server.requests
    out = capsys.readouterr().out

    assert code == 0, out
    assert len(requests) == 12 * 2  # one one-token call per item and scorer
    # The report carries the same calibration figures.
    page = (tmp_path / "report.html").read_text()
    calibration = page[page.index('<table id="calibration">') :]
    assert "TP 8 · FP 0 · FN 0 · TN 4" in calibration
    assert '<td class="num">0.67</td>' in calibration
    assert '<td class="num">0.35</td>' in calibration  # hallucination's chosen threshold
    # Scores 0.2 (faithful items) and 0.5 / 0.8 (hallucinated): at 0.5 every item is right.
    hallucination = quality_row(out, "hallucination")
    assert hallucination[3] == "1.000"  # accuracy
    assert hallucination[7] == "1.000"  # AUROC
    assert hallucination[8] == "1.000"  # κ
    assert hallucination[9] == "1.00"  # calls per item
    lines = " ".join(out.split())
    assert "Against the labels, hallucination (score ≥ 0.5): TP 8 · FP 0 · FN 0 · TN 4" in lines
    assert "base rate 0.67 (8 of 12 labelled hallucinated); Cohen's κ 1.000" in lines
    assert "Threshold chosen on half the items (6, split by item id): score ≥ 0.35" in lines
    # Faithfulness predicts the label with a low score: its threshold reads that way.
    assert "Against the labels, faithfulness (score ≤ 0.5)" in lines
    assert "split by item id): score ≤ 0.65" in lines
