"""livescore eval --baseline: the scripted judge's verdicts change on some items between two
runs; the regressed items come first, --fail-on-regression fails only on a significant
change, --summary-md holds the right numbers, and the report shows both runs side by side."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from _cli_support import write_jsonl

from livescore.cli import main
from livescore.testing import OpenAITestServer

PRICES = json.dumps({"test-judge": [2.0, 8.0]})


class _Judge:
    """A scripted judge: a claim naming a door in ``bad`` is unsupported."""

    def __init__(self) -> None:
        self.bad: set[int] = set()

    def __call__(self, body: dict[str, Any]) -> Any:
        prompt = str(body["messages"][-1]["content"])
        if "<claims>" in prompt:
            claims = re.findall(r'<claim index="\d+">(.*?)</claim>', prompt, re.S)
            verdicts = []
            for claim in claims:
                door = re.search(r"door (\d+)", claim)
                bad = door is not None and int(door.group(1)) in self.bad
                verdicts.append(
                    {
                        "statement": claim,
                        "verdict": "yes" if bad else "no",
                        "reason": f"door {door.group(1) if door else '?'} is "
                        + ("not in the context" if bad else "in the context"),
                    }
                )
            return {"verdicts": verdicts}
        if "List the factual claims" in prompt:
            found = re.search(r"<output>\n(.*?)\n</output>", prompt, re.S)
            text = found.group(1) if found else ""
            return {"claims": [s for s in re.split(r"(?<=\.)\s+", text) if s.strip()]}
        start = re.search(r'Start with "(The score is [^"]+ because)"', prompt)
        opening = start.group(1) if start else "The score is unknown because"
        doors = sorted({int(d) for d in re.findall(r"door (\d+)", prompt)} & self.bad)
        return f"{opening} doors {doors} are not in the context."


def _data(path: Path, count: int, claims: int = 1) -> Path:
    rows = [
        {
            "id": f"item-{i}",
            "input": "Which door?",
            "context": "The depot has many doors.",
            "output": " ".join(f"The depot has door {i * 10 + j}." for j in range(claims)),
        }
        for i in range(count)
    ]
    return write_jsonl(path, rows)


def _eval(server: OpenAITestServer, data: Path, *args: str) -> int:
    return main(
        [
            "eval",
            str(data),
            "--scorer",
            "hallucination",
            "--model",
            "test-judge",
            "--base-url",
            server.base_url,
            "--judge-prices",
            PRICES,
            "--quiet",
            *args,
        ]
    )


@pytest.fixture
def judge() -> _Judge:
    return _Judge()


def test_a_significant_label_regression_fails_and_is_listed_first(
    tmp_path: Path, judge: _Judge, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _data(tmp_path / "data.jsonl", 40)
    base, now = tmp_path / "base.jsonl", tmp_path / "now.jsonl"
    summary, report = tmp_path / "summary.md", tmp_path / "report.html"
    with OpenAITestServer(responder=judge) as server:
        judge.bad = {0}  # item 0 hallucinates in both runs
        assert _eval(server, data, "--out", str(base), "--no-cache") == 0
        capsys.readouterr()
        # The judge now finds 12 more items unsupported (and item 0 fixed): 12 flips one
        # way, 1 the other.
        judge.bad = {i * 10 for i in range(5, 17)}
        code = _eval(
            server,
            data,
            "--out",
            str(now),
            "--baseline",
            str(base),
            "--fail-on-regression",
            "--summary-md",
            str(summary),
            "--report",
            str(report),
            "--no-cache",
        )
    captured = capsys.readouterr()
    assert code == 1
    assert "--fail-on-regression: hallucination is significantly worse" in captured.err
    out = captured.out
    # The regressed items come first, then the table; item 0 (improved) is not listed.
    listed = re.findall(r"^  (item-\d+) · hallucination 0\.000 → 1\.000$", out, re.M)
    assert listed == [f"item-{i}" for i in range(5, 15)]  # the first 10, in data order
    assert "…and 2 more" in out
    assert "item-0 " not in out
    assert out.index("12 item score(s) regressed") < out.index("Against the baseline")
    assert "McNemar" in out
    assert "12 went bad, 1 went good" in out
    assert "40 item(s) compared with the baseline, 0 new, 0 missing" in out
    # The summary: baseline 1/40, now 12/40, change +0.275; p = 2 * P(X <= 1 | 13, 1/2).
    text = summary.read_text()
    row = next(line for line in text.splitlines() if line.startswith("| hallucination"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1:3] == ["0.025", "0.300"]
    p_value = 2 * (1 + 13) / 2**13
    assert f"+0.275 (12 went bad, 1 went good, p = {p_value:.3g})" == cells[3]
    assert cells[4:] == ["McNemar", "❌ regressed"]
    assert "40 item(s) compared, 0 new, 0 missing; 12 item score(s) regressed" in text
    # The report: side by side, regressions first, each with both reasons.
    html = report.read_text()
    section = html[html.index('id="comparison"') : html.index('id="scorers"')]
    assert section.index("item-5") < section.index("item-0")  # regressed before improved
    assert "doors [] are not in the context" in section  # the baseline's reason
    assert "doors [50] are not in the context" in section  # the reason now


def test_a_small_change_on_few_items_does_not_fail(
    tmp_path: Path, judge: _Judge, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _data(tmp_path / "data.jsonl", 40)
    base, summary = tmp_path / "base.jsonl", tmp_path / "summary.md"
    with OpenAITestServer(responder=judge) as server:
        assert _eval(server, data, "--out", str(base)) == 0
        judge.bad = {30, 70}  # two items of 40 flip: p = 0.5
        code = _eval(
            server,
            data,
            "--baseline",
            str(base),
            "--fail-on-regression",
            "--summary-md",
            str(summary),
            "--no-cache",
        )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "2 item score(s) regressed" in captured.out  # listed, not significant
    assert "no significant change" in captured.out
    assert "| no significant change |" in summary.read_text()


def test_a_score_regression_uses_the_paired_bootstrap(
    tmp_path: Path, judge: _Judge, capsys: pytest.CaptureFixture[str]
) -> None:
    # Two claims an item: scores of 0, 0.5 and 1 are scores, not labels.
    data = _data(tmp_path / "data.jsonl", 30, claims=2)
    base, summary = tmp_path / "base.jsonl", tmp_path / "summary.md"
    with OpenAITestServer(responder=judge) as server:
        judge.bad = {1}
        assert _eval(server, data, "--out", str(base), "--no-cache") == 0
        judge.bad = {1} | {i * 10 for i in range(10)}  # one claim of ten items more
        code = _eval(
            server,
            data,
            "--baseline",
            str(base),
            "--fail-on-regression",
            "--summary-md",
            str(summary),
            "--no-cache",
        )
    captured = capsys.readouterr()
    assert code == 1
    assert "paired bootstrap" in captured.err
    row = next(line for line in summary.read_text().splitlines() if "| hallucination" in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1:3] == [f"{0.5 / 30:.3f}", f"{5.5 / 30:.3f}"]
    change = re.fullmatch(r"\+0\.167 \(\+([\d.]+) to \+([\d.]+)\)", cells[3])
    assert change is not None, cells[3]
    assert 0 < float(change.group(1)) < 0.167 < float(change.group(2))
    assert cells[4:] == ["paired bootstrap", "❌ regressed"]


def test_new_and_missing_items_are_counted_and_inputs_pair_items_without_ids(
    tmp_path: Path, judge: _Judge, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [{"input": f"q{i}", "context": "c", "output": f"The door {i}."} for i in range(6)]
    old = write_jsonl(tmp_path / "old.jsonl", rows[:5])
    new = write_jsonl(tmp_path / "new.jsonl", rows[2:])
    base = tmp_path / "base.jsonl"
    with OpenAITestServer(responder=judge) as server:
        assert _eval(server, old, "--out", str(base)) == 0
        assert _eval(server, new, "--baseline", str(base)) == 0
    assert "3 item(s) compared with the baseline, 1 new, 2 missing" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--fail-on-regression"], "--fail-on-regression compares with a --baseline"),
        (["--baseline", "{missing}"], "--baseline "),
        (["--baseline", "{bad}"], ":2: not JSON"),
        (["--regression-threshold", "-1"], "--regression-threshold -1: give 0 or more"),
        (["--no-cache", "--cache-dir", "x"], "--cache-dir names the cache that --no-cache"),
        (["--summary-md", "{data}"], "--summary-md"),
    ],
)
def test_bad_ci_options_are_usage_errors_before_any_judge_call(
    tmp_path: Path,
    judge: _Judge,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    data = _data(tmp_path / "data.jsonl", 3)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1, "scores": {}}\n{broken\n')
    names = {"missing": tmp_path / "nope.jsonl", "bad": bad, "data": data}
    args = [a.format(**{k: str(v) for k, v in names.items()}) for a in args]
    with OpenAITestServer(responder=judge) as server:
        assert _eval(server, data, *args) == 2
        assert server.requests == []
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err
