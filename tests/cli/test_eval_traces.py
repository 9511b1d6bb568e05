"""``livescore eval --traces``: stored OTLP JSON traces scored, the scores backfilled under
the stored runs' spans."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from _cli_support import hallucination_responder
from otlp_receiver import OTLPTestReceiver

from livescore.cli import main
from livescore.testing import OpenAITestServer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "traces"))
from _trace_support import genai_tool_run, memory_provider, otlp_json_line


@pytest.fixture(autouse=True)
def _plain_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    for name in ("LIVESCORE_JUDGE_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def stored_traces(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """Two tool-using runs as the Collector's file exporter writes them (a broken line too);
    returns the file and each run span's id by its answer."""
    provider, exporter = memory_provider()
    genai_tool_run(provider, question="Weather in Lyon?", answer="It is sunny in Lyon.")
    genai_tool_run(provider, question="Weather in Lyon?", answer="It is snowing WRONG in Lyon.")
    spans = list(exporter.get_finished_spans())
    roots = {
        json.loads(s.attributes["gen_ai.output.messages"])[0]["parts"][0]["content"]: format(
            s.context.span_id, "016x"
        )
        for s in spans
        if s.parent is None
    }
    path = tmp_path / "traces.jsonl"
    lines = [otlp_json_line(spans[:5]), "not json", otlp_json_line(spans[5:])]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, roots


def test_stored_runs_are_scored_and_the_scores_nest_under_their_spans(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, roots = stored_traces(tmp_path)
    out = tmp_path / "results.jsonl"
    with (
        OpenAITestServer(responder=hallucination_responder) as judge,
        OTLPTestReceiver() as backend,
    ):
        code = main(
            [
                "eval",
                "--traces",
                str(path),
                "--scorer",
                "hallucination",
                "--model",
                "test-model",
                "--base-url",
                judge.base_url,
                "--quiet",
                "--otlp-endpoint",
                backend.url,
                "--out",
                str(out),
            ]
        )
        captured = capsys.readouterr()
        assert code == 0, captured.err
        assert any(
            "sunny, 24 °C" in json.dumps(r, ensure_ascii=False) for r in judge.requests
        )  # the tool result
    assert "traces.jsonl:2: not JSON" in captured.err  # the broken line, by its number
    scores = [s for s in backend.spans if s.attributes.get("gen_ai.operation.name") == "evaluation"]
    assert sorted(s.parent_span_id for s in scores) == sorted(roots.values())
    by_parent = {s.parent_span_id: s.attributes["gen_ai.evaluation.score.value"] for s in scores}
    assert by_parent[roots["It is sunny in Lyon."]] == 0.0
    assert by_parent[roots["It is snowing WRONG in Lyon."]] == 1.0
    assert not [s for s in backend.spans if s.name == "eval_item"]  # no new run spans
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["span_id"] for r in results) == sorted(roots.values())


def test_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text('{"input": "q", "output": "a"}\n', encoding="utf-8")
    assert main(["eval", str(data), "--traces", str(data), "--quiet"]) == 2
    assert "one of them" in capsys.readouterr().err
    assert main(["eval", "--traces", str(tmp_path / "missing.jsonl"), "--quiet"]) == 2
    assert "cannot read" in capsys.readouterr().err
    assert main(["eval", "--quiet"]) == 2


def test_a_file_given_to_the_wrong_flag_says_which_flag_it_belongs_to(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    traces, _ = stored_traces(tmp_path)
    assert main(["eval", str(traces), "--scorer", "turn-count", "--quiet"]) != 0
    assert "give this file to --traces" in " ".join(capsys.readouterr().err.split())
    data = tmp_path / "data.jsonl"
    data.write_text('{"input": "q", "output": "a"}\n', encoding="utf-8")
    assert main(["eval", "--traces", str(data), "--scorer", "turn-count", "--quiet"]) != 0
    assert "as a dataset (livescore eval without --traces)" in " ".join(
        capsys.readouterr().err.split()
    )


def test_many_runs_keep_every_output_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The results let go of each run once --out has it (eval --traces holds the runs in
    # flight only): --out still has every run whole, --report every tool call.
    provider, exporter = memory_provider()
    for n in range(12):
        genai_tool_run(provider, question=f"Weather in town {n}?", answer=f"Sunny in town {n}.")
    path = tmp_path / "traces.jsonl"
    spans = list(exporter.get_finished_spans())
    path.write_text(
        "\n".join(otlp_json_line(spans[i : i + 6]) for i in range(0, len(spans), 6)) + "\n",
        encoding="utf-8",
    )
    out, report = tmp_path / "results.jsonl", tmp_path / "report.html"
    code = main(
        [
            "eval",
            "--traces",
            str(path),
            "--scorer",
            "called-tool:get_weather",
            "--concurrency",
            "4",
            "--quiet",
            "--out",
            str(out),
            "--report",
            str(report),
        ]
    )
    assert code == 0, capsys.readouterr().err
    results = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["line"] for r in results] == list(range(1, 13))
    assert [r["output"] for r in results] == [f"Sunny in town {n}." for n in range(12)]
    for r in results:
        tools = [s for s in r["steps"] if s.get("tool_call")]
        assert tools
        assert tools[0]["tool_call"]["result"]  # the whole run, tool results included
        assert r["scores"]["called-tool:get_weather"]["score"] == 1.0
    html = report.read_text(encoding="utf-8")
    assert html.count("<li>get_weather({&#34;city&#34;: &#34;Lyon&#34;})</li>") == 12
    assert "Weather in town 11?" in html


def _twelve_runs(tmp_path: Path) -> Path:
    provider, exporter = memory_provider()
    for n in range(12):
        answer = f"Sunny in town {n}." if n % 3 else f"Snow {n}; I cannot say more."
        genai_tool_run(provider, question=f"Weather in town {n}?", answer=answer)
    path = tmp_path / "traces.jsonl"
    path.write_text(otlp_json_line(list(exporter.get_finished_spans())) + "\n", encoding="utf-8")
    return path


def test_without_a_report_the_results_keep_only_what_the_summary_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without an output that reads each item afterwards, the run keeps running totals, not
    # the items (run_evals(keep_items=False)); what the summary and the checks print is the
    # same as with every item kept.
    import livescore.evals as evals_module

    path = _twelve_runs(tmp_path)
    held: list[int] = []
    run_evals = evals_module.run_evals

    async def counting(*args: Any, **kwargs: Any) -> Any:
        result = await run_evals(*args, **kwargs)
        held.append(len(result.items))
        assert result.item_count == 12
        return result

    monkeypatch.setattr(evals_module, "run_evals", counting)
    args = ["eval", "--traces", str(path), "--scorer", "keyword-coverage", "--quiet"]
    args += ["--scorer", "called-tool:get_weather", "--summary-md"]

    def summary(*extra: str) -> tuple[int, str, str]:
        md = tmp_path / f"summary{len(extra)}.md"
        code = main([*args, str(md), *extra])
        out = capsys.readouterr().out
        kept = [line for line in out.splitlines() if not line.startswith(("summary:", "report:"))]
        return code, "\n".join(line.split(" in ")[0] for line in kept), md.read_text()

    slim = summary()
    assert held == [0]  # no item kept: totals only
    held.clear()
    whole = summary("--report", str(tmp_path / "report.html"))
    assert held == [12]  # the report reads every item
    assert slim[0] == whole[0] == 0
    assert "keyword-coverage" in slim[1]
    assert slim[1] == whole[1]
    assert slim[2] == whole[2]  # --summary-md
