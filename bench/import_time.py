"""What ``import livescore`` costs a cold start: ``python bench/import_time.py [--runs N]``.

Serverless agents pay the import on every cold start. Each import below runs in a fresh
interpreter under ``python -X importtime``; the table shows the median (and the fastest)
cumulative time of the top-level module over the runs, and which heavy packages the import
loaded. ``import openai`` is timed too, as a reference: what ``import livescore`` no longer
pays until the first ``OpenAIJudge`` is built. Shared machines are noisy: compare medians
from the same run. The figures go to ``bench/results/import_time.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from collections.abc import Sequence

from _common import Results, print_machine, table

IMPORTS = (
    "livescore",
    "livescore.scorers",
    "livescore.live",
    "livescore.evals",
    "openai",  # a reference: loaded only when the first OpenAIJudge is built
)
HEAVY = ("openai", "jinja2", "rich", "opentelemetry.sdk", "langchain_core", "pydantic")


def measure(module: str) -> tuple[int, list[str]]:
    """Microseconds ``import module`` took (cumulative) and the heavy packages it loaded."""
    code = (
        f"import sys, {module}; import json; "
        f"print(json.dumps(sorted({{m for m in {list(HEAVY)!r} if m in sys.modules}})))"
    )
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        capture_output=True,
        text=True,
        check=True,
    )
    micros = next(
        int(line.split("|")[1])
        for line in reversed(done.stderr.splitlines())
        if line.rstrip().endswith(f"| {module}")
    )
    return micros, json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="fresh interpreters per import")
    parser.add_argument("--quick", action="store_true", help="3 runs per import")
    args = parser.parse_args(argv)
    record = Results("import_time", quick=args.quick, partial=args.runs != 9)
    runs = 3 if args.quick else args.runs
    print_machine("import time (python -X importtime, cumulative, fresh interpreter)")
    rows = []
    figures = []
    for module in IMPORTS:
        samples = []
        loaded: list[str] = []
        for _ in range(runs):
            micros, loaded = measure(module)
            samples.append(micros)
        rows.append(
            (
                f"import {module}",
                f"{statistics.median(samples) / 1000:.1f}",
                f"{min(samples) / 1000:.1f}",
                ", ".join(loaded) or "none",
            )
        )
        figures.append(
            {
                "statement": f"import {module}",
                "median_ms": statistics.median(samples) / 1000,
                "fastest_ms": min(samples) / 1000,
                "samples_ms": [m / 1000 for m in samples],
                "heavy_packages_loaded": loaded,
            }
        )
    table(
        f"import time over {runs} runs",
        ("statement", "median ms", "fastest ms", "heavy packages loaded"),
        rows,
    )
    record.write({"runs": runs, "imports": figures})
    return 0


if __name__ == "__main__":
    sys.exit(main())
